"""Alerting rules: Prometheus' alert state machine (``rules/alerting.go``).

Each evaluation turns the expression's result into alerts, one per label set
(the sample's labels without the metric name, plus the rule's expanded
labels and ``alertname``). A new alert is *pending*; it *fires* once it has
been active for the rule's ``for``; when the expression no longer returns it,
a pending alert is dropped and a firing one becomes *inactive* (resolved)
and is kept for 15 minutes so that Alertmanager hears it resolved, unless
``keep_firing_for`` keeps it firing a while longer. Active alerts are written
back as ``ALERTS{alertstate=...}`` and ``ALERTS_FOR_STATE`` samples.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, replace
from typing import Callable, Optional

from .. import labels as lbl
from ..gotemplate import GoError
from ..labels import Labels
from ..rule_status import ActiveAlert, AlertingRuleStatus
from .template_functions import AlertTemplateData
from .templates import expand

RESOLVED_RETENTION = 15 * 60.0  # seconds a resolved alert is kept (and re-sent), rules/alerting.go

# Runs an instant query: (printed expression, time) -> [(labels, value)]; raises RuleEvaluationError.
QueryFunc = Callable[[str, float], list[tuple[Labels, float]]]
# A sample a rule writes back into the store: (labels, time, value).
RuleSample = tuple[Labels, float, float]


class RuleEvaluationError(Exception):
    """A rule's evaluation failed; the message becomes the rule's ``lastError``."""


class AlertState(enum.Enum):
    INACTIVE = "inactive"
    PENDING = "pending"
    FIRING = "firing"


_SEVERITY = {AlertState.INACTIVE: 0, AlertState.PENDING: 1, AlertState.FIRING: 2}


@dataclass
class Alert:
    """One instance of an alerting rule. Times are Unix seconds on the twin's clock; None means never."""

    labels: Labels
    annotations: Labels
    state: AlertState
    value: float
    active_at: float
    fired_at: Optional[float] = None
    resolved_at: Optional[float] = None
    last_sent_at: Optional[float] = None
    valid_until: Optional[float] = None
    keep_firing_since: Optional[float] = None

    def needs_sending(self, ts: float, resend_delay: float) -> bool:
        if self.state is AlertState.PENDING:
            return False
        if self.resolved_at is not None and (self.last_sent_at is None or self.resolved_at > self.last_sent_at):
            return True
        return self.last_sent_at is None or self.last_sent_at + resend_delay < ts


