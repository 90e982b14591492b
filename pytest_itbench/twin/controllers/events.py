"""Events as cluster components record them, with client-go's correlation and the API server's TTL.

Two styles, as in a v1.31 cluster:

* **core/v1** (kubelet, most of kube-controller-manager): ``source``,
  ``firstTimestamp``/``lastTimestamp`` and ``count``. A repeat of the same
  event (same source, object, type, reason and message) within ten minutes
  bumps ``count`` and ``lastTimestamp`` on the existing Event; past ten events
  with the same reason and different messages, they combine into one whose
  message starts ``(combined from similar events): ``; a spam filter (burst
  25, one more every five minutes per source and object) drops the excess.
* **events.k8s.io** (kube-scheduler and the newer controllers):
  ``eventTime``, ``reportingController``/``reportingInstance``, ``action``,
  and a ``series`` (count, lastObservedTime) for repeats.

Events expire an hour after their last update, as the API server's event TTL
does.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ..apiserver.access.authn import user_for
from ..apiserver.registry import Ctx, DeleteOptions, ResourceAPI
from ..clock import SimClock, parse_time
from ..errors import NotFound, StatusError

log = logging.getLogger(__name__)

CORRELATION_WINDOW = 600.0  # seconds: repeats within it are counted on one Event
SIMILAR_EVENTS_LIMIT = 10  # distinct messages with one reason before they are combined
SPAM_BURST = 25
SPAM_REFILL_SECONDS = 300.0
EVENT_TTL = 3600.0


@dataclass
class _Seen:
    name: str
    namespace: str
    last: float
    unwritten: int = 0  # repeats the spam filter held back; the next write counts them


@dataclass
class _Bucket:
    tokens: float
    stamp: float


@dataclass
class EventSource:
    """Who records: the component, and for node agents the node (``source.host``)."""

    component: str
    host: str | None = None
    new_api: bool = False  # events.k8s.io style (kube-scheduler)
    action: str | None = None


@dataclass
class EventRecorder:
    api: ResourceAPI
    clock: SimClock
    _seen: dict = field(default_factory=dict)
    _similar: dict = field(default_factory=dict)
    _spam: dict = field(default_factory=dict)
    _serial: int = 0

    def __post_init__(self) -> None:
        self.events = self.api.catalog.lookup("", "v1", "events")
        self.ctx = Ctx(user=user_for("system:kube-controller-manager"), field_manager="kube-controller-manager",
                       trusted=True)
        self.clock.on_tick(self._expire, name="event-ttl", every=60.0)

    # ---- recording ---------------------------------------------------------------------------------
    def record(self, obj: dict, type_: str, reason: str, message: str, source: EventSource, *,
               field_path: str | None = None, action: str | None = None, related: dict | None = None) -> None:
        """Record an event about ``obj`` (a Pod, Node, Deployment...) as ``source``."""
        now = self.clock.now()
        involved = _reference(obj, field_path)
        namespace = involved.get("namespace") or "default"
        who = (source.component, source.host or "", involved.get("uid", ""), involved["kind"], involved["name"],
               involved.get("fieldPath", ""))
        key = who + (type_, reason, message)
        if not source.new_api:
            if self._aggregate(who, type_, reason, message, now):
                # One combined Event counts every further message with this reason and shows the latest.
                message = f"(combined from similar events): {message}"
                key = who + (type_, reason, None)
            if not self._allowed_by_spam_filter(who, now):
                # client-go observes the repeat before filtering it, so the count is right when a write gets through
                held = self._seen.get(key)
                if held is not None and now - held.last <= CORRELATION_WINDOW:
                    held.unwritten += 1
                    held.last = now
                return
        seen = self._seen.get(key)
        try:
            if seen is not None and now - seen.last <= CORRELATION_WINDOW \
                    and self._bump(seen, source, now, message):
                seen.last = now
                return
            name = self._create(involved, namespace, type_, reason, message, source, action or source.action,
                                related, now)
        except StatusError as exc:  # events are best effort, as for every Kubernetes component
            log.debug("event %s/%s not recorded: %s", reason, involved["name"], exc.message)
            return
        self._seen[key] = _Seen(name, namespace, now)

    def _allowed_by_spam_filter(self, who: tuple, now: float) -> bool:
        bucket = self._spam.get(who)
        if bucket is None:
            bucket = self._spam[who] = _Bucket(SPAM_BURST, now)
        bucket.tokens = min(SPAM_BURST, bucket.tokens + (now - bucket.stamp) / SPAM_REFILL_SECONDS)
        bucket.stamp = now
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True

    def _aggregate(self, who: tuple, type_: str, reason: str, message: str, now: float) -> bool:
        """Whether this event joins the combined one: past ten distinct messages with one reason."""
        key = who + (type_, reason)
        entry = self._similar.get(key)
        if entry is None or now - entry[0] > CORRELATION_WINDOW:
            entry = self._similar[key] = [now, set()]
        entry[1].add(message)
        return len(entry[1]) > SIMILAR_EVENTS_LIMIT

    def _create(self, involved: dict, namespace: str, type_: str, reason: str, message: str,
                source: EventSource, action: str | None, related: dict | None, now: float) -> str:
        self._serial += 1
        # Upstream names an event <object>.<nanoseconds in hex>; the serial keeps names unique within a tick.
        nanos = int(now * 1_000_000) * 1000 + self._serial % 1000
        event: dict = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{involved['name']}.{nanos:x}", "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": type_,
        }
        if related:
            event["related"] = related
        if source.new_api:
            event["eventTime"] = self.clock.micro_timestamp(now)
            event["reportingComponent"] = source.component
            event["reportingInstance"] = f"{source.component}-{source.host}" if source.host else source.component
            event["action"] = action or reason
            event["source"] = {}
        else:
            src = {"component": source.component}
            if source.host:
                src["host"] = source.host
            event["source"] = src
            event["firstTimestamp"] = event["lastTimestamp"] = self.clock.timestamp(now)
            event["count"] = 1
            event["reportingComponent"] = source.component
            event["reportingInstance"] = source.host or ""
        created = self.api.create(self.events, namespace, event, self.ctx)
        return created["metadata"]["name"]

    def _bump(self, seen: _Seen, source: EventSource, now: float, message: str) -> bool:
        """Count a repeat on the existing Event; False when it is gone (expired or deleted)."""
        try:
            event = self.api.get(self.events, seen.namespace, seen.name)
        except NotFound:
            return False
        if source.new_api:
            series = event.get("series") or {"count": 1}
            event["series"] = {"count": series["count"] + 1,
                               "lastObservedTime": self.clock.micro_timestamp(now)}
        else:
            event["count"] = (event.get("count") or 1) + 1 + seen.unwritten
            event["lastTimestamp"] = self.clock.timestamp(now)
            event["message"] = message
        self.api.update(self.events, seen.namespace, seen.name, event, self.ctx)
        seen.unwritten = 0
        return True

    # ---- TTL ----------------------------------------------------------------------------------------
    def _expire(self, now: float) -> None:
        items, _ = self.api.store.list(self.events.bucket)
        for event in items:
            if now - _last_touched(event) > EVENT_TTL:
                meta = event["metadata"]
                try:
                    self.api.delete(self.events, meta["namespace"], meta["name"], DeleteOptions(), self.ctx)
                except NotFound:
                    pass
        if len(self._seen) > 10_000 or len(self._spam) > 10_000:
            self._seen = {k: v for k, v in self._seen.items() if now - v.last <= CORRELATION_WINDOW}
            self._spam = {k: v for k, v in self._spam.items() if now - v.stamp <= SPAM_REFILL_SECONDS * SPAM_BURST}
            self._similar = {k: v for k, v in self._similar.items() if now - v[0] <= CORRELATION_WINDOW}


def _last_touched(event: dict) -> float:
    series = event.get("series") or {}
    for stamp in (series.get("lastObservedTime"), event.get("lastTimestamp"), event.get("eventTime"),
                  event["metadata"].get("creationTimestamp")):
        if stamp:
            return parse_time(stamp)
    return 0.0


def _reference(obj: dict, field_path: str | None) -> dict:
    meta = obj["metadata"]
    ref = {"kind": obj["kind"], "apiVersion": obj["apiVersion"], "name": meta["name"]}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    if meta.get("uid"):
        ref["uid"] = meta["uid"]
    if meta.get("resourceVersion"):
        ref["resourceVersion"] = meta["resourceVersion"]
    if field_path:
        ref["fieldPath"] = field_path
    return ref
