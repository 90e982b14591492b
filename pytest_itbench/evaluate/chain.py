"""Propagation-chain F1: the submitted propagations' cause-to-effect steps against the ground truth's.

ITBench's ``propagation_chain`` metric has an LLM contract the chain into "semantic components" and
compares paths by their longest common subsequence. Without a judge, the same idea is scored on the
ground truth's own components, its answers (groups; groups joined by aliases are one answer):

- each truth propagation ``source -> target`` is a step between two answers; steps that join an
  answer to itself (a Deployment to its aliased Pod) are dropped; the truth's steps are a set;
- each submitted propagation maps its ``source`` and ``target`` names (``namespace/Kind/name``) onto the
  answers they match (kind, namespace, name pattern). It is *right* when one of the steps it maps to
  is a truth step, in the same direction; a step into or out of nothing the truth knows, or between
  answers the truth does not join directly, is wrong. Submitted propagations that map to the same
  steps count once;
- precision = right submitted steps / submitted steps; recall = truth steps some submitted step hits;
  F1 their harmonic mean. No submitted propagation scores 0; a truth without propagations is not scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..scenario.schema import SreGroundTruth
from .diagnosis import Entity, answers, matches


@dataclass(frozen=True)
class ChainScore:
    precision: float
    recall: float
    right: int
    submitted: int
    truth_steps: int

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0

    def describe(self) -> str:
        return (f"chain F1 {self.f1:.2f} ({self.right} of {self.submitted} submitted steps right, "
                f"recall {self.recall:.2f} of {self.truth_steps})")


def truth_steps(truth: SreGroundTruth) -> set[tuple[int, int]]:
    answer_of = answers(truth)
    steps = {(answer_of[p.source], answer_of[p.target]) for p in truth.propagations}
    return {(a, b) for a, b in steps if a != b}


def score(truth: SreGroundTruth, diagnosis: dict[str, Any] | None) -> ChainScore | None:
    steps = truth_steps(truth)
    if not steps:
        return None
    answer_of = answers(truth)

    def answers_named(name: Any) -> frozenset[int]:
        entity = Entity.parse(str(name or ""))
        if entity is None:
            return frozenset()
        return frozenset(answer_of[g.id] for g in truth.groups if matches(g, entity))

    submitted: dict[Any, bool] = {}  # one entry per distinct mapped step (or per unmapped name pair)
    hit: set[tuple[int, int]] = set()
    for p in (diagnosis or {}).get("propagations") or []:
        if not isinstance(p, dict):
            continue
        sources, targets = answers_named(p.get("source")), answers_named(p.get("target"))
        mapped = frozenset((a, b) for a in sources for b in targets if a != b)
        found = mapped & steps
        key = mapped if mapped else ("unmapped", str(p.get("source")), str(p.get("target")))
        submitted[key] = submitted.get(key, False) or bool(found)
        hit |= found
    if not submitted:
        return ChainScore(0.0, 0.0, 0, 0, len(steps))
    right = sum(submitted.values())
    return ChainScore(right / len(submitted), len(hit) / len(steps), right, len(submitted), len(steps))
