"""Scoring a diagnosis against the ground truth, as ITBench's evaluations do, without an LLM judge.

The agent names entities ``namespace/Kind/name`` and marks each ``contributing_factor``. The ground truth
has entity groups (kind, namespace, name patterns; some marked root cause) and aliases (groups that are
one answer: a Deployment and its pods). A predicted entity matches a group when the kind and namespace
are equal and one of the group's patterns matches the name (``re.search``, as ITBench's filters are
written). Groups joined by aliases count once.

- root cause: predictions marked contributing (an entity without the mark counts as marked) against the
  root-cause answers; precision, recall and F1. The diagnosis check passes at F1 = 1, ITBench's pass@1.
- entities: every prediction against every answer; F1 as an informative figure.
- entity@1: whether the first contributing prediction is a root cause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..scenario.schema import EntityGroup, SreGroundTruth


@dataclass(frozen=True)
class Entity:
    namespace: str | None
    kind: str
    name: str

    @classmethod
    def parse(cls, text: str) -> "Entity | None":
        parts = text.strip().split("/")
        if len(parts) == 3:
            return cls(parts[0] or None, parts[1], parts[2])
        if len(parts) == 2:
            return cls(None, parts[0], parts[1])
        return None


@dataclass(frozen=True)
class Scores:
    precision: float
    recall: float

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


@dataclass(frozen=True)
class DiagnosisScore:
    root_cause: Scores
    entities: Scores
    entity_at_1: bool
    unreadable: tuple[str, ...]  # predictions whose name is not namespace/Kind/name
    missed: tuple[str, ...]  # root-cause answers nobody named (group ids)
    wrong: tuple[str, ...]  # contributing predictions that match no root cause

    @property
    def passed(self) -> bool:
        return self.root_cause.f1 == 1.0


def matches(group: EntityGroup, entity: Entity) -> bool:
    if entity.kind.lower() != group.kind.lower():
        return False
    # A Namespace is named within itself (``shop/Namespace/shop``) or bare (``Namespace/shop``).
    if group.namespace is not None and entity.namespace != group.namespace and group.kind != "Namespace":
        return False
    return not group.filter or any(re.search(pattern, entity.name) for pattern in group.filter)


def answers(truth: SreGroundTruth) -> dict[str, int]:
    """Each group's answer number: groups joined (transitively) by aliases share one."""
    parent = {g.id: g.id for g in truth.groups}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for alias in truth.aliases:
        for other in alias[1:]:
            parent[find(other)] = find(alias[0])
    roots = sorted({find(g) for g in parent})
    return {g: roots.index(find(g)) for g in parent}


def score(truth: SreGroundTruth, diagnosis: dict[str, Any] | None) -> DiagnosisScore:
    entities = list((diagnosis or {}).get("entities") or [])
    answer_of = answers(truth)
    root_answers = {answer_of[g.id] for g in truth.groups if g.root_cause}
    all_answers = set(answer_of.values())
    unreadable: list[str] = []
    predicted: list[tuple[Entity, bool, str]] = []
    for item in entities:
        name = str(item.get("name", ""))
        entity = Entity.parse(name)
        if entity is None:
            unreadable.append(name)
            continue
        predicted.append((entity, item.get("contributing_factor", True) is not False, name))

    def hits(entity: Entity) -> set[int]:
        return {answer_of[g.id] for g in truth.groups if matches(g, entity)}

    contributing = [(e, n) for e, c, n in predicted if c]
    root_hits = [hits(e) & root_answers for e, _ in contributing]
    found_roots = set().union(*root_hits) if root_hits else set()
    root = Scores(precision=sum(1 for h in root_hits if h) / len(contributing) if contributing else 0.0,
                  recall=len(found_roots) / len(root_answers))
    all_hits = [hits(e) for e, _, _ in predicted]
    found = set().union(*all_hits) if all_hits else set()
    everything = Scores(precision=sum(1 for h in all_hits if h) / len(predicted) if predicted else 0.0,
                        recall=len(found) / len(all_answers))
    missed = sorted(g.id for g in truth.groups if g.root_cause and answer_of[g.id] not in found_roots)
    wrong = tuple(n for (_, n), h in zip(contributing, root_hits) if not h)
    return DiagnosisScore(root, everything, bool(root_hits and root_hits[0]), tuple(unreadable), tuple(missed),
                          wrong)


def describe(result: DiagnosisScore) -> str:
    text = f"root-cause F1 {result.root_cause.f1:.2f} (precision {result.root_cause.precision:.2f}, " \
           f"recall {result.root_cause.recall:.2f})"
    if result.missed:
        text += f"; missed {', '.join(result.missed)}"
    if result.wrong:
        text += f"; not a root cause: {', '.join(result.wrong)}"
    if result.unreadable:
        text += f"; unreadable names (want namespace/Kind/name): {', '.join(result.unreadable)}"
    return text
