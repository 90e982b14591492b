"""``openai``: the reference LLM agent. A tool-calling loop over ITBench's POMDP.

Each turn the model gets the history (its system prompt, the task, its earlier thoughts and actions and
what they showed) and answers with a thought (its text) and actions (tool calls); each call runs and its
observation goes back into the history. The loop ends when the model hands in, or at the step limit, the
token budget, the deadline (less a margin to hand in) or ``task.cancelled``; then it hands in what it
has: the diagnosis the model last recorded (draft or final), or the CISO files it named.

Every tool call is one trajectory step (thought, action, observation, tool, error); a turn's tokens go
on its first step, so the trajectory's total is the endpoint's count. A turn without a tool call is a
step too. The API key is never recorded.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...tools import DeadlineReached, ToolError
from ...tools.functions import diagnosis
from ...tools.functions.handin import Handin
from ...tools.functions.toolbox import ToolBox
from ..base import Submission, Task, Trajectory
from . import prompts
from .budget import TokenBudget, approx_message_tokens, approx_tokens, cut_to_tokens
from .endpoint import ModelEndpoint, ModelTurn
from .retries import Backoff, DeadlineNear, call_with_retries
from .settings import OpenAISettings, from_values

if TYPE_CHECKING:
    from ...mcp.remote import RemoteToolBox

# Turns in a row without a tool call after which the model is taken to be done talking.
MAX_IDLE_TURNS = 3


def handin_margin(time_limit: float) -> float:
    """Seconds kept free before the deadline to hand in: 5 % of the limit, between 2 and 10 seconds."""
    return max(2.0, min(10.0, 0.05 * time_limit))


@dataclass
class Run:
    """The state of one trial's loop."""

    task: Task
    trajectory: Trajectory
    settings: OpenAISettings
    handin: Handin = field(default_factory=Handin)
    turns: int = 0
    idle_turns: int = 0
    stopped: str = ""  # why the loop ended
    retried: list[str] = field(default_factory=list)  # transient endpoint errors met and overcome

    def __post_init__(self) -> None:
        self.budget = TokenBudget(self.settings.max_tokens)
        self.margin = handin_margin(self.task.time_limit)

    def time_left(self) -> float:
        """Seconds the loop may still spend (the deadline less the margin to hand in)."""
        return self.task.remaining() - self.margin