class AlertingRule:
    def __init__(self, name: str, query: str, hold: float, keep_firing_for: float, labels: Labels,
                 annotations: Labels, external_labels: dict[str, str], external_url: str):
        self.name = name
        self.query = query  # the expression as Prometheus prints it
        self.hold = hold
        self.keep_firing_for = keep_firing_for
        self.labels = labels
        self.annotations = annotations
        self.external_labels = external_labels
        self.external_url = external_url
        self.active: dict[Labels, Alert] = {}
        self.health = "unknown"
        self.last_error = ""
        self.evaluation_time = 0.0
        self.last_evaluation: Optional[float] = None

    @property
    def identity(self) -> str:
        """Name and labels: how a reloaded group matches its rules to the old ones (``nameAndLabels``)."""
        return self.name + lbl.format_labels(self.labels)

    def evaluate(self, ts: float, query_offset: float, query: QueryFunc, limit: int) -> list[RuleSample]:
        """One evaluation at ``ts``; returns the ``ALERTS`` and ``ALERTS_FOR_STATE`` samples to write."""
        result = query(self.query, ts - query_offset)
        current: dict[Labels, Alert] = {}
        for sample_labels, value in result:
            alert_labels, annotations = self._expand(sample_labels, value, ts, query)
            if alert_labels in current:
                raise RuleEvaluationError("vector contains metrics with the same labelset after applying alert "
                                          "labels")
            current[alert_labels] = Alert(alert_labels, annotations, AlertState.PENDING, value, ts)
        for key, alert in current.items():
            existing = self.active.get(key)
            if existing is not None and existing.state is not AlertState.INACTIVE:
                existing.value = alert.value
                existing.annotations = alert.annotations
            else:
                self.active[key] = alert
        samples: list[RuleSample] = []
        active_count = 0
        for key, alert in list(self.active.items()):
            if key not in current:
                keep_firing = False
                if alert.state is AlertState.FIRING and self.keep_firing_for > 0:
                    if alert.keep_firing_since is None:
                        alert.keep_firing_since = ts
                    keep_firing = ts - alert.keep_firing_since < self.keep_firing_for
                if alert.state is AlertState.PENDING or (
                        alert.resolved_at is not None and ts - alert.resolved_at > RESOLVED_RETENTION):
                    del self.active[key]
                if alert.state is not AlertState.INACTIVE and not keep_firing:
                    alert.state = AlertState.INACTIVE
                    alert.resolved_at = ts
                if not keep_firing:
                    continue
            else:
                alert.keep_firing_since = None
            active_count += 1
            if alert.state is AlertState.PENDING and ts - alert.active_at >= self.hold:
                alert.state = AlertState.FIRING
                alert.fired_at = ts
            if alert.state is AlertState.FIRING and ts - alert.active_at < self.hold:
                # A reload may lengthen `for`: the alert waits again.
                alert.state = AlertState.PENDING
                alert.fired_at = alert.last_sent_at = alert.keep_firing_since = None
            samples.extend(self._samples(alert, ts - query_offset))
        if limit > 0 and active_count > limit:
            self.active = {}
            raise RuleEvaluationError(f"exceeded limit of {limit} with {active_count} alerts")
        return samples

    def _expand(self, sample_labels: Labels, value: float, ts: float, query: QueryFunc) -> tuple[Labels, Labels]:
        data = AlertTemplateData(dict(sample_labels), dict(self.external_labels), self.external_url, value)

        def template_query(text: str) -> list[tuple[dict[str, str], float]]:
            try:
                return [(dict(labels), v) for labels, v in query(text, ts)]
            except RuleEvaluationError as exc:  # the template fails, not the rule
                raise GoError(str(exc)) from None

        def render(text: str) -> str:
            if "{{" not in text:  # nothing to expand: the common case, and much cheaper
                return text
            return expand(self.name, text, data, template_query, ts, self.external_url)

        names = dict(lbl.without_name(sample_labels))
        for name, text in self.labels:
            names[name] = render(text)
        names["alertname"] = self.name
        annotations = tuple((name, render(text)) for name, text in self.annotations)
        return lbl.from_mapping(names), annotations

    def _samples(self, alert: Alert, t: float) -> list[RuleSample]:
        alerts = dict(alert.labels)
        return [(lbl.from_mapping({**alerts, "__name__": "ALERTS", "alertstate": alert.state.value}), t, 1.0),
                (lbl.from_mapping({**alerts, "__name__": "ALERTS_FOR_STATE"}), t, float(math.floor(alert.active_at)))]

    def alerts_to_send(self, ts: float, resend_delay: float, interval: float) -> list[Alert]:
        """Alerts due to be sent to Alertmanager now (firing ones every ``resend_delay``, resolved ones again)."""
        out = []
        for alert in self.active.values():
            if alert.needs_sending(ts, resend_delay):
                alert.last_sent_at = ts
                # Valid for two missed evaluations or sends, then Alertmanager resolves it by itself.
                alert.valid_until = ts + 4 * max(interval, resend_delay)
                out.append(replace(alert))
        return out

    def state(self) -> str:
        if self.last_evaluation is None:
            return "unknown"
        worst = max((a.state for a in self.active.values()), key=_SEVERITY.__getitem__, default=AlertState.INACTIVE)
        return worst.value

    def status(self) -> AlertingRuleStatus:
        alerts = [ActiveAlert(dict(a.labels), dict(a.annotations), a.state.value, a.active_at, a.value,
                              a.keep_firing_since)
                  for a in sorted(self.active.values(), key=lambda a: a.labels) if a.resolved_at is None]
        return AlertingRuleStatus(self.name, self.query, self.hold, dict(self.labels), dict(self.annotations),
                                  alerts, self.state(), self.health, self.last_error, self.evaluation_time,
                                  self.last_evaluation, self.keep_firing_for)
