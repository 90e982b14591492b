"""The rule manager: Prometheus' rule evaluation on the twin's clock, and the rules behind ``/api/v1/rules``.

    manager = RuleManager(tsdb, engine, send=alertmanager.post_alerts)
    manager.load([load_rule_file(p) for p in shipped_rule_files()], now=clock.now())
    manager.attach(clock)               # evaluates each group when its slot comes
    create_app(tsdb, engine, now=clock.now, rules=manager)

One tick handler serves every group: at each tick it evaluates the groups
whose slot has come, so that each group keeps Prometheus' hash-spread phase
within its interval (the clock's own ``every=`` would start all groups at
the tick they were registered). ``load`` replaces the rule set as a
Prometheus reload does: unchanged groups go on untouched, changed ones take
over their predecessor's alert state, removed ones mark their series stale.
"""

from __future__ import annotations

import threading
from typing import Mapping, Optional, Sequence

from .. import labels as lbl
from ..labels import Labels
from ..promql import Engine, PromQLError, Scalar, Vector
from ..rule_status import RuleGroupStatus
from ..tsdb import STALE_NAN, TSDB, DuplicateSample, OutOfOrderSample
from ...clock import SimClock
from .alerting import AlertingRule, RuleEvaluationError
from .expr_text import expression_text
from .group import Group, Rule
from .notifier import Notifier, Send
from .recording import RecordingRule
from .rule_file import RuleFile, RuleGroup

DEFAULT_INTERVAL = 30.0  # seconds: the Prometheus Operator's evaluationInterval (Prometheus' own default is 1m)
DEFAULT_RESEND_DELAY = 60.0  # --rules.alert.resend-delay
DEFAULT_EXTERNAL_URL = "http://localhost:9090"


class RuleManager:
    def __init__(self, tsdb: TSDB, engine: Engine, *, send: Optional[Send] = None,
                 default_interval: float = DEFAULT_INTERVAL, external_labels: Optional[Mapping[str, str]] = None,
                 external_url: str = DEFAULT_EXTERNAL_URL, resend_delay: float = DEFAULT_RESEND_DELAY):
        self.tsdb = tsdb
        self.engine = engine
        self.default_interval = default_interval
        self.external_labels = dict(external_labels or {})
        self.external_url = external_url
        self.resend_delay = resend_delay
        self.notifier = Notifier(send, self.external_labels, external_url) if send is not None else None
        self.groups: list[Group] = []
        self._lock = threading.Lock()  # evaluations (clock thread) against status reads (API threads)
        self._clock: Optional[SimClock] = None

    # ---- loading -----------------------------------------------------------------------------------
    def load(self, rule_files: Sequence[RuleFile], now: float) -> None:
        """Replace the rule set, as a Prometheus reload does."""
        new_groups = [self._group(rule_file.path, g) for rule_file in rule_files for g in rule_file.groups]
        with self._lock:
            old = {g.key: g for g in self.groups}
            kept: list[Group] = []
            for group in new_groups:
                previous = old.pop(group.key, None)
                if previous is not None and previous.same_as(group):
                    kept.append(previous)
                    continue
                if previous is not None:
                    group.copy_state(previous)
                else:
                    group.start(now)
                kept.append(group)
            for removed in old.values():
                self._mark_stale(removed.written_series(), now)
            self.groups = kept

    def _group(self, path: str, spec: RuleGroup) -> Group:
        rules: list[Rule] = []
        for r in spec.rules:
            labels = lbl.from_mapping({**spec.labels, **r.labels})
            query = expression_text(r.expr)
            if r.alert:
                annotations = tuple(sorted(r.annotations.items()))
                rules.append(AlertingRule(r.alert, query, r.for_, r.keep_firing_for, labels, annotations,
                                          self.external_labels, self.external_url))
            else:
                rules.append(RecordingRule(r.record, query, labels))
        interval = spec.interval or self.default_interval
        return Group(spec.name, path, interval, rules, query_offset=spec.query_offset or 0.0, limit=spec.limit,
                     labels=lbl.from_mapping(spec.labels))

    def _mark_stale(self, series: list[Labels], now: float) -> None:
        for labels in series:
            try:
                self.tsdb.append(labels, now, STALE_NAN)
            except (OutOfOrderSample, DuplicateSample):
                pass

    # ---- evaluation ----------------------------------------------------------------------------------
    def attach(self, clock: SimClock) -> None:
        """Evaluate on ``clock``: groups loaded before now start at their first slot after now."""
        self._clock = clock
        clock.on_tick(self.tick, name="prometheus rule evaluation")

    def detach(self) -> None:
        if self._clock is not None:
            self._clock.remove_handler(self.tick)
            self._clock = None

    def tick(self, now: float) -> None:
        """Evaluate the groups whose evaluation slot has come by ``now``."""
        with self._lock:
            for group in self.groups:
                slot = group.due_slot_ms(now)
                if slot is not None:
                    group.evaluate(slot, now, self.tsdb, self.query, self.notifier, self.resend_delay)

    def query(self, expression: str, t: float) -> list[tuple[Labels, float]]:
        """Rules' query function (``EngineQueryFunc``): a vector, or a scalar as one unlabelled sample."""
        try:
            result = self.engine.instant_query(expression, t)
        except PromQLError as exc:
            raise RuleEvaluationError(str(exc)) from None
        value = result.value
        if isinstance(value, Vector):
            return [(s.labels, s.value) for s in value.samples]
        if isinstance(value, Scalar):
            return [((), value.value)]
        raise RuleEvaluationError("rule result is not a vector or scalar")

    # ---- status --------------------------------------------------------------------------------------------
    def rule_groups(self) -> Sequence[RuleGroupStatus]:
        with self._lock:
            return [group.status() for group in self.groups]
