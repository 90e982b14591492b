"""PodTopologySpread: ``DoNotSchedule`` constraints filter nodes by skew; ``ScheduleAnyway`` ones score them.

Skew on a domain is the matching pods there, plus one if the pod matches its
own selector, minus the fewest matching pods of any domain (0 while fewer
domains than ``minDomains`` exist). A pod without constraints of its own is
scored with the cluster's default constraints (hostname, maxSkew 3; zone,
maxSkew 5), selecting the pods of the Services and the controller it belongs
to, which is what spreads a Deployment's replicas over the nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ....selectors import LabelSelector, Requirement
from ...manager import owner_of
from ..cache import NodeInfo
from ..framework import MAX_NODE_SCORE, CycleState, Plugin, SKIP, Status, unresolvable, unschedulable
from ..label_groups import GroupMatcher
from ..node_selector import first_untolerated_taint
from ..podinfo import PodInfo, label_selector

REASON = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL = REASON + " (missing required label)"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DEFAULT_CONSTRAINTS = ((HOSTNAME, 3), (ZONE, 5))
_OWNER_KINDS = (("ReplicaSet", "replicasets.apps"), ("StatefulSet", "statefulsets.apps"),
                ("ReplicationController", "replicationcontrollers"))


@dataclass
class Constraint:
    topology_key: str
    max_skew: int
    selector: LabelSelector | None
    matcher: GroupMatcher
    min_domains: int = 0
    honor_node_affinity: bool = True
    honor_node_taints: bool = False

    def includes(self, pod: PodInfo, node: NodeInfo) -> bool:
        """The node inclusion policies: does ``node`` count when spreading ``pod``?"""
        if self.honor_node_affinity and not pod.node_affinity.matches(node.labels, node.name):
            return False
        return not (self.honor_node_taints and first_untolerated_taint(node.taints, pod.tolerations) is not None)


def _matcher(state: CycleState, selector: LabelSelector | None) -> GroupMatcher:
    """countPodsMatchSelector: pods of the pod's namespace that a non-empty selector matches.

    The replicas of a workload share their selector: one matcher serves them all for a scheduling round.
    """
    namespace = state.pod.namespace
    key = ("spread-matcher", namespace, str(selector) if selector is not None else None)
    matcher = state.cluster.memo.get(key)
    if matcher is None:
        matcher = state.cluster.memo[key] = GroupMatcher(
            lambda ns, labels: ns == namespace and selector is not None and not selector.empty
            and selector.matches(labels), state.cluster.label_groups)
    return matcher


def _constraint(raw: dict, state: CycleState, selector: LabelSelector | None,
                matcher: GroupMatcher | None = None) -> Constraint:
    matcher = matcher or _matcher(state, selector)
    return Constraint(raw.get("topologyKey", ""), raw.get("maxSkew") or 1, selector, matcher,
                      raw.get("minDomains") or 0, raw.get("nodeAffinityPolicy", "Honor") == "Honor",
                      raw.get("nodeTaintsPolicy", "Ignore") == "Honor")


def _pod_constraints(state: CycleState, action: str) -> list[Constraint]:
    pod = state.pod
    out = []
    for raw in pod.spec.get("topologySpreadConstraints") or ():
        if raw.get("whenUnsatisfiable") != action:
            continue
        selector = label_selector(raw.get("labelSelector"))
        keys = [(k, pod.labels[k]) for k in raw.get("matchLabelKeys") or () if k in pod.labels]
        if selector is not None and keys:
            selector = LabelSelector([*selector.requirements, *(Requirement(k, "in", (v,)) for k, v in keys)])
        out.append(_constraint(raw, state, selector))
    return out


def _default_selector(state: CycleState) -> LabelSelector | None:
    """helper.DefaultSelector: the selectors of the pod's Services and of its controller, merged."""
    pod = state.pod
    owner = owner_of(pod.obj, "ReplicaSet") or owner_of(pod.obj, "StatefulSet") or \
        owner_of(pod.obj, "ReplicationController")
    memo_key = ("default-spread-selector", pod.group, owner.get("uid") if owner else None)
    memo = state.cluster.memo
    if memo_key in memo:
        return memo[memo_key]
    merged: dict[str, str] = {}
    for service in state.cluster.list("services", pod.namespace):
        wanted = (service.get("spec") or {}).get("selector")
        if wanted is not None and all(pod.labels.get(k) == v for k, v in wanted.items()):
            merged.update(wanted)
    controller = None
    if owner is not None:
        bucket = dict(_OWNER_KINDS)[owner["kind"]]
        controller = state.cluster.get(bucket, pod.namespace, owner.get("name", ""))
    if controller is not None and owner["kind"] == "ReplicationController":
        merged.update((controller.get("spec") or {}).get("selector") or {})
    requirements = [Requirement(k, "=", (v,)) for k, v in sorted(merged.items())]
    if controller is not None and owner["kind"] != "ReplicationController":
        parsed = label_selector((controller.get("spec") or {}).get("selector"))
        requirements += list(parsed.requirements) if parsed is not None else []
    selector = LabelSelector(requirements) if requirements else None
    memo[memo_key] = selector
    return selector


def _has_keys(node: NodeInfo, constraints: list[Constraint]) -> bool:
    return all(c.topology_key in node.labels for c in constraints)


