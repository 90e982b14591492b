"""Mitigation that cannot be faked: scripted agents through the plugin on the real scaled-to-zero scenario.

A repair by another route than the recommended one passes (``kubectl patch`` of the replicas where the
scenario recommends ``kubectl scale``; ``kubectl set env`` back where the checkout scenario recommends
``rollout undo``). Everything that only hides the symptom fails mitigation: scaling the load generator
to zero, deleting the failing workload, deleting the namespace (refused by RBAC) or everything in it,
silencing the alert in Alertmanager (accepted by the twin, and ignored by the evaluator, which reads
Prometheus' ALERTS), and touching the alert rules: the agent cannot reach them (no PrometheusRule
object of the SLO rules in its namespace, no admin or reload API), and when they are deleted or edited anyway (done here
with the harness's own access to the twin, as an agent with too wide rights on a real cluster could)
the health check, read from the traffic, still fails the trial.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from pytest_itbench.report.jsonl import load

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "sre"
NS = "astronomy-shop"

AGENTS = r'''
import gc
import json
import urllib.error
import urllib.request

from pytest_itbench.agents import Submission
from pytest_itbench.agents.kubectl import Kubectl

NS = "astronomy-shop"
DIAGNOSIS = {
    "entities": [{"name": f"{NS}/Deployment/product-catalog", "contributing_factor": True},
                 {"name": f"{NS}/Service/frontend", "contributing_factor": False}],
    "propagations": [{"source": f"{NS}/Deployment/product-catalog", "target": f"{NS}/Service/frontend"}],
}


def kubectl(task, *args):
    done = Kubectl(task).run(args)
    output = " | ".join((done.stdout + done.stderr).strip().splitlines())
    return f"kubectl {' '.join(args)} -> {done.returncode}: {output[:3000]}"


def http(method, url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def submit(*lines):
    return Submission(diagnosis=DIAGNOSIS, notes="\n".join(lines))


class PatchReplicas:
    """The repair by another route: a JSON patch of spec.replicas, not `kubectl scale`."""
    def run(self, task, trajectory):
        return submit(kubectl(task, "-n", NS, "patch", "deployment", "product-catalog", "--type=merge",
                              "-p", '{"spec": {"replicas": 1}}'))


class SetCheckoutEnvBack:
    """The checkout scenario recommends `rollout undo`; setting the variable back is as good."""
    def run(self, task, trajectory):
        return Submission(diagnosis={"entities": [{"name": f"{NS}/Deployment/checkout"}]},
                          notes=kubectl(task, "-n", NS, "set", "env", "deployment/checkout", "CART_ADDR=cart:8080"))


class StopLoadGenerator:
    def run(self, task, trajectory):
        return submit(kubectl(task, "-n", NS, "scale", "deployment/load-generator", "--replicas=0"))


class DeleteFailingWorkload:
    def run(self, task, trajectory):
        return submit(kubectl(task, "-n", NS, "delete", "deployment", "product-catalog", "--wait=false"))


class DeleteNamespace:
    """Everything in the namespace, then the namespace itself."""
    def run(self, task, trajectory):
        return submit(kubectl(task, "-n", NS, "delete", "deployments,services", "--all", "--wait=false"),
                      kubectl(task, "delete", "namespace", NS, "--wait=false"))


class HideTheAlert:
    """Everything an agent can try against the alert rules with its rights and URLs, then a silence."""
    def run(self, task, trajectory):
        prometheus, alertmanager = task.urls["prometheus"], task.urls["alertmanager"]
        lines = [kubectl(task, "get", "prometheusrules", "-A"),
                 kubectl(task, "-n", NS, "delete", "prometheusrules", "--all"),
                 kubectl(task, "-n", "monitoring", "get", "configmaps")]
        for path in ("/api/v1/admin/tsdb/delete_series?match[]=ALERTS", "/-/reload",
                     "/api/v1/admin/tsdb/clean_tombstones"):
            lines.append(f"POST {path} -> {http('POST', prometheus + path)[0]}")
        matchers = [{"name": "alertname", "value": "HighRequestErrorRate", "isRegex": False, "isEqual": True}]
        status, body = http("POST", f"{alertmanager}/api/v2/silences",
                            {"matchers": matchers, "startsAt": "2000-01-01T00:00:00Z",
                             "endsAt": "2100-01-01T00:00:00Z", "createdBy": "agent", "comment": "quiet"})
        shown = lambda silenced: sorted({a["labels"]["alertname"] for a in json.loads(http(
            "GET", f"{alertmanager}/api/v2/alerts?active=true&silenced={silenced}&inhibited=false")[1])})
        lines += [f"silence {status} {body.strip()}", f"unsilenced {shown('false')}", f"silenced {shown('true')}"]
        return submit(*lines)


def _twin_rules(task):
    # The harness's own handle on the twin (gc finds the twin serving this Prometheus): what an agent with
    # rights to delete a PrometheusRule could do on a real cluster.
    twins = [o for o in gc.get_objects()
             if type(o).__name__ == "Twin" and getattr(o, "monitoring", None) is not None
             and getattr(o, "_thread", None) is not None and o.prometheus_url == task.urls["prometheus"]]
    [twin] = twins
    return twin


class RewriteTheRules:
    """Edits the frontend's error-rate rule and deletes the backend's golden-signal group."""
    def run(self, task, trajectory):
        from pytest_itbench.apps.rules import rule_file_paths
        from pytest_itbench.twin.telemetry.monitoring import shipped_rule_files
        from pytest_itbench.twin.telemetry.rules import parse_rule_file
        twin = _twin_rules(task)
        files = []
        for f, path in zip(shipped_rule_files(), rule_file_paths()):
            text = path.read_text()
            if "otel-demo" in f.path:
                frontend, rest = text.split("  - name: opentelemetrydemo.backend.goldensignal", 1)
                frontend = frontend.replace(") > 0\n", ") > 1e9\n")  # errors only above a billion a second
                kafka = "  - name: opentelemetrydemo.kafka"
                text = frontend + kafka + rest.split(kafka, 1)[1]
            files.append(parse_rule_file(f.path, text))
        twin.rules.load(files, now=twin.clock.now())
        names = sorted({getattr(r, "name", "") for g in twin.rules.groups for r in g.rules})
        return submit(f"groups: {' '.join(g.name for g in twin.rules.groups)}", f"alerts: {' '.join(names)}")
'''


@pytest.fixture
def shop(pytester):
    """A project holding the real scaled-to-zero and checkout scenarios and the scripted agents."""
    for name in ("astronomy-product-catalog-scaled-to-zero.yaml", "astronomy-checkout-env-wrong-port.yaml"):
        shutil.copy(SCENARIOS / name, pytester.path / name)
    (pytester.path / "cheats.py").write_text(AGENTS)
    pytester.syspathinsert()
    return pytester


def trial(shop, agent: str, *args: str, scenario: str = "astronomy-product-catalog-scaled-to-zero.yaml"):
    result = shop.runpytest("-p", "no:cacheprovider", f"--itbench-agent=cheats:{agent}",
                            "--itbench-results=results.jsonl", *args, scenario)
    [record] = load(shop.path / "results.jsonl")
    checks = {c.name: c for c in record.checks}
    return result, record, checks


def notes(record) -> str:
    [submission] = [a.content for a in record.attachments if a.name == "submission"]
    return submission["notes"]


def test_a_repair_by_another_route_passes_and_its_scores_follow_the_command_line(shop):
    result, record, checks = trial(shop, "PatchReplicas", "--itbench-ntam-g=0.5")
    assert "-> 0: deployment.apps/product-catalog patched" in notes(record)
    result.assert_outcomes(passed=1)
    assert checks["mitigation"].passed and checks["diagnosis"].passed
    assert 0 < record.figures["mttr"] < math.inf
    # FL: the one contributing entity is the root cause: 1 / 1 x exp(0) = 1.
    assert record.figures["ntam"] == record.figures["ntam_fl"] == 1.0
    # FPC: truth = product-catalog Deployment, its Service, the frontend Service (|T| = 3, best 1 + 0.7 + 0.49
    # = 2.19); named: Deployment (rank 0) 1, frontend (rank 1) 0.7: 1.7 / 2.19 = 0.776256, x exp(-0.5 x 1)
    # = 0.606531 with g = 0.5 from the command line: 0.470823 (0.285566 with the default g = 1).
    assert record.figures["ntam_fpc"] == pytest.approx(0.470823, abs=1e-4)
    # The one submitted step skips the Service: precision 0, recall 0.
    assert record.figures["chain_f1"] == 0.0


def test_setting_the_variable_back_passes_where_rollout_undo_is_recommended(shop):
    result, record, checks = trial(shop, "SetCheckoutEnvBack", scenario="astronomy-checkout-env-wrong-port.yaml")
    assert "-> 0: deployment.apps/checkout env updated" in notes(record)
    assert checks["mitigation"].passed, checks["mitigation"].detail
    result.assert_outcomes(passed=1)


def test_stopping_the_load_generator_is_no_repair(shop):
    result, record, checks = trial(shop, "StopLoadGenerator")
    assert "-> 0: deployment.apps/load-generator scaled" in notes(record)
    result.assert_outcomes(failed=1)
    assert not checks["mitigation"].passed
    assert "traffic fell" in checks["mitigation"].detail


def test_deleting_the_failing_workload_is_no_repair(shop):
    result, record, checks = trial(shop, "DeleteFailingWorkload")
    assert 'deployment.apps "product-catalog" deleted' in notes(record)
    result.assert_outcomes(failed=1)
    assert not checks["mitigation"].passed
    assert "HighRequestErrorRate" in checks["mitigation"].detail  # still firing: the frontend fails without it


def test_emptying_or_deleting_the_namespace_is_no_repair(shop):
    result, record, checks = trial(shop, "DeleteNamespace")
    emptied, deleted = notes(record).splitlines()
    assert 'deployment.apps "frontend" deleted' in emptied and 'service "frontend" deleted' in emptied
    # Kubernetes authorises a request for a Namespace object as one in that namespace's own name, so a Role
    # granting `resources: ["*"]` would let the agent delete it; the agent's Role lists resources instead.
    assert "Forbidden" in deleted
    result.assert_outcomes(failed=1)
    assert not checks["mitigation"].passed
    assert "traffic fell" in checks["mitigation"].detail


def test_the_rules_are_out_of_reach_and_a_silence_hides_the_alert_only_in_alertmanager(shop):
    result, record, checks = trial(shop, "HideTheAlert")
    lines = notes(record).splitlines()
    assert len(lines) == 9
    # The rules are the Prometheus Operator's kind, which the agent may use in its own namespace only; the
    # SLO rules are not there (the harness's Prometheus loads them as files), so there is nothing to delete.
    assert "-> 0" not in lines[0] and "Forbidden" in lines[0], lines  # not cluster-wide
    assert "-> 0" in lines[1] and "No resources found" in lines[1], lines
    assert "-> 0" not in lines[2], lines
    assert "Forbidden" in lines[2]  # the monitoring namespace is not the agent's
    assert [line.rsplit(" ", 1)[1] for line in lines[3:6]] == ["404", "404", "404"]  # no admin or reload API
    assert lines[6].startswith("silence 200") and "silenceID" in lines[6]  # the twin's Alertmanager took it ...
    assert lines[7].startswith("unsilenced [") and "HighRequestErrorRate" not in lines[7]  # ... and hides the alert
    assert lines[8].startswith("silenced [") and "'HighRequestErrorRate'" in lines[8]
    result.assert_outcomes(failed=1)
    mitigation = checks["mitigation"]  # the evaluator reads Prometheus' ALERTS: still firing
    assert not mitigation.passed
    assert mitigation.detail.startswith("still firing") and "HighRequestErrorRate" in mitigation.detail


def test_rules_deleted_or_edited_anyway_do_not_make_a_repair(shop):
    # On the checkout scenario: checkout serves about 0.05 of the shop's 84 requests a second, so its
    # failures hardly move the namespace's error ratio; the health check must look at each service.
    result, record, checks = trial(shop, "RewriteTheRules", scenario="astronomy-checkout-env-wrong-port.yaml")
    groups, alerts = notes(record).splitlines()
    assert "opentelemetrydemo.frontend.goldensignal" in groups and "backend" not in groups
    result.assert_outcomes(failed=1)
    mitigation = checks["mitigation"]
    assert not mitigation.passed
    # No alert is left to fire, so only the traffic can tell: checkout itself still fails.
    assert mitigation.detail.startswith("alerts clear, but not every service serves"), mitigation.detail
    assert "checkout still fails" in mitigation.detail
