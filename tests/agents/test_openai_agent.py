"""The openai agent, driven through the real ``openai`` client against a scripted local endpoint.

Whole trials run through the plugin (pytester, in this process) on catalog scenarios: the scaled-to-zero
SRE scenario and a Kyverno CISO scenario solved by a scripted model; a 429 and a 500 overcome; an endpoint
that dies mid-run failing the trial cleanly. The loop's limits and the handling of malformed calls run
against a small twin (tests/agents/conftest.py, ``shop``) or without a cluster.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

openai = pytest.importorskip("openai")  # imported here, before pytester's nested runs snapshot sys.modules
# Likewise the Kyverno engine: its CEL extension panics when a nested run imports it a second time.
import pytest_itbench.policy.kyverno  # noqa: E402,F401

from pytest_itbench.agents import AgentSpecError, Task, Trajectory, resolve  # noqa: E402
from pytest_itbench.agents.openai_agent import EndpointFailed, OpenAIAgent, OpenAISettings  # noqa: E402
from pytest_itbench.agents.openai_agent import settings as settings_module  # noqa: E402
from pytest_itbench.agents.openai_agent.budget import cut_to_tokens  # noqa: E402
from pytest_itbench.agents.openai_agent.retries import Backoff  # noqa: E402
from pytest_itbench.report.jsonl import load  # noqa: E402
from pytest_itbench.tools.functions import kubectl_rules  # noqa: E402
from pytest_itbench.tools.functions.handin import Handin  # noqa: E402
from pytest_itbench.tools.functions.toolbox import ToolBox  # noqa: E402
from tests.agents.fake_openai import FakeOpenAI, die, drop, message, status, tool_call, tool_calls  # noqa: E402
from tests.conftest import KUBECTL  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCALED_TO_ZERO = ROOT / "scenarios" / "sre" / "astronomy-product-catalog-scaled-to-zero.yaml"
KYVERNO = ROOT / "scenarios" / "ciso" / "kyverno" / "ciso-kyverno-5.2.2-privileged"
SHOP = "astronomy-shop"
SECRET = "sk-test-0123456789abcdefSECRET"

needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="the agent's kubectl tool drives the real kubectl")


@pytest.fixture(scope="module", autouse=True)
def client_modules_loaded():
    """Every module the client imports lazily, loaded before pytester's first nested run.

    pytester restores ``sys.modules`` after each in-process run, dropping what was first imported inside it;
    the next run imports a second copy, whose exception classes the client's first copy does not catch (a
    dropped connection escaped as a bare RemoteProtocolError). One request of each outcome here loads them all.
    """
    with FakeOpenAI([message("ok"), status(429, retry_after=0), drop(), die()]) as fake:
        client = openai.OpenAI(api_key="warm-up", base_url=fake.base_url, max_retries=0, timeout=5)
        for _ in range(5):  # answered, refused, dropped, died, then nobody listening
            try:
                client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            except openai.APIError:
                pass
        client.close()


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    """No key or endpoint of the developer's leaks in; each test's kubectl caches in a fresh directory."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KUBECACHEDIR", str(tmp_path / "kubecache"))


def settings(fake: FakeOpenAI, **kw) -> OpenAISettings:
    return OpenAISettings(**{"model": "scripted", "base_url": fake.base_url, "retry_delay": 0.01, **kw})


def tool_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


# ---- whole trials through the plugin ---------------------------------------------------------------------------
def run_trial(pytester, fake: FakeOpenAI, scenario: str, *args: str):
    """One trial of ``scenario`` (a path in the pytester project) with the openai agent against ``fake``."""
    started = time.monotonic()
    result = pytester.runpytest("-p", "no:cacheprovider", "--itbench-agent=openai", "--itbench-openai-model=scripted",
                                f"--itbench-openai-base-url={fake.base_url}", "--itbench-openai-retry-delay=0.01",
                                "--itbench-results=results.jsonl", *args, scenario)
    [record] = load(pytester.path / "results.jsonl")
    return result, record, time.monotonic() - started


def attachment(record, name: str):
    return next(a.content for a in record.attachments if a.name == name)


