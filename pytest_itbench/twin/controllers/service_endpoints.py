"""What the endpoints and endpointslice controllers share: which pods back a Service, and how.

Both controllers of kube-controller-manager read a Service's selector, the
pods it selects and, for each pod, its IP of the Service's family, readiness,
node, hostname and the container port each Service port's ``targetPort``
resolves to. A number is taken as it is; a name must match a port the pod
declares with the same protocol, else the pod offers nothing for that
Service port. Both also stamp ``endpoints.kubernetes.io/last-change-trigger-time``:
the earliest of the changes (a pod's Ready transition, the Service's
creation) they have not yet reflected.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Hashable, Iterable, Iterator

from ..clock import format_time, parse_time
from ..selectors import LabelSelector, Requirement
from ..store import Change
from .manager import Controller
from .pod_conditions import condition, is_terminal
from .pod_selection import SelectorIndex

TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time"
HEADLESS_LABEL = "service.kubernetes.io/headless"

Key = tuple[str, str]


def service_selector(service: dict) -> LabelSelector | None:
    """The pods a Service's endpoints come from; None for a Service these controllers leave alone.

    A Service without a selector gets its endpoints from whoever writes them,
    and an ExternalName Service gets none (as upstream).
    """
    spec = service.get("spec") or {}
    selector = spec.get("selector")
    if not selector or spec.get("type") == "ExternalName":
        return None
    return LabelSelector(Requirement(k, "=", (str(v),)) for k, v in sorted(selector.items()))


def is_headless(service: dict) -> bool:
    return (service.get("spec") or {}).get("clusterIP") == "None"


def should_be_in_endpoints(pod: dict, include_terminating: bool) -> bool:
    """A pod that has an IP and has not finished (and, unless asked for, is not being deleted)."""
    if is_terminal(pod):
        return False
    status = pod.get("status") or {}
    if not status.get("podIP") and not status.get("podIPs"):
        return False
    return include_terminating or not pod["metadata"].get("deletionTimestamp")


def pod_addresses(pod: dict, family: str) -> list[str]:
    """The pod's IPs of one family (``IPv4`` or ``IPv6``)."""
    status = pod.get("status") or {}
    ips = [entry.get("ip", "") for entry in status.get("podIPs") or ()] or [status.get("podIP") or ""]
    want_v6 = family == "IPv6"
    # The kubelet reports valid addresses: a colon tells the families apart without parsing them.
    return [ip for ip in ips if ip and (":" in ip) == want_v6]


def pod_address(service: dict, pod: dict) -> str | None:
    """The pod's IP in the Service's (first) IP family."""
    families = (service.get("spec") or {}).get("ipFamilies") or ["IPv4"]
    found = pod_addresses(pod, families[0])
    return found[0] if found else None


def find_port(pod: dict, service_port: dict) -> int | None:
    """The container port a Service port's targetPort names on this pod (podutil.FindPort)."""
    target = service_port.get("targetPort")
    if target is None:
        return service_port.get("port")
    if isinstance(target, int):
        return target
    protocol = service_port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    for container in list(spec.get("containers") or ()) + sidecars:
        for port in container.get("ports") or ():
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return port.get("containerPort")
    return None


def should_set_hostname(pod: dict, service: dict) -> bool:
    spec = pod.get("spec") or {}
    return bool(spec.get("hostname")) and spec.get("subdomain") == service["metadata"]["name"] \
        and pod["metadata"].get("namespace") == service["metadata"].get("namespace")


def target_ref(pod: dict) -> dict:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}


def _endpoint_view(pod: dict | None) -> tuple | None:
    """What of a pod the endpoints depend on; a change elsewhere (restart counts, images) is ignored."""
    if pod is None:
        return None
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    ready = condition(pod, "Ready") or {}
    return (meta.get("labels"), meta.get("deletionTimestamp"), status.get("podIP"), status.get("podIPs"),
            status.get("phase"), ready.get("status"), ready.get("lastTransitionTime"), spec.get("nodeName"),
            spec.get("hostname"), spec.get("subdomain"))


class TriggerTimes:
    """The last-change trigger time, as upstream's TriggerTimeTracker computes it per Service.

    Times are kept as the API's second-precision UTC text, which orders as the instants do.
    """

    def __init__(self) -> None:
        self._seen: dict[Key, tuple[str, dict[str, str]]] = {}

    def compute(self, key: Key, service: dict, pods: list[dict]) -> str | None:
        before = self._seen.get(key)
        pod_times: dict[str, str] = {}
        changed: list[str] = []
        for pod in pods:
            when = (condition(pod, "Ready") or {}).get("lastTransitionTime")
            if not when:
                continue
            when = _canonical(when)
            name = pod["metadata"]["name"]
            pod_times[name] = when
            if before is None or when > before[1].get(name, ""):
                changed.append(when)
        created = _canonical(service["metadata"]["creationTimestamp"])
        if before is None or created > before[0]:
            changed.append(created)
        self._seen[key] = (created, pod_times)
        if before is None:
            return created  # a Service seen for the first time
        return min(changed) if changed else None

    def forget(self, key: Key) -> None:
        self._seen.pop(key, None)


def _canonical(stamp: str) -> str:
    """``2024-05-01T10:00:00Z`` as it is; any other RFC 3339 form rewritten to it."""
    if len(stamp) == 20 and stamp.endswith("Z"):
        return stamp
    return format_time(parse_time(stamp))


class ServiceEndpointsController(Controller):
    """Keys are Services; a pod change reaches the Services selecting it through a SelectorIndex."""

    def __init__(self, manager):
        super().__init__(manager)
        self.services = self.resource("", "v1", "services")
        self.pods = SelectorIndex(self.store, service_selector)
        self.trigger_times = TriggerTimes()
        self._writing: Key | None = None  # the Service whose objects this controller is writing now

    @contextmanager
    def writing(self, key: Key) -> Iterator[None]:
        """Mark writes as this controller's own, so they do not bring the Service back (keys_for runs inside them)."""
        self._writing = key
        try:
            yield
        finally:
            self._writing = None

    def keys_for(self, change: Change) -> Iterable[Hashable]:
        if change.bucket == "services":
            self.pods.selector_changed(change)
            meta = change.obj["metadata"]
            return [(meta.get("namespace", ""), meta["name"])]
        if change.bucket == "pods":
            if change.type == "MODIFIED" and _endpoint_view(change.old) == _endpoint_view(change.obj):
                return ()
            return self.pods.pod_changed(change)
        return self.keys_for_output(change)

    def keys_for_output(self, change: Change) -> Iterable[Hashable]:
        """Services to look at again after a change to what this controller writes."""
        raise NotImplementedError
