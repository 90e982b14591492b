"""Whole trials through the plugin: docs/agents.md's commands for Claude Code and Codex CLI, run as written with a
stand-in for each CLI that reaches its tools only through the trial's MCP server, found as the real CLI finds it;
and the variables passed to an exec agent (--itbench-agent-env), whose values no output of the session holds."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from pytest_itbench.report.jsonl import load

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios" / "sre"
DOC = ROOT / "docs" / "agents.md"
SCENARIO = "astronomy-cart-service-target-port.yaml"
NS = "astronomy-shop"
FIX = ["-n", NS, "patch", "service", "cart", "--type=json",
       "-p", '[{"op":"replace","path":"/spec/ports/0/targetPort","value":8080}]']
DIAGNOSIS = {"entities": [{"name": f"{NS}/Service/cart", "contributing_factor": True,
                           "reasoning": "its targetPort is not the port cart listens on"}]}

# A stand-in for Claude Code and Codex CLI, installed under both names: it finds the server where the real CLI
# would (claude: the file given to --mcp-config; codex: a -c mcp_servers.NAME.url=VALUE override, whose VALUE is
# TOML, else .codex/config.toml) and does everything through MCP: looks, repairs, hands in.
STAND_IN = f'''
import asyncio, json, os, sys, tomllib
from mcp import Client

client, argv = os.path.basename(sys.argv[0]), sys.argv[1:]
if client == "claude":
    assert argv[0] == "-p" and argv[1].strip(), argv  # print mode, with the task's text as the prompt
    server = json.load(open(argv[argv.index("--mcp-config") + 1]))["mcpServers"]["itbench"]
    assert server["type"] == "http", server
    assert argv[argv.index("--allowedTools") + 1] == "mcp__itbench", argv
else:
    assert argv[0] == "exec", argv
    overrides = [argv[i + 1] for i, word in enumerate(argv) if word == "-c"]
    url = [tomllib.loads("v = " + o.split("=", 1)[1])["v"] for o in overrides if o.startswith("mcp_servers.itbench.url=")]
    server = {{"url": url[0]}} if url else tomllib.load(open(".codex/config.toml", "rb"))["mcp_servers"]["itbench"]
url = server["url"]

async def main():
    async with Client(url) as mcp:
        tools = [t.name for t in (await mcp.list_tools()).tools]
        assert "kubectl" in tools and "submit_diagnosis" in tools, tools
        port = await mcp.call_tool("kubectl", {{"args": ["-n", "{NS}", "get", "service", "cart", "-o",
                                                        "jsonpath={{.spec.ports[0].targetPort}}"]}})
        assert not port.is_error and port.content[0].text != "8080", port.content
        fixed = await mcp.call_tool("kubectl", {{"args": {FIX!r}}})
        assert not fixed.is_error, fixed.content
        done = await mcp.call_tool("submit_diagnosis", {DIAGNOSIS!r})
        assert not done.is_error, done.content

asyncio.run(main())
'''

# The same repair and diagnosis without MCP: kubectl with $KUBECONFIG, the diagnosis in $ITBENCH_OUTPUT.
WITHOUT_MCP = f'''
import json, os, subprocess
subprocess.run(["kubectl", *{FIX!r}], check=True, capture_output=True)
json.dump({DIAGNOSIS!r}, open(os.environ["ITBENCH_OUTPUT"], "w"))
'''

# Shows its secret everywhere it can, then fails: the evidence of a failed agent quotes its output.
LEAKY = r'''
import asyncio, hashlib, json, os, sys
from mcp import Client

secret = os.environ["MODEL_API_KEY"]
print("my key is", secret)
print("key:", secret, file=sys.stderr)
with open(os.environ["ITBENCH_TRAJECTORY"], "a") as fh:
    fh.write(json.dumps({"thought": "sha256 " + hashlib.sha256(secret.encode()).hexdigest(),
                         "action": "echo " + secret, "observation": secret}) + "\n")

async def main():
    async with Client(os.environ["ITBENCH_MCP_URL"]) as mcp:
        await mcp.call_tool("kubectl", {"args": ["-n", "astronomy-shop", "get", "configmap", secret]})

asyncio.run(main())
json.dump({"entities": [], "notes": secret}, open(os.environ["ITBENCH_OUTPUT"], "w"))
sys.exit(3)
'''


@pytest.fixture
def shop(pytester):
    shutil.copy(SCENARIOS / SCENARIO, pytester.path / SCENARIO)
    for name, text in (("without_mcp.py", WITHOUT_MCP), ("leaky.py", LEAKY)):
        (pytester.path / name).write_text(text)
    return pytester


@pytest.fixture
def cli_agents(shop, monkeypatch):
    """docs/agents.md's Claude Code and Codex scripts in the project, and the stand-in on PATH as both CLIs."""
    bin_dir = shop.path / "bin"
    bin_dir.mkdir()
    for cli in ("claude", "codex"):
        (bin_dir / cli).write_text(f"#!{sys.executable}\n{STAND_IN}")
        (bin_dir / cli).chmod(0o755)
        script = shop.path / f"{cli}_agent.sh"
        script.write_text(code_block("bash", f"# {cli}_agent.sh:"))
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return shop


