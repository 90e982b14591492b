"""The trajectory analysis against hand-built trajectories: every count and the cost worked out by hand."""

from __future__ import annotations

import pytest

from pytest_itbench.agents.base import Step, Trajectory
from pytest_itbench.report.model_prices import ModelPrice, PriceTable
from pytest_itbench.report.trajectory_analysis import analyse, failure_of, is_unknown_tool, tool_of

PROMQL = 'PromQL ALERTS{alertstate="firing"}'
PODS = "kubectl get pods -n shop"
PRICES = PriceTable({"gpt-4o": ModelPrice("gpt-4o", 2.50, 10.00, "2026-11-30"),
                     "claude-sonnet-4-5": ModelPrice("claude-sonnet-4-5", 3.00, 15.00, "2026-11-30")})


def worked_example() -> Trajectory:
    """Ten steps; the comments say what each one counts for."""
    t = Trajectory(model="gpt-4o")
    t.steps = [
        Step(thought="which alerts fire?", action=PROMQL, tokens_in=100, tokens_out=20),  # prometheus, inferred
        Step(action=PODS, tokens_in=200, tokens_out=30),  # kubectl, inferred
        Step(action=PODS, tool="kubectl", tokens_in=300, tokens_out=40, model="claude-sonnet-4-5"),  # repeat 1
        Step(thought="the pods look fine; think again", tokens_in=50, tokens_out=10),  # no tool: a thought
        Step(action=PODS + " ", observation="exit 1: Error from server (Forbidden)"),  # repeat 2; failed (exit)
        Step(action="get_logs cart", tool="get_logs", error="unknown tool 'get_logs': the tools are kubectl"),
        Step(action="kubectl rollout undo deployment/cart", tool="kubectl", error="exit 1: forbidden"),  # failed
        Step(action=PROMQL, tool="prometheus"),  # repeat 3 (of step 1, not consecutive)
        Step(action="curl http://frontend:8080/"),  # other
        Step(action="kubectl describe pod cart-0", observation="Name: cart-0\nLast State: Terminated\n"
                                                               "Exit Code: 137"),  # a crashed pod, not a failed command
    ]
    return t


def test_the_worked_example_counts():
    found = analyse(worked_example(), PRICES)
    assert found.steps == 10
    assert found.tool_calls == 9  # all but the thought
    assert found.calls_by_tool == {"kubectl": 5, "prometheus": 2, "get_logs": 1, "other": 1}
    assert list(found.calls_by_tool) == ["kubectl", "prometheus", "get_logs", "other"]  # most called first
    # actions in order: P K K K G R P C D -> K three times, P twice: (3 - 1) + (2 - 1) repeats,
    # and K K K is the longest run (the thought between the second and third K does not break it)
    assert (found.repeated_actions, found.longest_repeat) == (3, 3)
    assert found.repeated == [{"action": PODS, "times": 3}, {"action": PROMQL, "times": 2}]
    assert (found.unknown_tools, found.unknown_tool_names) == (1, ["get_logs"])
    assert found.failed_commands == 3  # steps 5 (exit 1 observed), 6 (unknown tool), 7 (error)
    assert [(f["step"], f["tool"]) for f in found.failures] == [(5, "kubectl"), (6, "get_logs"), (7, "kubectl")]
    assert found.failures[0]["error"] == "exit 1: Error from server (Forbidden)"
    assert (found.tokens_in, found.tokens_out) == (650, 100)


def test_the_worked_example_cost():
    found = analyse(worked_example(), PRICES)
    # gpt-4o (the trajectory's model) for steps 1, 2, 4: 350 in, 60 out -> 350 * 2.50 + 60 * 10.00 = 1475
    # claude-sonnet-4-5 (step 3's own): 300 in, 40 out -> 300 * 3.00 + 40 * 15.00 = 1500
    # (1475 + 1500) / 1e6 = 0.002975 dollars
    assert found.cost_usd == 0.002975
    assert found.models == ["gpt-4o", "claude-sonnet-4-5"] and found.unpriced == []
    assert found.prices["gpt-4o"] == {"input": 2.5, "output": 10.0, "read_on": "2026-11-30", "source": ""}


def test_figures_are_floats_under_their_names():
    assert analyse(worked_example(), PRICES).figures() == {
        "steps": 10.0, "tokens": 750.0, "tokens_in": 650.0, "tokens_out": 100.0, "tool_calls": 9.0,
        "repeated_actions": 3.0, "longest_repeat": 3.0, "unknown_tools": 1.0, "failed_commands": 3.0,
        "cost_usd": 0.002975}


