"""What the scheduler reads from a pod, parsed once per pod version.

``PodInfo`` carries the pod's requests, host ports, inter-pod affinity terms
and a *label group* (namespace and sorted labels): pods of one ReplicaSet
share a group, so counting the pods a selector matches on a node costs one
match per group rather than one per pod.
"""

from __future__ import annotations

from typing import Callable, Mapping

from ...clock import parse_time
from ...selectors import LabelSelector, SelectorError
from . import resources
from .node_selector import RequiredNodeAffinity

PodKey = tuple[str, str]  # namespace, name
LabelGroup = tuple[str, tuple[tuple[str, str], ...]]  # namespace, sorted labels
NamespaceLabels = Callable[[str], Mapping[str, str]]


def label_selector(raw: dict | None) -> LabelSelector | None:
    """A metav1.LabelSelector; None (or one that cannot be parsed) selects nothing."""
    try:
        return LabelSelector.from_object(raw)
    except SelectorError:
        return None


class AffinityTerm:
    """A PodAffinityTerm of a pod in ``owner_namespace`` (with its weight when preferred)."""

    __slots__ = ("namespaces", "namespace_selector", "selector", "topology_key", "weight")

    def __init__(self, term: dict, owner_namespace: str, weight: int = 1):
        names = term.get("namespaces") or []
        raw_ns_selector = term.get("namespaceSelector")
        # No namespaces and no namespace selector mean the pod's own namespace.
        self.namespaces = frozenset(names) if names or raw_ns_selector is not None else frozenset([owner_namespace])
        self.namespace_selector = label_selector(raw_ns_selector)
        self.selector = label_selector(term.get("labelSelector"))
        self.topology_key: str = term.get("topologyKey") or ""
        self.weight = weight

    def matches(self, namespace: str, labels: Mapping[str, str], namespace_labels: NamespaceLabels) -> bool:
        if self.selector is None:
            return False
        if namespace not in self.namespaces and not (
                self.namespace_selector is not None and self.namespace_selector.matches(namespace_labels(namespace))):
            return False
        return self.selector.matches(labels)


def _terms(affinity: dict, kind: str, required: bool, namespace: str) -> tuple[AffinityTerm, ...]:
    section = affinity.get(kind) or {}
    if required:
        return tuple(AffinityTerm(t, namespace) for t in section.get("requiredDuringSchedulingIgnoredDuringExecution")
                     or ())
    return tuple(AffinityTerm(w.get("podAffinityTerm") or {}, namespace, w.get("weight") or 0)
                 for w in section.get("preferredDuringSchedulingIgnoredDuringExecution") or ())


class PodInfo:
    __slots__ = ("key", "obj", "uid", "namespace", "labels", "group", "priority", "requests", "non_zero_cpu",
                 "non_zero_memory", "host_ports", "required_affinity", "required_anti_affinity",
                 "preferred_affinity", "preferred_anti_affinity", "terminating", "node_affinity", "tolerations")

    def __init__(self, pod: dict):
        meta, spec = pod["metadata"], pod.get("spec") or {}
        self.obj = pod
        self.namespace: str = meta.get("namespace", "")
        self.key: PodKey = (self.namespace, meta["name"])
        self.uid: str = meta.get("uid", "")
        self.labels: dict[str, str] = meta.get("labels") or {}
        self.group: LabelGroup = (self.namespace, tuple(sorted(self.labels.items())))
        self.priority: int = spec.get("priority") or 0
        self.terminating = bool(meta.get("deletionTimestamp"))
        self.requests = resources.pod_requests(spec)
        non_zero = resources.pod_requests(spec, non_missing=True)
        self.non_zero_cpu = non_zero.get(resources.CPU, 0)
        self.non_zero_memory = non_zero.get(resources.MEMORY, 0)
        self.host_ports = resources.host_ports(spec)
        affinity = spec.get("affinity") or {}
        ns = self.namespace
        self.required_affinity = _terms(affinity, "podAffinity", True, ns)
        self.required_anti_affinity = _terms(affinity, "podAntiAffinity", True, ns)
        self.preferred_affinity = _terms(affinity, "podAffinity", False, ns)
        self.preferred_anti_affinity = _terms(affinity, "podAntiAffinity", False, ns)
        self.node_affinity = RequiredNodeAffinity(spec)
        self.tolerations: list[dict] = spec.get("tolerations") or []

    @property
    def spec(self) -> dict:
        return self.obj.get("spec") or {}

    @property
    def has_pod_affinity(self) -> bool:
        return bool(self.required_affinity or self.required_anti_affinity or self.preferred_affinity
                    or self.preferred_anti_affinity)

    def start_time(self, now: float) -> float:
        """When the pod started; pods not started yet count as starting now (GetPodStartTime)."""
        started = (self.obj.get("status") or {}).get("startTime")
        return parse_time(started) if started else now

    def refresh(self, pod: dict) -> None:
        """A newer version of the same pod whose scheduling-relevant fields did not change."""
        self.obj = pod


def scheduling_fields_changed(old: dict, new: dict) -> bool:
    """Whether an assigned pod changed in a way its PodInfo must be rebuilt for."""
    old_meta, new_meta = old["metadata"], new["metadata"]
    return (old_meta.get("labels") != new_meta.get("labels")
            or bool(old_meta.get("deletionTimestamp")) != bool(new_meta.get("deletionTimestamp"))
            or old_meta.get("uid") != new_meta.get("uid"))
