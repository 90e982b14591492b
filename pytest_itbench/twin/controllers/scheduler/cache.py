"""The scheduler's view of the cluster: one NodeInfo per node with running totals, kept up to date per change.

As kube-scheduler's cache, a NodeInfo holds the pods bound (or assumed) to
its node and what they add up to (requests, non-zero requests for scoring,
host ports, label groups, the pods with inter-pod affinity), updated by each
pod or node change rather than recomputed: scheduling a pod never rescans the
cluster's pods. Pods that finished (Succeeded or Failed) hold nothing, as the
scheduler's informer does not see them.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from . import resources
from .podinfo import LabelGroup, PodInfo, PodKey

# Kinds of node change that can make a pending pod schedulable (the scheduler's ClusterEvents).
NODE_ADD = "NodeAdd"
NODE_LABEL = "NodeLabel"
NODE_TAINT = "NodeTaint"
NODE_ALLOCATABLE = "NodeAllocatable"


class NodeInfo:
    __slots__ = ("name", "node", "labels", "taints", "unschedulable", "allocatable", "allowed_pods", "pods",
                 "requested", "non_zero_cpu", "non_zero_memory", "used_ports", "label_groups",
                 "live_label_groups", "with_affinity", "with_required_anti_affinity")

    def __init__(self, name: str):
        self.name = name
        self.node: dict | None = None  # None while pods name a node that does not exist (yet)
        self.labels: dict[str, str] = {}
        self.taints: list[dict] = []
        self.unschedulable = False
        self.allocatable: resources.Resources = {}
        self.allowed_pods = 0
        self.pods: dict[PodKey, PodInfo] = {}
        self.requested: resources.Resources = {}
        self.non_zero_cpu = 0
        self.non_zero_memory = 0
        self.used_ports: Counter = Counter()
        self.label_groups: Counter = Counter()  # every pod, terminating ones too (inter-pod affinity)
        self.live_label_groups: Counter = Counter()  # pods not being deleted (topology spread)
        self.with_affinity: dict[PodKey, PodInfo] = {}
        self.with_required_anti_affinity: dict[PodKey, PodInfo] = {}

    # ---- the node -----------------------------------------------------------------------------------
    def set_node(self, node: dict) -> set[str]:
        """Take a new version of the node; returns the kinds of change that matter to pending pods."""
        labels = node["metadata"].get("labels") or {}
        spec, status = node.get("spec") or {}, node.get("status") or {}
        taints = spec.get("taints") or []
        unschedulable = bool(spec.get("unschedulable"))
        allocatable = resources.resource_list(status.get("allocatable"))
        changes = set()
        if self.node is None:
            changes.add(NODE_ADD)
        else:
            if labels != self.labels:
                changes.add(NODE_LABEL)
            if taints != self.taints or unschedulable != self.unschedulable:
                changes.add(NODE_TAINT)
            if allocatable != self.allocatable:
                changes.add(NODE_ALLOCATABLE)
        self.node, self.labels, self.taints, self.unschedulable = node, labels, taints, unschedulable
        self.allowed_pods = allocatable.pop(resources.PODS, 0)
        self.allocatable = allocatable
        return changes

    # ---- pods -----------------------------------------------------------------------------------------
    def add_pod(self, pod: PodInfo) -> None:
        self._account(pod, 1)
        self.pods[pod.key] = pod

    def remove_pod(self, key: PodKey) -> PodInfo | None:
        pod = self.pods.pop(key, None)
        if pod is not None:
            self._account(pod, -1)
        return pod

    def _account(self, pod: PodInfo, sign: int) -> None:
        resources.add(self.requested, pod.requests, sign)
        self.non_zero_cpu += sign * pod.non_zero_cpu
        self.non_zero_memory += sign * pod.non_zero_memory
        for port in pod.host_ports:
            self.used_ports[port] += sign
            if self.used_ports[port] <= 0:
                del self.used_ports[port]
        _count(self.label_groups, pod.group, sign)
        if not pod.terminating:
            _count(self.live_label_groups, pod.group, sign)
        if pod.has_pod_affinity:
            _index(self.with_affinity, pod, sign)
        if pod.required_anti_affinity:
            _index(self.with_required_anti_affinity, pod, sign)

    def clone(self) -> "NodeInfo":
        """A copy whose pods can be added and removed without touching the cache (preemption's what-ifs)."""
        copy = NodeInfo(self.name)
        for slot in ("node", "labels", "taints", "unschedulable", "allocatable", "allowed_pods", "non_zero_cpu",
                     "non_zero_memory"):
            setattr(copy, slot, getattr(self, slot))
        copy.pods = dict(self.pods)
        copy.requested = dict(self.requested)
        copy.used_ports = Counter(self.used_ports)
        copy.label_groups = Counter(self.label_groups)
        copy.live_label_groups = Counter(self.live_label_groups)
        copy.with_affinity = dict(self.with_affinity)
        copy.with_required_anti_affinity = dict(self.with_required_anti_affinity)
        return copy


def _count(counter: Counter, group: LabelGroup, sign: int) -> None:
    counter[group] += sign
    if counter[group] <= 0:
        del counter[group]


def _index(index: dict[PodKey, PodInfo], pod: PodInfo, sign: int) -> None:
    if sign > 0:
        index[pod.key] = pod
    else:
        index.pop(pod.key, None)


class ClusterCache:
    """Nodes, the pods bound or assumed to them, and the pods nominated to them by preemption."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self._pod_node: dict[PodKey, str] = {}
        self._assumed: set[PodKey] = set()
        self._nominated: dict[str, dict[PodKey, PodInfo]] = {}
        self._nominated_node: dict[PodKey, str] = {}
        self._node_list: list[NodeInfo] | None = None
        # Every label group of a pod the cache holds (bound, assumed or nominated), with its number of pods,
        # and a version that moves whenever a group appears or disappears.
        self.groups: Counter = Counter()
        self.version = 0

    # ---- nodes -----------------------------------------------------------------------------------------
    def node_list(self) -> list[NodeInfo]:
        """The nodes that exist, by name."""
        if self._node_list is None:
            self._node_list = [info for _, info in sorted(self.nodes.items()) if info.node is not None]
        return self._node_list

    def set_node(self, node: dict) -> set[str]:
        name = node["metadata"]["name"]
        info = self.nodes.get(name)
        if info is None:
            info = self.nodes[name] = NodeInfo(name)
        changes = info.set_node(node)
        if NODE_ADD in changes:
            self._node_list = None
        return changes

    def remove_node(self, name: str) -> None:
        info = self.nodes.get(name)
        if info is None:
            return
        info.node = None
        self._node_list = None
        if not info.pods:
            del self.nodes[name]

    # ---- bound and assumed pods -------------------------------------------------------------------------
    def node_of(self, key: PodKey) -> str | None:
        return self._pod_node.get(key)

    def is_assumed(self, key: PodKey) -> bool:
        return key in self._assumed

    def pod(self, key: PodKey) -> PodInfo | None:
        node = self._pod_node.get(key)
        return self.nodes[node].pods.get(key) if node is not None else None

    def add_pod(self, pod: PodInfo, node_name: str) -> None:
        self.remove_pod(pod.key)
        info = self.nodes.get(node_name)
        if info is None:
            info = self.nodes[node_name] = NodeInfo(node_name)
        info.add_pod(pod)
        self._pod_node[pod.key] = node_name
        self._count_group(pod.group, 1)

    def remove_pod(self, key: PodKey) -> PodInfo | None:
        self._assumed.discard(key)
        node_name = self._pod_node.pop(key, None)
        if node_name is None:
            return None
        info = self.nodes[node_name]
        removed = info.remove_pod(key)
        if removed is not None:
            self._count_group(removed.group, -1)
        if info.node is None and not info.pods:
            del self.nodes[node_name]
        return removed

    def assume(self, pod: PodInfo, node_name: str) -> None:
        """Count a pod on its chosen node while its volumes bind, before the binding is written."""
        self.add_pod(pod, node_name)
        self._assumed.add(pod.key)

    def _count_group(self, group: LabelGroup, sign: int) -> None:
        if sign > 0 and group not in self.groups or sign < 0 and self.groups[group] == 1:
            self.version += 1
        _count(self.groups, group, sign)

    # ---- nominated pods -----------------------------------------------------------------------------------
    def set_nominated(self, key: PodKey, pod: PodInfo | None, node_name: str | None) -> None:
        """Record where a pending pod is nominated (``status.nominatedNodeName``), or that it is not."""
        old = self._nominated_node.pop(key, None)
        if old is not None:
            self._count_group(self._nominated[old].pop(key).group, -1)
            if not self._nominated[old]:
                del self._nominated[old]
        if pod is not None and node_name:
            self._nominated.setdefault(node_name, {})[key] = pod
            self._nominated_node[key] = node_name
            self._count_group(pod.group, 1)

    def nominated_on(self, node_name: str) -> Iterable[PodInfo]:
        pods = self._nominated.get(node_name)
        return [pods[k] for k in sorted(pods)] if pods else ()
