"""What every tool shares: its errors, the step it records, and bounded HTTP calls to a signal's API.

A tool returns plain data (parsed JSON, text) and records one trajectory step per call: the thought
the caller gives, the action as an operator would type it, and the observation, cut to
``OBSERVATION_CHARS`` so that a long listing does not swamp the trajectory.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ..agents.base import Task, Trajectory

OBSERVATION_CHARS = 4000
HTTP_TIMEOUT = 30.0  # seconds for one HTTP call, bounded further by the task's deadline


class ToolError(RuntimeError):
    """A tool could not do what it was asked; the message says what and why, for an agent to read."""


class SignalUnavailable(ToolError):
    """The task does not offer this signal (withheld with --itbench-without, or not served)."""

    def __init__(self, signal: str, tool: str, task: Task):
        offered = ", ".join(sorted(task.urls)) or "none"
        super().__init__(f"{tool}: the task offers no {signal} URL (signals offered: {offered}); this signal is "
                         f"withheld in this trial, so use another one")
        self.signal = signal


class DeadlineReached(ToolError):
    """The task's deadline has passed (or it was cancelled); no further calls are made."""


def clip(text: str, limit: int = OBSERVATION_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... [{len(text) - limit} more characters]"


def observation(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


class Tool:
    """A tool bound to one task and one trajectory."""

    name = "tool"

    def __init__(self, task: Task, trajectory: Trajectory):
        self.task = task
        self.trajectory = trajectory

    def timeout(self) -> float:
        """Seconds one call may take: the task's remaining time, at most HTTP_TIMEOUT; raises past the deadline."""
        if self.task.cancelled.is_set():
            raise DeadlineReached(f"{self.name}: the task was cancelled at its deadline; hand in what you have")
        remaining = self.task.remaining()
        if remaining <= 0:
            raise DeadlineReached(f"{self.name}: the task's deadline has passed; hand in what you have")
        return min(remaining, HTTP_TIMEOUT)

    def record(self, thought: str, action: str, result: Any, started: float, *, error: str = "") -> None:
        """One step: this tool's name as its ``tool``, and ``error`` when the call failed (the trajectory
        analysis counts failed commands from it)."""
        self.trajectory.add(thought=thought, action=action, observation=clip(observation(result)), started=started,
                            tool=self.name, error=clip(error, 500))


class HttpTool(Tool):
    """A tool over one signal's HTTP API, named in ``task.urls`` by ``signal``."""

    signal = ""

    def __init__(self, task: Task, trajectory: Trajectory):
        super().__init__(task, trajectory)
        self._base = task.urls.get(self.signal)

    @property
    def base(self) -> str:
        if not self._base:
            raise SignalUnavailable(self.signal, self.name, self.task)
        return self._base.rstrip("/")

    @property
    def offered(self) -> bool:
        return bool(self._base)

    def get(self, path: str, params: dict[str, Any] | list[tuple[str, Any]] | None = None, *, thought: str = "",
            action: str | None = None) -> Any:
        """GET ``path`` with ``params`` and return its JSON; records a step; raises ToolError on any failure."""
        url = self.base + path
        if params:
            url += "?" + urllib.parse.urlencode(params, doseq=True)
        started = time.time()
        shown = action or f"GET {url}"
        try:
            with urllib.request.urlopen(url, timeout=self.timeout()) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace").strip()
            error = ToolError(f"{self.name}: {shown} answered {exc.code} {exc.reason}: {clip(detail, 500)}")
        except (urllib.error.URLError, OSError) as exc:
            error = ToolError(f"{self.name}: {shown} failed: {getattr(exc, 'reason', exc)}")
        else:
            try:
                data = json.loads(body)
            except ValueError:
                text = clip(body.decode(errors="replace"), 300)
                error = ToolError(f"{self.name}: {shown} did not answer JSON: {text}")
            else:
                self.record(thought, shown, data, started)
                return data
        self.record(thought, shown, str(error), started, error=str(error))
        raise error
