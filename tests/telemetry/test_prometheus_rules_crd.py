"""PrometheusRule objects on a served twin: written with the official client or kubectl, validated by the
Operator's webhooks, loaded by the twin's Prometheus as the Operator names the files, reloaded on change
without resetting the shipped rules' alerts, and dropped on delete."""

from __future__ import annotations

import json
import logging
import urllib.parse
import urllib.request

import pytest
import yaml
from kubernetes import client as k8s, config
from kubernetes.client.rest import ApiException

from pytest_itbench.twin import Twin
from pytest_itbench.twin.telemetry.exporters.targets import RULE_FILE_DIR
from pytest_itbench.twin.telemetry.prometheus_rules import BUCKET, PrometheusRuleSync, render
from pytest_itbench.twin.telemetry.rules import RuleManager
from tests.conftest import KUBECTL, Kubectl

from .monitoring_helpers import START, create, pod, pod_status, set_status

GROUP, VERSION, PLURAL = "monitoring.coreos.com", "v1", "prometheusrules"
NS = "shop"
BUDGET = 'sum by (namespace) (kube_deployment_spec_replicas{namespace="shop"}) > %s'


def get(url: str, path: str, **params: str):
    query = ("?" + urllib.parse.urlencode(params)) if params else ""
    with urllib.request.urlopen(url + path + query, timeout=30) as response:
        return json.load(response)


def prometheus_rule(name: str, expr: str, *, alert: str = "OverBudget", for_: str = "1m", **metadata) -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "PrometheusRule",
            "metadata": {"name": name, "namespace": NS, **metadata},
            "spec": {"groups": [{"name": f"{name}.rules", "rules": [
                {"alert": alert, "expr": expr, "for": for_, "labels": {"severity": "warning"},
                 "annotations": {"summary": "{{ $labels.namespace }} runs {{ $value }} replicas"}}]}]}}


def groups_by_file(twin: Twin) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for group in get(twin.prometheus_url, "/api/v1/rules")["data"]["groups"]:
        found.setdefault(group["file"], []).append(group)
    return found


def prometheus_alerts(twin: Twin) -> dict[str, dict]:
    return {a["labels"]["alertname"]: a for a in get(twin.prometheus_url, "/api/v1/alerts")["data"]["alerts"]}


def alertmanager_alerts(twin: Twin) -> dict[str, dict]:
    return {a["labels"]["alertname"]: a for a in get(twin.alertmanager_url, "/api/v2/alerts")}


