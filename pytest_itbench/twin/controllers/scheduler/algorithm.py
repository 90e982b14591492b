"""One scheduling attempt: PreFilter, Filter on every node, Score the feasible ones, pick the best.

Mirrors schedule_one.go's schedulePod: a nominated node (left by an earlier
preemption) is tried first; nodes are filtered with the pods nominated to
them counted in (when those outrank the pod); the feasible nodes are scored
by the weighted plugins and the highest total wins, ties broken at random as
upstream does. When no node fits, the Diagnosis records why each node was
rejected, which is what FailedScheduling says.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from .cache import ClusterCache, NodeInfo
from .framework import Code, CycleState, PreFilterResult, Status, unresolvable
from .plugins import FILTERS, SCORES

NO_NODES = "no nodes available to schedule pods"
FILTERED_BY_PREFILTER = "node is filtered out by the prefilter result"


@dataclass
class Diagnosis:
    statuses: dict[str, Status] = field(default_factory=dict)  # node -> why it was rejected
    rejectors: set[str] = field(default_factory=set)  # plugins that rejected the pod somewhere
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


class FitError(Exception):
    """No node fits the pod."""

    def __init__(self, num_nodes: int, diagnosis: Diagnosis):
        super().__init__()
        self.num_nodes = num_nodes
        self.diagnosis = diagnosis

    @property
    def message(self) -> str:
        return fit_error_message(self.num_nodes, self.diagnosis)


class NoNodesAvailable(Exception):
    message = NO_NODES


def fit_error_message(num_nodes: int, diagnosis: Diagnosis) -> str:
    """FitError.Error(): the count of each reason over the nodes, sorted as text, then what preemption found."""
    message = f"0/{num_nodes} nodes are available:"
    if diagnosis.pre_filter_msg:
        message += f" {diagnosis.pre_filter_msg}."
    else:
        histogram = Counter(reason for status in diagnosis.statuses.values() for reason in status.reasons)
        parts = sorted(f"{count} {reason}" for reason, count in histogram.items())
        if parts:
            message += f" {', '.join(parts)}."
    post = diagnosis.post_filter_msg
    if post:
        message += f" {post}" if post.endswith(".") else f" {post}."
    return message


def run_filters(state: CycleState, node: NodeInfo) -> Status | None:
    for plugin in FILTERS:
        if plugin.name in state.skip_filter:
            continue
        status = plugin.filter(state, node)
        if status is not None:
            return status.by(plugin.name)
    return None


def run_filters_with_nominated(state: CycleState, cache: ClusterCache, node: NodeInfo) -> Status | None:
    """Filter as if the pods nominated to the node with at least the pod's priority were already there.

    A node passes only if the pod fits both with and without them (they may never come, and anti-affinity
    to them must not count either way), as RunFilterPluginsWithNominatedPods does.
    """
    pod = state.pod
    nominated = [p for p in cache.nominated_on(node.name) if p.priority >= pod.priority and p.uid != pod.uid]
    if not nominated:
        return run_filters(state, node)
    with_them, node_with_them = state.clone(), node.clone()
    for other in nominated:
        node_with_them.add_pod(other)
        for plugin in FILTERS:
            if plugin.name not in with_them.skip_filter:
                plugin.add_pod(with_them, other, node_with_them)
    status = run_filters(with_them, node_with_them)
    if status is not None:
        return status
    return run_filters(state, node)


def pre_filter(state: CycleState, diagnosis: Diagnosis) -> frozenset[str] | None | Status:
    """Run every PreFilter: the nodes worth filtering (None for all), or the status rejecting the pod."""
    names: frozenset[str] | None = None
    for plugin in FILTERS:
        result = plugin.pre_filter(state)
        if result is None:
            continue
        if isinstance(result, PreFilterResult):
            names = result.node_names if names is None else names & result.node_names
            continue
        if result.code == Code.SKIP:
            state.skip_filter.add(plugin.name)
            continue
        diagnosis.rejectors.add(plugin.name)
        return result.by(plugin.name)
    return names


def find_feasible(state: CycleState, cache: ClusterCache, diagnosis: Diagnosis) -> list[NodeInfo]:
    nodes = state.cluster.nodes
    narrowed = pre_filter(state, diagnosis)
    if isinstance(narrowed, Status):
        diagnosis.statuses = {node.name: narrowed for node in nodes}
        diagnosis.pre_filter_msg = narrowed.message
        return []
    nominated = (state.pod.obj.get("status") or {}).get("nominatedNodeName")
    if nominated and nominated in cache.nodes and cache.nodes[nominated].node is not None:
        node = cache.nodes[nominated]
        if (narrowed is None or nominated in narrowed) and run_filters_with_nominated(state, cache, node) is None:
            return [node]
    feasible = []
    for node in nodes:
        if narrowed is not None and node.name not in narrowed:
            diagnosis.statuses[node.name] = unresolvable(FILTERED_BY_PREFILTER)
            continue
        status = run_filters_with_nominated(state, cache, node)
        if status is None:
            feasible.append(node)
        else:
            diagnosis.statuses[node.name] = status
            diagnosis.rejectors.add(status.plugin)
    return feasible


def prioritize(state: CycleState, feasible: list[NodeInfo]) -> list[int]:
    """The weighted sum of every score plugin's normalised score, per feasible node."""
    names = [node.name for node in feasible]
    totals = [0] * len(feasible)
    for plugin, weight in SCORES:
        if not plugin.pre_score(state, feasible):
            continue
        scores = [plugin.score(state, node) for node in feasible]
        plugin.normalize(state, names, scores)
        for i, score in enumerate(scores):
            totals[i] += score * weight
    return totals


def schedule(state: CycleState, cache: ClusterCache, rng: random.Random) -> str:
    """The name of the node for the pod; raises FitError or NoNodesAvailable."""
    nodes = state.cluster.nodes
    if not nodes:
        raise NoNodesAvailable()
    diagnosis = Diagnosis()
    feasible = find_feasible(state, cache, diagnosis)
    if not feasible:
        raise FitError(len(nodes), diagnosis)
    if len(feasible) == 1:
        return feasible[0].name
    totals = prioritize(state, feasible)
    best = max(totals)
    ties = [node.name for node, total in zip(feasible, totals) if total == best]
    return ties[0] if len(ties) == 1 else rng.choice(ties)
