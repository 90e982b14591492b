"""NodePorts: a pod's host ports must be free on the node (0.0.0.0 conflicts with every address)."""

from __future__ import annotations

from ..cache import NodeInfo
from ..framework import CycleState, Plugin, SKIP, Status, unschedulable

REASON = "node(s) didn't have free ports for the requested pod ports"
ANY_ADDRESS = "0.0.0.0"


def conflicts(wanted: list[tuple[str, str, int]], used) -> bool:
    for ip, protocol, port in wanted:
        if ip == ANY_ADDRESS:
            if any(p == protocol and n == port for _, p, n in used):
                return True
        elif (ip, protocol, port) in used or (ANY_ADDRESS, protocol, port) in used:
            return True
    return False


class NodePorts(Plugin):
    name = "NodePorts"

    def pre_filter(self, state: CycleState) -> Status | None:
        return None if state.pod.host_ports else SKIP

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        if conflicts(state.pod.host_ports, node.used_ports):
            return unschedulable(REASON)
        return None
