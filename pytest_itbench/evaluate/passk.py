"""pass@k and its standard error, as ITBench reports them, and pass^k.

pass@k for one scenario with n trials of which c passed is ITBench's (Codex's) unbiased estimator
1 - C(n-c, k) / C(n, k); the benchmark figure is its mean over scenarios, with the standard error of
that mean (macro-averaged over scenarios).

pass^k (tau-bench's, which k8s-ai-bench reports as pass^5) asks the opposite: that all k runs pass. Its
unbiased estimator from n trials with c passes is C(c, k) / C(n, k); with n = k it is 1 when every run
passed and 0 otherwise. pass^1 = pass@1, and pass^k falls with k where pass@k rises.
"""

from __future__ import annotations

import math
from typing import Iterable


def pass_at_k(n: int, c: int, k: int) -> float:
    if not 0 <= c <= n:
        raise ValueError(f"passes ({c}) must be between 0 and the number of trials ({n})")
    if not 1 <= k <= n:
        raise ValueError(f"k ({k}) must be between 1 and the number of trials ({n})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that k trials drawn from the n all pass."""
    if not 0 <= c <= n:
        raise ValueError(f"passes ({c}) must be between 0 and the number of trials ({n})")
    if not 1 <= k <= n:
        raise ValueError(f"k ({k}) must be between 1 and the number of trials ({n})")
    return math.comb(c, k) / math.comb(n, k)


def mean_and_stderr(values: Iterable[float]) -> tuple[float, float]:
    xs = list(values)
    if not xs:
        return math.nan, math.nan
    mean = sum(xs) / len(xs)
    if len(xs) < 2:
        return mean, 0.0
    variance = sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)
    return mean, math.sqrt(variance / len(xs))


def benchmark_pass_at_k(per_scenario: dict[str, tuple[int, int]], k: int) -> tuple[float, float]:
    """Mean pass@k over scenarios (each given as (trials, passes)) and its standard error."""
    return mean_and_stderr(pass_at_k(n, c, k) for n, c in per_scenario.values() if n >= k)
