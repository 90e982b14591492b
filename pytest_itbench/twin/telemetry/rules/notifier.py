"""Prometheus' notifier: what the rule evaluator sends to Alertmanager, and how.

A firing alert goes out with ``startsAt`` (when it fired) and ``endsAt`` (a
validity deadline: if Prometheus stops re-sending it, Alertmanager resolves
it then); a resolved one with ``endsAt`` set to when it resolved. External
labels are added unless the alert already has the label; ``generatorURL``
links to the expression in Prometheus' table view.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from ..alertmanager import PostableAlert
from .alerting import Alert
from .template_functions import table_link

Send = Callable[[Sequence[PostableAlert]], None]


class Notifier:
    def __init__(self, send: Send, external_labels: Mapping[str, str], external_url: str):
        self._send = send
        self.external_labels = dict(external_labels)
        self.external_url = external_url

    def notify(self, expression: str, alerts: Sequence[Alert]) -> None:
        if not alerts:
            return
        url = self.external_url + table_link(expression)
        batch = []
        for alert in alerts:
            labels = dict(alert.labels)
            for name, value in self.external_labels.items():
                labels.setdefault(name, value)
            ends_at = alert.resolved_at if alert.resolved_at is not None else alert.valid_until
            batch.append(PostableAlert(labels, dict(alert.annotations), alert.fired_at, ends_at, url))
        self._send(batch)