@needs_kubectl
def test_a_scripted_model_diagnoses_and_repairs_the_scaled_to_zero_scenario(pytester, monkeypatch):
    shutil.copy(SCALED_TO_ZERO, pytester.path / SCALED_TO_ZERO.name)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    deployment = f"{SHOP}/Deployment/product-catalog"
    diagnosis = {
        "entities": [{"name": deployment, "contributing_factor": True, "reasoning": "scaled to zero replicas",
                      "evidence": "READY 0/0"},
                     {"name": f"{SHOP}/Service/product-catalog", "contributing_factor": False},
                     {"name": f"{SHOP}/Service/frontend", "contributing_factor": False}],
        "propagations": [{"source": deployment, "target": f"{SHOP}/Service/product-catalog",
                          "condition": "0 replicas", "effect": "no endpoints"}],
        "alerts_explained": [{"alert": "HighRequestErrorRate", "explanation": "catalog calls fail", "explained": True}],
    }
    script = [
        tool_call("kubectl", {"args": ["get", "deployments", "-n", SHOP]}, content="Which workload lost its pods?"),
        tool_call("kubectl", {"args": ["scale", "deployment/product-catalog", "-n", SHOP, "--replicas=1"]},
                  content="product-catalog has 0/0: scale it back."),
        tool_call("submit_diagnosis", diagnosis),
    ]
    with FakeOpenAI(script) as fake:
        result, record, _ = run_trial(pytester, fake, SCALED_TO_ZERO.name)
    result.assert_outcomes(passed=1)
    checks = {c.name: c for c in record.checks}
    assert checks["diagnosis"].passed and checks["mitigation"].passed

    first, second, third = fake.requests
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["system", "user"] and "site reliability engineer" in first["messages"][0]["content"]
    task_text = first["messages"][1]["content"]
    assert "HighRequestErrorRate" in task_text and "scaled-to-zero" not in task_text  # not the scenario's id
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"kubectl", "promql_query", "alerts", "trace_search", "logs", "wait", "submit_diagnosis"} <= offered
    assert "write_file" not in offered
    assert first["temperature"] == 0 and first["seed"] == 0
    listing = tool_messages(second)[0]
    assert "product-catalog" in listing and "0/0" in listing
    assert "deployment.apps/product-catalog scaled" in tool_messages(third)[-1]
    assert fake.headers[0]["authorization"] == f"Bearer {SECRET}"

    steps = attachment(record, "trajectory")
    assert [s["tool"] for s in steps] == ["kubectl", "kubectl", "submit_diagnosis"]
    assert steps[0]["thought"] == "Which workload lost its pods?" and steps[0]["action"].startswith("kubectl get")
    assert all(s["error"] == "" for s in steps)
    assert sum(s["tokens_in"] + s["tokens_out"] for s in steps) == fake.tokens == record.figures["tokens"]
    submission = attachment(record, "submission")
    assert submission["diagnosis"]["entities"][0]["name"] == deployment
    assert "stopped: handed in after 3 turns" in submission["notes"]
    # The key went to the endpoint and nowhere else.
    assert SECRET not in (pytester.path / "results.jsonl").read_text()
    assert SECRET not in result.stdout.str() + result.stderr.str()


def copy_kyverno_scenario(pytester) -> tuple[str, str]:
    """The Kyverno 5.2.2 scenario in the project, and its reference policy's text (what the model will write)."""
    shutil.copytree(KYVERNO, pytester.path / KYVERNO.name)
    reference = (KYVERNO / "reference" / "policy.yaml").read_text()
    return f"{KYVERNO.name}/scenario.yaml", reference


