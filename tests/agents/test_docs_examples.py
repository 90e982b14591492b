"""The examples in docs/agents.md, run as written against a twin (and a stand-in Prometheus)."""

from __future__ import annotations

import json
import re
import shutil
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from pytest_itbench.agents import ExecAgent, Trajectory, resolve

pytestmark = pytest.mark.kubectl

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


def code_block(language: str, containing: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.DOTALL)
    matches = [b for b in blocks if containing in b]
    assert len(matches) == 1, f"docs/agents.md should hold one {language} block with {containing!r}"
    return matches[0]


def test_the_python_example_diagnoses_and_repairs_the_scaled_down_deployment(shop, make_task, tmp_path, monkeypatch):
    module = f"my_agent_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(code_block("python", "class ScaledToZero"))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        trajectory = Trajectory()
        submission = resolve(f"{module}:ScaledToZero").run(make_task(kubeconfig=shop.agent_kubeconfig), trajectory)
    finally:
        sys.modules.pop(module, None)
    assert [e["name"] for e in submission.diagnosis["entities"]] == ["shop/Deployment/cart"]
    assert shop.replicas("cart") == 1
    assert [s.action for s in trajectory.steps] == [
        "kubectl get deployments --namespace shop -o json",
        "kubectl scale deployment cart --namespace shop --replicas=1"]


class FakePrometheus(BaseHTTPRequestHandler):
    """Answers the instant query for firing alerts, as Prometheus would with one alert firing."""

    queries: list[str] = []

    def do_GET(self):  # noqa: N802 (the http.server hook's name)
        url = urlparse(self.path)
        if url.path != "/api/v1/query":
            self.send_error(404)
            return
        self.queries.append(parse_qs(url.query)["query"][0])
        body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"__name__": "ALERTS", "alertname": "HighRequestErrorRate", "alertstate": "firing"},
             "value": [1700000000, "1"]}]}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def prometheus():
    FakePrometheus.queries = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakePrometheus)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.mark.skipif(not (shutil.which("jq") and shutil.which("curl")), reason="the shell example uses jq and curl")
def test_the_shell_example_reads_alerts_and_deployments_and_writes_its_diagnosis(shop, make_task, prometheus,
                                                                                  script):
    agent = ExecAgent(str(script("my_agent.sh", code_block("bash", "# my_agent.sh: run with"))))
    trajectory = Trajectory()
    task = make_task(kubeconfig=shop.agent_kubeconfig, urls={"prometheus": prometheus})
    submission = agent.run(task, trajectory)
    assert FakePrometheus.queries == ['ALERTS{alertstate="firing"}']
    assert [(e["name"], e["contributing_factor"]) for e in submission.diagnosis["entities"]] == [
        ("shop/Deployment/cart", True)]
    assert [a["alert"] for a in submission.diagnosis["alerts_explained"]] == ["HighRequestErrorRate"]
    assert [(s.observation, s.started > 0) for s in trajectory.steps] == [('["HighRequestErrorRate"]', True),
                                                                          ('["cart"]', True)]
    assert trajectory.problems == []


@pytest.mark.skipif(not shutil.which("jq"), reason="the shell example uses jq")
def test_the_shell_example_runs_without_metrics_when_they_are_withheld(shop, make_task, script):
    agent = ExecAgent(str(script("my_agent.sh", code_block("bash", "# my_agent.sh: run with"))))
    submission = agent.run(make_task(kubeconfig=shop.agent_kubeconfig, urls={}), Trajectory())
    assert submission.diagnosis["alerts_explained"] == []
    assert [e["name"] for e in submission.diagnosis["entities"]] == ["shop/Deployment/cart"]
