"""The endpointslice controller: EndpointSlices per Service with a selector.

As kube-controller-manager's endpointslice controller does:

* slices are named by the API server from ``<service>-`` (so ``web-x7k2q``),
  owned by the Service, labelled ``kubernetes.io/service-name`` and
  ``endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io``
  plus the Service's own labels, one set per IP family;
* every selected pod with an IP that has not finished is an endpoint, pods
  being deleted included, with conditions ``ready`` (serving and not
  terminating, or always with ``publishNotReadyAddresses``), ``serving``
  (the pod is Ready) and ``terminating``; pods on a node that does not exist
  are left out unless the Service publishes not-ready addresses;
* endpoints are grouped by the ports their pods offer (a pod that does not
  declare a named targetPort offers no port) into slices of at most 100,
  updating existing slices in place before creating new ones; a slice whose
  endpoints are all gone is reused for new endpoints rather than deleted and
  re-created, and a Service with no endpoints keeps one empty placeholder
  slice, so a slice's name survives a scale to zero and back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Iterable

from ..errors import StatusError
from ..store import Change, clone
from .events import EventSource
from .pod_conditions import is_ready
from .service_endpoints import (HEADLESS_LABEL, TRIGGER_TIME_ANNOTATION, Key, ServiceEndpointsController,
                                find_port, is_headless, pod_addresses, service_selector, should_be_in_endpoints,
                                should_set_hostname, target_ref)

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
ZONE_LABEL = "topology.kubernetes.io/zone"
MAX_ENDPOINTS_PER_SLICE = 100
RETRY_MISSING_NODE = 5.0  # a pod on a node that does not exist: look again, as upstream's error requeue does
SOURCE = EventSource("endpoint-slice-controller")
_RESERVED_LABELS = (SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL)


@dataclass
class _Fill:
    """An existing slice and the endpoints it will hold."""

    slice: dict
    endpoints: list[dict]
    changed: bool


@dataclass
class _Plan:
    creates: list[dict]
    updates: list[dict]
    deletes: list[dict]


class EndpointSliceController(ServiceEndpointsController):
    name = "endpointslice"
    watches = ("services", "pods", "endpointslices.discovery.k8s.io")

    def __init__(self, manager):
        super().__init__(manager)
        self.slices = self.resource("discovery.k8s.io", "v1", "endpointslices")
        self.nodes = self.resource("", "v1", "nodes")

    def keys_for_output(self, change: Change) -> Iterable[Hashable]:
        meta = change.obj["metadata"]
        labels = meta.get("labels") or {}
        service = labels.get(SERVICE_NAME_LABEL)
        if labels.get(MANAGED_BY_LABEL) != CONTROLLER_NAME or not service:
            return ()
        key = (meta.get("namespace", ""), service)
        if key == self._writing:
            return ()  # our own write
        return [key] if self.pods.selects(*key) else ()

    # ---- reconciling ----------------------------------------------------------------------------
    def reconcile(self, key: Key, now: float) -> float | None:
        namespace, name = key
        service = self.store.get(self.services.bucket, namespace, name)
        if service is None:
            self.trigger_times.forget(key)  # the garbage collector deletes the slices the Service owned
            return None
        if service_selector(service) is None:
            return None
        pods = self.pods.members(namespace, name)
        trigger = self.trigger_times.compute(key, service, pods)
        uid = service["metadata"]["uid"]
        existing = [s for s in self.store.list(self.slices.bucket, namespace)[0]
                    if (s["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL) == name
                    and (s["metadata"].get("labels") or {}).get(MANAGED_BY_LABEL) == CONTROLLER_NAME]
        families = (service.get("spec") or {}).get("ipFamilies") or ["IPv4"]
        plan = _Plan([], [], [s for s in existing if not _owned_by(s, uid) or s.get("addressType") not in families])
        for family in families:
            slices = [s for s in existing if _owned_by(s, uid) and s.get("addressType") == family]
            self._plan_family(service, family, pods, slices, plan)
        node_missing = any(self._node_missing(service, p) for p in pods)
        try:
            with self.writing(key):
                self._write(service, plan, trigger)
        except StatusError as exc:
            self.events.record(service, "Warning", "FailedToUpdateEndpointSlices",
                               f"Error updating Endpoint Slices for Service {namespace}/{name}: {exc.message}",
                               SOURCE)
            raise
        return RETRY_MISSING_NODE if node_missing else None

    def _node_missing(self, service: dict, pod: dict) -> bool:
        """A pod left out because its node does not exist (unless the Service publishes not-ready addresses)."""
        if (service.get("spec") or {}).get("publishNotReadyAddresses") or not should_be_in_endpoints(pod, True):
            return False
        node = (pod.get("spec") or {}).get("nodeName") or ""
        return self.store.get(self.nodes.bucket, "", node) is None

    def _plan_family(self, service: dict, family: str, pods: list[dict], slices: list[dict], plan: _Plan) -> None:
        desired = self._desired_endpoints(service, family, pods)
        labels = slice_labels(service)
        by_ports: dict[tuple, list[dict]] = {}
        for s in slices:
            by_ports.setdefault(_ports_key(s.get("ports") or []), []).append(s)
        creates: list[dict] = []
        deletes: list[dict] = []
        for ports_key in sorted(desired):
            ports, wanted = desired[ports_key]
            remaining = dict(wanted)
            fills: list[_Fill] = []
            for s in by_ports.pop(ports_key, []):
                kept, changed = [], False
                for endpoint in s.get("endpoints") or ():
                    want = remaining.pop((endpoint.get("targetRef") or {}).get("uid"), None)
                    if want is None:
                        changed = True
                        continue
                    changed = changed or want != endpoint
                    kept.append(want)
                if not kept:
                    deletes.append(s)
                    continue
                fills.append(_Fill(s, kept, changed or (s["metadata"].get("labels") or {}) != labels))
            new = sorted(remaining.values(), key=lambda e: (e["addresses"][0], e["targetRef"]["name"]))
            # New endpoints go first to slices that are being written anyway, then to any with room.
            for fill in sorted(fills, key=lambda f: not f.changed):
                while new and len(fill.endpoints) < MAX_ENDPOINTS_PER_SLICE:
                    fill.endpoints.append(new.pop(0))
                    fill.changed = True
            while new:
                chunk, new = new[:MAX_ENDPOINTS_PER_SLICE], new[MAX_ENDPOINTS_PER_SLICE:]
                creates.append(self._new_slice(service, family, ports, chunk, labels))
            for fill in fills:
                if fill.changed:
                    updated = clone(fill.slice)
                    updated["endpoints"] = fill.endpoints
                    updated["ports"] = ports or None
                    updated["metadata"]["labels"] = labels
                    plan.updates.append(updated)
        for leftovers in by_ports.values():
            deletes.extend(leftovers)
        if len(deletes) == len(slices) and not creates:
            # A Service with no endpoints keeps one empty slice.
            placeholder = self._new_slice(service, family, [], [], labels)
            if len(deletes) == 1 and _same_content(deletes[0], placeholder):
                deletes = []
            else:
                creates.append(placeholder)
        # Rather than delete one slice and create another, reuse the one being deleted.
        while creates and deletes:
            reused, wanted = clone(deletes.pop(0)), creates.pop()
            for field in ("endpoints", "ports"):
                reused[field] = wanted[field]
            reused["metadata"]["labels"] = wanted["metadata"]["labels"]
            plan.updates.append(reused)
        plan.creates.extend(creates)
        plan.deletes.extend(deletes)

    def _desired_endpoints(self, service: dict, family: str,
                           pods: list[dict]) -> dict[tuple, tuple[list[dict], dict[str, dict]]]:
        """Endpoints by the ports their pods offer: ports key -> (ports, endpoint by pod uid)."""
        publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
        desired: dict[tuple, tuple[list[dict], dict[str, dict]]] = {}
        for pod in pods:
            if not should_be_in_endpoints(pod, True):
                continue
            ports = endpoint_ports(service, pod)
            node_name = (pod.get("spec") or {}).get("nodeName") or ""
            node = self.store.get(self.nodes.bucket, "", node_name) if node_name else None
            if node is None and not publish:
                continue  # a pod on a node that does not exist is left out until the node appears
            endpoint = pod_endpoint(service, pod, node, family)
            if endpoint["addresses"]:
                desired.setdefault(_ports_key(ports), (ports, {}))[1][pod["metadata"]["uid"]] = endpoint
        return desired

    def _new_slice(self, service: dict, family: str, ports: list[dict], endpoints: list[dict],
                   labels: dict) -> dict:
        meta = service["metadata"]
        return {
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"generateName": f"{meta['name']}-", "namespace": meta["namespace"], "labels": labels,
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": meta["name"],
                                              "uid": meta["uid"], "controller": True,
                                              "blockOwnerDeletion": True}]},
            "addressType": family,
            "endpoints": endpoints or None,
            "ports": ports or None,
        }

    def _write(self, service: dict, plan: _Plan, trigger: str | None) -> None:
        namespace = service["metadata"]["namespace"]
        for s in plan.creates:
            _stamp(s, trigger)
            self.create(self.slices, s)
        for s in plan.updates:
            _stamp(s, trigger)
            self.update(self.slices, s)
        for s in plan.deletes:
            self.delete(self.slices, namespace, s["metadata"]["name"])


def slice_labels(service: dict) -> dict:
    """The Service's labels (reserved ones dropped), the headless marker and the slice's own two labels."""
    labels = {k: v for k, v in (service["metadata"].get("labels") or {}).items() if k not in _RESERVED_LABELS}
    if is_headless(service):
        labels[HEADLESS_LABEL] = ""
    labels[SERVICE_NAME_LABEL] = service["metadata"]["name"]
    labels[MANAGED_BY_LABEL] = CONTROLLER_NAME
    return labels


def endpoint_ports(service: dict, pod: dict) -> list[dict]:
    """The Service ports this pod offers, with the container port each resolves to."""
    out = []
    for service_port in (service.get("spec") or {}).get("ports") or ():
        number = find_port(pod, service_port)
        if number is None:
            continue
        port = {"name": service_port.get("name") or "", "port": number,
                "protocol": service_port.get("protocol") or "TCP"}
        if service_port.get("appProtocol"):
            port["appProtocol"] = service_port["appProtocol"]
        out.append(port)
    return out


def pod_endpoint(service: dict, pod: dict, node: dict | None, family: str) -> dict:
    serving = is_ready(pod)
    terminating = bool(pod["metadata"].get("deletionTimestamp"))
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    endpoint: dict = {
        "addresses": pod_addresses(pod, family),
        "conditions": {"ready": publish or (serving and not terminating), "serving": serving,
                       "terminating": terminating},
    }
    if should_set_hostname(pod, service):
        endpoint["hostname"] = pod["spec"]["hostname"]
    if (pod.get("spec") or {}).get("nodeName"):
        endpoint["nodeName"] = pod["spec"]["nodeName"]
    endpoint["targetRef"] = target_ref(pod)
    zone = ((node or {}).get("metadata", {}).get("labels") or {}).get(ZONE_LABEL)
    if zone:
        endpoint["zone"] = zone
    return endpoint


def _ports_key(ports: list[dict]) -> tuple:
    return tuple(sorted((p.get("name") or "", p.get("port") or 0, p.get("protocol") or "TCP",
                         p.get("appProtocol") or "") for p in ports))


def _owned_by(s: dict, uid: str) -> bool:
    return any(ref.get("uid") == uid and ref.get("controller") for ref in s["metadata"].get("ownerReferences") or ())


def _same_content(existing: dict, placeholder: dict) -> bool:
    return not existing.get("endpoints") and not existing.get("ports") \
        and existing.get("addressType") == placeholder["addressType"] \
        and (existing["metadata"].get("labels") or {}) == placeholder["metadata"]["labels"]


def _stamp(s: dict, trigger: str | None) -> None:
    annotations = s["metadata"].get("annotations") or {}
    if trigger is not None:
        annotations[TRIGGER_TIME_ANNOTATION] = trigger
    else:
        annotations.pop(TRIGGER_TIME_ANNOTATION, None)
    if annotations:
        s["metadata"]["annotations"] = annotations
    else:
        s["metadata"].pop("annotations", None)
