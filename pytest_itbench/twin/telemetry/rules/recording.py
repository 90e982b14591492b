"""Recording rules: the expression's result, renamed and relabelled, written back as new series."""

from __future__ import annotations

from typing import Optional

from .. import labels as lbl
from ..labels import Labels
from ..rule_status import RecordingRuleStatus
from .alerting import QueryFunc, RuleEvaluationError, RuleSample


class RecordingRule:
    def __init__(self, name: str, query: str, labels: Labels):
        self.name = name
        self.query = query  # the expression as Prometheus prints it
        self.labels = labels
        self.health = "unknown"
        self.last_error = ""
        self.evaluation_time = 0.0
        self.last_evaluation: Optional[float] = None

    @property
    def identity(self) -> str:
        return self.name + lbl.format_labels(self.labels)

    def evaluate(self, ts: float, query_offset: float, query: QueryFunc, limit: int) -> list[RuleSample]:
        t = ts - query_offset
        samples: list[RuleSample] = []
        seen: set[Labels] = set()
        for sample_labels, value in query(self.query, t):
            names = dict(sample_labels)
            names["__name__"] = self.name
            names.update(self.labels)
            out = lbl.from_mapping(names)
            if out in seen:
                raise RuleEvaluationError("vector contains metrics with the same labelset after applying rule "
                                          "labels")
            seen.add(out)
            samples.append((out, t, value))
        if limit > 0 and len(samples) > limit:
            raise RuleEvaluationError(f"exceeded limit of {limit} with {len(samples)} series")
        return samples

    def status(self) -> RecordingRuleStatus:
        return RecordingRuleStatus(self.name, self.query, dict(self.labels), self.health, self.last_error,
                                   self.evaluation_time, self.last_evaluation)
