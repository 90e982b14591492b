"""The toolkit against a live twin running the astronomy shop whose product catalog was scaled to zero:
every tool returns plain data, records a step, and says clearly when its signal is withheld."""

from __future__ import annotations

import json
import time

import pytest

from pytest_itbench.agents import Task, Trajectory
from pytest_itbench.tools import (DeadlineReached, KubectlFailed, SignalUnavailable, ToolError, Toolkit, failed_calls,
                                  refusal)
from pytest_itbench.twin import Twin
from tests.conftest import KUBECTL
from tests.workload.shop import NAMESPACE, apply, documents

BROKEN = "product-catalog"


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """The shop, settled, then its product catalog scaled to zero for five minutes (the alert fires).

    The clock starts in the recent past so that what the tools ask by wall time (trace lookback) finds it."""
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH; the kubectl and logs tools drive the real binary")
    with Twin(seed=5, nodes=3, start_time=time.time() - 700) as twin:
        apply(twin, *documents())
        twin.warp(180)
        deployment = twin.api.catalog.lookup("apps", "v1", "deployments")
        obj = twin.api.get(deployment, NAMESPACE, BROKEN)
        obj["spec"]["replicas"] = 0
        twin.api.update(deployment, NAMESPACE, BROKEN, obj, twin.admin_ctx)
        twin.warp(300)
        kubeconfig = twin.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig")
        yield twin, kubeconfig


def make_task(tmp_path, kubeconfig: str, urls: dict[str, str], time_limit: float = 120.0) -> Task:
    return Task(scenario_id="tools", domain="sre", text="test", kubeconfig=kubeconfig, urls=urls,
                workdir=str(tmp_path / "work"), deadline=time.time() + time_limit, time_limit=time_limit,
                namespaces=(NAMESPACE,))


@pytest.fixture
def tools(shop, tmp_path):
    twin, kubeconfig = shop
    urls = {"prometheus": twin.prometheus_url, "alertmanager": twin.alertmanager_url, "jaeger": twin.jaeger_url,
            "topology": twin.topology_url}
    trajectory = Trajectory()
    return Toolkit(make_task(tmp_path, kubeconfig, urls), trajectory), trajectory


def test_kubectl_returns_output_and_records_the_step(tools):
    kit, trajectory = tools
    listing = kit.kubectl.json(["get", "deployment", BROKEN, "-n", NAMESPACE], thought="is it scaled down?")
    assert listing["spec"]["replicas"] == 0
    step = trajectory.steps[-1]
    assert step.thought == "is it scaled down?"
    assert step.action == f"kubectl get deployment {BROKEN} -n {NAMESPACE} -o json"
    assert '"replicas": 0' in step.observation
    assert (step.tool, step.error) == ("kubectl", "")


def test_kubectl_uses_a_fresh_cache_in_the_workdir(tools, tmp_path):
    kit, _ = tools
    cache = kit.kubectl.runner.env["KUBECACHEDIR"]
    assert cache.startswith(str(tmp_path / "work")), cache
    assert "KUBECONFIG" in kit.kubectl.runner.env and kit.kubectl.runner.env["KUBECONFIG"] == kit.task.kubeconfig


def test_kubectl_failure_carries_stderr(tools):
    kit, trajectory = tools
    with pytest.raises(KubectlFailed, match="NotFound|not found") as info:
        kit.kubectl(["get", "deployment", "no-such-thing", "-n", NAMESPACE])
    assert info.value.code != 0
    assert trajectory.steps[-1].observation.startswith("exit ")
    # the failure is the step's error too, which the trajectory analysis counts as a failed command
    step = trajectory.steps[-1]
    assert step.tool == "kubectl" and step.error.startswith(f"exit {info.value.code}: ") and "not found" in step.error
    # check=False hands the failure back instead
    assert kit.kubectl.run(["get", "deployment", "no-such-thing", "-n", NAMESPACE], check=False).returncode != 0


@pytest.mark.parametrize("command", [
    "edit deployment/cart", "port-forward svc/cart 8080", "proxy", "attach cart-0", "logs -f deployment/cart",
    "logs deployment/cart --follow", "get pods -w", "-n x get pods --watch", "exec -it cart-0 -- sh",
    "exec cart-0 --stdin -- sh", "exec -ti cart-0 -- sh", "get pods --kubeconfig=/root/.kube/config",
    "get pods --as=system:admin", "--context other get pods", "get pods --token abc"])
def test_deny_list_refuses(command):
    assert refusal(command.split()) is not None


@pytest.mark.parametrize("command", [
    "get pods -n shop -o wide", "apply -f manifest.yaml", "logs deployment/cart --tail=50", "exec cart-0 -- ls -t",
    "rollout undo deployment/cart", "logs deployment/cart --follow=false", "delete -f x.yaml"])
def test_deny_list_allows(command):
    assert refusal(command.split()) is None


def test_refused_commands_are_recorded_and_not_run(tools):
    kit, trajectory = tools
    with pytest.raises(ToolError, match="kubectl edit is not allowed"):
        kit.kubectl("kubectl edit deployment/cart -n astronomy-shop", thought="try to edit")
    assert trajectory.steps[-1].observation.startswith("refused: ")
    assert trajectory.steps[-1].error.startswith("refused: kubectl edit is not allowed")


def test_promql_instant_and_range(tools):
    kit, trajectory = tools
    series = kit.prometheus.query(f'kube_deployment_spec_replicas{{namespace="{NAMESPACE}"}}')
    replicas = {s["metric"]["deployment"]: float(s["value"][1]) for s in series}
    assert replicas[BROKEN] == 0 and replicas["frontend"] >= 1
    assert trajectory.steps[-1].action.startswith("PromQL kube_deployment_spec_replicas")
    assert (trajectory.steps[-1].tool, trajectory.steps[-1].error) == ("prometheus", "")
    now = float(kit.prometheus.query("time()")[1])
    ranged = kit.prometheus.query_range(f'kube_deployment_spec_replicas{{deployment="{BROKEN}"}}', now - 420, now,
                                        step=60)
    values = [float(v) for _, v in ranged[0]["values"]]
    assert len(values) >= 6 and values[0] == 1 and values[-1] == 0  # the drop is in the history