@needs_kubectl
def test_a_scripted_model_writes_tests_and_hands_in_a_kyverno_policy(pytester):
    scenario, reference = copy_kyverno_scenario(pytester)
    script = [
        tool_call("kubectl", {"args": ["get", "pods", "-n", "ledger"]}),
        tool_call("write_file", {"path": "policy.yaml", "content": reference}),
        tool_call("test_kyverno_policy", {"policy": "policy.yaml"}),
        tool_call("kubectl", {"args": ["apply", "-f", "policy.yaml"]}),
        tool_call("hand_in", {"artifacts": {"policy": "policy.yaml"}}),
    ]
    with FakeOpenAI(script) as fake:
        result, record, _ = run_trial(pytester, fake, scenario)
    result.assert_outcomes(passed=1)
    assert {c.name: c.passed for c in record.checks} == {"policy": True, "posture": True}
    assert "compliance engineer" in fake.requests[0]["messages"][0]["content"]
    offered = {t["function"]["name"] for t in fake.requests[0]["tools"]}
    assert {"kubectl", "write_file", "run_script", "test_rego", "test_kyverno_policy", "hand_in"} <= offered
    assert "submit_diagnosis" not in offered and "promql_query" not in offered
    assert "node-debugger" in tool_messages(fake.requests[1])[0]
    assert "YAML document(s): ClusterPolicy/disallow-privileged-containers" in tool_messages(fake.requests[2])[-1]
    tested = tool_messages(fake.requests[3])[-1]
    assert "fail  Pod ledger/node-debugger" in tested and "pass  Pod ledger/ledger-cache" in tested
    assert "fail  Deployment ledger/ledger-sync" in tested
    assert "clusterpolicy.kyverno.io/disallow-privileged-containers created" in tool_messages(fake.requests[4])[-1]
    assert attachment(record, "submission")["artifacts"] == {"policy": "policy.yaml"}


@needs_kubectl
def test_a_rate_limit_and_a_server_error_are_retried_and_the_trial_passes(pytester):
    scenario, reference = copy_kyverno_scenario(pytester)
    script = [
        status(429, retry_after=0, text="slow down"),
        tool_call("write_file", {"path": "policy.yaml", "content": reference}),
        status(500, text="upstream hiccup"),
        tool_call("hand_in", {"artifacts": {"policy": "policy.yaml"}}),
    ]
    with FakeOpenAI(script) as fake:
        result, record, _ = run_trial(pytester, fake, scenario)
    result.assert_outcomes(passed=1)
    assert len(fake.requests) == 4
    assert fake.requests[0] == fake.requests[1]  # the same request again
    notes = attachment(record, "submission")["notes"]
    assert "2 transient endpoint errors retried" in notes and "HTTP 500" in notes
    assert [s["tool"] for s in attachment(record, "trajectory")] == ["write_file", "hand_in"]


