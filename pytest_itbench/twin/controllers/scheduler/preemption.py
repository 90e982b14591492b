"""DefaultPreemption (the PostFilter): which lower-priority pods to evict so that a pending pod fits.

On every node where the pod was rejected for a reason preemption can change
(Unschedulable, not UnschedulableAndUnresolvable), all lower-priority pods
are imagined away; if the pod then fits, they are added back from the most
important down (those whose PodDisruptionBudget would be violated first),
keeping each one the pod still fits beside. The candidates are compared as
upstream does: fewest budget violations, lowest highest-victim priority,
lowest sum of priorities, fewest victims, latest start of the highest-
priority victims. This module decides; the scheduler carries it out.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ...selectors import LabelSelector
from .algorithm import Diagnosis, fit_error_message, run_filters_with_nominated
from .cache import ClusterCache, NodeInfo
from .framework import Code, CycleState, Status, unresolvable
from .plugins import FILTERS
from .podinfo import PodInfo, label_selector

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING_VICTIM = "not eligible due to a terminating pod on the nominated node."
PREFIX = "preemption: "
INT32_OFFSET = 2 ** 31  # priorities are shifted to be positive before they are summed


@dataclass
class Candidate:
    node: str
    victims: list[PodInfo]  # in the order they became victims: the most important first
    pdb_violations: int


@dataclass
class Outcome:
    """What preemption concluded: a node to nominate (with victims), or why not.

    ``nominate`` is the new nominatedNodeName: a node, "" to clear it, or None to leave it as it is.
    """

    nominate: str | None
    message: str = ""
    candidate: Candidate | None = None


def preempted_by_scheduler(pod: PodInfo) -> bool:
    """The pod is terminating because a scheduler preempted it."""
    if not pod.terminating:
        return False
    for condition in (pod.obj.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "DisruptionTarget":
            return condition.get("status") == "True" and condition.get("reason") == "PreemptionByScheduler"
    return False


def preempt(state: CycleState, cache: ClusterCache, diagnosis: Diagnosis, pdbs: list[dict],
            rng: random.Random) -> Outcome:
    pod = state.pod
    if pod.spec.get("preemptionPolicy") == "Never":
        return Outcome(None, PREFIX + NEVER)
    nominated = (pod.obj.get("status") or {}).get("nominatedNodeName")
    if nominated:
        status = diagnosis.statuses.get(nominated)
        node = cache.nodes.get(nominated)
        if (status is None or status.code != Code.UNSCHEDULABLE_AND_UNRESOLVABLE) and node is not None and any(
                p.priority < pod.priority and preempted_by_scheduler(p) for p in node.pods.values()):
            return Outcome(None, PREFIX + TERMINATING_VICTIM)
    statuses: dict[str, Status] = {}
    potential = []
    for node in state.cluster.nodes:
        status = diagnosis.statuses.get(node.name)
        if status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            statuses[node.name] = unresolvable(NOT_HELPFUL)
        else:
            potential.append(node)
    candidates = []
    if potential:
        offset = rng.randrange(len(potential))
        for i in range(len(potential)):
            node = potential[(offset + i) % len(potential)]
            victims, violations, status = select_victims(state, cache, node, pdbs)
            if status is None:
                candidates.append(Candidate(node.name, victims, violations))
            else:
                statuses[node.name] = status
    if not candidates:
        return Outcome("", PREFIX + fit_error_message(len(statuses), Diagnosis(statuses)))
    best = pick_candidate(candidates, state.now)
    return Outcome(best.node, "", best)


def _imagine(state: CycleState, node: NodeInfo, pod: PodInfo, present: bool) -> None:
    if present:
        node.add_pod(pod)
    else:
        node.remove_pod(pod.key)
    for plugin in FILTERS:
        if plugin.name not in state.skip_filter:
            (plugin.add_pod if present else plugin.remove_pod)(state, pod, node)


def select_victims(state: CycleState, cache: ClusterCache, node: NodeInfo,
                   pdbs: list[dict]) -> tuple[list[PodInfo], int, Status | None]:
    pod = state.pod
    lower = [p for _, p in sorted(node.pods.items()) if p.priority < pod.priority]
    if not lower:
        return [], 0, unresolvable(NO_VICTIMS)
    state, node = state.clone(), node.clone()
    for victim in lower:
        _imagine(state, node, victim, present=False)
    status = run_filters_with_nominated(state, cache, node)
    if status is not None:
        return [], 0, status
    lower.sort(key=lambda p: (-p.priority, p.start_time(state.now)))
    violating, keeping = _split_by_budget(lower, pdbs)
    victims, violations = [], 0
    for group, violates in ((violating, True), (keeping, False)):
        for candidate in group:
            _imagine(state, node, candidate, present=True)
            if run_filters_with_nominated(state, cache, node) is not None:
                _imagine(state, node, candidate, present=False)
                victims.append(candidate)
                violations += violates
    if not victims:
        return [], 0, Status(Code.ERROR, (f'expected at least one victim pod on node "{node.name}"',))
    return victims, violations, None


def _split_by_budget(pods: list[PodInfo], pdbs: list[dict]) -> tuple[list[PodInfo], list[PodInfo]]:
    """Pods whose eviction would take a PodDisruptionBudget below zero allowed disruptions, and the others."""
    budgets = []
    for pdb in pdbs:
        selector: LabelSelector | None = label_selector((pdb.get("spec") or {}).get("selector"))
        status = pdb.get("status") or {}
        budgets.append([pdb["metadata"].get("namespace"), selector, status.get("disruptionsAllowed", 0),
                        status.get("disruptedPods") or {}])
    violating, keeping = [], []
    for pod in pods:
        violated = False
        if pod.labels:
            for budget in budgets:
                namespace, selector, _, disrupted = budget
                if namespace != pod.namespace or selector is None or selector.empty or \
                        not selector.matches(pod.labels) or pod.key[1] in disrupted:
                    continue
                budget[2] -= 1
                violated = violated or budget[2] < 0
        (violating if violated else keeping).append(pod)
    return violating, keeping


def pick_candidate(candidates: list[Candidate], now: float) -> Candidate:
    """pickOneNodeForPreemption: apply each criterion in turn while several candidates tie."""

    def earliest_start_of_highest(c: Candidate) -> float:
        highest = max(v.priority for v in c.victims)
        return min(v.start_time(now) for v in c.victims if v.priority == highest)

    criteria = (
        lambda c: -c.pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(v.priority + INT32_OFFSET for v in c.victims),
        lambda c: -len(c.victims),
        earliest_start_of_highest,
    )
    for criterion in criteria:
        scores = [criterion(c) for c in candidates]
        best = max(scores)
        candidates = [c for c, s in zip(candidates, scores) if s == best]
        if len(candidates) == 1:
            break
    return candidates[0]
