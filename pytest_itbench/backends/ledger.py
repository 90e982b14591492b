"""What a trial changes outside its own namespaces on a shared cluster, recorded as it happens and undone
when the trial ends.

On the twin a trial's whole cluster is thrown away. A cluster that outlives the trial keeps whatever the
trial did, and deleting the trial's namespaces removes only what lives in them: the agent's ClusterRoles
and bindings, a fault's PriorityClass or PersistentVolume, a cordoned Node, a PrometheusRule written into
the monitoring namespace would stay. Faults, setup and evaluators all write through the admin client the
cluster hands out (ARCHITECTURE.md, rule 1), so that client records every write outside the namespaces the
trial reserved, whoever makes it, without any of them knowing:

- an object it **creates** there is labelled ``app.kubernetes.io/managed-by=pytest-itbench`` (so a crashed
  worker's leftovers can be found: docs/real-clusters.md) and deleted at the end;
- an object it **changes or deletes** there is read just before the first such write and put back as it
  was at the end (re-created if it is gone).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from kubernetes.client import ApiClient

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "pytest-itbench"
_WRITES = ("POST", "PUT", "PATCH", "DELETE")
_NAMESPACE_SUBRESOURCES = ("status", "finalize")
# Server-set fields dropped from a saved object before it is written back.
_SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink",
                  "deletionTimestamp", "deletionGracePeriodSeconds")


@dataclass(frozen=True)
class ObjectPath:
    """Where an API request points: a collection, or one object (and maybe a subresource of it)."""

    collection: str  # e.g. /apis/rbac.authorization.k8s.io/v1/clusterroles, /api/v1/namespaces/default/configmaps
    namespace: str | None  # the namespace the object lives in; None for cluster-scoped objects
    name: str | None = None
    subresource: str | None = None

    @property
    def object(self) -> str:
        return f"{self.collection}/{self.name}"

    @property
    def namespace_object(self) -> str | None:
        """The name of the Namespace this path is (a Namespace is cluster-scoped), else None."""
        return self.name if self.collection == "/api/v1/namespaces" else None


def parse(path: str) -> ObjectPath | None:
    """The object or collection of an API path; None for paths that name no resource (/version, discovery)."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        prefix, rest = parts[:2], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        prefix, rest = parts[:3], parts[3:]
    else:
        return None
    if not rest:
        return None
    namespace = None
    core_namespace_object = prefix[0] == "api" and rest[0] == "namespaces" and (
        len(rest) <= 2 or rest[2] in _NAMESPACE_SUBRESOURCES)
    if rest[0] == "namespaces" and len(rest) >= 3 and not core_namespace_object:
        namespace, rest = rest[1], rest[2:]
        prefix = [*prefix, "namespaces", namespace]
    collection = "/" + "/".join([*prefix, rest[0]])
    return ObjectPath(collection, namespace, rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None)


@dataclass
class Ledger:
    """The trial's writes outside its namespaces, in order."""

    namespaces: set[str] = field(default_factory=set)  # the trial's own: deleting them removes their contents
    created: list[str] = field(default_factory=list)  # object paths
    saved: dict[str, dict | None] = field(default_factory=dict)  # object path -> the object before the first write
    paused: bool = False  # while the ledger itself undoes the trial's writes

    def concerns(self, where: ObjectPath) -> bool:
        if self.paused:
            return False
        if where.namespace is not None:
            return where.namespace not in self.namespaces
        return where.namespace_object is None or where.namespace_object not in self.namespaces