@dataclass
class _FilterState:
    constraints: list[Constraint]
    counts: dict[tuple[str, str], int]
    _minimum: dict[str, int] = field(default_factory=dict)

    def minimum(self, constraint: Constraint) -> int:
        key = constraint.topology_key
        if key not in self._minimum:
            values = [n for (k, _), n in self.counts.items() if k == key]
            self._minimum[key] = min(values) if values else 0
        if constraint.min_domains and sum(1 for k, _ in self.counts if k == key) < constraint.min_domains:
            return 0
        return self._minimum[key]

    def clone(self) -> "_FilterState":
        return _FilterState(self.constraints, dict(self.counts))


@dataclass
class _ScoreState:
    constraints: list[Constraint]
    weights: list[float]
    counts: dict[tuple[str, str], int]
    ignored: set[str]


class PodTopologySpread(Plugin):
    name = "PodTopologySpread"

    # ---- filtering ------------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState) -> Status | None:
        constraints = _pod_constraints(state, "DoNotSchedule")
        if not constraints:
            return SKIP
        counts: dict[tuple[str, str], int] = {}
        for node in state.cluster.nodes:
            if not _has_keys(node, constraints):
                continue
            for c in constraints:
                if c.includes(state.pod, node):
                    pair = (c.topology_key, node.labels[c.topology_key])
                    counts[pair] = counts.get(pair, 0) + c.matcher.count(node.live_label_groups)
        state.data[self.name] = _FilterState(constraints, counts)
        return None

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        data: _FilterState = state.data[self.name]
        pod = state.pod
        for c in data.constraints:
            value = node.labels.get(c.topology_key)
            if value is None:
                return unresolvable(MISSING_LABEL)
            self_match = 1 if c.selector is not None and c.selector.matches(pod.labels) else 0
            if data.counts.get((c.topology_key, value), 0) + self_match - data.minimum(c) > c.max_skew:
                return unschedulable(REASON)
        return None

    def add_pod(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> None:
        self._update(state, pod, node, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> None:
        self._update(state, pod, node, -1)

    def _update(self, state: CycleState, pod: PodInfo, node: NodeInfo, delta: int) -> None:
        data: _FilterState | None = state.data.get(self.name)
        if data is None or pod.namespace != state.pod.namespace or not _has_keys(node, data.constraints):
            return
        for c in data.constraints:
            if c.selector is not None and c.selector.matches(pod.labels) and c.includes(state.pod, node):
                pair = (c.topology_key, node.labels[c.topology_key])
                data.counts[pair] = data.counts.get(pair, 0) + delta
                data._minimum.pop(c.topology_key, None)

    # ---- scoring ----------------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, nodes: list[NodeInfo]) -> bool:
        pod = state.pod
        own = bool(pod.spec.get("topologySpreadConstraints"))
        if own:
            constraints = _pod_constraints(state, "ScheduleAnyway")
        else:
            selector = _default_selector(state)
            shared = _matcher(state, selector)  # both default constraints select the same pods
            constraints = [_constraint({"topologyKey": key, "maxSkew": skew}, state, selector, shared)
                           for key, skew in DEFAULT_CONSTRAINTS] if selector is not None else []
        if not constraints:
            return False
        require_all = own  # the cluster's defaults also score nodes that lack a topology label
        ignored: set[str] = set()
        counts: dict[tuple[str, str], int] = {}
        sizes = [0] * len(constraints)
        for node in nodes:
            if require_all and not _has_keys(node, constraints):
                ignored.add(node.name)
                continue
            for i, c in enumerate(constraints):
                value = node.labels.get(c.topology_key)
                if c.topology_key == HOSTNAME or value is None or (c.topology_key, value) in counts:
                    continue
                counts[(c.topology_key, value)] = 0
                sizes[i] += 1
        for i, c in enumerate(constraints):
            if c.topology_key == HOSTNAME:
                sizes[i] = len(nodes) - len(ignored)
        if counts:
            for node in state.cluster.nodes:
                if require_all and not _has_keys(node, constraints):
                    continue
                for c in constraints:
                    pair = (c.topology_key, node.labels.get(c.topology_key))
                    if pair in counts and c.includes(pod, node):
                        counts[pair] += c.matcher.count(node.live_label_groups)
        weights = [math.log(size + 2) for size in sizes]
        state.data[self.name + "/score"] = _ScoreState(constraints, weights, counts, ignored)
        return True

    def score(self, state: CycleState, node: NodeInfo) -> int:
        data: _ScoreState = state.data[self.name + "/score"]
        if node.name in data.ignored:
            return 0
        total = 0.0
        for c, weight in zip(data.constraints, data.weights):
            value = node.labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == HOSTNAME:
                count = c.matcher.count(node.live_label_groups)
            else:
                count = data.counts.get((c.topology_key, value), 0)
            total += count * weight + (c.max_skew - 1)
        return math.floor(total + 0.5)

    def normalize(self, state: CycleState, names: list[str], scores: list[int]) -> None:
        data: _ScoreState = state.data[self.name + "/score"]
        valid = [s for s, name in zip(scores, names) if name not in data.ignored]
        lowest, highest = (min(valid), max(valid)) if valid else (0, 0)
        for i, name in enumerate(names):
            if name in data.ignored:
                scores[i] = 0
            elif highest == 0:
                scores[i] = MAX_NODE_SCORE
            else:
                scores[i] = MAX_NODE_SCORE * (highest + lowest - scores[i]) // highest
