"""Scale-down: which nodes of the node groups are unneeded, and since when.

As cluster-autoscaler with its default flags: a Ready node is a candidate when the requests of its pods are
below ``scale-down-utilization-threshold`` (0.5) of its allocatable, for CPU and memory alike (the larger
share counts; DaemonSet pods count too); a node that is not Ready is a candidate whatever its use. A
candidate is unneeded when none of its pods forbids the move (``pods.blocking_reason``, budgets) and each
pod that must move fits on another node, the scheduler's filters deciding, with the pods of nodes found
unneeded before it moved already (one node's pods cannot be counted on a node that goes too).

Nodes carrying ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"`` are never candidates.
How long a node has been unneeded is tracked here; when it may go (``scale-down-unneeded-time``, the group's
min size, the cool-downs) is the controller's decision.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..scheduler import resources
from ..scheduler.podinfo import PodInfo
from . import pods as pod_rules
from .simulation import Snapshot

UTILIZATION_THRESHOLD = 0.5
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"


@dataclass
class Candidate:
    node: dict
    group: str
    utilization: float
    ready: bool
    empty: bool  # nothing to move: only DaemonSet or mirror pods, or none


def ready(node: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or ())


def utilization(node: dict, pods: list[dict]) -> float:
    allocatable = resources.resource_list((node.get("status") or {}).get("allocatable"))
    requested: dict[str, int] = {}
    for pod in pods:
        if not pod_rules.finished(pod):
            resources.add(requested, resources.pod_requests(pod.get("spec") or {}))
    shares = [requested.get(r, 0) / allocatable[r] for r in (resources.CPU, resources.MEMORY) if allocatable.get(r)]
    return max(shares, default=0.0)


def find_unneeded(make_snapshot, nodes: list[tuple[dict, str]], pods_by_node: dict[str, list[dict]],
                  budgets_of) -> list[Candidate]:
    """The unneeded nodes among ``nodes`` ((node, group) pairs), least used first.

    ``make_snapshot()`` builds the simulation; it is built only when some candidate has pods to move (an
    empty node needs no what-if), which keeps an idle group's loop cheap.
    """
    candidates = []
    for node, group in nodes:
        name = node["metadata"]["name"]
        if (node["metadata"].get("annotations") or {}).get(SCALE_DOWN_DISABLED) == "true":
            continue
        on_node = pods_by_node.get(name, [])
        used = utilization(node, on_node)
        is_ready = ready(node)
        if is_ready and used >= UTILIZATION_THRESHOLD:
            continue
        movable = [p for p in on_node if not pod_rules.stays_with_node(p) and not p["metadata"].get("deletionTimestamp")]
        candidates.append(Candidate(node, group, used, is_ready, not movable))
    unneeded = []
    snapshot: Snapshot | None = None
    for candidate in sorted(candidates, key=lambda c: (c.utilization, c.node["metadata"]["name"])):
        if candidate.empty:
            unneeded.append(candidate)
            if snapshot is not None:
                snapshot.remove_node(candidate.node["metadata"]["name"])
            continue
        if snapshot is None:
            snapshot = make_snapshot()
            for earlier in unneeded:  # nodes found unneeded before are gone in the what-if
                snapshot.remove_node(earlier.node["metadata"]["name"])
        if _removable(snapshot, candidate, pods_by_node, budgets_of):
            unneeded.append(candidate)
    return unneeded


def _removable(snapshot: Snapshot, candidate: Candidate, pods_by_node: dict[str, list[dict]], budgets_of) -> bool:
    name = candidate.node["metadata"]["name"]
    movable = [p for p in pods_by_node.get(name, ())
               if not pod_rules.stays_with_node(p) and not p["metadata"].get("deletionTimestamp")]
    if any(pod_rules.blocking_reason(p, budgets_of(p["metadata"]["namespace"])) for p in movable):
        return False
    if pod_rules.budgets_block(movable, budgets_of):
        return False
    moving = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in movable}
    removed = snapshot.remove_node(name)
    moved: list[PodInfo] = []
    for info in removed:
        if info.key not in moving:
            continue
        if snapshot.place_anywhere(info) is None:
            for done in moved:
                snapshot.unplace(done)
            snapshot.add_node(candidate.node)
            for back in removed:
                snapshot.place(back, name)
            return False
        moved.append(info)
    return True