@pytest.fixture
def shop(tmp_path):
    """A served twin without controllers, a namespace ``shop`` with a three-replica Deployment (which
    kube-state-metrics reports from its spec), and the official client's CustomObjectsApi as admin."""
    with Twin(seed=3, nodes=1, start_time=START, controllers=()) as twin:
        create(twin, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        create(twin, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NS},
                      "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                               "template": {"metadata": {"labels": {"app": "web"}},
                                            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
        configuration = k8s.Configuration()
        config.load_kube_config(config_file=twin.write_kubeconfig(tmp_path / "kubeconfig"),
                                client_configuration=configuration)
        with k8s.ApiClient(configuration) as api_client:
            yield twin, k8s.CustomObjectsApi(api_client)


def test_the_kind_is_served_with_monitoring_only(shop):
    twin, _ = shop
    res = twin.api.catalog.for_api_version(f"{GROUP}/{VERSION}", "PrometheusRule")
    assert (res.plural, res.namespaced, res.short_names, res.categories) == (
        "prometheusrules", True, ("promrule",), ("prometheus-operator",))
    assert [s.name for s in res.subresources] == ["status"]
    bare = Twin(seed=3, nodes=1, telemetry=False)
    assert bare.api.catalog.for_api_version(f"{GROUP}/{VERSION}", "PrometheusRule") is None


def test_a_rule_loads_fires_resolves_when_its_threshold_is_raised_and_goes_with_its_object(shop):
    twin, custom = shop
    created = custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, prometheus_rule("budget", BUDGET % 2))
    # The Operator's mutating webhook marks every object it saw.
    assert created["metadata"]["annotations"] == {"prometheus-operator-validated": "true"}
    path = f"{RULE_FILE_DIR}/{NS}-budget-{created['metadata']['uid']}.yaml"
    twin.warp(1)
    [group] = groups_by_file(twin)[path]
    assert group["name"] == "budget.rules" and group["interval"] == 30
    assert group["rules"][0]["query"] == BUDGET % 2 and group["rules"][0]["duration"] == 60

    twin.warp(150)
    alert = prometheus_alerts(twin)["OverBudget"]
    assert alert["state"] == "firing" and alert["labels"] == {"alertname": "OverBudget", "namespace": NS,
                                                              "severity": "warning"}
    assert alert["annotations"]["summary"] == "shop runs 3 replicas"
    sent = alertmanager_alerts(twin)["OverBudget"]
    assert sent["status"]["state"] == "active" and sent["labels"]["namespace"] == NS
    assert sent["labels"]["prometheus"] == "prometheus/prometheus-kube-prometheus-prometheus"

    # Raising the budget: the same file, a new expression. The rule keeps its name and labels, so the reloaded
    # rule takes over the firing alert and sends it resolved; Alertmanager lists it no more.
    raised = prometheus_rule("budget", BUDGET % 5)
    patched = custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "budget", {"spec": raised["spec"]})
    assert patched["metadata"]["uid"] == created["metadata"]["uid"]
    twin.warp(60)
    assert groups_by_file(twin)[path][0]["rules"][0]["query"] == BUDGET % 5
    assert "OverBudget" not in prometheus_alerts(twin)
    assert "OverBudget" not in alertmanager_alerts(twin)

    custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "budget")
    twin.warp(1)
    assert path not in groups_by_file(twin)
    assert all(g["name"] != "budget.rules" for groups in groups_by_file(twin).values() for g in groups)


def test_an_invalid_rule_is_refused_at_admission_with_the_rule_named_and_the_others_go_on(shop):
    twin, custom = shop
    custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, prometheus_rule("budget", BUDGET % 2))
    with pytest.raises(ApiException) as refused:
        custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, prometheus_rule(
            "broken", "sum(rate(kube_pod_info[5m]) >", alert="Broken"))
    status = json.loads(refused.value.body)
    assert refused.value.status == 422 and status["reason"] == "Invalid"
    assert status["message"] == ('admission webhook "prometheusrulevalidate.monitoring.coreos.com" denied the '
                                 'request: Rules are not valid')
    [cause] = status["details"]["causes"]
    assert 'group "broken.rules", rule 1, "Broken": could not parse expression: ' in cause["message"]
    with pytest.raises(ApiException) as missing:
        custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "broken")
    assert missing.value.status == 404

    # An update that breaks a loaded rule is refused too, and the stored (and loaded) rule stays as it was.
    with pytest.raises(ApiException) as refused_update:
        custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "budget", {"spec": {"groups": [
            {"name": "budget.rules", "rules": [{"alert": "OverBudget", "expr": BUDGET % 2, "for": "1m",
                                                "annotations": {"summary": "{{ $value"}}]}]}})
    assert '"OverBudget": annotation "summary": ' in json.loads(refused_update.value.body)["details"]["causes"][0][
        "message"]
    # A malformed duration never reaches the webhook: the CRD's schema refuses it, naming the field.
    with pytest.raises(ApiException) as bad_for:
        custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, prometheus_rule(
            "slow", BUDGET % 2, for_="5 minutes"))
    assert bad_for.value.status == 422
    assert 'spec.groups[0].rules[0].for: Invalid value: "5 minutes"' in json.loads(bad_for.value.body)["message"]

    twin.warp(150)
    assert [g["name"] for groups in groups_by_file(twin).values() for g in groups if "budget" in g["name"]] == [
        "budget.rules"]
    assert prometheus_alerts(twin)["OverBudget"]["state"] == "firing"
    rules = [r for groups in groups_by_file(twin).values() for g in groups for r in g["rules"]]
    assert all(r["health"] == "ok" for r in rules)


