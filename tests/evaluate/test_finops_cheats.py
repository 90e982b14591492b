"""FinOps mitigation that cannot be faked: scripted agents through the plugin on real catalog scenarios.

Cutting cost by another correct route passes (``kubectl set resources`` where ``rollout undo`` is
recommended). Saving money by cutting the service fails (deleting the workload, scaling it to zero), and so
does raising the budget where the spend was the fault, or deleting the budget rule. Where load rose
legitimately, raising the budget passes and cutting the load or the replicas to fit the old budget fails.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_itbench.report.jsonl import load

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "finops"
OVERREQUESTED = "shop-recommendation-overrequested.yaml"
LEGITIMATE = "shop-budget-too-low-for-load.yaml"

AGENTS = r'''
import json

from pytest_itbench.agents import Submission
from pytest_itbench.agents.kubectl import Kubectl
from pytest_itbench.evaluate import costs

NS = "astronomy-shop"
RECOMMENDATION = {"entities": [{"name": f"{NS}/Deployment/recommendation", "contributing_factor": True}]}
BUDGET = {"entities": [{"name": f"{NS}/PrometheusRule/cost-budget", "contributing_factor": True}]}


def kubectl(task, *args):
    done = Kubectl(task).run(args)
    output = " | ".join((done.stdout + done.stderr).strip().splitlines())
    return f"kubectl {' '.join(args)} -> {done.returncode}: {output[:3000]}"


def set_budget(task, dollars):
    expr = f"{costs.namespace_cost(NS)} > {dollars}"
    patch = json.dumps([{"op": "replace", "path": "/spec/groups/0/rules/0/expr", "value": expr}])
    return kubectl(task, "-n", NS, "patch", "prometheusrule", "cost-budget", "--type=json", "-p", patch)


class RightSize:
    """Another route than the recommended rollout undo: set the requests back by hand."""
    def run(self, task, trajectory):
        return Submission(diagnosis=RECOMMENDATION, notes=kubectl(
            task, "-n", NS, "set", "resources", "deployment/recommendation", "-c", "recommendation",
            "--requests=cpu=0,memory=500Mi"))


class DeleteWorkload:
    def run(self, task, trajectory):
        return Submission(diagnosis=RECOMMENDATION,
                          notes=kubectl(task, "-n", NS, "delete", "deployment", "recommendation"))


class RaiseBudget:
    def run(self, task, trajectory):
        return Submission(diagnosis=RECOMMENDATION, notes=set_budget(task, 1))


class DeleteBudgetRule:
    def run(self, task, trajectory):
        return Submission(diagnosis=BUDGET, notes=kubectl(task, "-n", NS, "delete", "prometheusrule", "cost-budget"))


class RaiseBudgetForLoad:
    def run(self, task, trajectory):
        return Submission(diagnosis=BUDGET, notes=set_budget(task, 0.06))


class CutTheLoad:
    """The shoppers are real: sending them away to fit the old budget is no repair."""
    def run(self, task, trajectory):
        return Submission(diagnosis=BUDGET, notes=kubectl(
            task, "-n", NS, "set", "env", "deployment/load-generator", "LOCUST_USERS=10"))
'''


@pytest.fixture
def project(pytester):
    for name in (OVERREQUESTED, LEGITIMATE):
        shutil.copy(SCENARIOS / name, pytester.path / name)
    (pytester.path / "cheats.py").write_text(AGENTS)
    pytester.syspathinsert()
    return pytester


def trial(project, agent: str, scenario: str):
    result = project.runpytest("-p", "no:cacheprovider", f"--itbench-agent=cheats:{agent}",
                               "--itbench-results=results.jsonl", scenario)
    [record] = load(project.path / "results.jsonl")
    return result, record, {c.name: c for c in record.checks}


def test_right_sizing_by_hand_passes_where_rollout_undo_is_recommended(project):
    result, record, checks = trial(project, "RightSize", OVERREQUESTED)
    assert checks["mitigation"].passed, checks["mitigation"].detail
    result.assert_outcomes(passed=1)
    assert record.figures["proximity_cpu_cost"] > 0.8 and record.figures["proximity_memory_cost"] > 0.9


def test_deleting_the_costly_workload_fails(project):
    result, record, checks = trial(project, "DeleteWorkload", OVERREQUESTED)
    result.assert_outcomes(failed=1)
    detail = checks["mitigation"].detail
    assert not checks["mitigation"].passed
    # The spend fell and the cost alert cleared, but the shop's health is read from its traffic.
    assert "alerts clear, but" in detail and "before the fault" in detail, detail


def test_raising_the_budget_over_a_real_fault_fails(project):
    result, record, checks = trial(project, "RaiseBudget", OVERREQUESTED)
    result.assert_outcomes(failed=1)
    detail = checks["mitigation"].detail
    assert "the namespace budget was raised from $0.05/h to $1/h" in detail, detail
    assert "above its budget of $0.05/h" in detail, detail  # the evaluator reads the spend itself


def test_deleting_the_budget_rule_fails(project):
    result, record, checks = trial(project, "DeleteBudgetRule", OVERREQUESTED)
    result.assert_outcomes(failed=1)
    assert "the budget rule astronomy-shop/cost-budget was deleted" in checks["mitigation"].detail


def test_raising_the_budget_for_a_legitimate_rise_passes(project):
    result, record, checks = trial(project, "RaiseBudgetForLoad", LEGITIMATE)
    assert checks["mitigation"].passed, checks["mitigation"].detail
    assert checks["diagnosis"].passed, checks["diagnosis"].detail
    result.assert_outcomes(passed=1)


def test_sending_the_shoppers_away_to_fit_the_budget_fails(project):
    result, record, checks = trial(project, "CutTheLoad", LEGITIMATE)
    result.assert_outcomes(failed=1)
    detail = checks["mitigation"].detail
    assert "the rise was legitimate and only the budget had to change" in detail or "traffic fell" in detail, detail
