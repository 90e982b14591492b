"""The kubelet's back-off bookkeeping (client-go's ``flowcontrol.Backoff``), on the twin's clock.

One entry per key: the first ``next`` sets the initial delay, each further
one doubles it up to the maximum, and an entry that has not been updated for
twice the maximum counts as expired (a container that ran for ten minutes
starts over at 10 s). The kubelet keeps two: container restarts, keyed by
the container and its spec, checked against the finish time of the last run;
and image pulls, keyed by the pod and the image, checked against the last
failed pull.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable

INITIAL = 10.0  # the kubelet's backOffPeriod
MAXIMUM = 300.0  # MaxContainerBackOff, also the image pull back-off's maximum


@dataclass
class _Entry:
    delay: float
    last_update: float


class Backoff:
    def __init__(self, initial: float = INITIAL, maximum: float = MAXIMUM):
        self.initial = initial
        self.maximum = maximum
        self._entries: dict[Hashable, _Entry] = {}

    def _expired(self, entry: _Entry, at: float) -> bool:
        return at - entry.last_update > 2 * self.maximum

    def next(self, key: Hashable, at: float) -> None:
        entry = self._entries.get(key)
        if entry is None or self._expired(entry, at):
            self._entries[key] = _Entry(self.initial, at)
        else:
            entry.delay = min(entry.delay * 2, self.maximum)
            entry.last_update = at

    def delay(self, key: Hashable) -> float:
        entry = self._entries.get(key)
        return entry.delay if entry is not None else 0.0

    def in_backoff_since(self, key: Hashable, event_time: float, now: float) -> bool:
        """Still backing off from something that happened at ``event_time`` (a container's finish)."""
        entry = self._entries.get(key)
        if entry is None or self._expired(entry, event_time):
            return False
        return now - event_time < entry.delay

    def in_backoff_since_update(self, key: Hashable, now: float) -> bool:
        """Still backing off from the last update (a failed pull)."""
        entry = self._entries.get(key)
        if entry is None or self._expired(entry, now):
            return False
        return now - entry.last_update < entry.delay
