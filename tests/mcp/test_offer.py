"""An Offer's calls joining a trajectory: for good once the turn ends, or as a copy during it (the journal's look)."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_itbench.agents.base import Step, Task, Trajectory
from pytest_itbench.mcp.trial import Offer


def step(tool: str, started: float, ended: float, thought: str = "") -> Step:
    return Step(thought, f"{tool}()", "", 0, 0, started, ended, tool)


def offer_with(calls: list[Step]) -> Offer:
    task = Task(scenario_id="s", domain="sre", text="t", kubeconfig="", urls={}, workdir="", deadline=0,
                time_limit=1)
    return Offer(task, SimpleNamespace(trajectory=Trajectory(steps=calls)))


def test_a_copy_during_the_turn_holds_the_calls_and_changes_nothing():
    own = step("kubectl", 1.0, 2.0, thought="look at the pods")
    served = [step("kubectl", 1.01, 1.99), step("prometheus_query", 3.0, 3.5)]  # the first is the agent's own step
    offer = offer_with(served)
    trajectory = Trajectory(steps=[own], model="gpt-4o")
    copy = offer.merged_copy(trajectory)
    assert [s.tool for s in copy.steps] == ["kubectl", "prometheus_query"] and copy.steps[0] is own
    assert copy.model == "gpt-4o"
    assert trajectory.steps == [own] and not offer.merged  # nothing merged for good
    offer.served.trajectory.steps.append(step("jaeger_traces", 4.0, 4.1))  # a later look sees a later call
    assert [s.tool for s in offer.merged_copy(trajectory).steps] == ["kubectl", "prometheus_query", "jaeger_traces"]
    offer.merge_calls(trajectory)
    assert [s.tool for s in trajectory.steps] == ["kubectl", "prometheus_query", "jaeger_traces"]
    assert offer.merged_copy(trajectory) is trajectory  # merged: the trajectory holds them already
