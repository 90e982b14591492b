"""NodeUnschedulable: a cordoned node (``spec.unschedulable``) takes only pods that tolerate its taint."""

from __future__ import annotations

from ..cache import NodeInfo
from ..framework import CycleState, Plugin, Status, unresolvable
from ..node_selector import tolerated

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
REASON = "node(s) were unschedulable"


class NodeUnschedulable(Plugin):
    name = "NodeUnschedulable"

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        if node.unschedulable and not tolerated(state.pod.tolerations, UNSCHEDULABLE_TAINT):
            return unresolvable(REASON)
        return None
