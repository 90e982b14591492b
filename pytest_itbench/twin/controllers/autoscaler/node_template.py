"""What a node of a node group looks like: the template's labels, annotations and taints, the standard
labels of a cloud node, and the capacity of its instance type.

The same description serves twice: to register a real node (``bootstrap.add_node``) when an instance comes
up, and as the hypothetical node the autoscaler's simulation tries pending pods on, so the simulation sees
exactly the labels, taints and allocatable the real node will have.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import REGION_LABEL, ZONE_LABEL, NodeGroup

DEFAULT_REGION = "us-east-1"
DEFAULT_ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


@dataclass(frozen=True)
class NodeShape:
    labels: dict
    annotations: dict
    taints: list
    capacity: dict
    allocatable: dict
    provider_id: str


def region(group: NodeGroup) -> str:
    return group.labels.get(REGION_LABEL) or DEFAULT_REGION


def zones(group: NodeGroup) -> tuple[str, ...]:
    """The zones a group's nodes may be in: the template's zone if it names one, else the region's three."""
    pinned = group.labels.get(ZONE_LABEL)
    if pinned:
        return (pinned,)
    name = region(group)
    return tuple(f"{name}{suffix}" for suffix in "abc") if name != DEFAULT_REGION else DEFAULT_ZONES


def next_zone(group: NodeGroup, zones_in_use: list[str]) -> str:
    """The zone a new node goes to: the least used one, as an auto scaling group balances its zones."""
    choices = zones(group)
    return min(choices, key=lambda z: (zones_in_use.count(z), choices.index(z)))


def shape(group: NodeGroup, name: str, zone: str) -> NodeShape:
    labels = dict(group.labels)
    labels[REGION_LABEL] = region(group)
    labels[ZONE_LABEL] = zone
    return NodeShape(labels=labels, annotations=dict(group.annotations), taints=[dict(t) for t in group.taints],
                     capacity=dict(group.capacity), allocatable=dict(group.allocatable),
                     provider_id=f"kwok:{name}")  # the kwok provider's providerID


def simulated_node(group: NodeGroup, name: str, zone: str) -> dict:
    """The Node the simulation imagines: what the scheduler's filters read of a node, as the real one will be."""
    s = shape(group, name, zone)
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64", **s.labels}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels, "annotations": s.annotations},
            "spec": {"taints": s.taints} if s.taints else {},
            "status": {"capacity": s.capacity, "allocatable": s.allocatable}}
