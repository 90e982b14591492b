"""Latency distributions as small mixtures of lognormals, so the engine reasons about all requests at once.

A request's latency is the sum of its own processing and the calls it makes, each of which may be
fast, slow (a GC pause, a saturated CPU) or a timeout. The engine keeps, for every operation, the
distribution of that sum rather than individual requests: a mixture of at most ``MAX_COMPONENTS``
components, each a lognormal given by its weight, mean and variance (a variance of zero is a
point, such as a timeout). Sums of independent parts add means and variances component by
component; when a sum would hold too many components, the two closest (in log-mean) merge with
their first two moments kept. Each component also keeps its floor, the part of it that is certain (a
sleep, an injected delay, a timeout): a component is its floor plus a lognormal of the rest, so no
request that sleeps a second is drawn faster than a second. The shape that matters for alerts (the tail that p95 reads) survives
because slow modes stay separate components.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Iterable, Sequence

MAX_COMPONENTS = 4
_SQRT2 = math.sqrt(2.0)
_TINY = 1e-12

Component = tuple[float, float, float, float]  # (weight, mean seconds, variance, floor seconds <= mean)


@dataclass(frozen=True)
class Mixture:
    components: tuple[Component, ...]

    # ---- building -------------------------------------------------------------------------------------------------
    @staticmethod
    def point(seconds: float) -> "Mixture":
        seconds = max(seconds, 0.0)
        return Mixture(((1.0, seconds, 0.0, seconds),))

    @staticmethod
    def lognormal(median: float, spread: float) -> "Mixture":
        """Median and the standard deviation of the log (the sheet's ``latency``)."""
        mean = median * math.exp(spread * spread / 2)
        return Mixture(((1.0, mean, mean * mean * (math.exp(spread * spread) - 1), 0.0),))

    @staticmethod
    def mix(parts: Iterable[tuple[float, "Mixture"]]) -> "Mixture":
        """Weighted combination (weights need not sum to one; they are normalised)."""
        out: list[Component] = []
        total = 0.0
        for weight, mixture in parts:
            if weight <= 0:
                continue
            total += weight
            out.extend((weight * w, m, v, f) for w, m, v, f in mixture.components)
        if total <= 0:
            return ZERO
        return Mixture(_reduce([(w / total, m, v, f) for w, m, v, f in out]))

    # ---- arithmetic -------------------------------------------------------------------------------------------------
    def plus(self, other: "Mixture") -> "Mixture":
        """The sum of two independent latencies."""
        if other is ZERO:
            return self
        if self is ZERO:
            return other
        out = [(w1 * w2, m1 + m2, v1 + v2, f1 + f2) for w1, m1, v1, f1 in self.components
               for w2, m2, v2, f2 in other.components]
        return Mixture(_reduce(out))

    def shift(self, seconds: float) -> "Mixture":
        if seconds == 0:
            return self
        return Mixture(tuple((w, m + seconds, v, max(f + seconds, 0.0)) for w, m, v, f in self.components))

    def scale(self, factor: float) -> "Mixture":
        if factor == 1:
            return self
        return Mixture(tuple((w, m * factor, v * factor * factor, f * factor) for w, m, v, f in self.components))

    def times(self, count: float) -> "Mixture":
        """The sum of ``count`` independent draws (a fractional count scales the moments)."""
        if count <= 0:
            return ZERO
        whole = int(count)
        if whole != count or whole > 4:
            mean, var = self.mean, self.variance
            floor = min(f for _, _, _, f in self.components)
            return Mixture(((1.0, mean * count, var * count, floor * count),))
        out = self
        for _ in range(whole - 1):
            out = out.plus(self)
        return out

    def split_at(self, seconds: float) -> tuple[float, "Mixture"]:
        """The share of requests slower than ``seconds``, and the distribution of the others."""
        above = 0.0
        kept: list[Component] = []
        for w, m, v, f in self.components:
            tail = w * (1.0 - _component_cdf(m, v, f, seconds))
            above += tail
            if w - tail > _TINY:
                kept.append((w - tail, m, v, f) if m < seconds else (w - tail, seconds, 0.0, seconds))
        if above < 1e-4:  # a tail this thin is the model's, not the system's
            return 0.0, self
        if not kept:
            return 1.0, ZERO
        below = sum(w for w, _, _, _ in kept)
        return above, Mixture(tuple((w / below, m, v, f) for w, m, v, f in kept))

    # ---- reading ----------------------------------------------------------------------------------------------------
    @property
    def mean(self) -> float:
        return sum(w * m for w, m, _, _ in self.components)

    @property
    def variance(self) -> float:
        mean = self.mean
        return sum(w * (v + m * m) for w, m, v, _ in self.components) - mean * mean

    def cdf(self, seconds: float) -> float:
        return sum(w * _component_cdf(m, v, f, seconds) for w, m, v, f in self.components)

    def quantile(self, q: float) -> float:
        lo, hi = 0.0, max(m + 10 * math.sqrt(v) for _, m, v, _ in self.components) + 1e-9
        for _ in range(60):
            mid = (lo + hi) / 2
            if self.cdf(mid) < q:
                lo = mid
            else:
                hi = mid
        return hi

    def fractions(self, bounds_seconds: Sequence[float]) -> list[float]:
        """The share of requests in each bucket ``(previous bound, bound]``, plus the overflow last."""
        out, previous = [], 0.0
        for bound in bounds_seconds:
            at = self.cdf(bound)
            out.append(max(at - previous, 0.0))
            previous = at
        out.append(max(1.0 - previous, 0.0))
        return out

    def sample(self, rng: random.Random) -> float:
        pick = rng.random()
        for w, m, v, f in self.components:
            pick -= w
            if pick <= 0:
                break
        rest = m - f
        if v <= 0 or rest <= 0:
            return m
        sigma2 = math.log(1 + v / (rest * rest))
        return f + math.exp(rng.gauss(math.log(rest) - sigma2 / 2, math.sqrt(sigma2)))


ZERO = Mixture(((1.0, 0.0, 0.0, 0.0),))


def _component_cdf(mean: float, var: float, floor: float, x: float) -> float:
    """The share of a component (its floor plus a lognormal of the rest) at or below ``x``."""
    if var <= 0 or mean - floor <= 0:
        return 1.0 if x >= mean else 0.0
    mean, x = mean - floor, x - floor
    if x <= 0:
        return 0.0
    sigma2 = math.log(1 + var / (mean * mean))
    mu = math.log(mean) - sigma2 / 2
    return 0.5 * (1 + math.erf((math.log(x) - mu) / (math.sqrt(sigma2) * _SQRT2)))


def _reduce(components: list[Component]) -> tuple[Component, ...]:
    """Merge the closest components (in log-mean) until at most MAX_COMPONENTS remain, keeping two moments."""
    parts = [c for c in components if c[0] > _TINY]
    while len(parts) > MAX_COMPONENTS:
        parts.sort(key=lambda c: c[1])
        best, gap = 0, math.inf
        for i in range(len(parts) - 1):
            d = math.log((parts[i + 1][1] + 1e-9) / (parts[i][1] + 1e-9))
            if d < gap:
                best, gap = i, d
        (w1, m1, v1, f1), (w2, m2, v2, f2) = parts[best], parts[best + 1]
        w = w1 + w2
        m = (w1 * m1 + w2 * m2) / w
        v = (w1 * (v1 + m1 * m1) + w2 * (v2 + m2 * m2)) / w - m * m
        parts[best:best + 2] = [(w, m, max(v, 0.0), min(f1, f2))]
    return tuple(parts)
