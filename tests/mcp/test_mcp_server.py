"""The trial's MCP server, driven by the official SDK's own client against a live twin: every tool is listed
with its schema and answers; what goes wrong is a tool error saying why; withheld signals' tools are absent;
the deadline holds; nothing is left once the server stops; the client configurations and the stdio server
reach the same tools."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
import time
import tomllib
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from pytest_itbench.agents import Task, Trajectory
from pytest_itbench.mcp import client_configs, serve
from pytest_itbench.tools import Toolkit
from pytest_itbench.tools.functions.handin import Handin
from pytest_itbench.tools.functions.toolbox import ToolBox
from tests.tools.test_tools import BROKEN, make_task, shop  # noqa: F401  (shop: the module's twin fixture)
from tests.workload.shop import NAMESPACE


def run(coroutine):
    return asyncio.run(coroutine)


async def listed(url: str) -> dict[str, dict]:
    async with Client(url) as client:
        return {t.name: t.input_schema for t in (await client.list_tools()).tools}


async def called(url: str, *calls: tuple[str, dict]) -> list[tuple[bool, str]]:
    async with Client(url) as client:
        out = []
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            out.append((bool(result.is_error), "".join(c.text for c in result.content)))
        return out


@pytest.fixture
def task(shop, tmp_path):  # noqa: F811
    twin, kubeconfig = shop
    urls = {"prometheus": twin.prometheus_url, "alertmanager": twin.alertmanager_url, "jaeger": twin.jaeger_url,
            "topology": twin.topology_url}
    return make_task(tmp_path, kubeconfig, urls)


def test_the_tools_are_the_toolbox_s_with_its_schemas(task):
    expected = ToolBox(task, Handin(), time_left=task.remaining).specs
    with serve(task) as served:
        tools = run(listed(served.url))
    assert list(tools) == [s["name"] for s in expected]
    assert {"kubectl", "promql_query", "promql_range_query", "alerts", "trace_search", "trace_get", "logs",
            "topology_graph", "submit_diagnosis"} <= set(tools)
    assert all(tools[s["name"]] == s["parameters"] for s in expected)


def test_every_tool_answers_and_every_call_is_recorded(task):
    trace_id = Toolkit(task, Trajectory()).traces.search("frontend", lookback=600, limit=1)[0]["traceID"]
    calls = [
        ("kubectl", {"args": ["get", "deployment", BROKEN, "-n", NAMESPACE, "-o", "jsonpath={.spec.replicas}"]}),
        ("promql_query", {"query": 'kube_deployment_spec_replicas{deployment="%s"}' % BROKEN}),
        ("promql_range_query", {"query": "up", "minutes": 5, "step": 60}),
        ("alerts", {"namespace": NAMESPACE}),
        ("trace_services", {}),
        ("trace_search", {"service": "frontend", "tags": {"error": "true"}, "minutes": 10, "limit": 2}),
        ("trace_get", {"trace_id": trace_id}),
        ("trace_dependencies", {"minutes": 10}),
        ("logs", {"pod": "deployment/frontend", "namespace": NAMESPACE, "tail": 3}),
        ("topology_nodes", {}),
        ("topology_edges", {}),
        ("topology_graph", {}),
        ("wait", {"seconds": 0}),
        ("submit_diagnosis", {"entities": [{"name": f"{NAMESPACE}/Deployment/{BROKEN}", "contributing_factor": True}],
                              "final": False}),
    ]
    with serve(task) as served:
        answers = run(called(served.url, *calls))
    for (name, _), (error, text) in zip(calls, answers):
        assert not error, f"{name}: {text}"
        assert text.strip(), f"{name} answered nothing"
    answer = dict(zip([c[0] for c in calls], [t for _, t in answers]))
    assert answer["kubectl"] == "0"
    assert '"value"' in answer["promql_query"] and BROKEN in answer["promql_query"]
    assert BROKEN in answer["trace_services"] and BROKEN in answer["alerts"] + answer["trace_search"]
    assert trace_id[:16] in answer["trace_get"]
    assert "draft" in answer["submit_diagnosis"]
    assert [s.tool for s in served.trajectory.steps] == [c[0] for c in calls]
    assert served.trajectory.steps[0].action.startswith(f"kubectl get deployment {BROKEN}")
    assert served.handin.diagnosis["entities"][0]["name"] == f"{NAMESPACE}/Deployment/{BROKEN}"
    assert not served.handin.final


def test_what_goes_wrong_is_a_tool_error_that_says_why(task):
    calls = [("no_such_tool", {}), ("kubectl", {"args": ["edit", "deployment", BROKEN]}),
             ("kubectl", {"args": ["get", "deployment", "missing", "-n", NAMESPACE]}),
             ("promql_query", {"query": "sum(("}), ("wait", {"seconds": 1, "extra": 2}),
             ("submit_diagnosis", {"entities": [{"name": "cart", "contributing_factor": True}]})]
    with serve(task) as served:
        answers = run(called(served.url, *calls))
    assert all(error for error, _ in answers), answers
    texts = [text for _, text in answers]
    assert texts[0].startswith("error: unknown tool 'no_such_tool'")
    assert "refused: kubectl edit is not allowed" in texts[1]
    assert "NotFound" in texts[2] or "not found" in texts[2]
    assert "parse error" in texts[3]
    assert "unknown parameters ['extra']" in texts[4]
    assert "is not namespace/Kind/name" in texts[5]
    assert all(step.error for step in served.trajectory.steps)
    assert served.handin.diagnosis is None


def test_a_withheld_signal_s_tools_are_absent(task):
    urls = {k: v for k, v in task.urls.items() if k not in ("jaeger", "prometheus")}
    withheld = Task(**{**task.to_dict(), "urls": urls, "namespaces": task.namespaces})
    with serve(withheld, without=("traces", "metrics", "logs")) as served:
        tools = run(listed(served.url))
    assert not {t for t in tools if t.startswith(("trace_", "promql_")) or t == "logs"}
    assert {"kubectl", "alerts", "topology_nodes", "submit_diagnosis"} <= set(tools)


def test_a_call_past_the_deadline_is_a_clear_tool_error(task):
    late = Task(**{**task.to_dict(), "deadline": time.time() - 1, "namespaces": task.namespaces})
    with serve(late) as served:
        [(error, text)] = run(called(served.url, ("kubectl", {"args": ["get", "pods", "-n", NAMESPACE]})))
    assert error and "deadline has passed" in text
    assert served.trajectory.steps[-1].error


def _mcp_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("itbench-mcp")]


def _refused(url: str) -> bool:
    host, port = url.split("//")[1].split("/")[0].split(":")
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) != 0


def test_nothing_is_left_once_the_server_stops_also_after_ctrl_c(task):
    before = _mcp_threads()
    with serve(task) as served:
        assert _mcp_threads() != before and not _refused(served.url)
        run(listed(served.url))
    assert _refused(served.url) and _mcp_threads() == before
    with pytest.raises(KeyboardInterrupt):
        with serve(task) as interrupted:
            run(listed(interrupted.url))
            raise KeyboardInterrupt
    assert _refused(interrupted.url) and _mcp_threads() == before


def test_the_client_configurations_name_the_server_as_each_client_reads_them(task, tmp_path):
    with serve(task) as served:
        paths = client_configs.write(tmp_path, served.url)
        claude = json.loads(paths["claude-code"].read_text())["mcpServers"]["itbench"]
        cursor = json.loads(paths["cursor"].read_text())["mcpServers"]["itbench"]
        codex = tomllib.loads(paths["codex"].read_text())["mcp_servers"]["itbench"]
        assert claude == {"type": "http", "url": served.url}
        assert cursor == {"url": served.url} and codex == {"url": served.url}
        assert paths["claude-code"] == tmp_path / ".mcp.json" and paths["codex"] == tmp_path / ".codex/config.toml"
        assert "kubectl" in run(listed(codex["url"]))


def test_the_stdio_server_serves_the_same_tools_and_writes_the_exec_agent_s_records(task, tmp_path):
    workdir = Path(task.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "task.json").write_text(json.dumps(task.to_dict()))
    env = {"PATH": os.environ["PATH"], "ITBENCH_TASK": str(workdir / "task.json"),
           "ITBENCH_OUTPUT": str(workdir / "output.json"), "ITBENCH_TRAJECTORY": str(workdir / "trajectory.jsonl"),
           "KUBECACHEDIR": str(tmp_path / "cache"), "PYTHONPATH": os.pathsep.join(sys.path)}
    server = StdioServerParameters(command=sys.executable, args=["-m", "pytest_itbench.mcp"], env=env)

    async def session():
        async with Client(server) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            replicas = await client.call_tool("kubectl", {"args": ["get", "deployment", BROKEN, "-n", NAMESPACE,
                                                                   "-o", "jsonpath={.spec.replicas}"]})
            await client.call_tool("submit_diagnosis", {"entities": [
                {"name": f"{NAMESPACE}/Deployment/{BROKEN}", "contributing_factor": True}]})
            return names, replicas.content[0].text

    names, replicas = run(session())
    assert names == list(run_listed_in_process(task)) and replicas == "0"
    output = json.loads((workdir / "output.json").read_text())
    assert output["diagnosis"]["entities"][0]["name"] == f"{NAMESPACE}/Deployment/{BROKEN}"
    steps = [json.loads(line) for line in (workdir / "trajectory.jsonl").read_text().splitlines()]
    assert [s["tool"] for s in steps] == ["kubectl", "submit_diagnosis"]


def run_listed_in_process(task) -> dict[str, dict]:
    with serve(task) as served:
        return run(listed(served.url))


def test_the_stdio_server_without_a_task_says_what_it_needs(tmp_path):
    import subprocess
    done = subprocess.run([sys.executable, "-m", "pytest_itbench.mcp"], capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join(sys.path)}, cwd=tmp_path)
    assert done.returncode != 0 and "$ITBENCH_TASK is not set" in done.stderr


def test_a_ciso_task_hands_in_its_files(tmp_path, shop):  # noqa: F811
    _, kubeconfig = shop
    ciso = Task(scenario_id="ciso", domain="ciso", text="t", kubeconfig=kubeconfig, urls={},
                workdir=str(tmp_path / "work"), deadline=time.time() + 60, time_limit=60, namespaces=(NAMESPACE,))
    with serve(ciso) as served:
        answers = run(called(served.url, ("write_file", {"path": "policy.yaml", "content": "kind: ClusterPolicy\n"}),
                             ("hand_in", {"artifacts": {"policy": "policy.yaml"}})))
    assert not any(error for error, _ in answers), answers
    assert served.handin.artifacts == {"policy": "policy.yaml"} and served.handin.final
