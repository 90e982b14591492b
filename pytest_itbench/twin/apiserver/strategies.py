"""Per-resource rules the API server applies around create and update.

These follow the ``RESTCreateStrategy``/``RESTUpdateStrategy`` of each
registry in kube-apiserver (pkg/registry/...): what a create resets, which
part of an object the main endpoint and the status subresource may change,
when ``metadata.generation`` moves, and which objects an update may create.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from .resources import Resource

# Resources whose PUT creates a missing object (AllowCreateOnUpdate).
CREATE_ON_UPDATE = {"events", "events.events.k8s.io", "endpoints", "leases.coordination.k8s.io",
                    "endpointslices.discovery.k8s.io", "limitranges", "priorityclasses.scheduling.k8s.io"}

# Fields outside spec/status whose change bumps generation (as the strategies compare them).
_GENERATION_FIELDS = {
    "apiextensions.k8s.io/customresourcedefinitions": ("spec",),
}


def spec_part(res: Resource, obj: dict) -> dict:
    """Everything but metadata and status: what the main endpoint owns and generation tracks."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def prepare_for_create(res: Resource, obj: dict) -> None:
    meta = obj["metadata"]
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
        meta.pop(key, None)
    if res.has_generation:
        meta["generation"] = 1
    if res.has_status and res.kind not in _STATUS_KEPT_ON_CREATE:
        obj.pop("status", None)
    kind = res.kind
    if kind == "Pod":
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(obj.get("spec") or {})}
    elif kind == "Namespace":
        obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]
        obj["status"] = {"phase": "Active"}
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
    elif kind == "Service":
        obj["status"] = {"loadBalancer": {}}
    elif kind in _EMPTY_STATUS:
        # Go writes non-omitempty status counters even when they are zero.
        obj["status"] = dict(_EMPTY_STATUS[kind])
    elif kind == "PersistentVolumeClaim":
        obj["status"] = {"phase": "Pending"}
    elif kind == "PersistentVolume":
        obj["status"] = {"phase": "Pending"}
    elif kind == "Ingress":
        obj["status"] = {"loadBalancer": {}}


_EMPTY_STATUS = {
    "Deployment": {}, "Job": {}, "CronJob": {},
    "ReplicaSet": {"replicas": 0},
    "StatefulSet": {"replicas": 0, "availableReplicas": 0},
    "DaemonSet": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                  "numberReady": 0},
    "HorizontalPodAutoscaler": {"desiredReplicas": 0},
    "PodDisruptionBudget": {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0},
}

# Kinds whose status a create keeps (their status is not a subresource or is set by the creator).
_STATUS_KEPT_ON_CREATE = {"Node", "CustomResourceDefinition"}


def prepare_for_update(res: Resource, new: dict, old: dict) -> None:
    """Main-endpoint update: status is the status subresource's business."""
    if res.has_status and res.kind not in ("Node",):
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    if res.kind == "Namespace":
        # spec.finalizers are changed through /finalize only.
        new["spec"] = old.get("spec", {})
        new["status"] = old.get("status", {})
    bump_generation(res, new, old)


def prepare_for_status_update(res: Resource, new: dict, old: dict) -> None:
    """Status update: only status (and, as upstream, nothing in spec) may change."""
    for key, value in old.items():
        if key not in ("status", "metadata"):
            new[key] = value
    for key in list(new):
        if key not in old and key not in ("status", "metadata"):
            del new[key]
    meta, old_meta = new["metadata"], old["metadata"]
    # Status writers may not change metadata other than labels/annotations/finalizers/ownerReferences.
    for key in ("generation", "deletionTimestamp", "deletionGracePeriodSeconds"):
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)


def bump_generation(res: Resource, new: dict, old: dict) -> None:
    meta = new["metadata"]
    old_gen = old["metadata"].get("generation")
    if not res.has_generation and res.crd is None:
        if old_gen is not None:
            meta["generation"] = old_gen
        else:
            meta.pop("generation", None)
        return
    gen = old_gen or 1
    if spec_part(res, new) != spec_part(res, old) or _deletion_started(new, old):
        gen += 1
    meta["generation"] = gen


def _deletion_started(new: dict, old: dict) -> bool:
    return bool(new["metadata"].get("deletionTimestamp")) and not old["metadata"].get("deletionTimestamp")


def qos_class(spec: dict) -> str:
    """The pod's QoS class, from its containers' requests and limits (pkg/apis/core/helper/qos)."""
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    requests_seen = limits_seen = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        for name in ("cpu", "memory"):
            if name in req or name in lim:
                requests_seen = True
            if name in lim:
                limits_seen = True
            if name not in lim:
                guaranteed = False
            elif name in req and str(req[name]) != str(lim[name]):
                guaranteed = False
    if not requests_seen and not limits_seen:
        return "BestEffort"
    if guaranteed and limits_seen:
        return "Guaranteed"
    return "Burstable"


@dataclass
class IPAllocator:
    """Allocates ClusterIPs from the service CIDR (10.96.0.0/12 as kubeadm and kind use)."""

    cidr: str = "10.96.0.0/12"

    def __post_init__(self) -> None:
        self.network = ipaddress.ip_network(self.cidr)
        self.used: set[str] = set()

    def allocate(self, rng, wanted: str | None = None) -> str:
        if wanted:
            self.used.add(wanted)
            return wanted
        size = self.network.num_addresses
        while True:
            # Random like the real allocator, but from the twin's seeded generator.
            offset = rng.randrange(11, size - 1)
            ip = str(self.network.network_address + offset)
            if ip not in self.used:
                self.used.add(ip)
                return ip

    def release(self, ip: str | None) -> None:
        if ip:
            self.used.discard(ip)

    def contains(self, ip: str) -> bool:
        try:
            return ipaddress.ip_address(ip) in self.network
        except ValueError:
            return False


@dataclass
class PortAllocator:
    """Allocates NodePorts from 30000-32767."""

    low: int = 30000
    high: int = 32767

    def __post_init__(self) -> None:
        self.used: set[int] = set()

    def allocate(self, rng, wanted: int | None = None) -> int:
        if wanted:
            self.used.add(wanted)
            return wanted
        while True:
            port = rng.randint(self.low, self.high)
            if port not in self.used:
                self.used.add(port)
                return port

    def release(self, port: int | None) -> None:
        if port:
            self.used.discard(port)
