"""The scheduling framework's vocabulary: statuses, the per-attempt cycle state and the plugin interface.

A plugin may take part at several extension points, as upstream's do:
PreFilter (prepare per-pod data, reject the pod outright, or narrow the
nodes), Filter (one node), the PreFilter extensions AddPod/RemovePod (keep
the prepared data right when preemption imagines pods away), PreScore, Score
and NormalizeScore. A plugin that has nothing to do for a pod says so at
PreFilter or PreScore and is skipped for the rest of the cycle.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .cache import NodeInfo
from .label_groups import Universe
from .podinfo import PodInfo

MAX_NODE_SCORE = 100


class Code(enum.IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2  # preemption might help
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3  # preemption cannot help
    SKIP = 5


@dataclass(frozen=True)
class Status:
    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    @property
    def rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def by(self, plugin: str) -> "Status":
        return Status(self.code, self.reasons, plugin)


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


SKIP = Status(Code.SKIP)


@dataclass(frozen=True)
class PreFilterResult:
    """The only nodes worth filtering (upstream's PreFilterResult.NodeNames)."""

    node_names: frozenset[str]


class ClusterView:
    """What plugins may read besides the pod and the node: every node, and objects from the store."""

    def __init__(self, nodes: Callable[[], list[NodeInfo]], lookup: Callable[[str, str, str], dict | None],
                 listing: Callable[[str, str | None], list[dict]], label_groups: Universe):
        self._nodes = nodes
        self.label_groups = label_groups  # every label group of the pods on (or nominated to) nodes
        self._lookup = lookup
        self._listing = listing
        self._namespace_labels: dict[str, Mapping[str, str]] = {}
        self.memo: dict = {}  # what plugins derive from the store once per scheduling round

    @property
    def nodes(self) -> list[NodeInfo]:
        """Every node that exists, by name."""
        return self._nodes()

    def get(self, bucket: str, namespace: str, name: str) -> dict | None:
        return self._lookup(bucket, namespace, name)

    def list(self, bucket: str, namespace: str | None = None) -> list[dict]:
        return self._listing(bucket, namespace)

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        labels = self._namespace_labels.get(namespace)
        if labels is None:
            ns = self._lookup("namespaces", "", namespace)
            labels = self._namespace_labels[namespace] = (ns["metadata"].get("labels") or {}) if ns else {}
        return labels


@dataclass
class CycleState:
    """Everything one scheduling attempt of one pod computes, shared by its plugins."""

    pod: PodInfo
    cluster: ClusterView
    now: float
    data: dict[str, Any] = field(default_factory=dict)
    skip_filter: set[str] = field(default_factory=set)
    skip_score: set[str] = field(default_factory=set)

    def clone(self) -> "CycleState":
        """A copy whose plugin data may be changed (by AddPod/RemovePod) without changing this one."""
        data = {name: value.clone() if hasattr(value, "clone") else value for name, value in self.data.items()}
        return CycleState(self.pod, self.cluster, self.now, data, set(self.skip_filter), set(self.skip_score))


class Plugin:
    """Base of the plugins: each extension point does nothing unless a plugin overrides it."""

    name = ""

    def pre_filter(self, state: CycleState) -> Status | PreFilterResult | None:
        return None

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        return None

    def add_pod(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> None:
        """``pod`` is imagined onto ``node``: adjust what PreFilter prepared."""

    def remove_pod(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> None:
        """``pod`` is imagined off ``node``: adjust what PreFilter prepared."""

    def pre_score(self, state: CycleState, nodes: list[NodeInfo]) -> bool:
        """Prepare scoring; False when the plugin has nothing to say about this pod."""
        return True

    def score(self, state: CycleState, node: NodeInfo) -> int:
        return 0

    def normalize(self, state: CycleState, names: list[str], scores: list[int]) -> None:
        """Scale the raw scores of the nodes ``names`` to 0..MAX_NODE_SCORE, in place."""


def default_normalize(scores: list[int], reverse: bool) -> None:
    """helper.DefaultNormalizeScore: scale to the highest score (and flip, for counts of bad things)."""
    highest = max(scores, default=0)
    if highest == 0:
        if reverse:
            scores[:] = [MAX_NODE_SCORE] * len(scores)
        return
    for i, score in enumerate(scores):
        scaled = MAX_NODE_SCORE * score // highest
        scores[i] = MAX_NODE_SCORE - scaled if reverse else scaled
