"""FinOps scoring and scenario files: proximity by hand, the budget rule read back, the finops section's errors."""

from __future__ import annotations

import re

import pytest

from pytest_itbench import finops_setup
from pytest_itbench.evaluate import costs
from pytest_itbench.scenario import ScenarioError, loads
from pytest_itbench.scenario.finops import Budget

FINOPS = """\
id: budget-check
title: A namespace over budget
domain: finops
complexity: easy
application: astronomy-shop
finops:
  budget: {namespace: 0.05}
  node_groups: [{name: general, instance_type: m5.large, min_size: 0, max_size: 3}]
task: Bring the spend under budget.
ground_truth:
  groups: [{id: d, kind: Deployment, namespace: astronomy-shop, filter: ['^ad$'], root_cause: true}]
  optimal: {cpu_cost: 0.01, memory_efficiency: 0.5}
"""


@pytest.mark.parametrize("observed,optimal,expected", [
    (0.03, 0.03, 1.0),  # on target
    (0.045, 0.03, 0.5),  # 50 % above: 1 - 0.015 / 0.03
    (0.015, 0.03, 0.5),  # 50 % below scores the same
    (0.09, 0.03, 0.0),  # three times the optimum: floored at 0, not -1
    (None, 0.03, None), (0.03, None, None),
])
def test_proximity_is_itbench_formula_floored_at_zero(observed, optimal, expected):
    value = costs.proximity(observed, optimal)
    assert value == expected if expected is None else value == pytest.approx(expected)


def test_the_budget_rule_compares_the_namespace_spend_with_the_budget_and_parses_back():
    rule = finops_setup.budget_rules("astronomy-shop", Budget(namespace=0.05, cluster=1.6))
    [namespace, cluster] = rule["spec"]["groups"][0]["rules"]
    assert namespace["alert"] == "NamespaceCostOverBudget" and cluster["alert"] == "ClusterCostOverBudget"
    assert namespace["expr"] == f"{costs.namespace_cost('astronomy-shop')} > 0.05"
    assert namespace["labels"]["namespace"] == cluster["labels"]["namespace"] == "astronomy-shop"
    match = finops_setup._THRESHOLD.match(cluster["expr"])
    assert float(match.group("limit")) == 1.6 and match.group("measure") == costs.cluster_cost()
    assert re.search(r'container_cpu_allocation\{namespace="astronomy-shop"\}', namespace["expr"])


def test_a_finops_scenario_loads_its_section_and_truth():
    scenario = loads(FINOPS, "f.yaml")
    assert scenario.finops.budget.namespace == 0.05 and scenario.finops.node_groups[0].instance_type == "m5.large"
    assert scenario.finops.settle == 600 and scenario.finops.efficiency.cpu == 0.2
    assert scenario.truth.optimal.cpu_cost == 0.01 and scenario.truth.budget == "keep"


@pytest.mark.parametrize("change,expected", [
    (("budget: {namespace: 0.05}", "budget: {}"), "a budget gives namespace, cluster or both"),
    (("min_size: 0, max_size: 3", "min_size: 4, max_size: 3"), "min_size 4 is above max_size 3"),
    (("  optimal: {cpu_cost: 0.01, memory_efficiency: 0.5}\n", "  budget: lower\n"), "f.yaml:12: ground_truth.budget: Input should be 'keep' or 'raise'"),
    (("application: astronomy-shop\n", ""), "a finops scenario names its application"),
])
def test_finops_section_errors_name_the_problem(change, expected):
    with pytest.raises(ScenarioError) as info:
        loads(FINOPS.replace(*change), "f.yaml")
    assert expected in str(info.value)
