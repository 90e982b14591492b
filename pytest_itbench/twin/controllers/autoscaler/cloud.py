"""The cloud behind the node groups: instances launched and booting, and the Nodes they register.

An instance is launched from its group's template as it is at that moment (a launch template), boots for
``PROVISIONING_TIME`` simulated seconds, then its kubelet registers a Ready Node (``bootstrap.add_node``)
with the template's labels, annotations and taints, the instance type's capacity, and the standard labels of
a cloud node (instance type, region, zone). Until then the instance is the group's, counted in its target
size, but the cluster does not see it, as with a real cloud: the autoscaler's status lists it as
``unregistered``.

This is the one piece of autoscaler state that is not in the cluster: what the cloud is doing. It is kept
in memory, as the cloud provider's API would hold it, and is deterministic: names draw from the twin's seeded
generator and every time is the simulated clock's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...bootstrap import add_node
from ..pod_template import SAFE_ALPHABET
from . import node_template
from .config import GROUP_ANNOTATION, ZONE_LABEL, NodeGroup

PROVISIONING_TIME = 75.0  # an EC2 instance booting and its kubelet registering, about a minute and a quarter
MAX_NODE_INDEX = 250  # bootstrap.add_node gives node i the address 172.18.0.(i+3) and the pod CIDR 10.244.(i+1)/24


@dataclass
class Instance:
    group: NodeGroup  # the template it was launched from
    zone: str
    ready_at: float
    replaces: str | None = None  # the node a rolling update brings it up for


class Cloud:
    def __init__(self, controller):
        self.c = controller
        self.upcoming: dict[str, list[Instance]] = {}

    # ---- the groups' instances ------------------------------------------------------------------------
    def count(self, group: str) -> int:
        return len(self.upcoming.get(group, ()))

    def launch(self, group: NodeGroup, count: int, now: float, zones_in_use: list[str],
               replaces: str | None = None) -> None:
        zones = list(zones_in_use) + [i.zone for i in self.upcoming.get(group.name, ())]
        for _ in range(count):
            zone = node_template.next_zone(group, zones)
            zones.append(zone)
            self.upcoming.setdefault(group.name, []).append(Instance(group, zone, now + PROVISIONING_TIME, replaces))

    def cancel(self, group: str, count: int) -> int:
        """Terminate up to ``count`` of a group's booting instances, the newest first; how many were."""
        instances = self.upcoming.get(group, [])
        cancelled = 0
        for instance in reversed(list(instances)):
            if cancelled == count:
                break
            if instance.replaces is None:
                instances.remove(instance)
                cancelled += 1
        return cancelled

    def forget(self, keep: set[str]) -> None:
        """Groups no longer configured: their booting instances are terminated."""
        for name in [g for g in self.upcoming if g not in keep]:
            del self.upcoming[name]

    def replacing(self, node: str) -> bool:
        return any(i.replaces == node for instances in self.upcoming.values() for i in instances)

    def next_due(self) -> float | None:
        times = [i.ready_at for instances in self.upcoming.values() for i in instances]
        return min(times) if times else None

    # ---- registration ------------------------------------------------------------------------------------
    def register_due(self, now: float) -> list[dict]:
        """Nodes of the instances that finished booting by ``now``, registered in launch order."""
        registered = []
        for group in sorted(self.upcoming):
            instances = self.upcoming[group]
            for instance in [i for i in instances if i.ready_at <= now + 1e-9]:
                instances.remove(instance)
                registered.append(self._register(instance))
        return registered

    def _register(self, instance: Instance) -> dict:
        name = self._new_name(instance.group.name)
        shape = node_template.shape(instance.group, name, instance.zone)
        return add_node(self.c.api, self.c.ctx, name, self._free_index(), shape.capacity, shape.labels,
                        allocatable=shape.allocatable, annotations=shape.annotations, taints=shape.taints,
                        provider_id=shape.provider_id)

    def _new_name(self, group: str) -> str:
        # As kwok names its nodes: the group and five random characters, here from the twin's seeded generator.
        while True:
            name = f"{group}-" + "".join(self.c.rng.choice(SAFE_ALPHABET) for _ in range(5))
            if self.c.store.get("nodes", "", name) is None:
                return name

    def _free_index(self) -> int:
        used = set()
        for node in self.c.store.list("nodes")[0]:
            cidr = (node.get("spec") or {}).get("podCIDR") or ""
            parts = cidr.split(".")
            if len(parts) == 4 and parts[2].isdigit():
                used.add(int(parts[2]) - 1)
        for index in range(MAX_NODE_INDEX):
            if index not in used:
                return index
        raise RuntimeError(f"no free node address left: the twin's node network holds {MAX_NODE_INDEX} nodes")


def group_nodes(nodes: list[dict], group: str) -> list[dict]:
    """The registered nodes of a group, by name."""
    return sorted((n for n in nodes if (n["metadata"].get("annotations") or {}).get(GROUP_ANNOTATION) == group),
                  key=lambda n: n["metadata"]["name"])


def zone_of(node: dict) -> str:
    return (node["metadata"].get("labels") or {}).get(ZONE_LABEL, "")
