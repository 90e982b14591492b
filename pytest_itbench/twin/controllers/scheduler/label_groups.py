"""Counting the pods on a node that a selector matches, one label group at a time.

Pods with the same namespace and labels (the replicas of one workload) form
one group; a node keeps how many of its pods are in each group. A matcher
remembers its answer per group, so one scheduling attempt matches each
distinct group once however many nodes and pods it looks at; knowing every
group in the cluster, it counts on a busy node by looking up only the groups
that match rather than going through all of the node's.
"""

from __future__ import annotations

from typing import Callable, Mapping, Protocol

from .podinfo import LabelGroup


class Universe(Protocol):
    """Every group any node holds (the scheduler's cache), and a version that moves when that set changes."""

    groups: Mapping[LabelGroup, int]

    @property
    def version(self) -> int: ...


class GroupMatcher:
    def __init__(self, predicate: Callable[[str, Mapping[str, str]], bool], universe: "Universe | None" = None):
        self._predicate = predicate  # (namespace, labels) -> bool
        self._memo: dict[LabelGroup, bool] = {}
        self._universe = universe
        self._matching: list[LabelGroup] = []
        self._matching_version = -1

    def __call__(self, group: LabelGroup) -> bool:
        hit = self._memo.get(group)
        if hit is None:
            hit = self._memo[group] = self._predicate(group[0], dict(group[1]))
        return hit

    def count(self, groups: Mapping[LabelGroup, int]) -> int:
        """How many pods of ``groups`` (a node's label-group counts) match."""
        universe = self._universe
        if universe is not None and len(groups) > 4:
            if self._matching_version != universe.version:
                self._matching = [group for group in universe.groups if self(group)]
                self._matching_version = universe.version
            return sum(groups.get(group, 0) for group in self._matching)
        return sum(n for group, n in groups.items() if self(group))
