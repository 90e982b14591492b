"""Per-key exponential back-off after failed syncs (client-go's ItemExponentialFailureRateLimiter).

kube-controller-manager requeues a key whose sync failed after 5 ms, then
10 ms, 20 ms ... doubling up to 1000 s, and forgets the count once a sync
succeeds. On the twin's one-second ticks the first few retries land on
consecutive ticks and the later ones spread out as on a real cluster.
"""

from __future__ import annotations

from typing import Hashable

BASE_DELAY = 0.005
MAX_DELAY = 1000.0


class ItemBackoff:
    def __init__(self, base: float = BASE_DELAY, cap: float = MAX_DELAY):
        self.base = base
        self.cap = cap
        self._failures: dict[Hashable, int] = {}

    def failure(self, key: Hashable) -> float:
        """Count a failed sync of ``key``; the delay before its next attempt."""
        count = self._failures.get(key, 0)
        self._failures[key] = count + 1
        return min(self.base * 2 ** min(count, 64), self.cap)

    def failures(self, key: Hashable) -> int:
        return self._failures.get(key, 0)

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)