def tcp_connections(port: int) -> list[str]:
    """This machine's TCP sockets to or from ``port`` that are not closed (from /proc/net/tcp)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        with open(table) as fh:
            for line in fh.readlines()[1:]:
                fields = line.split()
                local, remote, state = fields[1], fields[2], fields[3]
                ports = {int(local.rsplit(":", 1)[1], 16), int(remote.rsplit(":", 1)[1], 16)}
                if port in ports and state not in ("06", "07"):  # TIME_WAIT and CLOSE hold nothing open
                    found.append(line.strip())
    return found


@needs_kubectl
def test_an_endpoint_that_dies_mid_run_fails_the_trial_naming_it(pytester):
    scenario, _ = copy_kyverno_scenario(pytester)
    before = {t.ident for t in threading.enumerate()}
    with FakeOpenAI([tool_call("kubectl", {"args": ["get", "pods", "-n", "ledger"]}), die()]) as fake:
        result, record, took = run_trial(pytester, fake, scenario, "--itbench-openai-max-retries=2")
        endpoint = fake.base_url
    result.assert_outcomes(failed=1)
    assert took < 60
    assert len(fake.requests) == 2  # the last one died with the endpoint; the retries found nobody listening
    [check] = record.checks
    assert check.name == "agent" and not check.passed
    assert check.detail.startswith(f"the model endpoint {endpoint} failed: it failed 3 times in a row; last error: "
                                   f"connection failed (APIConnectionError: ConnectError"), check.detail
    output = result.stdout.str()
    assert f"the model endpoint {endpoint} failed" in output and "Traceback" not in output
    # The step before the death is kept.
    assert [s["tool"] for s in attachment(record, "trajectory")] == ["kubectl"]
    # Nothing is left behind: no thread, no socket to the endpoint, and its port refuses.
    deadline = time.monotonic() + 5
    while {t.ident for t in threading.enumerate()} - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [t.name for t in threading.enumerate() if t.ident not in before]
    assert tcp_connections(fake.port) == [] or not os.path.exists("/proc/net/tcp")
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", fake.port), timeout=1).close()


# ---- the loop on a small twin ------------------------------------------------------------------------------------
@pytest.fixture
def shop_task(shop, make_task):
    """A task on the small shop (its cart scaled to zero), no observability URLs."""
    return make_task(time_limit=60, urls={}, kubeconfig=shop.agent_kubeconfig)


@needs_kubectl
def test_the_same_call_over_and_over_stops_at_the_step_limit_and_hands_in_the_draft(shop_task, shop):
    draft = {"entities": [{"name": "shop/Deployment/cart", "contributing_factor": True}], "final": False}
    looping = tool_call("kubectl", {"args": ["get", "pods", "-n", "shop"]})
    with FakeOpenAI([tool_call("submit_diagnosis", draft)], then=looping) as fake:
        agent = resolve("openai", settings={"model": "scripted", "base_url": fake.base_url, "max_steps": "5"})
        trajectory = Trajectory()
        submission = agent.run(shop_task, trajectory)
    assert trajectory.model == "scripted"  # through the guard's own record too
    assert len(fake.requests) == 5
    assert [s.tool for s in trajectory.steps] == ["submit_diagnosis"] + ["kubectl"] * 4
    assert "draft" in tool_messages(fake.requests[1])[0]
    assert submission.diagnosis["entities"][0]["name"] == "shop/Deployment/cart"
    assert submission.diagnosed_at is not None
    assert "stopped: the step limit (5 turns) after 5 turns" in submission.notes
    assert "handed in the last draft diagnosis" in submission.notes


@needs_kubectl
def test_malformed_calls_are_answered_with_errors_the_model_corrects(shop_task, shop):
    good = {"entities": [{"name": "shop/Deployment/cart", "contributing_factor": True}]}
    script = [
        tool_call("kubectl_get", {"resource": "deployments"}),  # no such tool
        tool_call("kubectl", '{"args": ["get", "deployments", "-n", "shop"'),  # not JSON
        tool_calls(("kubectl", {"args": ["logs", "-f", "deployment/frontend", "-n", "shop"]}),  # refused
                   ("kubectl", {"args": ["cp", "shop/frontend:/etc/passwd", "/tmp/x"]})),  # refused
        tool_call("kubectl", {"args": ["get", "deployment", "cart", "-n", "shop"]}),
        tool_call("submit_diagnosis", {"entities": [{"name": "cart", "contributing_factor": True}]}),  # bad name
        tool_call("submit_diagnosis", good),
    ]
    with FakeOpenAI(script) as fake:
        trajectory = Trajectory()
        submission = OpenAIAgent(settings(fake)).run(shop_task, trajectory)
    assert len(fake.requests) == 6
    answers = [tool_messages(r)[-1] for r in fake.requests[1:]]
    assert answers[0] == ("error: unknown tool 'kubectl_get': there is no such tool; the tools are: kubectl, logs, "
                          "wait, submit_diagnosis")
    assert "not valid JSON" in answers[1] and "{args}" in answers[1]
    refused = tool_messages(fake.requests[3])[-2:]
    assert refused[0].startswith("refused: kubectl logs -f is not allowed")
    assert refused[1].startswith("refused: kubectl cp is not allowed")
    assert "cart" in answers[3] and "0/0" in answers[3]
    assert "'cart' is not namespace/Kind/name" in answers[4]
    errors = [s.error for s in trajectory.steps]
    assert [bool(e) for e in errors] == [True, True, True, True, False, True, False]
    assert trajectory.steps[0].tool == "kubectl_get" and trajectory.steps[0].error.startswith("unknown tool")
    assert trajectory.model == "scripted"
    assert submission.diagnosis["entities"] == good["entities"]
    assert "stopped: handed in after 6 turns" in submission.notes
    assert shop.replicas("cart") == 0  # nothing was repaired: the model only looked


# ---- the loop without a cluster ----------------------------------------------------------------------------------
def test_a_diagnosis_written_in_a_message_is_handed_in(make_task):
    written = {"entities": [{"name": "shop/Deployment/cart", "contributing_factor": True}],
               "propagations": [], "alerts_explained": []}
    script = [message("Let me think."), message(f"My answer:\n```json\n{json.dumps(written)}\n```")]
    with FakeOpenAI(script) as fake:
        trajectory = Trajectory()
        submission = OpenAIAgent(settings(fake)).run(make_task(urls={}), trajectory)
    assert submission.diagnosis["entities"] == written["entities"]
    assert "without calling a tool" in fake.requests[1]["messages"][-1]["content"]
    assert [s.tool for s in trajectory.steps] == ["", "submit_diagnosis"]


def test_it_stops_at_the_token_budget(make_task):
    with FakeOpenAI([], then=tool_call("wait", {"seconds": 0})) as fake:
        submission = OpenAIAgent(settings(fake, max_tokens=6000)).run(make_task(urls={}), Trajectory())
    assert 1 <= len(fake.requests) < 10
    assert "stopped: the token budget (6000 tokens)" in submission.notes
    assert submission.diagnosis is None


def test_it_hands_in_before_the_deadline(make_task):
    task = make_task(time_limit=4.0, urls={})
    with FakeOpenAI([], then=tool_call("wait", {"seconds": 0.5})) as fake:
        agent = resolve("openai", settings={"model": "scripted", "base_url": fake.base_url})
        started = time.time()
        submission = agent.run(task, Trajectory())  # the guard would raise AgentTimedOut past the deadline
    assert time.time() < task.deadline and time.time() - started >= 1.5
    assert "stopped: the deadline" in submission.notes


def test_an_endpoint_refusing_the_request_fails_at_once(make_task):
    with FakeOpenAI([status(401, text="bad key")]) as fake:
        with pytest.raises(EndpointFailed) as failure:
            resolve("openai", settings={"model": "scripted", "base_url": fake.base_url}).run(make_task(), Trajectory())
    assert len(fake.requests) == 1
    assert str(failure.value).startswith(f"the model endpoint {fake.base_url} failed: it refused the request; "
                                         f"last error: HTTP 401")


def test_a_key_echoed_by_the_endpoint_is_not_reported(make_task):
    with FakeOpenAI([status(401, text=f"Incorrect API key provided: {SECRET}")]) as fake:
        with pytest.raises(EndpointFailed) as failure:
            OpenAIAgent(settings(fake, api_key=SECRET)).run(make_task(), Trajectory())
    assert SECRET not in str(failure.value) and "[api key]" in str(failure.value)


def test_azure_openai_before_its_v1_api_gets_its_deployment_path_version_and_key_header(make_task):
    handin = {"entities": [{"name": "shop/Deployment/cart", "contributing_factor": True}]}
    with FakeOpenAI([tool_call("submit_diagnosis", handin)]) as fake:
        resource = f"http://127.0.0.1:{fake.port}"
        agent = resolve("openai", settings={"model": "my-deployment", "base_url": resource,
                                            "api_version": "2024-10-21", "api_key": SECRET})
        submission = agent.run(make_task(urls={}), Trajectory())
    assert fake.paths == ["/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21"]
    assert fake.headers[0]["api-key"] == SECRET
    assert submission.diagnosis["entities"] == handin["entities"]


def test_the_kubectl_tool_refuses_what_would_hang_or_escape(make_task):
    tools = ToolBox(make_task(urls={}), Handin(), time_left=lambda: 30.0)
    for args in (["edit", "deployment/cart"], ["port-forward", "svc/cart", "8080"], ["proxy"],
                 ["logs", "-f", "pod/cart"], ["logs", "pod/cart", "--follow"], ["attach", "cart"],
                 ["exec", "-it", "cart", "--", "sh"], ["exec", "-i", "cart", "--", "sh"], ["get", "pods", "-w"],
                 ["get", "pods", "--watch"], ["cp", "cart:/etc/hosts", "hosts"], ["run", "x", "-it", "--image=busybox"],
                 ["rollout", "status", "deployment/cart"], ["get", "pods", "--kubeconfig=/etc/admin"], []):
        result = tools.call("kubectl", json.dumps({"args": args}))
        assert result.observation.startswith("refused: ") and result.error, args
    assert kubectl_rules.refusal(["rollout", "status", "deployment/cart", "--timeout=60s"]) is None
    assert kubectl_rules.refusal(["logs", "deployment/cart", "--tail=50"]) is None
    assert kubectl_rules.refusal(["exec", "cart-1", "--", "cat", "/etc/hosts"]) is None


def test_files_stay_in_the_workdir(make_task, tmp_path):
    task = make_task(urls={}, domain="ciso")
    tools = ToolBox(task, Handin(), time_left=lambda: 30.0)
    for path in ("../escape.yaml", "/etc/passwd", "a/../../b"):
        result = tools.call("write_file", json.dumps({"path": path, "content": "x"}))
        assert result.error and "working directory" in result.error, path
    os.symlink(tmp_path, os.path.join(task.workdir, "out"))
    assert "leads out" in tools.call("write_file", json.dumps({"path": "out/x", "content": "x"})).error
    written = tools.call("write_file", json.dumps({"path": "sub/policy.yaml", "content": "kind: ClusterPolicy\n"}))
    assert not written.error
    assert tools.call("read_file", '{"path": "sub/policy.yaml"}').observation == "kind: ClusterPolicy\n"
    assert "does not exist" in tools.call("hand_in", '{"artifacts": {"policy": "missing.yaml"}}').error


def test_a_script_and_a_rego_policy_are_run_as_they_will_be_graded(make_task):
    task = make_task(urls={}, domain="ciso")
    tools = ToolBox(task, Handin(), time_left=lambda: 30.0)
    script = 'echo "kubeconfig=$KUBECONFIG"; echo \'{"privileged": 1}\' > collected_data.json'
    tools.call("write_file", json.dumps({"path": "script.sh", "content": script}))
    tools.call("write_file", json.dumps({"path": "policy.rego", "content":
                                         "package check\ndefault result := false\nresult if input.privileged == 0\n"}))
    ran = tools.call("run_script", '{"path": "script.sh"}')
    assert ran.error == "" and "exit 0" in ran.observation
    assert f"kubeconfig={os.path.abspath(task.kubeconfig)}" in ran.observation
    assert "bytes of valid JSON" in ran.observation
    assert tools.call("test_rego", '{"policy": "policy.rego", "input_file": "collected_data.json"}').observation \
        == "data.check.result = false"
    assert tools.call("test_rego", '{"policy": "policy.rego", "input": {"privileged": 0}}').observation \
        == "data.check.result = true"
    tools.call("write_file", '{"path": "slow.sh", "content": "sleep 30 & sleep 30"}')
    slow = tools.call("run_script", '{"path": "slow.sh", "timeout": 1}')
    assert slow.error == "timed out" and "stopped after 1 s" in slow.observation


# ---- settings, registration, pieces --------------------------------------------------------------------------------
def test_settings_come_from_the_command_line_then_the_ini_file_then_the_environment(pytester):
    pytester.makeini("[pytest]\nitbench_openai_model = from-ini\nitbench_openai_max_steps = 7\n"
                     "itbench_openai_temperature = none\n")
    config = pytester.parseconfig("--itbench-openai-model=from-cli", "--itbench-openai-seed=3")
    values = settings_module.values_from_pytest(config)
    assert values == {"model": "from-cli", "max_steps": "7", "temperature": "none", "seed": "3"}
    chosen = settings_module.from_values(values, environ={"OPENAI_BASE_URL": "http://env:8000/v1",
                                                          "OPENAI_API_KEY": SECRET})
    assert (chosen.model, chosen.max_steps, chosen.temperature, chosen.seed) == ("from-cli", 7, None, 3)
    assert chosen.base_url == "http://env:8000/v1" and chosen.api_key == SECRET
    assert SECRET not in repr(chosen)
    given = settings_module.from_values({"base_url": "http://cli:1/v1"}, environ={"OPENAI_BASE_URL": "http://env/v1"})
    assert given.base_url == "http://cli:1/v1" and given.api_key is None  # a local server needs no key


def test_a_bad_setting_or_a_missing_key_stops_pytest_naming_the_option(pytester):
    result = pytester.runpytest("--itbench-agent=openai", "--itbench-openai-base-url=http://127.0.0.1:9/v1",
                                "--itbench-openai-temperature=hot")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--itbench-openai-temperature = 'hot'" in result.stderr.str()
    result = pytester.runpytest("--itbench-agent=openai")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no API key for OpenAI: set OPENAI_API_KEY" in result.stderr.str()


def test_without_the_openai_package_the_plugin_loads_and_the_agent_says_how_to_install_it(monkeypatch, pytester):
    import subprocess
    check = ("import sys; import pytest_itbench.plugin, pytest_itbench.agents.openai_agent; "
             "assert 'openai' not in sys.modules, 'imported at load time'")
    subprocess.run([sys.executable, "-c", check], check=True, cwd=ROOT)
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai now raises ImportError
    with pytest.raises(AgentSpecError, match=r"pip install 'pytest-itbench\[openai\]'"):
        resolve("openai", settings={"base_url": "http://127.0.0.1:9/v1"})
    result = pytester.runpytest("--itbench-agent=openai", "--itbench-openai-base-url=http://127.0.0.1:9/v1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "pip install 'pytest-itbench[openai]'" in result.stderr.str()


def test_backoff_doubles_with_seeded_jitter_and_honours_retry_after():
    import random
    backoff = Backoff(retries=5, first_delay=1.0, max_delay=30.0)
    first = [backoff.delay(i, random.Random(7)) for i in range(6)]
    again = [backoff.delay(i, random.Random(7)) for i in range(6)]
    assert first == again
    for i, delay in enumerate(first):
        assert 0.5 * min(2 ** i, 30) <= delay <= min(1.5 * 2 ** i, 30)
    assert backoff.delay(0, random.Random(7), asked=12.0) == 12.0
    assert backoff.delay(0, random.Random(7), asked=600.0) == 30.0


def test_a_long_observation_keeps_its_head_and_tail_and_says_what_was_cut():
    text = "\n".join(f"line {i:05d} " + "x" * 40 for i in range(2000))
    cut = cut_to_tokens(text, 500)
    assert len(cut) <= 500 * 4 + 10
    assert cut.startswith("line 00000") and cut.endswith("line 01999 " + "x" * 40)
    marker = next(line for line in cut.splitlines() if line.startswith("[..."))
    removed = int(marker.split()[1])
    assert len(cut) - len(marker) - 1 + removed == len(text)
    assert cut_to_tokens("short", 500) == "short"


def test_openai_is_a_listed_builtin():
    from pytest_itbench.agents import available
    assert "openai" in available()


def test_the_task_message_leaves_out_the_scenario_id(make_task):
    from pytest_itbench.agents.openai_agent.prompts import system_prompt, task_message
    task: Task = make_task(urls={"prometheus": "http://x", "jaeger": "http://y"})
    text = task_message(task, max_steps=9)
    assert task.scenario_id not in text and task.text in text and "9 turns" in text
    assert "Prometheus metrics" in text and "Jaeger traces" in text and "Alertmanager" not in text
    for domain, words in (("sre", "site reliability"), ("finops", "FinOps"), ("ciso", "compliance")):
        assert words in system_prompt(domain)


@needs_kubectl
def test_with_its_tools_from_the_trial_s_mcp_server_the_same_script_scores_the_same(pytester):
    """--itbench-openai-tools=mcp: the same tools, reached through the trial's MCP server; each call is recorded
    once (the agent's step, with its thought and tokens), not again by the server."""
    shutil.copy(SCALED_TO_ZERO, pytester.path / SCALED_TO_ZERO.name)
    deployment = f"{SHOP}/Deployment/product-catalog"
    script = [
        tool_call("kubectl", {"args": ["get", "deployments", "-n", SHOP]}, content="Which workload lost its pods?"),
        tool_call("kubectl", {"args": ["scale", "deployment/product-catalog", "-n", SHOP, "--replicas=1"]}),
        tool_call("no_such_tool", {}),
        tool_call("submit_diagnosis", {"entities": [{"name": deployment, "contributing_factor": True}]}),
    ]
    with FakeOpenAI(script) as fake:
        result, record, _ = run_trial(pytester, fake, SCALED_TO_ZERO.name, "--itbench-openai-tools=mcp")
    result.assert_outcomes(passed=1)
    offered = {t["function"]["name"] for t in fake.requests[0]["tools"]}
    assert {"kubectl", "promql_query", "trace_get", "logs", "submit_diagnosis"} <= offered
    assert "product-catalog" in tool_messages(fake.requests[1])[0]
    assert tool_messages(fake.requests[3])[-1].startswith("error: unknown tool 'no_such_tool'")
    steps = attachment(record, "trajectory")
    assert [s["tool"] for s in steps] == ["kubectl", "kubectl", "no_such_tool", "submit_diagnosis"]
    assert steps[0]["thought"] == "Which workload lost its pods?" and steps[0]["action"].startswith("kubectl get")
    assert steps[2]["error"].startswith("unknown tool")
    assert "stopped: handed in after 4 turns" in attachment(record, "submission")["notes"]