def test_an_invalid_object_that_got_into_the_store_is_skipped_with_the_rule_named(shop, caplog):
    # Past the webhook (written straight into the store, as nothing but the twin itself can), an object the
    # Operator cannot render is left out of the rule files, and every other rule keeps being evaluated.
    twin, custom = shop
    custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, prometheus_rule("budget", BUDGET % 2))
    broken = prometheus_rule("broken", "rate(", alert="Broken")
    with caplog.at_level(logging.WARNING, logger="pytest_itbench.twin.telemetry.prometheus_rules.sync"):
        twin.store.create(BUCKET, broken)
        twin.warp(150)
    assert 'skipping prometheusrule shop/broken: invalid rule' in caplog.text
    assert '"Broken": could not parse expression' in twin.monitoring.prometheus_rules.rejected["shop/broken"]
    assert all("broken" not in path for path in groups_by_file(twin))
    assert prometheus_alerts(twin)["OverBudget"]["state"] == "firing"


def test_a_shipped_alert_keeps_its_state_through_prometheus_rule_changes(shop):
    twin, custom = shop
    failed = pod("job-runner", [{"name": "job", "image": "busybox:1.36"}], namespace=NS)
    create(twin, failed)
    set_status(twin, failed, pod_status("Failed", [], ready=False))
    twin.warp(60)
    pending = prometheus_alerts(twin)["FailedPodsDetected"]  # for: 2m
    assert pending["state"] == "pending"

    custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, prometheus_rule("budget", BUDGET % 2))
    twin.warp(30)
    custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "budget", {"spec": {"groups": [
        {"name": "budget.rules", "rules": [{"alert": "OverBudget", "expr": BUDGET % 1, "for": "1m"}]}]}})
    twin.warp(30)
    still = prometheus_alerts(twin)["FailedPodsDetected"]
    assert (still["state"], still["activeAt"]) == ("pending", pending["activeAt"])

    twin.warp(60)  # two minutes after it became active: firing, as if nothing had been reloaded
    firing = prometheus_alerts(twin)["FailedPodsDetected"]
    assert (firing["state"], firing["activeAt"]) == ("firing", pending["activeAt"])
    starts_at = alertmanager_alerts(twin)["FailedPodsDetected"]["startsAt"]
    custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "budget")
    twin.warp(90)
    after = prometheus_alerts(twin)["FailedPodsDetected"]
    assert (after["state"], after["activeAt"]) == ("firing", pending["activeAt"])
    assert alertmanager_alerts(twin)["FailedPodsDetected"]["startsAt"] == starts_at


def test_the_rule_selector_is_itbenchs_and_the_charts_default_would_need_the_release_label(shop):
    twin, custom = shop
    budget = custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, prometheus_rule("budget", BUDGET % 2))
    released = prometheus_rule("released", BUDGET % 2, labels={"release": "prometheus"})
    released["metadata"]["namespace"] = "default"
    released = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, released)
    twin.warp(1)
    # ITBench's ruleSelector {} (ruleSelectorNilUsesHelmValues: false) and ruleNamespaceSelector {}: both load.
    assert {render.rule_file_path(budget), render.rule_file_path(released)} <= set(groups_by_file(twin))

    helm_default = RuleManager(twin.tsdb, twin.monitoring.engine)
    chart = PrometheusRuleSync(twin.store, helm_default, rule_selector={"matchLabels": {"release": "prometheus"}})
    chart.sync(twin.clock.now())
    assert [g.name for g in helm_default.rule_groups()] == ["released.rules"]
    nothing = RuleManager(twin.tsdb, twin.monitoring.engine)
    PrometheusRuleSync(twin.store, nothing, namespace_selector={"matchLabels": {"it-bench/monitoring": "true"}}).sync(
        twin.clock.now())
    assert nothing.rule_groups() == []


