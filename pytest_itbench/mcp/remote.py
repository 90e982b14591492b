"""The toolbox's interface over an MCP server: how the openai agent takes its tools from the trial's server.

``RemoteToolBox`` offers what the agent loop uses of a ToolBox (its ``ToolSpecs`` and ``call``) and
sends each call to the server with the SDK's client, over one session held
for the agent's run (an event loop in a thread of its own, through anyio's blocking portal). The tools
behind it are the same ToolBox the in-process agent calls: one code path for tools, not two.

A hand-in that the server accepted is also recorded in the agent's own ``Handin``, so that the loop stops
and the agent returns what the harness will score.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from anyio.from_thread import start_blocking_portal
from mcp import Client

from ..agents.base import Task
from ..tools import ToolError
from ..tools.functions import diagnosis
from ..tools.functions.handin import Handin
from ..tools.functions.toolbox import ToolResult, ToolSpecs


class RemoteToolBox(ToolSpecs):
    def __init__(self, task: Task, handin: Handin, url: str):
        self.task = task
        self.handin = handin
        self.url = url
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._client_cm = self._portal.wrap_async_context_manager(Client(url))
            self._client = self._client_cm.__enter__()
            listed = self._portal.call(self._client.list_tools)
        except BaseException as exc:
            self._portal_cm.__exit__(None, None, None)
            raise ToolError(f"the MCP server at {url} could not be reached: {type(exc).__name__}: {exc}") from None
        self.specs = [{"name": t.name, "description": t.description or "", "parameters": dict(t.input_schema)}
                      for t in listed.tools]

    def close(self) -> None:
        try:
            self._client_cm.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)

    def call(self, name: str, raw_arguments: str) -> ToolResult:
        try:
            arguments = json.loads(raw_arguments) if raw_arguments.strip() else {}
        except ValueError:
            arguments = None
        action = _action(name, arguments, raw_arguments)
        if not isinstance(arguments, dict):  # the server takes an object; say so as the toolbox would
            message = f"the arguments of {name} must be one JSON object"
            return ToolResult(f"error: {message}", action, message)
        result = self._portal.call(self._client.call_tool, name, arguments)
        text = "".join(getattr(part, "text", "") for part in result.content)
        if result.is_error:
            first = next((line for line in text.splitlines() if line.strip()), "tool error")
            return ToolResult(text, action, first.removeprefix("error: "))
        if name == self.handin_tool:
            self._record(arguments)
        return ToolResult(text, action)

    def _record(self, arguments: dict[str, Any]) -> None:
        if self.task.domain == "ciso":
            self.handin.record_artifacts({str(k): str(v) for k, v in (arguments.get("artifacts") or {}).items()})
            return
        found, final = diagnosis.check(arguments)  # the server accepted it, so it passes the same checks
        self.handin.record_diagnosis(found, final=final)


def _action(name: str, arguments: Any, raw: str) -> str:
    """The call as the toolbox words it for kubectl (an operator's command line), else the tool and its JSON."""
    if name == "kubectl" and isinstance(arguments, dict) and isinstance(arguments.get("args"), list):
        return "kubectl " + shlex.join(str(a) for a in arguments["args"])
    return f"{name} {raw.strip()}".strip()


__all__ = ["RemoteToolBox"]
