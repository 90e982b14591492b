"""The benchmark's figures over a group of trials, computed as ITBench reports them.

- pass@k is ITBench's unbiased estimator per scenario, macro-averaged over scenarios; pass@1 comes with
  the standard error of that mean (ITBench's "±").
- Errors (the environment broke) are not attempts by the agent: they are counted apart and left out
  of every figure. A scenario whose trials all errored has no pass@k and drops out of the average.
- pass@k is given only when every scored scenario of the group has at least k valid trials, so each
  k averages over the same scenarios as pass@1.
- pass^k (all k runs pass; tau-bench's estimator C(c, k) / C(n, k)) is given beside pass@k, under the
  same rule.
- safety: ``unsafe`` counts the unsafe passes (alerts cleared after a destructive write outside the blast
  radius, evaluate/safety.py), whatever --itbench-unsafe made of them; ``safe pass@1`` is pass@1 with
  an unsafe pass counted as a failure (equal to pass@1 under --itbench-unsafe=fail).
- NTAM is averaged per scenario, then over the scenarios where it was scored (macro, like pass@k).
- MTTD and MTTR are medians over successes only (ITBench counts a failure as infinite time): a trial
  counts when its diagnosis (MTTD) or mitigation (MTTR) check passed, or, if it has no such check,
  when it passed.
- Steps and tokens, and what the trajectory analysis counted (tool calls, repeated actions, failed
  commands) and priced (cost), are means over the valid trials that recorded them.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from pytest_itbench.evaluate.passk import mean_and_stderr, pass_at_k, pass_hat_k
from pytest_itbench.evaluate.safety import UNSAFE
from pytest_itbench.results import (COST_USD, ERROR, FAILED, FAILED_COMMANDS, MTTD, MTTR, NTAM, PASSED,
                                    REPEATED_ACTIONS, STEPS, TOKENS, TOOL_CALLS, TrialResult)

_SUCCESS_CHECK = {MTTD: "diagnosis", MTTR: "mitigation"}

# FinOps: ITBench's proximity to the optimal cost and efficiency, by the name the leaderboard gives it.
PROXIMITY = {"CPU cost": "proximity_cpu_cost", "memory cost": "proximity_memory_cost",
             "CPU efficiency": "proximity_cpu_efficiency", "memory efficiency": "proximity_memory_efficiency",
             "cluster cost": "proximity_cluster_cost"}

# pass@k columns: every k up to 3, then the usual round numbers, and always the number of runs itself,
# so ten runs show pass@1, 2, 3, 5 and 10 rather than ten columns.
_SHOWN_K = (1, 2, 3, 5, 10, 20, 50, 100)


@dataclass(frozen=True)
class Figures:
    label: str
    trials: int
    scenarios: int
    passed: int
    failed: int
    errors: int
    pass_at: dict[int, float | None]  # fraction of scenarios, by k; None where not every scenario has k trials
    stderr: float | None  # of pass@1; None with fewer than two scored scenarios
    ntam: float | None
    mttd: float | None
    mttr: float | None
    steps: float | None
    tokens: float | None
    tool_calls: float | None
    repeated_actions: float | None
    failed_commands: float | None
    cost_usd: float | None
    pass_hat: dict[int, float | None] = field(default_factory=dict)  # pass^k, by k, as pass_at
    safe_pass_at_1: float | None = None  # pass@1 counting an unsafe pass as a failure
    unsafe: int = 0  # unsafe passes (valid trials whose figure ``unsafe`` is 1)


def shown_k(results: Iterable[TrialResult]) -> list[int]:
    """The k values to report: up to the largest number of runs any scenario had."""
    most = max((len(rs) for rs in _by_scenario(results).values()), default=0)
    return sorted({k for k in _SHOWN_K if k <= most} | ({most} if most else set()))


def summarize(label: str, results: list[TrialResult], ks: list[int]) -> Figures:
    valid = [r for r in results if r.outcome in (PASSED, FAILED)]
    by_scenario = _by_scenario(valid)
    tallies = {s: (len(rs), sum(r.outcome == PASSED for r in rs)) for s, rs in by_scenario.items()}
    pass_at: dict[int, float | None] = {}
    pass_hat: dict[int, float | None] = {}
    stderr = None
    for k in ks:
        if tallies and all(n >= k for n, _ in tallies.values()):
            mean, err = mean_and_stderr(pass_at_k(n, c, k) for n, c in tallies.values())
            pass_at[k] = mean
            pass_hat[k] = mean_and_stderr(pass_hat_k(n, c, k) for n, c in tallies.values())[0]
            if k == 1 and len(tallies) > 1:
                stderr = err
        else:
            pass_at[k] = pass_hat[k] = None
    unsafe = [r for r in valid if r.figures.get(UNSAFE)]
    safe = {s: (len(rs), sum(r.outcome == PASSED and not r.figures.get(UNSAFE) for r in rs))
            for s, rs in by_scenario.items()}
    safe_pass_at_1 = mean_and_stderr(pass_at_k(n, c, 1) for n, c in safe.values())[0] if safe else None
    ntam_per_scenario = [_mean(_values(rs, NTAM)) for rs in by_scenario.values()]
    return Figures(
        label=label,
        trials=len(results),
        scenarios=len({r.trial_id for r in results}),  # a held-out variant is a scenario of its own
        passed=sum(r.outcome == PASSED for r in results),
        failed=sum(r.outcome == FAILED for r in results),
        errors=sum(r.outcome == ERROR for r in results),
        pass_at=pass_at,
        stderr=stderr,
        ntam=_mean(x for x in ntam_per_scenario if x is not None),
        mttd=_median(_values((r for r in valid if _succeeded(r, MTTD)), MTTD)),
        mttr=_median(_values((r for r in valid if _succeeded(r, MTTR)), MTTR)),
        steps=_mean(_values(valid, STEPS)),
        tokens=_mean(_values(valid, TOKENS)),
        tool_calls=_mean(_values(valid, TOOL_CALLS)),
        repeated_actions=_mean(_values(valid, REPEATED_ACTIONS)),
        failed_commands=_mean(_values(valid, FAILED_COMMANDS)),
        cost_usd=_mean(_values(valid, COST_USD)),
        pass_hat=pass_hat,
        safe_pass_at_1=safe_pass_at_1,
        unsafe=len(unsafe),
    )


def sections(results: list[TrialResult], ks: list[int]) -> list[list[Figures]]:
    """Overall, then by domain, then by complexity (in the catalog's order); empty groups left out."""
    found = [[summarize("all", results, ks)]]
    for attribute, order in (("domain", ("sre", "ciso", "finops")), ("complexity", ("easy", "medium", "hard"))):
        present = {getattr(r, attribute) for r in results}
        values = [v for v in order if v in present] + sorted(present - set(order))
        found.append([summarize(v, [r for r in results if getattr(r, attribute) == v], ks) for v in values])
    return found


def proximity(results: Iterable[TrialResult]) -> dict[str, float | None]:
    """Each proximity figure averaged per scenario over its valid trials, then over the scenarios that have it."""
    by_scenario = _by_scenario(r for r in results if r.outcome in (PASSED, FAILED))
    means = {}
    for label, figure in PROXIMITY.items():
        per = [_mean(_values(rs, figure)) for rs in by_scenario.values()]
        means[label] = _mean(x for x in per if x is not None)
    return means


def per_scenario(results: list[TrialResult], ks: list[int]) -> list[Figures]:
    return [summarize(s, rs, ks) for s, rs in sorted(_by_scenario(results).items())]


def _by_scenario(results: Iterable[TrialResult]) -> dict[str, list[TrialResult]]:
    grouped: dict[str, list[TrialResult]] = defaultdict(list)
    for r in results:
        grouped[r.trial_id].append(r)  # id@vN for a held-out variant
    return grouped


def _succeeded(result: TrialResult, figure: str) -> bool:
    check = next((c for c in result.checks if c.name == _SUCCESS_CHECK[figure]), None)
    return check.passed if check is not None else result.outcome == PASSED


def _values(results: Iterable[TrialResult], figure: str) -> list[float]:
    """The finite values of a figure; None, missing and infinite (ITBench's 'never') are left out."""
    values = (r.figures.get(figure) for r in results)
    return [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]


def _mean(values: Iterable[float]) -> float | None:
    xs = list(values)
    return sum(xs) / len(xs) if xs else None


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None
