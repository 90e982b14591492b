"""The trajectory analysis through the plugin: an ``exec:`` agent's recorded steps become figures in the JSONL
file, JUnit properties and the leaderboard, priced with a price file given on the command line."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

# Four steps, written as an exec: agent writes them (one JSON object a line to $ITBENCH_TRAJECTORY):
# the same kubectl listing twice, a tool that does not exist, and a refused delete recorded as an exit status.
AGENT = """\
#!/bin/sh
step() { printf '%s\\n' "$1" >> "$ITBENCH_TRAJECTORY"; }
step '{"action": "kubectl get pods", "tool": "kubectl", "tokens_in": 1000, "tokens_out": 200, "model": "bench-model"}'
step '{"action": "kubectl get pods", "tool": "kubectl", "tokens_in": 1000, "tokens_out": 200, "model": "bench-model"}'
step '{"action": "fetch_logs cart", "tool": "fetch_logs", "error": "unknown tool fetch_logs"}'
step '{"action": "kubectl delete pod cart-0", "observation": "exit 1: Error from server (Forbidden)"}'
printf '{"notes": "42"}' > "$ITBENCH_OUTPUT"
"""

PRICES = """\
read_on: 2026-11-30
models:
  bench-model: {input: 1.50, output: 6.00}
"""


@pytest.fixture
def session(bench):
    bench.scenario("budget")
    bench.program("agent.sh", AGENT)
    bench.write("prices.yaml", PRICES)
    result = bench.run("--itbench-agent=exec:./agent.sh", "--itbench-prices=prices.yaml",
                       "--itbench-results=results.jsonl", "--junitxml=junit.xml", ".")
    assert result.ret == 0, result.stdout.str()
    return bench, result


def test_the_figures_reach_the_jsonl(session):
    bench, _ = session
    [record] = [json.loads(line) for line in (bench.path / "results.jsonl").read_text().splitlines()]
    # 2000 tokens in at $1.50/M and 400 out at $6.00/M: 0.003 + 0.0024
    assert record["figures"] == {
        "steps": 4.0, "tokens": 2400.0, "tokens_in": 2000.0, "tokens_out": 400.0, "tool_calls": 4.0,
        "repeated_actions": 1.0, "longest_repeat": 2.0, "unknown_tools": 1.0, "failed_commands": 2.0,
        "cost_usd": 0.0054}
    analysis = next(a["content"] for a in record["attachments"] if a["name"] == "trajectory analysis")
    assert analysis["calls_by_tool"] == {"kubectl": 3, "fetch_logs": 1}  # the last kubectl inferred
    assert analysis["models"] == ["bench-model"]
    assert analysis["prices"]["bench-model"] == {"input": 1.5, "output": 6.0, "read_on": "2026-11-30",
                                                 "source": str(bench.path / "prices.yaml")}
    trajectory = next(a["content"] for a in record["attachments"] if a["name"] == "trajectory")
    assert [s["tool"] for s in trajectory] == ["kubectl", "kubectl", "fetch_logs", ""]


def test_the_figures_reach_junit_and_the_leaderboard(session):
    bench, result = session
    [case] = ET.parse(bench.path / "junit.xml").getroot().iter("testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert (props["itbench.failed_commands"], props["itbench.cost_usd"], props["itbench.calls.kubectl"]) == (
        "2.0", "0.0054", "3")
    lines = result.stdout.lines
    header = next(line for line in lines if line.startswith("group")).split()
    row = next(line for line in lines if line.startswith("all ")).split()
    assert {k: dict(zip(header, row))[k] for k in ("calls", "repeats", "cmd-fails", "cost")} == {
        "calls": "4.0", "repeats": "1.0", "cmd-fails": "2.0", "cost": "$0.0054"}
