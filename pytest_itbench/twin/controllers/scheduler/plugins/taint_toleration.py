"""TaintToleration: NoSchedule and NoExecute taints a pod does not tolerate rule a node out;
untolerated PreferNoSchedule taints lower its score."""

from __future__ import annotations

from ..cache import NodeInfo
from ..framework import CycleState, Plugin, Status, default_normalize, unresolvable
from ..node_selector import first_untolerated_taint, tolerated

PREFER_NO_SCHEDULE = "PreferNoSchedule"


class TaintToleration(Plugin):
    name = "TaintToleration"

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        taint = first_untolerated_taint(node.taints, state.pod.tolerations)
        if taint is None:
            return None
        return unresolvable(f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}")

    def pre_score(self, state: CycleState, nodes: list[NodeInfo]) -> bool:
        state.data[self.name] = [t for t in state.pod.tolerations
                                 if (t.get("effect") or "") in ("", PREFER_NO_SCHEDULE)]
        return True

    def score(self, state: CycleState, node: NodeInfo) -> int:
        tolerations = state.data[self.name]
        return sum(1 for taint in node.taints
                   if taint.get("effect") == PREFER_NO_SCHEDULE and not tolerated(tolerations, taint))

    def normalize(self, state: CycleState, names: list[str], scores: list[int]) -> None:
        default_normalize(scores, reverse=True)