def test_an_empty_trajectory():
    found = analyse(Trajectory(), PRICES)
    assert found.figures() == {
        "steps": 0.0, "tokens": 0.0, "tokens_in": 0.0, "tokens_out": 0.0, "tool_calls": 0.0,
        "repeated_actions": 0.0, "longest_repeat": 0.0, "unknown_tools": 0.0, "failed_commands": 0.0,
        "cost_usd": None}


def test_distinct_actions_are_runs_of_one():
    t = Trajectory(steps=[Step(action="a"), Step(action="b"), Step(action="a")])
    found = analyse(t)
    assert (found.repeated_actions, found.longest_repeat) == (1, 1)


def test_a_loop_is_the_longest_run_of_identical_actions():
    actions = ["a", "b", "b", "c", "c", "c", "c", "b"]
    found = analyse(Trajectory(steps=[Step(action=a) for a in actions]))
    # b three times (2 repeats), c four times (3 repeats); c c c c is the longest run
    assert (found.repeated_actions, found.longest_repeat) == (5, 4)


@pytest.mark.parametrize("tokens_model, trajectory_model, unpriced", [
    ("", "", ["(no model named)"]),  # tokens, but no model to price them
    ("", "my-private-model", ["my-private-model"]),  # a model the table lacks
    ("mystery", "gpt-4o", ["mystery"]),  # one step's model lacks a price: no partial sum
])
def test_tokens_that_cannot_be_priced_leave_the_cost_unmeasured(tokens_model, trajectory_model, unpriced):
    t = Trajectory(model=trajectory_model, steps=[Step(action="a", tokens_in=1000, tokens_out=10),
                                                  Step(action="b", tokens_in=10, model=tokens_model)])
    t.steps[0].model = "gpt-4o" if tokens_model == "mystery" else ""
    found = analyse(t, PRICES)
    assert found.cost_usd is None and found.unpriced == unpriced


def test_no_tokens_no_cost_even_with_a_priced_model():
    found = analyse(Trajectory(model="gpt-4o", steps=[Step(action="a")]), PRICES)
    assert found.cost_usd is None and found.unpriced == [] and found.models == ["gpt-4o"]


def test_no_price_table_prices_nothing():
    found = analyse(Trajectory(model="gpt-4o", steps=[Step(action="a", tokens_in=5)]), None)
    assert found.cost_usd is None and found.unpriced == ["gpt-4o"]


@pytest.mark.parametrize("step, tool", [
    (Step(action="kubectl get pods"), "kubectl"),
    (Step(action="/usr/local/bin/kubectl get pods"), "kubectl"),
    (Step(action="PromQL up"), "prometheus"),
    (Step(action="query rate(http_requests_total[5m])"), "prometheus"),
    (Step(action="helm list"), "other"),
    (Step(action="kubectl get pods", tool="shell"), "shell"),  # what the agent recorded wins
    (Step(thought="only thinking"), ""),
    (Step(tool="submit"), "submit"),
])
def test_tool_of(step, tool):
    assert tool_of(step) == tool


@pytest.mark.parametrize("step, failed", [
    (Step(action="kubectl get pods", observation="exit 1: error: forbidden"), "exit 1: error: forbidden"),
    (Step(action="kubectl get pods", observation="  Exited with code 2\nmore"), "Exited with code 2"),
    (Step(action="kubectl get pods", observation="exit status 127: kubectl: not found"),
     "exit status 127: kubectl: not found"),
    (Step(action="kubectl get pods", observation="exit 0: all good"), ""),
    (Step(action="kubectl describe pod x", observation="State: Terminated\nExit Code: 1"), ""),  # not at the start
    (Step(action="PromQL up", observation="exit 1: nope"), ""),  # only a kubectl step's exit status counts
    (Step(action="PromQL up", error="prometheus answered 400 Bad Request"), "prometheus answered 400 Bad Request"),
    (Step(action="whatever", error="  "), ""),  # blank is no error
])
def test_failure_of(step, failed):
    assert failure_of(step) == failed


@pytest.mark.parametrize("error, unknown", [
    ("unknown tool 'x'", True), ("Unknown tool: x", True), ("  UNKNOWN TOOL x", True),
    ("kubectl: unknown command", False), ("there is no tool 'x'", False), ("", False)])
def test_the_unknown_tool_convention(error, unknown):
    assert is_unknown_tool(Step(action="x", error=error)) is unknown


def test_long_texts_are_cut_in_the_lists():
    long = "kubectl get pods " + "x" * 1000
    found = analyse(Trajectory(steps=[Step(action=long), Step(action=long, error="e" * 1000)]))
    assert len(found.repeated[0]["action"]) == 303 and found.repeated[0]["action"].endswith("...")
    assert len(found.failures[0]["error"]) == 303
