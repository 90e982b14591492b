"""The FinOps steps of a trial: price the cluster, give it its node groups, write its cost alert rules; and
read the budget back for the evaluator.

Everything goes through the Kubernetes API (ARCHITECTURE.md, rule 1), as an operator would set it up:
- OpenCost's custom pricing, in the ConfigMap OpenCost reads (:mod:`pytest_itbench.finops_cluster`);
- the cluster autoscaler's node groups, in the ConfigMap it reads (same module);
- the budget, a PrometheusRule ``cost-budget`` in the application's namespace: the team's own rule, which
  the agent may edit (raising it is the repair when load rose legitimately, and a failed one otherwise);
- the efficiency rules, a PrometheusRule in the monitoring namespace, out of the agent's reach like the
  SLO rules.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Callable

from kubernetes import client as k8s
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from . import finops_cluster
from .apps.deploy import DeployError, apply
from .ciso_setup import documents
from .evaluate import costs
from .scenario.finops import Budget, Efficiency
from .scenario.schema import Scenario

GROUP, VERSION, PLURAL = "monitoring.coreos.com", "v1", "prometheusrules"
BUDGET_RULE = "cost-budget"
EFFICIENCY_RULE = "finops-efficiency"
MONITORING_NAMESPACE = "prometheus"  # where the harness's Prometheus and its own rules live
RULE_LABELS = {"release": "prometheus", "app.kubernetes.io/part-of": "itbench-finops"}
NAMESPACE_ALERT, CLUSTER_ALERT = "NamespaceCostOverBudget", "ClusterCostOverBudget"
CPU_EFFICIENCY_ALERT, MEMORY_EFFICIENCY_ALERT = "CPUEfficiencyLow", "MemoryEfficiencyLow"
ALERT_NAMES = (NAMESPACE_ALERT, CLUSTER_ALERT, CPU_EFFICIENCY_ALERT, MEMORY_EFFICIENCY_ALERT)
BUDGET_FOR = "5m"
EFFICIENCY_FOR = "15m"
_THRESHOLD = re.compile(r"^(?P<measure>.*?)\s*>\s*(?P<limit>[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*$", re.DOTALL)


class SetupError(RuntimeError):
    """The scenario's priced cluster could not be built: an environment error."""


@dataclass
class FinopsState:
    """What setup recorded for the evaluator."""

    namespace: str
    budget: Budget
    alert_names: tuple[str, ...] = ALERT_NAMES
    measures: dict[str, str] = field(default_factory=dict)  # alert -> the spend expression setup wrote
    firing_before: tuple[str, ...] = ()  # alerts already firing in the namespace before the faults
    spend_before_agent: float | None = None  # the namespace's spend when the agent started ($/h)


@dataclass(frozen=True)
class LiveBudget:
    namespace: float | None
    cluster: float | None
    problem: str = ""  # the rule deleted, or no longer a budget on the spend


def prepare(api: ApiClient, scenario: Scenario, scenario_dir: str, namespace: str,
            advance: Callable[[float], None]) -> FinopsState:
    setup = scenario.finops
    assert setup is not None
    try:
        if setup.manifests:
            apply(api, documents(scenario_dir, setup.manifests))
        if setup.pricing is not None:
            finops_cluster.write_pricing(api, setup.pricing)
        if setup.node_groups:
            finops_cluster.write_node_groups(api, setup.node_groups)
        budget_rule = budget_rules(namespace, setup.budget)
        _create_rule(api, budget_rule)
        finops_cluster.ensure_namespace(api, MONITORING_NAMESPACE)
        _create_rule(api, efficiency_rules(namespace, setup.efficiency))
    except ApiException as exc:
        raise SetupError(f"cannot set up the FinOps cluster: {exc.status} {exc.reason}: {_message(exc)}") from None
    except (DeployError, OSError) as exc:
        raise SetupError(f"cannot set up the FinOps cluster: {exc}") from None
    advance(setup.settle)
    measures = {}
    for rule in budget_rule["spec"]["groups"][0]["rules"]:
        measures[rule["alert"]] = _THRESHOLD.match(rule["expr"]).group("measure")
    return FinopsState(namespace, setup.budget, measures=measures)


