"""Python agents run in a worker thread against their deadline; every way of missing is an AgentFailure."""

from __future__ import annotations

import threading

import pytest

from pytest_itbench.agents import (AgentCrashed, AgentOutputInvalid, AgentTimedOut, Submission, Task, Trajectory)
from pytest_itbench.agents.guard import GuardedAgent


class Diagnoses:
    name = "diagnoses"

    def run(self, task: Task, trajectory: Trajectory):
        trajectory.add(thought="the cart is down", action="kubectl get deploy cart", observation="0/0",
                       tokens_in=12, tokens_out=3)
        return {"entities": [{"name": "shop/Deployment/cart", "contributing_factor": True}]}


def test_an_agent_that_finishes_hands_in_its_submission_and_steps(make_task):
    trajectory = Trajectory()
    submission = GuardedAgent(Diagnoses()).run(make_task(), trajectory)
    assert submission.diagnosis == {"entities": [{"name": "shop/Deployment/cart", "contributing_factor": True}]}
    assert [s.action for s in trajectory.steps] == ["kubectl get deploy cart"] and trajectory.tokens == 15


class Raises:
    name = "raises"

    def run(self, task, trajectory):
        trajectory.add(action="first look")
        return self.think()

    def think(self):
        raise KeyError("prometheus_url")


def test_an_agent_that_raises_fails_with_its_traceback_and_keeps_its_steps(make_task):
    trajectory = Trajectory()
    with pytest.raises(AgentCrashed) as failure:
        GuardedAgent(Raises()).run(make_task(), trajectory)
    assert str(failure.value).startswith("raises raised KeyError: 'prometheus_url'")
    assert "in think" in failure.value.evidence["traceback"]
    assert [s.action for s in trajectory.steps] == ["first look"]


class Returns:
    def __init__(self, value):
        self.value = value

    def run(self, task, trajectory):
        return self.value


@pytest.mark.parametrize("value,expected", [
    (42, "returned int, not a Submission"),
    (None, "returned NoneType, not a Submission"),
    ("shop/Deployment/cart", "returned str, not a Submission"),
    ({"entities": [{"nom": "cart"}]}, "returned a dict that is not a submission: diagnosis.entities must be a list"),
    ({"root_cause": "cart"}, "unknown submission fields: root_cause"),
])
def test_an_agent_that_returns_garbage_fails_saying_what_it_returned(make_task, value, expected):
    with pytest.raises(AgentOutputInvalid) as failure:
        GuardedAgent(Returns(value)).run(make_task(), Trajectory())
    assert expected in str(failure.value)
    assert "Submission() to submit nothing" in str(failure.value)
    assert failure.value.evidence["returned"] == repr(value)


def test_a_submission_or_an_empty_dict_is_accepted(make_task):
    assert GuardedAgent(Returns(Submission(notes="n"))).run(make_task(), Trajectory()).notes == "n"
    assert GuardedAgent(Returns({})).run(make_task(), Trajectory()) == Submission()


class Cooperative:
    """Works in steps until told to stop."""

    name = "cooperative"

    def run(self, task, trajectory):
        while not task.cancelled.wait(0.05):
            trajectory.add(action="poll")
        return Submission()


def test_an_agent_that_overruns_is_timed_out_and_its_cancel_event_set(make_task):
    task = make_task(time_limit=1)
    trajectory = Trajectory()
    with pytest.raises(AgentTimedOut) as failure:
        GuardedAgent(Cooperative(), grace=5).run(task, trajectory)
    assert task.cancelled.is_set()
    assert not failure.value.still_running
    assert "did not return within its time limit (1 s) and returned only after task.cancelled" in str(failure.value)
    assert trajectory.steps and all(s.action == "poll" for s in trajectory.steps)


class Stubborn:
    """Ignores task.cancelled; keeps recording after the deadline until the test lets it go."""

    name = "stubborn"

    def __init__(self):
        self.release = threading.Event()
        self.done = threading.Event()

    def run(self, task, trajectory):
        trajectory.add(action="before the deadline")
        self.release.wait(60)
        trajectory.add(action="after the deadline")
        self.done.set()
        return Submission()


def test_an_agent_that_ignores_cancellation_is_reported_as_still_running(make_task):
    agent = Stubborn()
    trajectory = Trajectory()
    try:
        with pytest.raises(AgentTimedOut) as failure:
            GuardedAgent(agent, grace=0.2).run(make_task(time_limit=1), trajectory)
        assert failure.value.still_running
        assert "still running 0.2 s after task.cancelled was set" in str(failure.value)
    finally:
        agent.release.set()
    assert agent.done.wait(10)
    assert [s.action for s in trajectory.steps] == ["before the deadline"]