class LedgerApiClient(ApiClient):
    """The official client's ApiClient, recording into a :class:`Ledger` what it writes outside the trial's
    namespaces (every typed API and the dynamic client go through ``call_api``)."""

    def __init__(self, configuration, ledger: Ledger):
        super().__init__(configuration)
        self.ledger = ledger

    def call_api(self, method, url, header_params=None, body=None, post_params=None, _request_timeout=None):
        where = self._where(url)
        if method == "POST" and where is not None and where.name is None and isinstance(body, dict):
            # Creating a Namespace: whether it is one of the trial's own depends on the name in the body.
            named = (body.get("metadata") or {}).get("name")
            if named and where.collection == "/api/v1/namespaces" and named in self.ledger.namespaces:
                return super().call_api(method, url, header_params, body, post_params, _request_timeout)
        if method not in _WRITES or where is None or not self.ledger.concerns(where):
            return super().call_api(method, url, header_params, body, post_params, _request_timeout)
        if method == "POST":
            if where.name is not None:  # a subresource (a token, an eviction, a binding): nothing persists
                return super().call_api(method, url, header_params, body, post_params, _request_timeout)
            if isinstance(body, dict):
                body = copy.deepcopy(body)
                labels = body.setdefault("metadata", {}).setdefault("labels", None) or {}
                labels.setdefault(MANAGED_BY_LABEL, MANAGED_BY)
                body["metadata"]["labels"] = labels
            response = super().call_api(method, url, header_params, body, post_params, _request_timeout)
            if 200 <= response.status < 300:
                name = (body or {}).get("metadata", {}).get("name") if isinstance(body, dict) else None
                if not name:  # generateName: only the answer knows
                    name = json.loads(response.read() or b"{}").get("metadata", {}).get("name")
                if name:
                    self.ledger.created.append(f"{where.collection}/{name}")
            return response
        if where.name is not None:
            key = where.object
            if key not in self.ledger.created and key not in self.ledger.saved:
                self.ledger.saved[key] = self._read(key, header_params)
        return super().call_api(method, url, header_params, body, post_params, _request_timeout)

    # ---- undoing ---------------------------------------------------------------------------------------------
    def undo(self) -> list[str]:
        """Delete what the trial created, restore what it changed (latest first); return what could not be."""
        problems = []
        was_paused, self.ledger.paused = self.ledger.paused, True
        try:
            for key in reversed(self.ledger.created):
                status, body = self._request("DELETE", f"{key}?propagationPolicy=Background")
                if status >= 300 and status != 404:
                    problems.append(f"deleting {key}: {status} {_reason(body)}")
            for key, before in reversed(list(self.ledger.saved.items())):
                problems += self._restore(key, before)
        finally:
            self.ledger.paused = was_paused
        return problems

    def _restore(self, key: str, before: dict | None) -> list[str]:
        status, now = self._request("GET", key)
        if before is None:  # it did not exist before the trial wrote to it
            if status == 200:
                status, body = self._request("DELETE", key)
                if status >= 300 and status != 404:
                    return [f"deleting {key} (absent before the trial): {status} {_reason(body)}"]
            return []
        body = written_back(before)
        if status == 404:
            status, answer = self._request("POST", key.rsplit("/", 1)[0], body)
            return [] if status < 300 else [f"re-creating {key}: {status} {_reason(answer)}"]
        if status != 200:
            return [f"reading {key}: {status} {_reason(now)}"]
        body["metadata"]["resourceVersion"] = now["metadata"]["resourceVersion"]
        status, answer = self._request("PUT", key, body)
        return [] if status < 300 else [f"restoring {key}: {status} {_reason(answer)}"]

    # ---- plumbing ----------------------------------------------------------------------------------------------
    def _where(self, url: str) -> ObjectPath | None:
        host = self.configuration.host.rstrip("/")
        path = url[len(host):] if url.startswith(host) else urlsplit(url).path
        return parse(urlsplit(path).path)

    def _read(self, key: str, header_params) -> dict | None:
        headers = {k: v for k, v in (header_params or {}).items() if k.lower() != "content-type"}
        status, body = self._request("GET", key, headers=headers)
        return body if status == 200 else None

    def _request(self, method: str, path: str, body: dict | None = None, headers: dict | None = None):
        """One request with the client's credentials, past the ledger; (status, decoded body)."""
        header_params = dict(headers or {})
        header_params.setdefault("Accept", "application/json")
        if body is not None:
            header_params["Content-Type"] = "application/json"
        self.update_params_for_auth(header_params, [], ["BearerToken"], path, method, body)
        response = ApiClient.call_api(self, method, self.configuration.host.rstrip("/") + path, header_params,
                                      body)
        raw = response.read()
        try:
            return response.status, json.loads(raw) if raw else {}
        except ValueError:
            return response.status, {"message": raw.decode(errors="replace")[:200]}


def written_back(saved: dict) -> dict:
    """A saved object as it can be written again: no server-set metadata, no status."""
    body = copy.deepcopy(saved)
    body.pop("status", None)
    metadata = body.setdefault("metadata", {})
    for name in _SERVER_FIELDS:
        metadata.pop(name, None)
    return body


def _reason(body) -> str:
    return (body or {}).get("message", "") if isinstance(body, dict) else str(body)[:200]