def code_block(language: str, containing: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.DOTALL)
    [block] = [b for b in blocks if containing in b]
    return block


def trial(shop, agent: str, *args: str, exec_prefix: str = f"{sys.executable} "):
    result = shop.runpytest("-p", "no:cacheprovider", f"--itbench-agent=exec:{exec_prefix}{agent}",
                            "--itbench-noise=off", "--itbench-results=results.jsonl", *args, SCENARIO)
    [record] = load(shop.path / "results.jsonl")
    (shop.path / "results.jsonl").rename(shop.path / f"results-{len(list(shop.path.glob('results-*')))}.jsonl")
    return result, record


def attachment(record, name: str):
    [content] = [a.content for a in record.attachments if a.name == name]
    return content


@pytest.mark.end_to_end
def test_the_documented_claude_code_and_codex_commands_solve_through_mcp_alone_as_through_files(cli_agents):
    shop = cli_agents
    scores = {}
    for client in ("claude", "codex"):
        result, record = trial(shop, f"./{client}_agent.sh", exec_prefix="")
        result.assert_outcomes(passed=1)
        tools = [s["tool"] for s in attachment(record, "trajectory")]
        assert tools == ["kubectl", "kubectl", "submit_diagnosis"], (client, tools)
        assert attachment(record, "task")["urls"]["mcp"].startswith("http://127.0.0.1:")
        assert attachment(record, "submission")["diagnosis"]["entities"][0]["name"] == f"{NS}/Service/cart"
        scores[client] = ({c.name: (c.passed, c.value) for c in record.checks}, record.figures["ntam"])
    result, record = trial(shop, "without_mcp.py")
    result.assert_outcomes(passed=1)
    scores["files"] = ({c.name: (c.passed, c.value) for c in record.checks}, record.figures["ntam"])
    assert scores["claude"] == scores["codex"] == scores["files"]


@pytest.mark.end_to_end
def test_a_variable_passed_to_the_agent_reaches_it_and_no_output_holds_its_value(shop, monkeypatch):
    secret = "sk-test-" + hashlib.sha256(b"planted").hexdigest()[:24]
    monkeypatch.setenv("MODEL_API_KEY", secret)
    result, record = trial(shop, "leaky.py", "--itbench-agent-env=MODEL_API_KEY",
                           "--junitxml=junit.xml", "--alluredir=allure")
    result.assert_outcomes(failed=1)
    steps = attachment(record, "trajectory")
    digest = hashlib.sha256(secret.encode()).hexdigest()
    assert any(digest in s["thought"] for s in steps), "the agent did not get the variable"
    assert any("[MODEL_API_KEY redacted]" in s["observation"] for s in steps)
    assert any(s["tool"] == "kubectl" and "redacted" in s["action"] for s in steps)  # what came through MCP
    # The session's outputs, and its trials' directories (pytester gives the inner session a basetemp beside
    # its own directory): the agent's logs, trajectory and output are there.
    written = [p for root in (shop.path, shop.path.parent / "basetemp") for p in root.rglob("*") if p.is_file()]
    assert {"results-0.jsonl", "junit.xml", "stdout.log", "stderr.log", "trajectory.jsonl"} <= {p.name for p in written}
    assert any(p.parent.name == "allure" for p in written)
    leaks = [str(p) for p in written if secret.encode() in p.read_bytes()]
    leaks += ["terminal output"] if secret in result.stdout.str() + result.stderr.str() else []
    assert not leaks, f"the secret's value was written to: {leaks}"


@pytest.mark.parametrize("given, problem", [
    ("NOT_SET_ANYWHERE_42", "NOT_SET_ANYWHERE_42 is not set in pytest's environment"),
    ("KUBECONFIG", "KUBECONFIG is set by the harness for each trial"),
    ("2FAST", "'2FAST' is not an environment variable name"),
])
def test_a_variable_that_cannot_be_passed_stops_the_session_naming_it(shop, given, problem):
    result = shop.runpytest("-p", "no:cacheprovider", f"--itbench-agent=exec:{sys.executable} without_mcp.py",
                            f"--itbench-agent-env={given}", SCENARIO)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert problem in result.stderr.str()
