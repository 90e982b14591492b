"""``python -m pytest_itbench.mcp``: the trial's tools over stdio, for an exec agent that spawns its servers.

Run as a child of the agent, it reads the task from the agent's environment (``ITBENCH_TASK``, as the
harness wrote it; the signals' URLs are the task's). What the HTTP server records for the harness this
one writes where an exec agent's own records go: every call as a line of ``$ITBENCH_TRAJECTORY``, and a
hand-in as ``$ITBENCH_OUTPUT``. Declared in a client's configuration as, for Claude Code's .mcp.json:

    {"mcpServers": {"itbench": {"command": "python3", "args": ["-m", "pytest_itbench.mcp"]}}}
"""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp.server.stdio import stdio_server

from ..agents.base import Task
from .tools import ToolServer

USAGE = ("python -m pytest_itbench.mcp serves one trial's tools over stdio; run it from an exec agent "
         "(it reads $ITBENCH_TASK, $ITBENCH_OUTPUT and $ITBENCH_TRAJECTORY, which the harness sets)")


def task_from_environment(env: dict[str, str]) -> Task:
    path = env.get("ITBENCH_TASK")
    if not path:
        raise SystemExit(f"error: $ITBENCH_TASK is not set. {USAGE}")
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return Task(scenario_id=data["scenario_id"], domain=data["domain"], text=data["text"],
                    kubeconfig=data["kubeconfig"], urls={k: v for k, v in data["urls"].items() if k != "mcp"},
                    workdir=data["workdir"], deadline=float(data["deadline"]), time_limit=float(data["time_limit"]),
                    namespaces=tuple(data.get("namespaces") or ()))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"error: $ITBENCH_TASK ({path}) is not a task the harness wrote: {exc}") from None


class _Recorder:
    """Writes each call as a trajectory line, and the hand-in as the output, as they happen."""

    def __init__(self, tools: ToolServer, trajectory_path: str | None, output_path: str | None):
        self.tools, self.trajectory_path, self.output_path = tools, trajectory_path, output_path
        self.written = 0
        self.handed_in: object = None

    def flush(self) -> None:
        steps = self.tools.trajectory.steps
        if self.trajectory_path and len(steps) > self.written:
            with open(self.trajectory_path, "a", encoding="utf-8") as fh:
                for step in steps[self.written:]:
                    fh.write(json.dumps(step.to_dict()) + "\n")
        self.written = len(steps)
        handin = self.tools.handin
        current = (handin.diagnosis, dict(handin.artifacts))
        if self.output_path and (handin.diagnosis is not None or handin.artifacts) and current != self.handed_in:
            with open(self.output_path + ".tmp", "w", encoding="utf-8") as fh:
                json.dump(handin.submission(notes="handed in through MCP (stdio)").to_dict(), fh)
            os.replace(self.output_path + ".tmp", self.output_path)
            self.handed_in = current


def main() -> int:
    task = task_from_environment(dict(os.environ))
    tools = ToolServer(task)
    tools.after_call = _Recorder(tools, os.environ.get("ITBENCH_TRAJECTORY"), os.environ.get("ITBENCH_OUTPUT")).flush

    async def run() -> None:
        async with stdio_server() as (read, write):
            await tools.server.run(read, write, tools.server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        tools.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
