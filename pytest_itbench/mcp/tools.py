"""An MCP server over one task's tools: list them with their JSON schemas, call one, record the call.

The tools and their schemas are the toolbox's (pytest_itbench/tools/functions), so an agent that speaks
MCP and the in-process openai agent call the same code. A call that goes wrong (bad arguments, a refused
command, a failed query, the deadline) is an MCP tool error (``isError``) whose text says what and why,
never a protocol error: the model reads it and can correct itself.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Collection
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from ..agents.base import Task, Trajectory
from ..tools import DeadlineReached
from ..tools.base import clip
from ..tools.functions.handin import Handin
from ..tools.functions.toolbox import ToolBox

NAME = "itbench"
INSTRUCTIONS = ("The tools of one ITBench trial, with the rights of the application's operator. Diagnose and "
                "repair with them; hand in with submit_diagnosis (SRE, FinOps) or hand_in (CISO) before the "
                "deadline.")


class ToolServer:
    """The MCP server of one task; ``handin`` holds what the agent handed in, ``trajectory`` every call."""

    def __init__(self, task: Task, *, without: Collection[str] = (), kubectl_binary: str | None = None,
                 trajectory: Trajectory | None = None):
        self.task = task
        self.handin = Handin()
        self.trajectory = trajectory if trajectory is not None else Trajectory()
        self.after_call: Callable[[], None] | None = None  # told after each call is recorded (the stdio server)
        self.toolbox = ToolBox(task, self.handin, time_left=task.remaining, kubectl_binary=kubectl_binary,
                               without=without)
        # The toolbox keeps one scratch record per call; calls that overlap would mix them up.
        self._lock = threading.Lock()
        # The tools block (kubectl, HTTP, a wait), so they run off the event loop, in threads of this server's
        # own that close() ends (a shared pool's idle threads would outlive the trial).
        self._calls = ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"itbench-mcp-call-{task.scenario_id}")
        self.server: Server[Any] = Server(NAME, version="1", instructions=INSTRUCTIONS,
                                          on_list_tools=self._list_tools, on_call_tool=self._call_tool)

    def specs(self) -> list[dict[str, Any]]:
        return list(self.toolbox.specs)

    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, str]:
        """Run one call (blocking) and record it: ``(observation, error)``, error "" when it went well."""
        started = time.time()
        raw = json.dumps(arguments or {})
        with self._lock:
            try:
                result = self.toolbox.call(name, raw)
                observation, action, error = result.observation, result.action, result.error
            except DeadlineReached as exc:
                observation = error = str(exc)
                action = f"{name} {raw}"
            self.trajectory.add(action=action, observation=clip(observation), started=started, tool=name,
                                error=clip(error, 500))
            if self.after_call is not None:
                self.after_call()
        return observation, error

    async def _list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name=s["name"], description=s["description"],
                                                       input_schema=s["parameters"]) for s in self.specs()])

    def close(self) -> None:
        """End the calls in flight and their threads (a wait ends at once: the agent's turn is over)."""
        self.task.cancelled.set()
        self._calls.shutdown(wait=True, cancel_futures=True)

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        observation, error = await asyncio.get_running_loop().run_in_executor(
            self._calls, self.call, params.name, dict(params.arguments or {}))
        return types.CallToolResult(content=[types.TextContent(type="text", text=observation)],
                                    is_error=bool(error))
