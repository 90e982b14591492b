"""Replacing a node group's nodes when its instance type changes, one node at a time.

This is not cluster-autoscaler: the stock autoscaler never touches a node because its group's template
changed. It is what a managed node group (EKS) does when its launch template changes: bring up one new node
from the new template (a surge above the group's size, even at max size), and once it is Ready cordon and
drain one outdated node (evictions honour PodDisruptionBudgets and are retried until allowed), terminate
it, and go on with the next. Outdated nodes go oldest first. Scale-down leaves a node under replacement
alone, and the group's max size is not enforced while a replacement is under way (the surge is allowed).

If the template changes back before the old node's drain began, the replacement stops (the surge node
stays, for scale-down to judge); once the drain began it runs to the end.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import INSTANCE_TYPE_LABEL, NodeGroup
from .drain import REPLACE


@dataclass
class Replacement:
    old: str


def outdated(group: NodeGroup, node: dict) -> bool:
    return (node["metadata"].get("labels") or {}).get(INSTANCE_TYPE_LABEL) != group.instance_type


class RollingUpdates:
    def __init__(self, controller):
        self.c = controller
        self.active: dict[str, Replacement] = {}

    def under_way(self, group: str) -> bool:
        return group in self.active

    def node_in_replacement(self, node: str) -> bool:
        return any(r.old == node for r in self.active.values())

    def forget(self, keep: set[str]) -> None:
        for name in [g for g in self.active if g not in keep]:
            del self.active[name]

    def advance(self, group: NodeGroup, nodes: list[dict], now: float) -> None:
        """One step for ``group``, whose registered nodes are ``nodes``."""
        by_name = {n["metadata"]["name"]: n for n in nodes}
        current = self.active.get(group.name)
        if current is not None:
            old = by_name.get(current.old)
            if old is None:
                del self.active[group.name]  # drained and gone: the next one, at the next loop
            elif current.old not in self.c.drains:
                if not outdated(group, old):
                    del self.active[group.name]
                elif not self.c.cloud.replacing(current.old):
                    self.c.start_drain(current.old, group.name, REPLACE, now)
            return
        stale = [n for n in nodes if outdated(group, n) and n["metadata"]["name"] not in self.c.drains]
        if not stale:
            return
        stale.sort(key=lambda n: (n["metadata"].get("creationTimestamp") or "", n["metadata"]["name"]))
        old = stale[0]["metadata"]["name"]
        self.active[group.name] = Replacement(old)
        self.c.launch(group, 1, now, replaces=old)