def grant_extra(api: ApiClient, account: str, home: str, suffix: str) -> None:
    """A FinOps engineer's rights beyond the general grant: volumes (an orphaned one may be deleted), the node
    groups' configuration and the autoscaler's status, the prices OpenCost charges (read only)."""
    rbac = k8s.RbacAuthorizationV1Api(api)
    subject = [{"kind": "ServiceAccount", "name": account, "namespace": home}]
    name = f"{account}-finops-{suffix}"
    rbac.create_cluster_role({"metadata": {"name": name}, "rules": [
        {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list", "watch", "delete", "patch"]}]})
    rbac.create_cluster_role_binding({"metadata": {"name": name}, "subjects": subject, "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}})
    for namespace, rules in finops_cluster.agent_rules().items():
        try:
            rbac.create_namespaced_role(namespace, {"metadata": {"name": name}, "rules": rules})
        except ApiException as exc:
            if exc.status == 404:  # no such namespace on this cluster (no custom pricing): nothing there to read
                continue
            raise
        rbac.create_namespaced_role_binding(namespace, {"metadata": {"name": name}, "subjects": subject, "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}})


def budget_rules(namespace: str, budget: Budget) -> dict:
    rules = []
    if budget.namespace is not None:
        rules.append(_alert(NAMESPACE_ALERT, f"{costs.namespace_cost(namespace)} > {budget.namespace:g}", BUDGET_FOR,
                            namespace, "The namespace {{ $labels.namespace }} spends ${{ $value | printf \"%.3f\" }} "
                                       f"an hour, above its budget of ${budget.namespace:g}"))
    if budget.cluster is not None:
        rules.append(_alert(CLUSTER_ALERT, f"{costs.cluster_cost()} > {budget.cluster:g}", BUDGET_FOR, namespace,
                            "The cluster costs ${{ $value | printf \"%.3f\" }} an hour, above its budget of "
                            f"${budget.cluster:g}"))
    return _rule_object(BUDGET_RULE, namespace, "cost-budget", rules)


def efficiency_rules(namespace: str, efficiency: Efficiency) -> dict:
    rules = [
        _alert(CPU_EFFICIENCY_ALERT, f"{costs.cpu_efficiency(namespace)} < {efficiency.cpu:g}", EFFICIENCY_FOR,
               namespace, "The namespace {{ $labels.namespace }} uses {{ $value | humanizePercentage }} of the CPU "
                          f"it requests (threshold {100 * efficiency.cpu:g}%)"),
        _alert(MEMORY_EFFICIENCY_ALERT, f"{costs.memory_efficiency(namespace)} < {efficiency.memory:g}",
               EFFICIENCY_FOR, namespace, "The namespace {{ $labels.namespace }} uses {{ $value | "
                                          "humanizePercentage }} of the memory it requests (threshold "
                                          f"{100 * efficiency.memory:g}%)"),
    ]
    return _rule_object(f"{EFFICIENCY_RULE}-{namespace}", MONITORING_NAMESPACE, "finops-efficiency", rules)


def read_budget(api: ApiClient, state: FinopsState) -> LiveBudget:
    """The budgets the live ``cost-budget`` rule holds now, or what went wrong with it."""
    try:
        obj = k8s.CustomObjectsApi(api).get_namespaced_custom_object(GROUP, VERSION, state.namespace, PLURAL,
                                                                     BUDGET_RULE)
    except ApiException as exc:
        if exc.status == 404:
            return LiveBudget(None, None, f"the budget rule {state.namespace}/{BUDGET_RULE} was deleted")
        raise
    found: dict[str, float] = {}
    problems = []
    for group in (obj.get("spec") or {}).get("groups") or []:
        for rule in group.get("rules") or []:
            name = rule.get("alert")
            if name not in state.measures:
                continue
            match = _THRESHOLD.match(str(rule.get("expr", "")))
            if match is None or _squash(match.group("measure")) != _squash(state.measures[name]):
                problems.append(f"the budget rule's {name} no longer compares the spend with a budget")
                continue
            found[name] = float(match.group("limit"))
    for name in state.measures:
        if name not in found and not any(name in p for p in problems):
            problems.append(f"the budget rule's alert {name} was removed")
    return LiveBudget(found.get(NAMESPACE_ALERT), found.get(CLUSTER_ALERT), "; ".join(problems))


def _alert(name: str, expr: str, for_: str, namespace: str, description: str) -> dict:
    return {"alert": name, "expr": expr, "for": for_, "labels": {"severity": "warning", "namespace": namespace},
            "annotations": {"description": description}}


def _rule_object(name: str, namespace: str, group: str, rules: list[dict]) -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "PrometheusRule",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(RULE_LABELS)},
            "spec": {"groups": [{"name": group, "rules": rules}]}}


def _create_rule(api: ApiClient, rule: dict) -> None:
    meta = rule["metadata"]
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(GROUP, VERSION, meta["namespace"], PLURAL, rule)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _message(exc: ApiException) -> str:
    try:
        return json.loads(exc.body).get("message", "")
    except (TypeError, ValueError):
        return str(exc.body or "")[:300]
