"""The autoscaler's what-if: the cluster's nodes and pods in a scheduler cache of its own, where pods can be
imagined onto nodes that do not exist yet or away from nodes that would go.

Whether a pod fits a node is decided by the scheduler's own PreFilter and Filter plugins
(``controllers/scheduler``), as cluster-autoscaler runs the scheduler framework in its simulations: resources,
node selectors and affinity, taints and tolerations, host ports, topology spread and inter-pod affinity all
count, and a refusal comes with the scheduler's reason ("Insufficient cpu", "node(s) didn't match Pod's node
affinity/selector"), which is what NotTriggerScaleUp events say.
"""

from __future__ import annotations

from ..scheduler import algorithm
from ..scheduler.cache import ClusterCache
from ..scheduler.framework import ClusterView, Code, CycleState, Status
from ..scheduler.podinfo import PodInfo
from . import pods as pod_rules


class Snapshot:
    def __init__(self, store, now: float):
        self.store = store
        self.now = now
        self.cache = ClusterCache()
        self.view = ClusterView(self.cache.node_list, self._lookup, self._listing, self.cache)
        for node in store.list("nodes")[0]:
            self.cache.set_node(node)
        for pod in store.list("pods")[0]:
            node = (pod.get("spec") or {}).get("nodeName")
            if node and not pod_rules.finished(pod):
                self.cache.add_pod(PodInfo(pod), node)

    def _lookup(self, bucket: str, namespace: str, name: str) -> dict | None:
        return self.store.get(bucket, namespace, name)

    def _listing(self, bucket: str, namespace: str | None) -> list[dict]:
        return self.store.list(bucket, namespace)[0]

    # ---- nodes -------------------------------------------------------------------------------------------
    def add_node(self, node: dict) -> None:
        self.cache.set_node(node)

    def remove_node(self, name: str) -> list[PodInfo]:
        """Take a node and its pods out; the pods, to put back or move."""
        info = self.cache.nodes.get(name)
        if info is None:
            return []
        pods = [info.pods[key] for key in sorted(info.pods)]
        for pod in pods:
            self.cache.remove_pod(pod.key)
        self.cache.remove_node(name)
        return pods

    def node_names(self) -> list[str]:
        return [info.name for info in self.cache.node_list()]

    # ---- pods --------------------------------------------------------------------------------------------
    def check(self, pod: PodInfo, node_name: str) -> Status | None:
        """None when ``pod`` fits on the node now; else the scheduler's reason it does not."""
        info = self.cache.nodes.get(node_name)
        if info is None or info.node is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node not found",))
        state = CycleState(pod, self.view, self.now)
        narrowed = algorithm.pre_filter(state, algorithm.Diagnosis())
        if isinstance(narrowed, Status):
            return narrowed
        if narrowed is not None and node_name not in narrowed:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (algorithm.FILTERED_BY_PREFILTER,))
        return algorithm.run_filters(state, info)

    def place(self, pod: PodInfo, node_name: str) -> None:
        self.cache.add_pod(pod, node_name)

    def unplace(self, pod: PodInfo) -> None:
        self.cache.remove_pod(pod.key)

    def place_anywhere(self, pod: PodInfo, exclude: set[str] = frozenset()) -> str | None:
        """Put the pod on the first node (by name) it fits; the node, or None."""
        for name in self.node_names():
            if name not in exclude and self.check(pod, name) is None:
                self.place(pod, name)
                return name
        return None