class OpenAIAgent:
    """An agent asking an OpenAI-compatible chat-completions endpoint what to do next."""

    name = "openai"

    def __init__(self, settings: OpenAISettings | None = None, *, kubectl: str | None = None):
        self.settings = settings if settings is not None else from_values()
        self.kubectl_binary = kubectl
        self._check_package()

    def __repr__(self) -> str:  # the settings' repr leaves the key out
        return f"OpenAIAgent({self.settings!r})"

    @staticmethod
    def _check_package() -> None:
        from .endpoint import import_openai
        import_openai()  # raises MissingPackage with the install command

    def run(self, task: Task, trajectory: Trajectory) -> Submission:
        run = Run(task, trajectory, self.settings)
        trajectory.model = self.settings.model  # the reports price the trajectory's tokens by it
        tools = self._tools(run)
        endpoint = ModelEndpoint(self.settings)
        try:
            self._loop(run, tools, endpoint)
        finally:
            endpoint.close()
            if not isinstance(tools, ToolBox):
                tools.close()
        return run.handin.submission(self._notes(run))

    def _tools(self, run: Run) -> ToolBox | RemoteToolBox:
        if self.settings.tools != "mcp":
            return ToolBox(run.task, run.handin, time_left=run.time_left, kubectl_binary=self.kubectl_binary)
        url = run.task.urls.get("mcp")
        if not url:
            raise ToolError("--itbench-openai-tools=mcp: the task offers no MCP server (task.urls has no 'mcp'); "
                            "the harness serves one in every trial")
        from ...mcp.remote import RemoteToolBox  # the MCP client: loaded only by an agent that uses it

        return RemoteToolBox(run.task, run.handin, url)

    # ---- the loop ------------------------------------------------------------------------------------------------
    def _loop(self, run: Run, tools: ToolBox, endpoint: ModelEndpoint) -> None:
        settings = self.settings
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": prompts.system_prompt(run.task.domain)},
            {"role": "user", "content": prompts.task_message(run.task, max_steps=settings.max_steps)},
        ]
        specs = tools.openai_tools()
        rng = random.Random(settings.seed if settings.seed is not None else 0)
        backoff = Backoff(settings.max_retries, settings.retry_delay)
        while True:
            run.stopped = self._stop_reason(run, messages, specs)
            if run.stopped:
                return
            started = time.time()
            try:
                turn, retried = call_with_retries(
                    lambda timeout: endpoint.complete(messages, specs, min(timeout, settings.request_timeout)),
                    classify=endpoint.classify, backoff=backoff, rng=rng, time_left=run.time_left,
                    cancelled=run.task.cancelled, endpoint=settings.endpoint, model=settings.model,
                    redact=settings.redact)
            except DeadlineNear:
                run.stopped = "the deadline"
                return
            run.retried += retried
            run.turns += 1
            tokens_in, tokens_out = self._count(run, messages, turn)
            messages.append(turn.as_message())
            if turn.tool_calls:
                run.idle_turns = 0
                self._act(run, tools, messages, turn, tokens_in, tokens_out, started)
            else:
                self._idle_turn(run, tools, messages, turn, tokens_in, tokens_out, started)
            if run.stopped:
                return

    def _act(self, run: Run, tools: ToolBox, messages: list[dict[str, Any]], turn: ModelTurn, tokens_in: int,
             tokens_out: int, started: float) -> None:
        """Run the turn's tool calls, one trajectory step and one tool message each; the turn's thought and
        tokens go on its first step."""
        for index, call in enumerate(turn.tool_calls):
            first = index == 0
            step = {"thought": turn.content if first else "", "tokens_in": tokens_in if first else 0,
                    "tokens_out": tokens_out if first else 0, "started": started if first else time.time(),
                    "tool": call.name}
            try:
                result = tools.call(call.name, call.arguments)
            except DeadlineReached as exc:  # the tool found the deadline passed: record it and hand in
                run.trajectory.add(action=f"{call.name} {call.arguments}", observation=str(exc), error=str(exc), **step)
                run.stopped = "the deadline"
                return
            observation = cut_to_tokens(result.observation, self.settings.observation_tokens)
            run.trajectory.add(action=result.action, observation=observation, error=result.error, **step)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": observation})
        if run.handin.final:
            run.stopped = "handed in"

    def _stop_reason(self, run: Run, messages: list[dict[str, Any]], specs: list[dict[str, Any]]) -> str:
        if run.task.cancelled.is_set():
            return "the task was cancelled"
        if run.time_left() <= 0:
            return "the deadline"
        if run.turns >= self.settings.max_steps:
            return f"the step limit ({self.settings.max_steps} turns)"
        if run.budget.exhausted() or run.budget.would_overrun(approx_message_tokens(messages, specs)):
            return f"the token budget ({self.settings.max_tokens} tokens)"
        return ""

    def _count(self, run: Run, messages: list[dict[str, Any]], turn: ModelTurn) -> tuple[int, int]:
        """The turn's prompt and completion tokens: the endpoint's usage, else estimated."""
        estimated = turn.prompt_tokens is None or turn.completion_tokens is None
        tokens_in = turn.prompt_tokens if turn.prompt_tokens is not None else approx_message_tokens(messages)
        tokens_out = turn.completion_tokens if turn.completion_tokens is not None else \
            approx_tokens(turn.content + "".join(c.name + c.arguments for c in turn.tool_calls))
        run.budget.add(tokens_in, tokens_out, estimated=estimated)
        return tokens_in, tokens_out

    def _idle_turn(self, run: Run, tools: ToolBox, messages: list[dict[str, Any]], turn: ModelTurn,
                   tokens_in: int, tokens_out: int, started: float) -> None:
        """A turn with text only: recorded as a thought; the model is reminded to act or hand in."""
        run.idle_turns += 1
        found = diagnosis.in_text(turn.content) if run.task.domain != "ciso" else None
        if found is not None:
            # A model that writes its diagnosis out instead of calling the tool has handed in all the same.
            run.handin.record_diagnosis(found, final=True)
            run.trajectory.add(thought=turn.content, action=f"diagnosis in a message: {diagnosis.summary(found)}",
                               tokens_in=tokens_in, tokens_out=tokens_out, started=started, tool="submit_diagnosis")
            run.stopped = "handed in (a diagnosis written in a message)"
            return
        run.trajectory.add(thought=turn.content, tokens_in=tokens_in, tokens_out=tokens_out, started=started)
        if run.idle_turns >= MAX_IDLE_TURNS:
            run.stopped = f"{MAX_IDLE_TURNS} turns in a row without a tool call"
            return
        messages.append({"role": "user", "content": prompts.NO_TOOL_CALLED.format(handin=tools.handin_tool)})

    def _notes(self, run: Run) -> str:
        settings = self.settings
        budget = run.budget
        parts = [f"model {settings.model} at {settings.endpoint}",
                 f"stopped: {run.stopped or 'unknown'} after {run.turns} turns",
                 f"{budget.spent} tokens ({budget.prompt} prompt, {budget.completion} completion"
                 f"{', partly estimated: the endpoint reported no usage' if budget.estimated else ''})"]
        if run.handin.diagnosis is not None and not run.handin.final:
            parts.append("handed in the last draft diagnosis")
        if run.retried:
            parts.append(f"{len(run.retried)} transient endpoint errors retried (last: {run.retried[-1]})")
        return settings.redact("; ".join(parts))
