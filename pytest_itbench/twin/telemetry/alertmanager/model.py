"""The Alertmanager: alerts received from Prometheus, their status under silences and inhibition, grouping.

    alertmanager = Alertmanager(now=clock.now, rng=random.Random(seed))
    manager = RuleManager(tsdb, engine, send=alertmanager.post_alerts)
    alertmanager.alerts()                 # what /api/v2/alerts lists

Status is computed when read, as Alertmanager's API does (it sets each
alert's status from the current silences and inhibitions before filtering),
so a silence takes effect on the next read. Groups are those of the routing
tree: one per route and value of its ``group_by`` labels; resolved alerts are
not listed.
"""

from __future__ import annotations

import functools
import random
import re
import threading
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

from .alerts import Alert, AlertStore, PostableAlert, validation_error
from .config import AlertmanagerConfig, kube_prometheus_stack_config
from .matchers import Matcher
from .silences import Silence, Silences


@dataclass(frozen=True)
class AlertStatus:
    state: str  # "active" or "suppressed"
    silenced_by: tuple[str, ...]
    inhibited_by: tuple[str, ...]


@dataclass(frozen=True)
class AlertView:
    alert: Alert
    status: AlertStatus
    receivers: tuple[str, ...]


@dataclass(frozen=True)
class AlertGroupView:
    labels: Mapping[str, str]
    receiver: str
    alerts: tuple[AlertView, ...]


def _label_set_before(a: Mapping[str, str], b: Mapping[str, str]) -> bool:
    """``model.LabelSet.Before``: smaller sets first, then by values in label-name order."""
    if len(a) != len(b):
        return len(a) < len(b)
    for name in sorted({*a, *b}):
        if name not in a:
            return True
        if name not in b:
            return False
        if a[name] != b[name]:
            return a[name] < b[name]
    return False


def _compare_label_sets(a: Mapping[str, str], b: Mapping[str, str]) -> int:
    return -1 if _label_set_before(a, b) else (1 if _label_set_before(b, a) else 0)


def _compare_alerts(a: Alert, b: Alert) -> int:
    """``types.AlertSlice.Less``: by ``job``, then ``instance``, then the whole label set."""
    for name in ("job", "instance"):
        in_a, in_b = name in a.labels, name in b.labels
        if not in_a and not in_b:
            continue
        if not in_a:
            return 1
        if not in_b:
            return -1
        if a.labels[name] != b.labels[name]:
            return -1 if a.labels[name] < b.labels[name] else 1
    return _compare_label_sets(a.labels, b.labels)


def _compare_groups(a: "AlertGroupView", b: "AlertGroupView") -> int:
    """``dispatch.AlertGroups.Less``: by labels, then receiver."""
    return _compare_label_sets(a.labels, b.labels) or (a.receiver > b.receiver) - (a.receiver < b.receiver)