def test_promql_error_is_clear(tools):
    kit, _ = tools
    with pytest.raises(ToolError, match="prometheus: .*sum by"):
        kit.prometheus.query("sum by (")


def test_alerts_from_alertmanager_and_prometheus(tools):
    kit, _ = tools
    firing = kit.alerts(namespace=NAMESPACE)
    names = {(a["labels"]["alertname"], a["labels"].get("service_name")) for a in firing}
    assert ("HighRequestErrorRate", "frontend") in names
    assert all(a["labels"]["namespace"] == NAMESPACE for a in firing)
    rules = {a["labels"]["alertname"] for a in kit.prometheus.alerts() if a["state"] == "firing"}
    assert "HighRequestErrorRate" in rules


def test_traces_lead_to_the_broken_service(tools):
    kit, _ = tools
    assert {"frontend", BROKEN} <= set(kit.traces.services())
    traces = kit.traces.search("frontend", tags={"error": "true"}, lookback=600, limit=10)
    assert traces, "no failed traces of the frontend in the last ten minutes"
    callees = {c["callee"] for c in failed_calls(traces) if c["caller"] == "frontend"}
    assert BROKEN in callees
    pairs = {(d["parent"], d["child"]) for d in kit.traces.dependencies()}
    assert ("frontend", BROKEN) in pairs


def test_trace_get_returns_the_trace_a_search_found(tools):
    kit, trajectory = tools
    found = kit.traces.search("frontend", tags={"error": "true"}, lookback=600, limit=1)[0]
    [trace] = kit.call("trace_get", {"trace_id": found["traceID"]})
    assert trace["traceID"] == found["traceID"]
    assert {s["spanID"] for s in trace["spans"]} == {s["spanID"] for s in found["spans"]}
    assert trajectory.steps[-1].tool == "traces" and found["traceID"] in trajectory.steps[-1].action
    with pytest.raises(ToolError, match="not a trace id"):
        kit.call("trace_get", {"trace_id": "../services"})


def test_logs_through_kubectl(tools):
    kit, trajectory = tools
    lines = kit.logs("deployment/frontend", NAMESPACE, tail=5)
    assert 0 < len(lines) <= 5
    assert trajectory.steps[-1].action == f"kubectl logs deployment/frontend --namespace {NAMESPACE} --tail=5"


def test_topology(tools):
    kit, _ = tools
    nodes = kit.topology.nodes()
    assert any(n["kind"] == "Deployment" and n["name"] == BROKEN for n in nodes)
    assert {e["type"] for e in kit.topology.edges()} >= {"OWNS", "CALLS"}
    assert ("frontend", BROKEN) in kit.topology.service_calls(NAMESPACE)
    graph = kit.topology.graph()
    assert set(graph) >= {"nodes", "edges", "node_cache", "metadata"}


def test_withheld_signals_fail_clearly(shop, tmp_path):
    _, kubeconfig = shop
    kit = Toolkit(make_task(tmp_path, kubeconfig, urls={"topology": "http://127.0.0.1:9"}), Trajectory())
    for call in (lambda: kit.prometheus.query("up"), lambda: kit.alerts(), lambda: kit.traces.services()):
        with pytest.raises(SignalUnavailable, match="offers no (prometheus|alertmanager|jaeger) URL .*topology"):
            call()
    names = [s["name"] for s in kit.specs()]
    assert "kubectl" in names and "topology_nodes" in names and "logs" in names
    assert not {"promql_query", "alerts", "trace_search"} & set(names)
    with pytest.raises(SignalUnavailable):
        kit.call("promql_query", {"query": "up"})


def test_unreachable_signal_is_a_tool_error(shop, tmp_path):
    _, kubeconfig = shop
    trajectory = Trajectory()
    kit = Toolkit(make_task(tmp_path, kubeconfig, urls={"topology": "http://127.0.0.1:9"}), trajectory)
    with pytest.raises(ToolError, match="topology: GET http://127.0.0.1:9/nodes failed"):
        kit.topology.nodes()
    assert "failed" in trajectory.steps[-1].observation
    assert trajectory.steps[-1].tool == "topology" and "failed" in trajectory.steps[-1].error


def test_calls_by_name(tools):
    kit, _ = tools
    out = kit.call("kubectl", {"command": f"get deployment {BROKEN} -n {NAMESPACE} -o jsonpath={{.spec.replicas}}"})
    assert out.strip() == "0"
    # "unknown tool" first: the convention the trajectory analysis counts unknown tools by
    with pytest.raises(ToolError, match="^unknown tool 'kubectl_get': there is no such tool"):
        kit.call("kubectl_get", {})
    with pytest.raises(ToolError, match="promql_query: bad arguments"):
        kit.call("promql_query", {"promql": "up"})
    assert json.dumps(kit.specs())  # plain data, for a function-calling API


def test_deadline_stops_every_tool(shop, tmp_path):
    twin, kubeconfig = shop
    task = make_task(tmp_path, kubeconfig, {"prometheus": twin.prometheus_url}, time_limit=-1)
    kit = Toolkit(task, Trajectory())
    with pytest.raises(DeadlineReached):
        kit.prometheus.query("up")
    with pytest.raises(DeadlineReached):
        kit.kubectl("get pods")
    with pytest.raises(DeadlineReached):
        kit.wait(1)
