"""A rule group: its rules evaluated in order at slotted times, results written back with staleness.

Prometheus evaluates a group at ``offset + k * interval``, where the offset
is the group's hash modulo the interval (``Group.EvalTimestamp``), so groups
with the same interval do not all run at once. Evaluations that were missed
(the clock jumped past several slots) are skipped, not replayed. A series a
rule wrote at its last evaluation and not at this one gets a staleness
marker, so ``ALERTS`` and recorded series end when the condition ends.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Optional, Union

from ..labels import Labels
from ..rule_status import RuleGroupStatus
from ..tsdb import STALE_NAN, TSDB, DuplicateSample, OutOfOrderSample
from .alerting import AlertingRule, QueryFunc, RuleEvaluationError, RuleSample
from .group_hash import group_hash
from .notifier import Notifier
from .recording import RecordingRule

log = logging.getLogger(__name__)

Rule = Union[AlertingRule, RecordingRule]


class Group:
    def __init__(self, name: str, file: str, interval: float, rules: list[Rule], *, query_offset: float = 0.0,
                 limit: int = 0, labels: Labels = ()):
        self.name = name
        self.file = file
        self.interval = interval
        self.rules = rules
        self.query_offset = query_offset
        self.limit = limit
        self.labels = labels  # the group's own labels, only for comparing groups on reload
        self.previous_series: list[dict[Labels, None]] = [{} for _ in rules]
        self.stale_series: list[Labels] = []  # from rules that a reload removed
        self.next_slot_ms: Optional[int] = None
        self.last_evaluation: Optional[float] = None
        self.evaluation_time = 0.0
        self._offset_ns = group_hash(file, name) % max(1, round(interval * 1e9))

    @property
    def key(self) -> str:
        return f"{self.file};{self.name}"

    def eval_timestamp_ms(self, now: float) -> int:
        """The latest slot at or before ``now`` (``Group.EvalTimestamp``), in milliseconds."""
        interval_ns = round(self.interval * 1e9)
        adjusted = round(now * 1e9) - self._offset_ns
        return (adjusted - adjusted % interval_ns + self._offset_ns) // 1_000_000

    def start(self, now: float) -> None:
        """Schedule the first evaluation: the first slot after ``now``, as a newly loaded group waits for."""
        self.next_slot_ms = self.eval_timestamp_ms(now) + round(self.interval * 1000)

    def due_slot_ms(self, now: float) -> Optional[int]:
        """The slot to evaluate at ``now`` (the latest one reached, skipping missed ones), or None."""
        if self.next_slot_ms is None:
            self.start(now)
        assert self.next_slot_ms is not None
        now_ms = math.floor(now * 1000)
        if now_ms < self.next_slot_ms:
            return None
        interval_ms = round(self.interval * 1000)
        return self.next_slot_ms + (now_ms - self.next_slot_ms) // interval_ms * interval_ms

    def evaluate(self, slot_ms: int, now: float, tsdb: TSDB, query: QueryFunc, notifier: Optional[Notifier],
                 resend_delay: float) -> None:
        """Evaluate every rule at the slot, write results and staleness markers, send alerts."""
        self.next_slot_ms = slot_ms + round(self.interval * 1000)
        ts = slot_ms / 1000
        started = time.perf_counter()  # wall time: the evaluation's cost, reported as evaluationTime
        for index, rule in enumerate(self.rules):
            rule_started = time.perf_counter()
            self._evaluate_rule(index, rule, ts, tsdb, query, notifier, resend_delay)
            rule.evaluation_time = time.perf_counter() - rule_started
            rule.last_evaluation = now
        self._write_stale(self.stale_series, ts - self.query_offset, tsdb)
        self.stale_series = []
        self.evaluation_time = time.perf_counter() - started
        self.last_evaluation = now

    def _evaluate_rule(self, index: int, rule: Rule, ts: float, tsdb: TSDB, query: QueryFunc,
                       notifier: Optional[Notifier], resend_delay: float) -> None:
        try:
            samples = rule.evaluate(ts, self.query_offset, query, self.limit)
        except RuleEvaluationError as exc:
            rule.health, rule.last_error = "err", str(exc)
            log.warning("Evaluating rule failed: rule %s in group %s: %s", rule.name, self.name, exc)
            return
        rule.health, rule.last_error = "ok", ""
        if isinstance(rule, AlertingRule) and notifier is not None:
            notifier.notify(rule.query, rule.alerts_to_send(ts, resend_delay, self.interval))
        returned = self._append(rule, samples, tsdb)
        gone = [labels for labels in self.previous_series[index] if labels not in returned]
        self._write_stale(gone, ts - self.query_offset, tsdb)
        self.previous_series[index] = returned

    @staticmethod
    def _append(rule: Rule, samples: list[RuleSample], tsdb: TSDB) -> dict[Labels, None]:
        returned: dict[Labels, None] = {}
        for labels, t, value in samples:
            try:
                tsdb.append(labels, t, value)
            except (OutOfOrderSample, DuplicateSample) as exc:
                # Another rule wrote the same series: the sample is dropped, the rule reports it.
                rule.health, rule.last_error = "err", str(exc)
                continue
            returned[labels] = None
        return returned

    @staticmethod
    def _write_stale(series: list[Labels], t: float, tsdb: TSDB) -> None:
        for labels in series:
            try:
                tsdb.append(labels, t, STALE_NAN)
            except (OutOfOrderSample, DuplicateSample):
                pass  # expected when another rule now writes the series

    def copy_state(self, old: "Group") -> None:
        """Take over an old version of this group on reload (``Group.CopyState``): rules are matched by name and
        labels; alert state and written series carry over, series of unmatched old rules go stale."""
        self.evaluation_time = old.evaluation_time
        self.last_evaluation = old.last_evaluation
        self.next_slot_ms = old.next_slot_ms
        unmatched: dict[str, list[int]] = {}
        for i, rule in enumerate(old.rules):
            unmatched.setdefault(rule.identity, []).append(i)
        for i, rule in enumerate(self.rules):
            candidates = unmatched.get(rule.identity)
            if not candidates:
                continue
            j = candidates.pop(0)
            self.previous_series[i] = old.previous_series[j]
            old_rule = old.rules[j]
            if isinstance(rule, AlertingRule) and isinstance(old_rule, AlertingRule):
                rule.active.update(old_rule.active)
        self.stale_series = list(old.stale_series)
        for indexes in unmatched.values():
            for j in indexes:
                self.stale_series.extend(old.previous_series[j])

    def written_series(self) -> list[Labels]:
        return [labels for series in self.previous_series for labels in series] + self.stale_series

    def same_as(self, other: "Group") -> bool:
        """Whether a reload leaves this group as it is (``Group.Equals``)."""
        return (self.name, self.file, self.interval, self.limit, self.query_offset, self.labels) == (
            other.name, other.file, other.interval, other.limit, other.query_offset, other.labels) and [
            _definition(r) for r in self.rules] == [_definition(r) for r in other.rules]

    def status(self) -> RuleGroupStatus:
        return RuleGroupStatus(self.name, self.file, [rule.status() for rule in self.rules], self.interval,
                               self.limit, self.evaluation_time, self.last_evaluation)


def _definition(rule: Rule) -> tuple:
    if isinstance(rule, AlertingRule):
        return ("alert", rule.name, rule.query, rule.hold, rule.keep_firing_for, rule.labels, rule.annotations)
    return ("record", rule.name, rule.query, rule.labels)
