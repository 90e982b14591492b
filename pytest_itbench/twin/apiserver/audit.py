"""The API server's audit log: one ``audit.k8s.io/v1`` Event per write request, as kube-apiserver writes them.

kube-apiserver records requests by an audit policy (``--audit-policy-file``) and writes the events to a
log file (``--audit-log-path``, one JSON object a line) or a webhook. The twin keeps the one policy a
benchmark needs: every request that writes (verbs create, update, patch, delete, deletecollection, on
objects and their subresources: ``deployments/scale``, ``pods/eviction`` ...) at level
``RequestResponse``, at stage ``ResponseComplete``, whoever made it and whether it succeeded; reads
are not recorded. The events are kept in memory (``events()``) and, when the twin is given a path,
appended to that file as kube-apiserver's log backend does.

An event has the fields of kube-apiserver's: ``auditID`` (also the response's ``Audit-Id`` header),
``stage``, ``requestURI``, ``verb``, ``user`` (username, uid, groups), ``sourceIPs``, ``userAgent``,
``objectRef`` (resource, namespace, name, apiGroup, apiVersion, subresource), ``responseStatus``
(code, and status, reason and message for a failure), ``requestObject`` and ``responseObject`` (the
JSON bodies; a body that is not JSON, such as a protobuf one, is left out, as kube-apiserver leaves out
what it cannot convert), ``requestReceivedTimestamp`` and ``stageTimestamp`` (microseconds, on the
twin's clock) and ``annotations``.

The harness reads the log through the twin backend's handle (``TwinCluster.audit_events``), as an
operator of a real cluster reads its audit log file; the agent cannot reach it.
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

from ..clock import format_micro_time

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
MAX_EVENTS = 100_000  # a ring: the oldest go first, as a rotated log file would lose them


class AuditLog:
    def __init__(self, clock, path: str | None = None, max_events: int = MAX_EVENTS):
        self.clock = clock
        self.path = path
        self.max_events = max_events
        self._events: list[dict] = []
        self._lock = threading.Lock()

    @staticmethod
    def records(verb: str) -> bool:
        return verb in WRITE_VERBS

    def new_id(self) -> str:
        return str(uuid.uuid4())

    def record(self, *, audit_id: str, uri: str, info, user, source_ip: str, user_agent: str, received: float,
               code: int, request_body: bytes | None, content_type: str | None, response_body: bytes | None,
               failure: dict | None = None) -> dict:
        """Add the event of one finished request; return it."""
        ref: dict[str, Any] = {"resource": info.resource}
        if info.namespace:
            ref["namespace"] = info.namespace
        if info.name:
            ref["name"] = info.name
        if info.group:
            ref["apiGroup"] = info.group
        ref["apiVersion"] = info.version
        if info.subresource:
            ref["subresource"] = info.subresource
        status: dict[str, Any] = {"metadata": {}, "code": code}
        if failure is not None:
            status.update({k: failure[k] for k in ("status", "reason", "message") if failure.get(k)})
        event: dict[str, Any] = {
            "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse", "auditID": audit_id,
            "stage": "ResponseComplete", "requestURI": uri, "verb": info.verb,
            "user": {"username": user.name, **({"uid": user.uid} if user.uid else {}),
                     "groups": list(user.groups)},
            "sourceIPs": [source_ip] if source_ip else [], "userAgent": user_agent, "objectRef": ref,
            "responseStatus": status,
            "requestReceivedTimestamp": format_micro_time(received),
            "stageTimestamp": format_micro_time(self.clock.now()),
            "annotations": {"authorization.k8s.io/decision": "allow"} if code != 403 else
            {"authorization.k8s.io/decision": "forbid"},
        }
        request_object = _json(request_body, content_type)
        if request_object is not None:
            event["requestObject"] = request_object
        response_object = _json(response_body, "application/json")
        if response_object is not None and failure is None:
            event["responseObject"] = response_object
        with self._lock:
            self._events.append(event)
            if len(self._events) > self.max_events:
                del self._events[: len(self._events) - self.max_events]
        if self.path:
            line = json.dumps(event, separators=(",", ":")) + "\n"
            with self._lock, open(self.path, "a", encoding="utf-8") as out:
                out.write(line)
        return event

    def events(self, user: str | None = None) -> list[dict]:
        """The events recorded so far, oldest first; only one user's when ``user`` is given."""
        with self._lock:
            found = list(self._events)
        return [e for e in found if user is None or e["user"]["username"] == user]


def _json(body: bytes | None, content_type: str | None) -> Any:
    if not body:
        return None
    kind = (content_type or "application/json").split(";")[0].strip().lower()
    if not (kind.endswith("json") or kind.endswith("yaml")):
        return None  # protobuf and other encodings: left out
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        if kind.endswith("yaml"):
            try:
                import yaml
                return yaml.safe_load(body)
            except Exception:
                return None
        return None