def test_the_rule_file_is_the_spec_as_the_operator_renders_it():
    obj = prometheus_rule("budget", "sum(x)\n  > 1\n") | {"metadata": {"name": "budget", "namespace": NS, "uid": "u-1"}}
    obj["spec"]["groups"][0].update(partial_response_strategy="warn", interval="", limit=0)
    obj["spec"]["groups"][0]["rules"][0]["labels"] = {}
    assert render.rule_file_path(obj) == f"{RULE_FILE_DIR}/shop-budget-u-1.yaml"
    text = render.render(obj["spec"])
    assert yaml.safe_load(text) == {"groups": [{"name": "budget.rules", "limit": 0, "rules": [
        {"alert": "OverBudget", "expr": "sum(x)\n  > 1\n", "for": "1m",
         "annotations": {"summary": "{{ $labels.namespace }} runs {{ $value }} replicas"}}]}]}
    assert "expr: |\n" in text and text.index("alert:") < text.index("annotations:") < text.index("expr:")
    assert render.spec_problems(obj["spec"]) == []
    assert render.spec_problems({"groups": [{"name": "g", "rules": [{"record": "a:b", "expr": "1", "for": "1m"}]}]}) \
        == ['6:13: group "g", rule 1, "a:b": invalid field \'for\' in recording rule']


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH; this test drives the real kubectl binary")
def test_kubectl_lists_and_edits_prometheus_rules(shop, tmp_path):
    twin, custom = shop
    kubectl = Kubectl(twin, tmp_path / "kubectl")  # a fresh KUBECACHEDIR: discovery of this twin only
    kubectl("apply", "-f", "-", input=yaml.safe_dump(prometheus_rule("budget", BUDGET % 2)))
    listed = kubectl("get", "prometheusrules", "-A").splitlines()
    assert listed[0].split() == ["NAMESPACE", "NAME", "AGE"] and listed[1].split()[:2] == [NS, "budget"]
    assert kubectl("get", "promrule", "-n", NS, "-o", "name").split() == [
        "prometheusrule.monitoring.coreos.com/budget"]
    twin.warp(150)
    assert prometheus_alerts(twin)["OverBudget"]["state"] == "firing"

    # What `kubectl edit` does to raise the budget, as a merge patch.
    patch = {"spec": {"groups": [{"name": "budget.rules", "rules": [
        {"alert": "OverBudget", "expr": BUDGET % 10, "for": "1m", "labels": {"severity": "warning"}}]}]}}
    out = kubectl("patch", "prometheusrule", "budget", "-n", NS, "--type", "merge", "-p", json.dumps(patch))
    assert out.strip() == "prometheusrule.monitoring.coreos.com/budget patched"
    twin.warp(60)
    [group] = [g for groups in groups_by_file(twin).values() for g in groups if g["name"] == "budget.rules"]
    assert group["rules"][0]["query"] == BUDGET % 10
    assert "OverBudget" not in prometheus_alerts(twin)

    refused = kubectl.fails("patch", "prometheusrule", "budget", "-n", NS, "--type", "merge", "-p", json.dumps(
        {"spec": {"groups": [{"name": "budget.rules", "rules": [{"alert": "OverBudget", "expr": "budget >"}]}]}}))
    # kubectl prints an Invalid status by its causes: the webhook's, one per problem, each naming its rule.
    assert refused.stderr.startswith('The  "prometheusrules" is invalid: ')
    assert 'group "budget.rules", rule 1, "OverBudget": could not parse expression' in refused.stderr
    stored = custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "budget")
    assert stored["spec"]["groups"][0]["rules"][0]["expr"] == BUDGET % 10
