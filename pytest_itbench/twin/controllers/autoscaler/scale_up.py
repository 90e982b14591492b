"""Scale-up: which node group to grow, by how many nodes, for the pods the scheduler could not place.

As cluster-autoscaler's scale-up orchestrator:

1. pods that fit somewhere already (a node freed up, or a node that is still booting) are set aside: they
   need no new node (its "filter out schedulable");
2. each node group is tried: a group at its max size cannot help ("max node group size reached"); otherwise
   the pods are bin-packed onto imagined new nodes of the group's template, biggest pods first, within the
   room left under max size (its binpacking estimator); a pod that does not fit even an empty new node says
   why, in the scheduler's words;
3. of the groups that help, the ``least-waste`` expander picks the one leaving the smallest fraction of CPU
   plus memory idle on the new nodes (ties: more pods helped, fewer nodes, then the name). Upstream's
   default expander is ``random``; least-waste is the one cloud guides recommend and keeps the twin
   deterministic without drawing from its generator.

Pods no group helps are answered with NotTriggerScaleUp, their reasons counted over the groups.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..scheduler import resources
from ..scheduler.podinfo import PodInfo, PodKey
from .config import NodeGroup
from .node_template import simulated_node
from .simulation import Snapshot

MAX_SIZE_REACHED = "max node group size reached"


@dataclass
class Option:
    group: NodeGroup
    nodes: int
    pods: list[PodInfo]
    waste: float


@dataclass
class Plan:
    option: Option | None = None
    options: list[Option] = field(default_factory=list)
    reasons: dict[PodKey, Counter] = field(default_factory=dict)  # pods no group helps -> why, per group
    pods: dict[PodKey, PodInfo] = field(default_factory=dict)


def plan(snapshot: Snapshot, pending: list[PodInfo], groups: list[NodeGroup], sizes: dict[str, int],
         zones_for) -> Plan:
    """``sizes``: each group's target size (registered nodes not being removed, plus booting instances);
    ``zones_for(group)``: the zone its next node would be in."""
    result = Plan()
    waiting = [pod for pod in sorted(pending, key=lambda p: (-p.priority, p.key))
               if snapshot.place_anywhere(pod) is None]
    if not waiting:
        return result
    result.pods = {pod.key: pod for pod in waiting}
    reasons: dict[PodKey, Counter] = {pod.key: Counter() for pod in waiting}
    helped: set[PodKey] = set()
    for group in groups:
        room = group.max_size - sizes.get(group.name, 0)
        if room <= 0:
            for pod in waiting:
                reasons[pod.key][MAX_SIZE_REACHED] += 1
            continue
        option = _binpack(snapshot, group, waiting, room, zones_for(group), reasons)
        if option is not None:
            result.options.append(option)
            helped.update(pod.key for pod in option.pods)
    result.reasons = {key: why for key, why in reasons.items() if key not in helped}
    if result.options:
        result.option = min(result.options, key=lambda o: (o.waste, -len(o.pods), o.nodes, o.group.name))
    return result


def _binpack(snapshot: Snapshot, group: NodeGroup, pods: list[PodInfo], room: int, zone: str,
             reasons: dict[PodKey, Counter]) -> Option | None:
    allocatable = resources.resource_list(group.allocatable)
    new_nodes: list[str] = []
    placed: list[PodInfo] = []
    for pod in sorted(pods, key=lambda p: (-_size(p, allocatable), p.key)):
        home = next((name for name in new_nodes if snapshot.check(pod, name) is None), None)
        if home is None:
            name = f"template-node-for-{group.name}-{len(new_nodes)}"
            snapshot.add_node(simulated_node(group, name, zone))
            status = snapshot.check(pod, name)
            if status is not None:
                snapshot.remove_node(name)
                reasons[pod.key].update(status.reasons)
                continue
            if len(new_nodes) >= room:
                snapshot.remove_node(name)
                reasons[pod.key][MAX_SIZE_REACHED] += 1
                continue
            new_nodes.append(name)
            home = name
        snapshot.place(pod, home)
        placed.append(pod)
    for pod in placed:
        snapshot.unplace(pod)
    for name in new_nodes:
        snapshot.remove_node(name)
    if not placed:
        return None
    return Option(group, len(new_nodes), placed, _waste(placed, allocatable, len(new_nodes)))


def _size(pod: PodInfo, allocatable: dict[str, int]) -> float:
    """How much of a node the pod takes: its cpu and memory shares added (the estimator's sort order)."""
    return sum(pod.requests.get(r, 0) / allocatable[r] for r in (resources.CPU, resources.MEMORY)
               if allocatable.get(r))


def _waste(pods: list[PodInfo], allocatable: dict[str, int], nodes: int) -> float:
    waste = 0.0
    for r in (resources.CPU, resources.MEMORY):
        available = allocatable.get(r, 0) * nodes
        if available:
            waste += (available - sum(p.requests.get(r, 0) for p in pods)) / available
    return waste


def not_triggered_message(reasons: Counter) -> str:
    """NotTriggerScaleUp's message: each reason with the number of groups it came from, sorted as text."""
    return "pod didn't trigger scale-up: " + ", ".join(sorted(f"{n} {reason}" for reason, n in reasons.items()))


def triggered_message(group: NodeGroup, before: int, after: int) -> str:
    return f"pod triggered scale-up: [{{{group.name} {before}->{after} (max: {group.max_size})}}]"
