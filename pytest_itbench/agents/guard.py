"""Running a Python agent against its deadline.

The agent's ``run(task, trajectory)`` goes to a worker thread; the caller waits until the deadline.
A thread cannot be killed, so at the deadline ``task.cancelled`` is set and the agent gets ``grace``
seconds to notice and return; the trial is reported as timed out either way, and an agent still
running after that is named as such. What the agent returns must be a Submission, or a dict that
``Submission.from_dict`` accepts. An agent that raises an AgentFailure itself (the openai agent, when its
endpoint is gone) fails with that failure's own words; anything else it raises is a crash.
"""

from __future__ import annotations

import threading
import traceback
from typing import Any

from .base import Agent, Submission, Task, Trajectory
from .errors import DOCS, AgentCrashed, AgentFailure, AgentOutputInvalid, AgentTimedOut


class GuardedAgent:
    """An Agent whose ``run`` keeps the deadline and turns every way of missing into an AgentFailure."""

    def __init__(self, agent: Agent, name: str | None = None, *, grace: float = 5.0):
        self.agent = agent
        self.name = name or getattr(agent, "name", None) or type(agent).__name__
        self.grace = grace
        self._own: Trajectory | None = None

    def __repr__(self) -> str:
        return f"GuardedAgent({self.agent!r})"

    def recorded_so_far(self) -> Trajectory:
        """A copy of what the agent has recorded until now, while it runs (the trial's in-flight journal reads
        it; ``run`` hands the steps to the trial's trajectory only once the agent returned)."""
        own = self._own or Trajectory()
        return Trajectory(steps=list(own.steps), problems=list(own.problems), model=own.model)

    def run(self, task: Task, trajectory: Trajectory) -> Submission:
        # The agent records into a trajectory of its own: one that overruns may go on appending,
        # and the trial's record must stop at the deadline.
        own = self._own = Trajectory()
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["value"] = self.agent.run(task, own)
            except BaseException as exc:  # SystemExit from an agent is its failure too, not the harness'
                outcome["error"] = exc
                outcome["traceback"] = traceback.format_exc()

        thread = threading.Thread(target=work, name=f"itbench-agent-{self.name}", daemon=True)
        thread.start()
        overran = False
        try:
            thread.join(task.remaining())
            if thread.is_alive():
                overran = True
                task.cancelled.set()
                thread.join(self.grace)
        except BaseException:  # Ctrl-C while waiting: ask the agent to stop, then let it propagate
            task.cancelled.set()
            raise
        finally:
            trajectory.steps.extend(list(own.steps))
            trajectory.problems.extend(list(own.problems))
            trajectory.model = trajectory.model or own.model  # the model the agent named, to price its tokens
        if overran:
            still_running = thread.is_alive()
            if still_running:
                state = (f"and was still running {self.grace:g} s after task.cancelled was set (a thread cannot be "
                         f"killed: it goes on in the background)")
            else:
                state = "and returned only after task.cancelled was set"
            raise AgentTimedOut(f"{self.name} did not return within its time limit ({task.time_limit:g} s) {state}",
                                time_limit=task.time_limit, still_running=still_running,
                                advice="A Python agent should watch task.remaining() and check task.cancelled "
                                       f"between steps, returning its best submission (see {DOCS}).")
        if "error" in outcome:
            error = outcome["error"]
            if isinstance(error, AgentFailure):  # the agent's own verdict on its failure, already worded for the report
                raise error
            raise AgentCrashed(f"{self.name} raised {type(error).__name__}: {error}",
                               evidence={"traceback": outcome["traceback"]})
        return as_submission(self.name, outcome.get("value"))


def as_submission(name: str, value: Any) -> Submission:
    """Accept a Submission or a dict in the submission shape; anything else is invalid output."""
    if isinstance(value, Submission):
        return value
    advice = f"run() returns a Submission (Submission() to submit nothing); see {DOCS}."
    if isinstance(value, dict):
        try:
            return Submission.from_dict(value)
        except ValueError as exc:
            raise AgentOutputInvalid(f"{name} returned a dict that is not a submission: {exc}",
                                     evidence={"returned": repr(value)[:4000]}, advice=advice) from None
    raise AgentOutputInvalid(f"{name} returned {type(value).__name__}, not a Submission",
                             evidence={"returned": repr(value)[:4000]}, advice=advice)
