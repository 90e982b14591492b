"""Alerts as Alertmanager holds them: fingerprints, merging of re-sent alerts, resolution by time.

An alert is resolved once its ``endsAt`` has passed. Prometheus sends firing
alerts with an ``endsAt`` a few evaluation intervals ahead and re-sends them,
so an alert that stops being re-sent (its rule was deleted, Prometheus is
gone) resolves by itself; an alert posted without ``endsAt`` gets one
``resolve_timeout`` ahead. Times are Unix seconds on the twin's clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Optional

_FNV_OFFSET, _FNV_PRIME, _MASK = 14695981039346656037, 1099511628211, (1 << 64) - 1


def fingerprint(labels: Mapping[str, str]) -> str:
    """``model.LabelSet.Fingerprint()`` as Alertmanager prints it: FNV-1a over sorted names and values, hex."""
    h = _FNV_OFFSET
    for name in sorted(labels):
        for part in (name, labels[name]):
            for byte in part.encode():
                h = ((h ^ byte) * _FNV_PRIME) & _MASK
            h = ((h ^ 0xFF) * _FNV_PRIME) & _MASK  # model.SeparatorByte
    return f"{h:016x}"


@dataclass(frozen=True)
class PostableAlert:
    """An alert as Prometheus posts it to ``/api/v2/alerts``; None times are absent."""

    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    starts_at: Optional[float] = None
    ends_at: Optional[float] = None
    generator_url: str = ""


@dataclass(frozen=True)
class Alert:
    """``types.Alert``: an alert with its authoritative update time and whether its end is a timeout."""

    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    starts_at: float
    ends_at: float
    generator_url: str
    updated_at: float
    timeout: bool = False

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.labels)

    def resolved(self, now: float) -> bool:
        return self.ends_at <= now

    def merge(self, other: "Alert", now: float) -> "Alert":
        """``Alert.Merge``: the younger alert wins, keeping the earliest start and the right end."""
        if other.updated_at < self.updated_at:
            return other.merge(self, now)
        merged = other
        if self.starts_at < other.starts_at:
            merged = replace(merged, starts_at=self.starts_at)
        if other.resolved(now):
            if self.resolved(now) and self.ends_at > other.ends_at:
                merged = replace(merged, ends_at=self.ends_at)
        elif self.ends_at > other.ends_at and not self.timeout:
            merged = replace(merged, ends_at=self.ends_at)
        return merged


def validation_error(alert: Alert) -> Optional[str]:
    """``types.Alert.Validate``."""
    if alert.ends_at < alert.starts_at:
        return "start time must be before end time"
    if not alert.labels:
        return "at least one label pair required"
    for kind, pairs in (("label set", alert.labels), ("annotations", alert.annotations)):
        for name in pairs:
            if not name:
                return f'invalid {kind}: invalid name ""'
    return None


class AlertStore:
    """The alert provider (``provider/mem``): one alert per fingerprint, garbage-collected once resolved."""

    GC_INTERVAL = 30 * 60.0  # --alerts.gc-interval

    def __init__(self, started_at: float):
        self._alerts: dict[str, Alert] = {}
        self._last_gc = started_at

    def put(self, alert: Alert, now: float) -> None:
        key = alert.fingerprint
        old = self._alerts.get(key)
        # Re-sends of the same alert overlap in time: merge them.
        if old is not None and (old.starts_at < alert.ends_at < old.ends_at
                                or old.starts_at < alert.starts_at < old.ends_at):
            alert = old.merge(alert, now)
        self._alerts[key] = alert

    def list(self, now: float) -> list[Alert]:
        if now - self._last_gc >= self.GC_INTERVAL:
            self._alerts = {k: a for k, a in self._alerts.items() if not a.resolved(now)}
            self._last_gc = now
        return list(self._alerts.values())
