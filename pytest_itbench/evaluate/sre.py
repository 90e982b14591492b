"""The SRE evaluator: diagnosis (root cause, entities) and mitigation (alerts clear, traffic healthy),
with MTTD and MTTR, registered as an implementation of ``pytest_itbench_evaluate``."""

from __future__ import annotations

import math

import pytest

from ..results import MTTD, MTTR, CheckResult
from ..scenario.schema import SreGroundTruth
from . import diagnosis as diagnosis_scoring
from . import mitigation as mitigation_check
from .signals import Prometheus


@pytest.hookimpl
def pytest_itbench_evaluate(trial):
    if trial.scenario.domain != "sre":
        return None
    checks = [_diagnosis(trial), _mitigation(trial)]
    return checks


def _diagnosis(trial) -> CheckResult:
    truth = SreGroundTruth.model_validate(trial.scenario.ground_truth)
    submitted = trial.submission.diagnosis if trial.submission is not None else None
    if not submitted:
        trial.result.figures[MTTD] = math.inf
        return CheckResult("diagnosis", False, "no diagnosis was submitted", value=0.0)
    scored = diagnosis_scoring.score(truth, submitted)
    figures = trial.result.figures
    figures["diagnosis_f1"] = round(scored.root_cause.f1, 4)
    figures["entity_f1"] = round(scored.entities.f1, 4)
    figures["entity_at_1"] = 1.0 if scored.entity_at_1 else 0.0
    if scored.passed:
        diagnosed_at = trial.submission.diagnosed_at
        figures[MTTD] = round(diagnosed_at if diagnosed_at is not None else trial.agent_seconds, 3)
    else:
        figures[MTTD] = math.inf
    return CheckResult("diagnosis", scored.passed, diagnosis_scoring.describe(scored),
                       value=round(scored.root_cause.f1, 4))


def _mitigation(trial) -> CheckResult:
    cluster = trial.cluster
    outcome = mitigation_check.evaluate(
        Prometheus(cluster.urls["prometheus"]), cluster.now, cluster.advance, namespace=trial.namespace,
        alerts=trial.scenario.expected_alerts, window=trial.scenario.evaluation.stability_window,
        agent_started=trial.agent_started, baseline=trial.baseline)
    if outcome.passed and outcome.clear_since is not None:
        trial.result.figures[MTTR] = round(max(0.0, outcome.clear_since - trial.agent_started), 3)
    else:
        trial.result.figures[MTTR] = math.inf
    return CheckResult("mitigation", outcome.passed, outcome.detail)
