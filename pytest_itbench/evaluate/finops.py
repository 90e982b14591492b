"""The FinOps evaluator: diagnosis as in SRE; mitigation when the cost alerts clear and stay clear while the
service keeps its health and the spend really fell (or, where load rose legitimately, the budget rose and
nothing was cut); and ITBench's proximity to the optimal cost and efficiency, as figures.

Two repairs that only look like one fail here (docs/finops.md, "Scoring"):
- cutting the service to save money (deleting replicas or workloads): the SLO alerts fire, or the
  application's traffic or error ratio leaves its baseline;
- raising the budget where the spend was a real fault: the evaluator compares the spend it reads itself
  with the budget the scenario set, and the budget rule with what setup wrote.
"""

from __future__ import annotations

import math

import pytest

from ..finops_setup import read_budget
from ..results import MTTD, MTTR, CheckResult
from ..scenario.finops import FinopsGroundTruth
from . import costs as cost_reading
from . import diagnosis as diagnosis_scoring
from . import mitigation as mitigation_check
from .signals import Prometheus

# Proximity figures, as the leaderboard names them.
PROXIMITY = {"cpu_cost": "proximity_cpu_cost", "memory_cost": "proximity_memory_cost",
             "cpu_efficiency": "proximity_cpu_efficiency", "memory_efficiency": "proximity_memory_efficiency",
             "cluster_cost": "proximity_cluster_cost"}
SPEND_SLACK = 0.02  # a spend this close above the budget counts as within it (scrape timing, rounding)
KEPT_SPEND = 0.8  # budget raised for a legitimate rise: the spend must stay at least this share of before


@pytest.hookimpl
def pytest_itbench_evaluate(trial):
    if trial.scenario.domain != "finops" or trial.scenario.finops is None:
        return None
    truth = FinopsGroundTruth.model_validate(trial.scenario.ground_truth)
    return [_diagnosis(trial, truth), _mitigation(trial, truth)]


def _diagnosis(trial, truth: FinopsGroundTruth) -> CheckResult:
    submitted = trial.submission.diagnosis if trial.submission is not None else None
    figures = trial.result.figures
    if not submitted:
        figures[MTTD] = math.inf
        return CheckResult("diagnosis", False, "no diagnosis was submitted", value=0.0)
    scored = diagnosis_scoring.score(truth, submitted)
    figures["diagnosis_f1"] = round(scored.root_cause.f1, 4)
    figures["entity_f1"] = round(scored.entities.f1, 4)
    if scored.passed:
        diagnosed_at = trial.submission.diagnosed_at
        figures[MTTD] = round(diagnosed_at if diagnosed_at is not None else trial.agent_seconds, 3)
    else:
        figures[MTTD] = math.inf
    return CheckResult("diagnosis", scored.passed, diagnosis_scoring.describe(scored),
                       value=round(scored.root_cause.f1, 4))


def _mitigation(trial, truth: FinopsGroundTruth) -> CheckResult:
    cluster = trial.cluster
    prometheus = Prometheus(cluster.urls["prometheus"])
    outcome = mitigation_check.evaluate(
        prometheus, cluster.now, cluster.advance, namespace=trial.namespace,
        alerts=trial.scenario.expected_alerts, window=trial.scenario.evaluation.stability_window,
        agent_started=trial.agent_started, baseline=trial.baseline)
    now = cluster.now()
    reading = cost_reading.read(prometheus, trial.namespace, now)
    _proximity(trial, truth, reading)
    failures = [] if outcome.passed else [outcome.detail]
    if outcome.passed:
        failures += _slo_problems(trial, prometheus, now)
        failures += _budget_problems(trial, truth, reading)
    if failures or outcome.clear_since is None:
        trial.result.figures[MTTR] = math.inf
        return CheckResult("mitigation", False, "; ".join(failures) + f" ({reading.describe()})")
    trial.result.figures[MTTR] = round(max(0.0, outcome.clear_since - trial.agent_started), 3)
    return CheckResult("mitigation", True, f"{outcome.detail}; {reading.describe()}")


def _proximity(trial, truth: FinopsGroundTruth, reading: cost_reading.Costs) -> None:
    for field, figure in PROXIMITY.items():
        value = cost_reading.proximity(getattr(reading, field), getattr(truth.optimal, field))
        if value is not None:
            trial.result.figures[figure] = round(value, 4)


def _slo_problems(trial, prometheus: Prometheus, now: float) -> list[str]:
    """SLO and workload alerts that fired during the stability window and were quiet before the fault. Alerts of
    severity info page nobody (a real cluster's background carries some that flap); they say nothing broke."""
    window = trial.scenario.evaluation.stability_window
    cost_alerts = set(trial.finops.alert_names) if trial.finops is not None else set()
    before = set(trial.finops.firing_before) if trial.finops is not None else set()
    query = f'ALERTS{{alertstate="firing",namespace="{trial.namespace}",severity!="info"}}'
    fired = {s["metric"].get("alertname", "") for s in
             prometheus.query_range(query, now - window, now, mitigation_check.STEP)}
    noisy = sorted(fired - cost_alerts - before)
    return [f"the service did not keep its health: {', '.join(noisy)} fired in the last {window:.0f} s"] if noisy \
        else []


def _budget_problems(trial, truth: FinopsGroundTruth, reading: cost_reading.Costs) -> list[str]:
    state = trial.finops
    if state is None:
        return []
    live = read_budget(trial.cluster.api_client(), state)
    problems = []
    if truth.budget == "keep":
        if live.problem:
            problems.append(live.problem)
        for scope, was, now in (("namespace", state.budget.namespace, live.namespace),
                                ("cluster", state.budget.cluster, live.cluster)):
            if was is not None and now is not None and now > was * (1 + 1e-9):
                problems.append(f"the {scope} budget was raised from ${was:g}/h to ${now:g}/h, but the spend "
                                f"itself was the fault")
        spend = {"namespace": reading.namespace_cost, "cluster": reading.cluster_cost}
        for scope, budget in (("namespace", state.budget.namespace), ("cluster", state.budget.cluster)):
            if budget is not None and spend[scope] is not None and spend[scope] > budget * (1 + SPEND_SLACK):
                problems.append(f"the {scope} still spends ${spend[scope]:.4f}/h, above its budget of ${budget:g}/h")
    else:
        if live.problem:
            problems.append(live.problem)
        before = state.spend_before_agent
        if before is not None and reading.namespace_cost is not None and \
                reading.namespace_cost < KEPT_SPEND * before:
            problems.append(f"the spend fell from ${before:.4f}/h to ${reading.namespace_cost:.4f}/h: the rise "
                            f"was legitimate and only the budget had to change")
    return problems
