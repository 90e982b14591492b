"""The MCP server of one trial: offered to the agent with its task, and what came through it folded back.

The harness serves it to every agent, whatever its kind: ``task.urls["mcp"]`` (``ITBENCH_MCP_URL`` for an
exec agent) and the client configurations in the workdir. After the agent's turn (also one cut by Ctrl-C) its
calls join the trajectory in time order (once: a call the agent recorded itself is not added again), and a
hand-in made through MCP is the trial's submission: it replaces what the
agent returned or wrote (noted when both were given), and an exec agent that handed in only through MCP
needs no ``$ITBENCH_OUTPUT``. A crash or a timeout stays what it was.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Collection, Iterator

from ..agents.base import Step, Submission, Task, Trajectory
from ..agents.errors import AgentFailure, AgentOutputMissing
from . import client_configs
from .http import Served, serve

SLACK = 0.05  # seconds: an agent's own clock readings around its call, taken in another process or thread


@dataclasses.dataclass
class Offer:
    task: Task  # the agent's task, with the server's URL
    served: Served
    merged: bool = False

    def merge_calls(self, trajectory: Trajectory) -> None:
        """The server's calls into the trajectory, those the agent recorded itself once; once per trial."""
        if self.merged:
            return
        self.merged = True
        trajectory.steps[:] = _joined(trajectory.steps, self.served.trajectory.steps)

    def merged_copy(self, trajectory: Trajectory) -> Trajectory:
        """``trajectory`` with the calls served so far, leaving both as they are: a look during the agent's turn
        (the in-flight journal). Once merged, the trajectory holds the calls already."""
        if self.merged:
            return trajectory
        return dataclasses.replace(trajectory, steps=_joined(trajectory.steps, list(self.served.trajectory.steps)))

    def settle(self, submission: Submission | None, failure: AgentFailure | None, trajectory: Trajectory
               ) -> tuple[Submission | None, AgentFailure | None]:
        """The trial's submission and failure once the MCP hand-in, if any, is taken into account."""
        self.merge_calls(trajectory)
        handin = self.served.handin
        if handin.diagnosis is None and not handin.artifacts:
            return submission, failure
        if failure is not None and not isinstance(failure, AgentOutputMissing):
            return submission, failure
        if submission is not None and (submission.diagnosis is not None or submission.artifacts):
            trajectory.problems.append("the agent handed in both through MCP and as its own output; the MCP "
                                       "hand-in was scored")
        return handin.submission(notes=submission.notes if submission is not None else ""), None


def _joined(recorded: list[Step], calls: list[Step]) -> list[Step]:
    return sorted(recorded + _unrecorded(calls, recorded), key=lambda s: s.started)


def _unrecorded(calls: list[Step], recorded: list[Step]) -> list[Step]:
    """The server's steps the agent did not record itself: a call lying within a step the agent recorded of the
    same tool is that step (the agent's has its thought and tokens), so it is not counted twice."""
    free = [step for step in recorded if step.tool]
    left = []
    for call in calls:
        same = next((s for s in free if s.tool == call.tool and s.started <= call.started + SLACK
                     and call.ended <= s.ended + SLACK), None)
        if same is None:
            left.append(call)
        else:
            free.remove(same)
    return left


@contextlib.contextmanager
def offered(task: Task, *, without: Collection[str] = ()) -> Iterator[Offer]:
    with serve(task, without=without) as served:
        with_url = dataclasses.replace(task, urls={**task.urls, "mcp": served.url})
        client_configs.write(task.workdir, served.url)
        yield Offer(with_url, served)
