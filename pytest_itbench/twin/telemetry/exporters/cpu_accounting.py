"""Cumulative CPU accounting of one container, as its cgroup keeps it: CPU time, CFS periods, throttling.

The usage model (``twin.metrics``) holds each container's CPU rate as a step function of time; the
kubelet caps it at the container's CPU limit, as the CFS quota does. Integrating it between scrapes
gives ``cpuacct`` usage. With a limit (a CFS quota, enforced in 100 ms periods), every period in
which the container ran counts as elapsed, and every period it spent at the cap counts as throttled:
a container held at its quota exhausts it in each period and waits for the next.
"""

from __future__ import annotations

import math
from typing import Sequence

from ...metrics import Usage

CFS_PERIOD = 0.1  # seconds; the kernel's default cpu.cfs_period_us
_CAP_TOLERANCE_NANOCORES = 1000  # usage is rounded to the microcore before it is recorded


class CpuAccount:
    __slots__ = ("until", "cpu_seconds", "running_seconds", "throttled_seconds")

    def __init__(self, since: float):
        self.until = since  # integrated up to here
        self.cpu_seconds = 0.0
        self.running_seconds = 0.0
        self.throttled_seconds = 0.0

    def advance(self, points: Sequence[tuple[float, Usage | None]], to: float, limit_nanocores: int | None) -> float:
        """Integrate usage from where the account stands up to ``to``; returns the CPU seconds added."""
        start, added = self.until, 0.0
        for i, (since, usage) in enumerate(points):
            end = points[i + 1][0] if i + 1 < len(points) else to
            lo, hi = max(since, start), min(end, to)
            if hi <= lo or usage is None or usage.cpu_nanocores <= 0:
                continue
            seconds = hi - lo
            added += usage.cpu_nanocores * 1e-9 * seconds
            self.running_seconds += seconds
            if limit_nanocores is not None and usage.cpu_nanocores >= limit_nanocores - _CAP_TOLERANCE_NANOCORES:
                self.throttled_seconds += seconds
        self.cpu_seconds += added
        self.until = max(self.until, to)
        return added

    @property
    def periods(self) -> int:
        return math.floor(self.running_seconds / CFS_PERIOD + 1e-6)

    @property
    def throttled_periods(self) -> int:
        return math.floor(self.throttled_seconds / CFS_PERIOD + 1e-6)


def memory_at(points: Sequence[tuple[float, Usage | None]], t: float) -> int | None:
    """The working set in effect at ``t`` (a value set at ``t`` counts), or None if not running."""
    found: Usage | None = None
    for since, usage in points:
        if since > t:
            break
        found = usage
    return found.memory_bytes if found is not None else None
