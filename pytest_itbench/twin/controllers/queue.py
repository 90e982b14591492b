"""A work queue of keys with due times, as controllers keep them.

Like client-go's delaying work queue, a key is held once (its earliest due
time wins) and handed out when it is due. Unlike it, the order is fully
deterministic: keys due at the same moment come out in the order they were
added, so a run with the same seed and the same actions does the same work
in the same order.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from typing import Hashable


class WorkQueue:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Hashable]] = []
        self._due: dict[Hashable, float] = {}
        self._seq = itertools.count()
        self._lock = threading.Lock()

    def add(self, key: Hashable, due: float) -> None:
        """Queue ``key`` for ``due``; a key already queued keeps the earlier of the two times."""
        with self._lock:
            current = self._due.get(key)
            if current is not None and current <= due:
                return
            self._due[key] = due
            heapq.heappush(self._heap, (due, next(self._seq), key))

    def pop_due(self, now: float) -> list[Hashable]:
        """Every key due at or before ``now``, in order, removed from the queue."""
        out = []
        with self._lock:
            heap = self._heap
            while heap and heap[0][0] <= now + 1e-9:
                due, _, key = heapq.heappop(heap)
                if self._due.get(key) != due:
                    continue  # superseded by an earlier entry for the same key
                del self._due[key]
                out.append(key)
        return out

    def next_due(self) -> float | None:
        with self._lock:
            while self._heap and self._due.get(self._heap[0][2]) != self._heap[0][0]:
                heapq.heappop(self._heap)
            return self._heap[0][0] if self._heap else None

    def __len__(self) -> int:
        return len(self._due)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._due
