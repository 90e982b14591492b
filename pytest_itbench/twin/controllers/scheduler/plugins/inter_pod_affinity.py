"""InterPodAffinity: required pod affinity and anti-affinity (the pod's own and the existing pods')
filter nodes by topology domain; preferred terms, and the existing pods' required affinity, score them.

Counts are kept per topology pair (topology key, the node's value for it):
how many existing pods match all of the pod's affinity terms, each of its
anti-affinity terms, and how many existing pods' anti-affinity terms the pod
itself matches. A pod whose affinity only its own replicas satisfy may be the
first of them anywhere (upstream's exception for self-affinity).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..cache import NodeInfo
from ..framework import MAX_NODE_SCORE, CycleState, Plugin, SKIP, Status, unresolvable, unschedulable
from ..label_groups import GroupMatcher
from ..podinfo import AffinityTerm, PodInfo

AFFINITY_NOT_MATCH = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
HARD_POD_AFFINITY_WEIGHT = 1  # what an existing pod's required affinity adds when it matches the pod

Pair = tuple[str, str]


def _add_term(counts: Counter, term: AffinityTerm, node: NodeInfo, amount: int) -> None:
    value = node.labels.get(term.topology_key)
    if value is not None:
        counts[(term.topology_key, value)] += amount


@dataclass
class _FilterState:
    existing_anti: Counter  # pairs where an existing pod's anti-affinity term matches the pod
    affinity: Counter  # pairs holding pods that match all of the pod's affinity terms
    anti: Counter  # pairs holding pods that match one of the pod's anti-affinity terms
    matches_all_affinity: GroupMatcher
    anti_matchers: list[GroupMatcher]

    def clone(self) -> "_FilterState":
        return _FilterState(Counter(self.existing_anti), Counter(self.affinity), Counter(self.anti),
                            self.matches_all_affinity, self.anti_matchers)


def _matcher(terms: tuple[AffinityTerm, ...], state: CycleState) -> GroupMatcher:
    labels_of = state.cluster.namespace_labels
    return GroupMatcher(lambda ns, labels: bool(terms) and all(t.matches(ns, labels, labels_of) for t in terms),
                        state.cluster.label_groups)


class InterPodAffinity(Plugin):
    name = "InterPodAffinity"

    # ---- filtering ------------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState) -> Status | None:
        pod, nodes = state.pod, state.cluster.nodes
        with_anti = [n for n in nodes if n.with_required_anti_affinity]
        if not pod.required_affinity and not pod.required_anti_affinity and not with_anti:
            return SKIP
        data = _FilterState(Counter(), Counter(), Counter(), _matcher(pod.required_affinity, state),
                            [_matcher((t,), state) for t in pod.required_anti_affinity])
        for node in with_anti:
            for existing in node.with_required_anti_affinity.values():
                self._count_existing_anti(state, data, existing, node, 1)
        if pod.required_affinity or pod.required_anti_affinity:
            for node in nodes:
                for group, n in node.label_groups.items():
                    self._count_pod_terms(state, data, group, node, n)
        state.data[self.name] = data
        return None

    @staticmethod
    def _count_existing_anti(state: CycleState, data: _FilterState, existing: PodInfo, node: NodeInfo,
                             amount: int) -> None:
        pod = state.pod
        for term in existing.required_anti_affinity:
            if term.matches(pod.namespace, pod.labels, state.cluster.namespace_labels):
                _add_term(data.existing_anti, term, node, amount)

    @staticmethod
    def _count_pod_terms(state: CycleState, data: _FilterState, group, node: NodeInfo, amount: int) -> None:
        pod = state.pod
        if pod.required_affinity and data.matches_all_affinity(group):
            for term in pod.required_affinity:
                _add_term(data.affinity, term, node, amount)
        for term, matches in zip(pod.required_anti_affinity, data.anti_matchers):
            if matches(group):
                _add_term(data.anti, term, node, amount)

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        data: _FilterState = state.data[self.name]
        pod = state.pod
        if not self._affinity_satisfied(data, pod, node):
            return unresolvable(AFFINITY_NOT_MATCH)
        if data.anti:
            for term in pod.required_anti_affinity:
                value = node.labels.get(term.topology_key)
                if value is not None and data.anti[(term.topology_key, value)] > 0:
                    return unschedulable(ANTI_AFFINITY_NOT_MATCH)
        if data.existing_anti:
            for pair in node.labels.items():
                if data.existing_anti[pair] > 0:
                    return unschedulable(EXISTING_ANTI_AFFINITY_NOT_MATCH)
        return None

    @staticmethod
    def _affinity_satisfied(data: _FilterState, pod: PodInfo, node: NodeInfo) -> bool:
        pods_exist = True
        for term in pod.required_affinity:
            value = node.labels.get(term.topology_key)
            if value is None:
                return False  # every topology key must be on the node
            if data.affinity[(term.topology_key, value)] <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # No pod anywhere matches: the pod may go first if it matches its own terms.
        return not +data.affinity and data.matches_all_affinity(pod.group)

    def add_pod(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> None:
        self._update(state, pod, node, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> None:
        self._update(state, pod, node, -1)

    def _update(self, state: CycleState, pod: PodInfo, node: NodeInfo, amount: int) -> None:
        data: _FilterState | None = state.data.get(self.name)
        if data is None:
            return
        self._count_existing_anti(state, data, pod, node, amount)
        self._count_pod_terms(state, data, pod.group, node, amount)

    # ---- scoring ------------------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, nodes: list[NodeInfo]) -> bool:
        pod = state.pod
        labels_of = state.cluster.namespace_labels
        preferred = [(t, t.weight, _matcher((t,), state)) for t in pod.preferred_affinity] + \
                    [(t, -t.weight, _matcher((t,), state)) for t in pod.preferred_anti_affinity]
        scores: Counter = Counter()
        for node in state.cluster.nodes:
            if not node.labels:
                continue
            if preferred:
                for group, n in node.label_groups.items():
                    for term, weight, matches in preferred:
                        if matches(group):
                            _add_term(scores, term, node, weight * n)
            for existing in node.with_affinity.values():
                for term, weight in [*((t, HARD_POD_AFFINITY_WEIGHT) for t in existing.required_affinity),
                                     *((t, t.weight) for t in existing.preferred_affinity),
                                     *((t, -t.weight) for t in existing.preferred_anti_affinity)]:
                    if term.matches(pod.namespace, pod.labels, labels_of):
                        _add_term(scores, term, node, weight)
        by_key: dict[str, dict[str, int]] = {}
        for (key, value), score in scores.items():
            by_key.setdefault(key, {})[value] = score
        state.data[self.name + "/score"] = by_key
        return bool(by_key)

    def score(self, state: CycleState, node: NodeInfo) -> int:
        by_key: dict[str, dict[str, int]] = state.data[self.name + "/score"]
        return sum(values.get(node.labels[key], 0) for key, values in by_key.items() if key in node.labels)

    def normalize(self, state: CycleState, names: list[str], scores: list[int]) -> None:
        lowest, highest = min(scores), max(scores)
        spread = highest - lowest
        for i, score in enumerate(scores):
            scores[i] = int(MAX_NODE_SCORE * (score - lowest) / spread) if spread > 0 else 0
