"""The default profile of kube-scheduler v1.31: its filter plugins in order, its score plugins with weights.

Filters run in this order and a node's evaluation stops at the first one
that rejects it, so the order decides which reason a node is counted under.
NodeName is left out: the scheduler only takes pods without ``spec.nodeName``,
for which it always passes. VolumeRestrictions, NodeVolumeLimits and
VolumeZone have nothing to check in the twin (no ReadWriteOncePod conflicts
modelled, no CSI attach limits, no zonal volumes), nor ImageLocality to score
while nodes report no images.
"""

from __future__ import annotations

from ..framework import Plugin
from .inter_pod_affinity import InterPodAffinity
from .node_affinity import NodeAffinity
from .node_ports import NodePorts
from .node_resources import NodeResourcesBalancedAllocation, NodeResourcesFit
from .node_unschedulable import NodeUnschedulable
from .pod_topology_spread import PodTopologySpread
from .taint_toleration import TaintToleration
from .volume_binding import VolumeBinding

_node_affinity = NodeAffinity()
_taint_toleration = TaintToleration()
_fit = NodeResourcesFit()
_spread = PodTopologySpread()
_inter_pod_affinity = InterPodAffinity()
volume_binding = VolumeBinding()

FILTERS: tuple[Plugin, ...] = (
    NodeUnschedulable(),
    _taint_toleration,
    _node_affinity,
    NodePorts(),
    _fit,
    volume_binding,
    _spread,
    _inter_pod_affinity,
)

SCORES: tuple[tuple[Plugin, int], ...] = (
    (_taint_toleration, 3),
    (_node_affinity, 2),
    (_fit, 1),
    (_spread, 2),
    (_inter_pod_affinity, 2),
    (NodeResourcesBalancedAllocation(), 1),
)
