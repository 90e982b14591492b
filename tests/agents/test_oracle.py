"""The oracle against a one-node twin: the ground truth resolved on the live cluster, the repair made with
the agent's rights, and a readable failure when the scenario cannot be solved that way."""

from __future__ import annotations

import pytest

from pytest_itbench.agents import AgentCrashed, Trajectory, resolve
from pytest_itbench.scenario import loads

pytestmark = pytest.mark.kubectl

SCENARIO = """
id: sre-cart-scaled-to-zero
title: The cart is scaled to zero
domain: sre
application: shop
complexity_inputs: {chain_length: 2, resolution_steps: 1, technologies: 1}
expected_alerts: [HighRequestErrorRate]
task: Checkout fails. Find the root cause and repair it.
time_limit: 60
ground_truth:
  groups:
    - {id: cart, kind: Deployment, namespace: shop, filter: ["^cart$"], root_cause: true}
    - {id: cart-config, kind: ConfigMap, namespace: shop, filter: ["^cart-config-"]}
    - {id: cart-svc, kind: Service, namespace: shop, filter: ["^cart$"]}
  propagations:
    - {source: cart, target: cart-svc, condition: no replicas, effect: the Service has no endpoints}
  recommended_actions: ["kubectl -n shop scale deployment/cart --replicas=1"]
"""


def oracle_task(make_task, shop, time_limit=60):
    return make_task(time_limit=time_limit, kubeconfig=shop.agent_kubeconfig)


def test_the_oracle_submits_the_ground_truth_found_live_and_repairs_with_the_agents_rights(shop, make_task):
    trajectory = Trajectory()
    submission = resolve("oracle", loads(SCENARIO)).run(oracle_task(make_task, shop), trajectory)
    diagnosis = submission.diagnosis
    # The ConfigMap's name is known only to the cluster: the filter is a prefix.
    assert [(e["name"], e["contributing_factor"]) for e in diagnosis["entities"]] == [
        ("shop/Deployment/cart", True), ("shop/ConfigMap/cart-config-5d8f", False), ("shop/Service/cart", False)]
    assert diagnosis["propagations"] == [{"source": "shop/Deployment/cart", "target": "shop/Service/cart",
                                          "condition": "no replicas", "effect": "the Service has no endpoints"}]
    assert [(a["alert"], a["explained"]) for a in diagnosis["alerts_explained"]] == [("HighRequestErrorRate", True)]
    assert shop.replicas("cart") == 1
    actions = [s.action for s in trajectory.steps]
    assert actions[:3] == [f"kubectl get {kind} --output json --namespace shop"
                           for kind in ("Deployment", "ConfigMap", "Service")]
    assert actions[3] == "kubectl -n shop scale deployment/cart --replicas=1"
    assert trajectory.steps[3].observation == "deployment.apps/cart scaled"
    # every step names its tool, and none failed (the trajectory analysis reads both)
    assert [(s.tool, s.error) for s in trajectory.steps] == [("kubectl", "")] * 4


def test_an_object_the_fault_deleted_is_named_from_a_filter_that_spells_its_name(shop, make_task):
    shop.admin("delete", "service", "cart", "-n", "shop")
    submission = resolve("oracle", loads(SCENARIO)).run(oracle_task(make_task, shop), Trajectory())
    assert submission.diagnosis["entities"][2]["name"] == "shop/Service/cart"


def test_a_ground_truth_naming_nothing_live_fails_the_oracle_saying_so(shop, make_task):
    scenario = loads(SCENARIO.replace('filter: ["^cart-config-"]', 'filter: ["^payment-config-"]'))
    with pytest.raises(AgentCrashed) as failure:
        resolve("oracle", scenario).run(oracle_task(make_task, shop), Trajectory())
    assert ("ground-truth group 'cart-config': no live ConfigMap in namespace shop matches ['^payment-config-']"
            in str(failure.value))
    assert shop.replicas("cart") == 0


def test_a_repair_the_agent_has_no_rights_for_fails_the_oracle(shop, make_task, tmp_path):
    stranger = shop.twin.write_kubeconfig(tmp_path / "stranger", "stranger")
    without_config = '- {id: cart-config, kind: ConfigMap, namespace: shop, filter: ["^cart-config-"]}'
    scenario = loads(SCENARIO.replace(without_config, ""))
    trajectory = Trajectory()
    with pytest.raises(AgentCrashed) as failure:
        resolve("oracle", scenario).run(make_task(kubeconfig=stranger), trajectory)
    message = str(failure.value)
    # the failed repair is recorded as a failed kubectl step, with kubectl's exit status and words
    last = trajectory.steps[-1]
    assert last.action == "kubectl -n shop scale deployment/cart --replicas=1" and last.tool == "kubectl"
    assert last.error.startswith("exit 1: ") and "no objects passed to scale" in last.error
    assert "recommended action 'kubectl -n shop scale deployment/cart --replicas=1' failed with the agent's " \
           "kubeconfig" in message
    # kubectl's own words for a forbidden read before the scale: the evidence is kubectl's stderr.
    assert "error: no objects passed to scale" in message and "not solvable as written" in message
    assert shop.replicas("cart") == 0


CISO = """
id: ciso-cart-config
title: Cart settings as policy
domain: ciso
complexity: easy
task: Keep the cart's settings in a ConfigMap.
ground_truth:
  reference_solution: {policy: solution/policy.yaml}
  recommended_actions: ["kubectl apply -f policy.yaml"]
"""

POLICY = """apiVersion: v1
kind: ConfigMap
metadata: {name: cart-policy, namespace: shop}
data: {maxItems: "50"}
"""


def test_for_ciso_the_oracle_hands_in_the_reference_solution_and_runs_its_actions_in_the_workdir(shop, make_task,
                                                                                                 tmp_path):
    scenario_dir = tmp_path / "scenarios"
    (scenario_dir / "solution").mkdir(parents=True)
    (scenario_dir / "solution" / "policy.yaml").write_text(POLICY)
    task = make_task(kubeconfig=shop.agent_kubeconfig, domain="ciso")
    submission = resolve("oracle", loads(CISO), scenario_dir=scenario_dir).run(task, Trajectory())
    assert submission.artifacts == {"policy": "policy.yaml"} and submission.diagnosis is None
    assert (tmp_path / "work" / "policy.yaml").read_text() == POLICY
    assert shop.admin.run("get", "configmap", "cart-policy", "-n", "shop", "-o", "json").json()["data"] == {
        "maxItems": "50"}
