"""What a trial's trajectory shows about how its agent worked: tool calls, loops, failures, tokens, cost.

The ITBench paper reads agents' trajectories for the ways they go wrong: stuck in a loop repeating an
action, calling tools that do not exist, running commands that fail. This module counts those, for any
agent (built-in, Python or ``exec:``), from the steps it recorded; the conventions below are the ones
docs/reporting.md ("Reading a trajectory report") documents for agent authors.

- **tool**: the step's ``tool``. When the agent left it empty, the first word of the action names it
  where that is obvious (``INFERRED_TOOLS``: ``kubectl ...`` is kubectl, ``PromQL ...`` or
  ``query ...`` is prometheus), else it is ``other``. A step with neither tool nor action (a thought,
  an answer) calls no tool.
- **repeated action**: a step whose action (surrounding blanks ignored) equals an earlier step's;
  ``longest_repeat`` is the longest run of consecutive identical actions (steps without an action are
  passed over, so thinking between two identical commands does not hide the loop).
- **unknown tool**: a step whose ``error`` begins with ``unknown tool`` (any case).
- **failed command**: a step with an ``error``, or a kubectl step whose observation begins with
  ``exit N`` for a non-zero N (how agents that predate ``error`` recorded a failed kubectl).
- **cost**: each step's tokens at the price of its model (``Step.model``, else ``Trajectory.model``);
  None when no tokens were recorded, or when some step with tokens names no model or one the price
  table lacks (a partial sum would look cheaper than the run was).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from pytest_itbench.agents.base import Step, Trajectory
from pytest_itbench.report.model_prices import PriceTable
from pytest_itbench.results import (COST_USD, FAILED_COMMANDS, LONGEST_REPEAT, REPEATED_ACTIONS, STEPS, TOKENS,
                                    TOKENS_IN, TOKENS_OUT, TOOL_CALLS, UNKNOWN_TOOLS)

ATTACHMENT = "trajectory analysis"  # the name of the attachment carrying the whole analysis
UNKNOWN_TOOL = "unknown tool"  # how an error says the agent called a tool that does not exist
OTHER = "other"
INFERRED_TOOLS = {"kubectl": "kubectl", "promql": "prometheus", "query": "prometheus"}
NO_MODEL = "(no model named)"
LISTED = 10  # repeated actions and failures listed in the attachment (the counts cover them all)
TEXT_CHARS = 300  # an action or error quoted in the attachment is cut to this

_EXIT = re.compile(r"exit(?:ed)?(?: with)?(?: code| status)?\s*[:=]?\s*(\d+)", re.IGNORECASE)


def tool_of(step: Step) -> str:
    """The tool a step called: recorded, inferred from its action, ``other``; "" when it called none."""
    if step.tool.strip():
        return step.tool.strip()
    words = step.action.split()
    if not words:
        return ""
    return INFERRED_TOOLS.get(os.path.basename(words[0]).lower(), OTHER)


def failure_of(step: Step) -> str:
    """Why a step failed ("" when it did not): its error, or a kubectl exit status it observed."""
    if step.error.strip():
        return step.error.strip()
    if tool_of(step) == "kubectl":
        found = _EXIT.match(step.observation.lstrip())
        if found and int(found.group(1)) != 0:
            return step.observation.strip().splitlines()[0]
    return ""


def is_unknown_tool(step: Step) -> bool:
    return step.error.strip().lower().startswith(UNKNOWN_TOOL)


@dataclass
class TrajectoryAnalysis:
    steps: int = 0
    tool_calls: int = 0
    calls_by_tool: dict[str, int] = field(default_factory=dict)  # most called first
    tokens_in: int = 0
    tokens_out: int = 0
    repeated_actions: int = 0
    longest_repeat: int = 0
    repeated: list[dict[str, Any]] = field(default_factory=list)  # [{action, times}], most repeated first
    unknown_tools: int = 0
    unknown_tool_names: list[str] = field(default_factory=list)
    failed_commands: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)  # [{step (1-based), tool, action, error}]
    models: list[str] = field(default_factory=list)
    cost_usd: float | None = None
    unpriced: list[str] = field(default_factory=list)  # models whose tokens could not be priced
    prices: dict[str, dict[str, Any]] = field(default_factory=dict)  # the prices used, with their dates

    def figures(self) -> dict[str, float | None]:
        """The trial's figures (floats, like every other figure; cost None when not priced)."""
        return {STEPS: float(self.steps), TOKENS: float(self.tokens_in + self.tokens_out),
                TOKENS_IN: float(self.tokens_in), TOKENS_OUT: float(self.tokens_out),
                TOOL_CALLS: float(self.tool_calls), REPEATED_ACTIONS: float(self.repeated_actions),
                LONGEST_REPEAT: float(self.longest_repeat), UNKNOWN_TOOLS: float(self.unknown_tools),
                FAILED_COMMANDS: float(self.failed_commands), COST_USD: self.cost_usd}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def analyse(trajectory: Trajectory, prices: PriceTable | None = None) -> TrajectoryAnalysis:
    steps = trajectory.steps
    found = TrajectoryAnalysis(steps=len(steps), tokens_in=sum(s.tokens_in for s in steps),
                               tokens_out=sum(s.tokens_out for s in steps))
    tools = Counter(t for t in map(tool_of, steps) if t)
    found.tool_calls = sum(tools.values())
    found.calls_by_tool = dict(sorted(tools.items(), key=lambda kv: (-kv[1], kv[0])))
    _count_repeats(found, [s.action.strip() for s in steps if s.action.strip()])
    unknown = [s for s in steps if is_unknown_tool(s)]
    found.unknown_tools = len(unknown)
    found.unknown_tool_names = sorted({tool_of(s) or "?" for s in unknown})
    for number, step in enumerate(steps, 1):
        reason = failure_of(step)
        if reason:
            found.failed_commands += 1
            if len(found.failures) < LISTED:
                found.failures.append({"step": number, "tool": tool_of(step), "action": _cut(step.action),
                                       "error": _cut(reason)})
    _price(found, trajectory, prices)
    return found


def _count_repeats(found: TrajectoryAnalysis, actions: list[str]) -> None:
    counts = Counter(actions)
    found.repeated_actions = sum(n - 1 for n in counts.values())
    found.repeated = [{"action": _cut(a), "times": n} for a, n in counts.most_common() if n > 1][:LISTED]
    run = 0
    for i, action in enumerate(actions):
        run = run + 1 if i and action == actions[i - 1] else 1
        found.longest_repeat = max(found.longest_repeat, run)


def _price(found: TrajectoryAnalysis, trajectory: Trajectory, prices: PriceTable | None) -> None:
    total, unpriced, used = 0.0, set(), {}
    models = []
    for step in trajectory.steps:
        model = (step.model or trajectory.model).strip()
        if model and model not in models:
            models.append(model)
        if not (step.tokens_in or step.tokens_out):
            continue
        price = prices.price_of(model) if model and prices is not None else None
        if price is None:
            unpriced.add(model or NO_MODEL)
            continue
        total += price.cost(step.tokens_in, step.tokens_out)
        used[model] = price.to_dict()
    if trajectory.model.strip() and trajectory.model.strip() not in models:
        models.insert(0, trajectory.model.strip())
    found.models, found.unpriced, found.prices = models, sorted(unpriced), used
    if (found.tokens_in or found.tokens_out) and not unpriced:
        found.cost_usd = round(total, 6)  # micro-dollars: beyond that is float noise


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + "..."