class Alertmanager:
    def __init__(self, now: Callable[[], float], rng: random.Random, config: Optional[AlertmanagerConfig] = None):
        self.now = now
        self.config = config or kube_prometheus_stack_config()
        self.started_at = now()
        self.store = AlertStore(self.started_at)
        self.silences = Silences(rng)
        self._lock = threading.Lock()  # the clock thread posts alerts while API threads read

    # ---- receiving ----------------------------------------------------------------------------------
    def post_alerts(self, alerts: Sequence[PostableAlert]) -> list[str]:
        """Take alerts as ``POST /api/v2/alerts`` does; returns the validation errors of those refused."""
        now = self.now()
        errors = []
        with self._lock:
            for posted in alerts:
                starts_at = posted.starts_at
                if starts_at is None:
                    starts_at = now if posted.ends_at is None else posted.ends_at
                timeout = posted.ends_at is None
                ends_at = now + self.config.resolve_timeout if timeout else posted.ends_at
                alert = Alert({k: v for k, v in posted.labels.items() if v != ""}, dict(posted.annotations),
                              starts_at, ends_at, posted.generator_url, now, timeout)
                problem = validation_error(alert)
                if problem is not None:
                    errors.append(problem)
                    continue
                self.store.put(alert, now)
        return errors

    # ---- reading ---------------------------------------------------------------------------------------
    def _status(self, alert: Alert, alerts: list[Alert], now: float) -> AlertStatus:
        inhibited_by: tuple[str, ...] = ()
        for rule in self.config.inhibit_rules:
            source = rule.inhibitor(alert.labels, alerts, now)
            if source is not None:
                inhibited_by = (source,)
                break
        silenced_by = tuple(self.silences.silencing(alert.labels, now))
        state = "suppressed" if silenced_by or inhibited_by else "active"
        return AlertStatus(state, silenced_by, inhibited_by)

    def _visible(self, matchers: Sequence[Matcher], active: bool, silenced: bool,
                 inhibited: bool) -> list[tuple[Alert, AlertStatus]]:
        """Unresolved alerts that pass the API's filters (``alertFilter``)."""
        now = self.now()
        alerts = self.store.list(now)
        out = []
        for alert in alerts:
            if alert.resolved(now):
                continue
            status = self._status(alert, alerts, now)
            if (not active and status.state == "active") or (not silenced and status.silenced_by) or (
                    not inhibited and status.inhibited_by):
                continue
            if _matches_filter(matchers, alert.labels):
                out.append((alert, status))
        return out

    def alerts(self, matchers: Sequence[Matcher] = (), *, active: bool = True, silenced: bool = True,
               inhibited: bool = True, receiver: Optional[re.Pattern] = None) -> list[AlertView]:
        """What ``GET /api/v2/alerts`` lists, by fingerprint."""
        with self._lock:
            out = []
            for alert, status in self._visible(matchers, active, silenced, inhibited):
                receivers = tuple(m.receiver for m in self.config.route.match(alert.labels))
                if receiver is not None and not any(receiver.fullmatch(r) for r in receivers):
                    continue
                out.append(AlertView(alert, status, receivers))
        return sorted(out, key=lambda view: view.alert.fingerprint)

    def groups(self, matchers: Sequence[Matcher] = (), *, active: bool = True, silenced: bool = True,
               inhibited: bool = True, receiver: Optional[re.Pattern] = None) -> list[AlertGroupView]:
        """What ``GET /api/v2/alerts/groups`` lists: alerts by route and group labels."""
        with self._lock:
            groups: dict[tuple[int, tuple], tuple[dict[str, str], str, list[tuple[Alert, AlertStatus]]]] = {}
            receivers: dict[str, list[str]] = {}
            for alert, status in self._visible(matchers, active, silenced, inhibited):
                for match in self.config.route.match(alert.labels):
                    if receiver is not None and not receiver.fullmatch(match.receiver):
                        continue
                    labels = match.group_labels(alert.labels)
                    key = (id(match.route), tuple(sorted(labels.items())))
                    groups.setdefault(key, (labels, match.receiver, []))[2].append((alert, status))
                    receivers.setdefault(alert.fingerprint, []).append(match.receiver)
        out = []
        for labels, group_receiver, members in groups.values():
            members.sort(key=functools.cmp_to_key(lambda x, y: _compare_alerts(x[0], y[0])))
            out.append(AlertGroupView(labels, group_receiver, tuple(
                AlertView(a, s, tuple(sorted(receivers[a.fingerprint]))) for a, s in members)))
        out.sort(key=functools.cmp_to_key(_compare_groups))
        return out

    # ---- silences ------------------------------------------------------------------------------------------
    def set_silence(self, silence: Silence) -> str:
        """Create or update a silence; raises ``InvalidSilence`` or ``SilenceNotFound``."""
        with self._lock:
            return self.silences.set(silence, self.now())

    def expire_silence(self, silence_id: str) -> None:
        with self._lock:
            self.silences.expire(silence_id, self.now())

    def get_silence(self, silence_id: str) -> Optional[Silence]:
        with self._lock:
            return self.silences.get(silence_id, self.now())

    def list_silences(self) -> list[Silence]:
        with self._lock:
            return self.silences.all(self.now())


def _matches_filter(matchers: Sequence[Matcher], labels: Mapping[str, str]) -> bool:
    """``matchFilterLabels``: a matcher against the empty value also accepts (or rejects) a missing label."""
    for m in matchers:
        present = m.name in labels
        if m.value == "" and present == (not m.is_equal):
            continue
        if not m.matches(labels.get(m.name, "")):
            return False
    return True

