"""The endpoints controller: one Endpoints object per Service with a selector.

As kube-controller-manager's endpoints controller does, each Service port
maps every selected pod that has an IP and has not finished to the container
port its targetPort resolves to; ready pods go to ``addresses``, the others
to ``notReadyAddresses`` (all to ``addresses`` with
``publishNotReadyAddresses``), and pods being deleted are left out unless
the Service publishes not-ready addresses. The subsets are repacked into the
canonical form (addresses that offer the same ports share a subset), so a
Service whose selector matches nothing, or whose named targetPort no pod
declares, has an Endpoints object with no subsets, which ``kubectl describe
svc`` shows as ``Endpoints: <none>``.

The Endpoints carry the Service's labels (plus ``service.kubernetes.io/headless``
for a headless Service) and the last-change trigger time. Services without a
selector keep whatever Endpoints their owner writes, and an Endpoints object
is deleted with its Service.
"""

from __future__ import annotations

from typing import Hashable, Iterable

from ..errors import Forbidden, StatusError
from ..store import Change, clone
from .events import EventSource
from .pod_conditions import is_ready
from .service_endpoints import (HEADLESS_LABEL, TRIGGER_TIME_ANNOTATION, Key, ServiceEndpointsController,
                                find_port, is_headless, pod_address, service_selector, should_be_in_endpoints,
                                should_set_hostname, target_ref)

SOURCE = EventSource("endpoint-controller")

_PortKey = tuple[str, int, str, "str | None"] | None  # name, port, protocol, appProtocol; None: a headless sentinel


class EndpointsController(ServiceEndpointsController):
    name = "endpoints"
    watches = ("services", "pods", "endpoints")

    def __init__(self, manager):
        super().__init__(manager)
        self.endpoints = self.resource("", "v1", "endpoints")

    def keys_for_output(self, change: Change) -> Iterable[Hashable]:
        meta = change.obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if change.rv == 0:
            return [key]  # present at start: drop it if its Service is gone (upstream's leftover check)
        if key == self._writing:
            return ()  # our own write
        return [key] if self.pods.selects(*key) else ()

    def reconcile(self, key: Key, now: float) -> float | None:
        namespace, name = key
        service = self.store.get(self.services.bucket, namespace, name)
        if service is None:
            self.trigger_times.forget(key)
            self.delete(self.endpoints, namespace, name)
            return None
        if service_selector(service) is None:
            return None
        pods = self.pods.members(namespace, name)
        trigger = self.trigger_times.compute(key, service, pods)
        subsets = endpoint_subsets(service, pods)
        current = self.store.get(self.endpoints.bucket, namespace, name)
        service_labels = service["metadata"].get("labels") or {}
        if current is not None:
            current_labels = {k: v for k, v in (current["metadata"].get("labels") or {}).items()
                              if k != HEADLESS_LABEL}
            if (current.get("subsets") or []) == subsets and current_labels == service_labels:
                return None
        wanted = clone(current) if current is not None else {
            "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name, "namespace": namespace}}
        meta = wanted["metadata"]
        labels = dict(service_labels)
        if is_headless(service):
            labels[HEADLESS_LABEL] = ""
        meta["labels"] = labels
        annotations = meta.get("annotations") or {}
        if trigger is not None:
            annotations[TRIGGER_TIME_ANNOTATION] = trigger
        else:
            annotations.pop(TRIGGER_TIME_ANNOTATION, None)
        if annotations:
            meta["annotations"] = annotations
        else:
            meta.pop("annotations", None)
        if subsets:
            wanted["subsets"] = subsets
        else:
            wanted.pop("subsets", None)
        try:
            with self.writing(key):
                if current is not None:
                    self.update(self.endpoints, wanted)
                else:
                    self.create(self.endpoints, wanted)
        except Forbidden as exc:
            if current is None and "is being terminated" in exc.message:
                return None  # the namespace is going away: creates will keep failing
            self._record_failure(wanted, current is None, namespace, name, exc)
            raise
        except StatusError as exc:
            self._record_failure(wanted, current is None, namespace, name, exc)
            raise
        return None

    def _record_failure(self, endpoints: dict, creating: bool, namespace: str, name: str,
                        exc: StatusError) -> None:
        if creating:
            self.events.record(endpoints, "Warning", "FailedToCreateEndpoint",
                               f"Failed to create endpoint for service {namespace}/{name}: {exc.message}", SOURCE)
        else:
            self.events.record(endpoints, "Warning", "FailedToUpdateEndpoint",
                               f"Failed to update endpoint {namespace}/{name}: {exc.message}", SOURCE)


def endpoint_subsets(service: dict, pods: list[dict]) -> list[dict]:
    """The Service's subsets from its pods, repacked as upstream's RepackSubsets does."""
    spec = service.get("spec") or {}
    publish = bool(spec.get("publishNotReadyAddresses"))
    service_ports = spec.get("ports") or []
    by_port: dict[_PortKey, dict[tuple[str, str], tuple[dict, bool]]] = {}

    def offer(port: _PortKey, address: dict, ready: bool) -> None:
        addresses = by_port.setdefault(port, {})
        key = (address["ip"], address["targetRef"]["uid"])
        if key not in addresses or ready:  # an address ready for one subset is ready for all
            addresses[key] = (address, ready)

    for pod in pods:
        if not should_be_in_endpoints(pod, publish):
            continue
        ip = pod_address(service, pod)
        if ip is None:
            continue
        address: dict = {"ip": ip}
        if should_set_hostname(pod, service):
            address["hostname"] = pod["spec"]["hostname"]
        if (pod.get("spec") or {}).get("nodeName"):
            address["nodeName"] = pod["spec"]["nodeName"]
        address["targetRef"] = target_ref(pod)
        ready = publish or is_ready(pod)
        if not service_ports:
            if is_headless(service):
                offer(None, address, ready)  # a headless Service may have no ports
            continue
        for service_port in service_ports:
            number = find_port(pod, service_port)
            if number is not None:
                offer((service_port.get("name") or "", number, service_port.get("protocol") or "TCP",
                       service_port.get("appProtocol")), address, ready)
    # Ports whose address sets are the same share one subset.
    groups: dict[frozenset, list[_PortKey]] = {}
    for port, addresses in by_port.items():
        groups.setdefault(frozenset((key, ready) for key, (_, ready) in addresses.items()), []).append(port)
    subsets = []
    for ports in groups.values():
        addresses = by_port[ports[0]]
        ordered = sorted(addresses.items(), key=lambda item: item[0])
        subset: dict = {}
        ready = [address for _, (address, ok) in ordered if ok]
        not_ready = [address for _, (address, ok) in ordered if not ok]
        if ready:
            subset["addresses"] = ready
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        real_ports = sorted((p for p in ports if p is not None), key=lambda p: (p[0], p[1], p[2], p[3] or ""))
        if real_ports:
            subset["ports"] = [_endpoint_port(p) for p in real_ports]
        subsets.append(subset)
    return sorted(subsets, key=_subset_order)


def _endpoint_port(port: tuple) -> dict:
    name, number, protocol, app_protocol = port
    out: dict = {}
    if name:
        out["name"] = name
    out["port"] = number
    out["protocol"] = protocol
    if app_protocol:
        out["appProtocol"] = app_protocol
    return out


def _subset_order(subset: dict) -> tuple:
    first = (subset.get("addresses") or subset.get("notReadyAddresses") or [{}])[0]
    ports = subset.get("ports") or [{}]
    return first.get("ip", ""), ports[0].get("port", 0), ports[0].get("name", "")
