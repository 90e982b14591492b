"""NodeAffinity: ``nodeSelector`` and required node affinity filter nodes; preferred node affinity scores them.

Required terms that pin the pod to named nodes (``matchFields`` on
``metadata.name`` with ``In``, as the DaemonSet controller writes) narrow the
nodes at PreFilter; the other nodes are not evaluated.
"""

from __future__ import annotations

from ..cache import NodeInfo
from ..framework import CycleState, Plugin, PreFilterResult, SKIP, Status, default_normalize, unresolvable
from ..node_selector import NAME_FIELD, term_matches

REASON = "node(s) didn't match Pod's node affinity/selector"
CONFLICT = "pod affinity terms conflict"


class NodeAffinity(Plugin):
    name = "NodeAffinity"

    def pre_filter(self, state: CycleState) -> Status | PreFilterResult | None:
        affinity = state.pod.node_affinity
        if affinity.empty:
            return SKIP
        terms = (affinity.required or {}).get("nodeSelectorTerms") or []
        if not terms:
            return None
        names: set[str] = set()
        for term in terms:
            term_names: set[str] | None = None
            for req in term.get("matchFields") or ():
                if req.get("key") == NAME_FIELD and req.get("operator") == "In":
                    values = set(req.get("values") or ())
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None  # this term does not pin names, and terms are ORed: any node may do
            names |= term_names
        if not names:
            return unresolvable(CONFLICT)
        return PreFilterResult(frozenset(names))

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        if state.pod.node_affinity.matches(node.labels, node.name):
            return None
        return unresolvable(REASON)

    def pre_score(self, state: CycleState, nodes: list[NodeInfo]) -> bool:
        node_affinity = (state.pod.spec.get("affinity") or {}).get("nodeAffinity") or {}
        preferred = [(t.get("weight") or 0, t.get("preference") or {})
                     for t in node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()]
        preferred = [(weight, term) for weight, term in preferred if weight]
        state.data[self.name] = preferred
        return bool(preferred)

    def score(self, state: CycleState, node: NodeInfo) -> int:
        return sum(weight for weight, term in state.data[self.name] if term_matches(term, node.labels, node.name))

    def normalize(self, state: CycleState, names: list[str], scores: list[int]) -> None:
        default_normalize(scores, reverse=False)
