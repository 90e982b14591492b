"""The tools the model may call, as function-calling schemas, and running a call the model made.

The observability tools come from the toolkit (pytest_itbench/tools) as they are; ``kubectl`` takes an
argument list (no shell quoting for the model to get wrong) and adds a few refusals
(:mod:`.kubectl_rules`); each domain adds its hand-in tools. Whatever goes wrong with a call (an unknown
tool, arguments that are not JSON, a refused command, a failed query) comes back as an observation
saying what went wrong, for the model to correct; only the deadline stops the loop (DeadlineReached).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from collections.abc import Collection
from typing import Any, Callable

from ...tools import DeadlineReached, ToolError, Toolkit
from ...agents.base import Task, Trajectory
from . import ciso_tools, diagnosis, kubectl_rules
from .handin import Handin
from .observations import render

KUBECTL_SPEC: dict[str, Any] = {
    "name": "kubectl",
    "description": "Run kubectl with your credentials. Give the arguments as a list, e.g. [\"get\", \"pods\", \"-n\", "
                   "\"shop\", \"-o\", \"wide\"]. Refused: edit, port-forward, proxy, attach, cp, logs -f, get --watch, "
                   "exec -i/-t, run -i/-t, rollout status without --timeout, and flags that change cluster or "
                   "identity.",
    "parameters": {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}}},
                   "required": ["args"], "additionalProperties": False},
}
WAIT_LIMIT = 120.0  # seconds one wait may take


class BadArguments(ToolError):
    """The call's arguments do not fit the tool's schema."""


@dataclass(frozen=True)
class ToolResult:
    observation: str  # what the model reads (cut to the budget by the loop)
    action: str  # the call as an operator would type it
    error: str = ""  # why it failed; "" when it did not


class ToolSpecs:
    """What a set of tools offers, read from its ``specs``: the in-process ToolBox and the MCP client's
    RemoteToolBox (pytest_itbench/mcp/remote.py) alike."""

    task: Task
    specs: list[dict[str, Any]]

    @property
    def names(self) -> list[str]:
        return [s["name"] for s in self.specs]

    @property
    def handin_tool(self) -> str:
        return "hand_in" if self.task.domain == "ciso" else "submit_diagnosis"

    def openai_tools(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": spec} for spec in self.specs]


class ToolBox(ToolSpecs):
    def __init__(self, task: Task, handin: Handin, *, time_left: Callable[[], float],
                 kubectl_binary: str | None = None, without: Collection[str] = ()):
        self.task = task
        self.handin = handin
        self.time_left = time_left
        # The toolkit records a step per call; the loop records the trial's steps itself (with the model's
        # thought and tokens), so the toolkit's go to a scratch record, read for the action's wording.
        self.scratch = Trajectory()
        self.toolkit = Toolkit(task, self.scratch, kubectl_binary=kubectl_binary)
        self.workdir = ciso_tools.Workdir(task)
        self.handlers: dict[str, Callable[[dict[str, Any]], ToolResult]] = {"kubectl": self._kubectl,
                                                                          "wait": self._wait}
        specs: list[dict[str, Any]] = [KUBECTL_SPEC]
        if task.domain == "ciso":
            specs += [s for s in self.toolkit.specs() if s["name"] == "wait"] + ciso_tools.SPECS
            self.handlers.update(write_file=self._write_file, read_file=self._read_file, run_script=self._run_script,
                                 test_rego=self._test_rego, test_kyverno_policy=self._test_kyverno, hand_in=self._hand_in)
        else:
            # A signal withheld by URL (traces, metrics) is already absent from the toolkit's specs; logs are
            # withheld by RBAC, so their tool goes here (kubectl logs then answers Forbidden, as it would).
            specs += [s for s in self.toolkit.specs() if s["name"] != "kubectl"
                      and not (s["name"] == "logs" and "logs" in without)] + [diagnosis.SPEC]
            self.handlers.update({s["name"]: self._toolkit_call(s["name"]) for s in specs
                                  if s["name"] not in ("kubectl", "wait", "submit_diagnosis")})
            self.handlers["submit_diagnosis"] = self._submit_diagnosis
        self.specs = specs

    def call(self, name: str, raw_arguments: str) -> ToolResult:
        """Run one tool call of the model; raises DeadlineReached only."""
        shown = f"{name} {raw_arguments.strip()}".strip()
        handler = self.handlers.get(name)
        if handler is None:
            # Worded as the toolkit words it: the trajectory analysis counts errors starting "unknown tool".
            message = f"unknown tool {name!r}: there is no such tool; the tools are: {', '.join(self.names)}"
            return ToolResult(f"error: {message}", shown, message)
        try:
            arguments = json.loads(raw_arguments) if raw_arguments.strip() else {}
        except ValueError as exc:
            message = (f"the arguments of {name} are not valid JSON ({exc}); send one JSON object with the "
                       f"parameters {self._parameters(name)}")
            return ToolResult(f"error: {message}", shown, message)
        if not isinstance(arguments, dict):
            message = f"the arguments of {name} must be a JSON object with the parameters {self._parameters(name)}"
            return ToolResult(f"error: {message}", shown, message)
        del self.scratch.steps[:]
        try:
            return handler(arguments)
        except DeadlineReached:
            raise
        except BadArguments as exc:
            message = f"{exc}; {name} takes {self._parameters(name)}"
            return ToolResult(f"error: {message}", self._action(shown), message)
        except ToolError as exc:
            return ToolResult(f"error: {exc}", self._action(shown), str(exc))

    # ---- common tools --------------------------------------------------------------------------------------------
    def _kubectl(self, arguments: dict[str, Any]) -> ToolResult:
        _only(arguments, "args")
        argv = arguments.get("args")
        if isinstance(argv, str):  # a command line instead of a list: understood, as a person would
            argv = shlex.split(argv)
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise BadArguments("args must be a list of strings, e.g. [\"get\", \"pods\", \"-n\", \"shop\"]")
        if argv and argv[0] == "kubectl":
            argv = argv[1:]
        shown = "kubectl " + shlex.join(argv)
        why = kubectl_rules.refusal(argv)
        if why is not None:
            return ToolResult(f"refused: {why}", shown, f"refused: {why}")  # worded as the toolkit records it
        result = self.toolkit.kubectl.run(argv, check=False)
        output = "\n".join(part.rstrip() for part in (result.stdout, result.stderr) if part.strip())
        if result.returncode == 0:
            return ToolResult(output or "(no output)", shown)
        first = next((line for line in result.stderr.splitlines() if line.strip()), "no error output")
        return ToolResult(f"exit {result.returncode}\n{output}", shown, f"exit {result.returncode}: {first.strip()}")

    def _wait(self, arguments: dict[str, Any]) -> ToolResult:
        _only(arguments, "seconds")
        try:
            seconds = float(arguments["seconds"])
        except (KeyError, TypeError, ValueError):
            raise BadArguments("seconds must be a number") from None
        # Never into the time kept to hand in: the loop would find the deadline already past.
        seconds = max(0.0, min(seconds, WAIT_LIMIT, self.time_left()))
        text = self.toolkit.wait(seconds)
        return ToolResult(text, f"wait {seconds:g}")

    def _toolkit_call(self, name: str) -> Callable[[dict[str, Any]], ToolResult]:
        def call(arguments: dict[str, Any]) -> ToolResult:
            try:
                value = self.toolkit.call(name, arguments)
            except (TypeError, ValueError) as exc:  # a number given as words, a list for a string, ...
                raise BadArguments(f"bad arguments ({exc})") from None
            return ToolResult(render(name, value), self._action(f"{name} {json.dumps(arguments)}"))
        return call

    # ---- SRE and FinOps ------------------------------------------------------------------------------------------
    def _submit_diagnosis(self, arguments: dict[str, Any]) -> ToolResult:
        try:
            found, final = diagnosis.check(arguments)
        except ValueError as exc:
            raise BadArguments(f"diagnosis not recorded: {exc}") from None
        self.handin.record_diagnosis(found, final=final)
        what = "handed in" if final else "recorded as a draft (handed in if you run out of turns or time)"
        return ToolResult(f"diagnosis {what}: {diagnosis.summary(found)}",
                          f"submit_diagnosis{'' if final else ' (draft)'}: {diagnosis.summary(found)}")

    # ---- CISO ----------------------------------------------------------------------------------------------------
    def _write_file(self, arguments: dict[str, Any]) -> ToolResult:
        _only(arguments, "path", "content")
        text = ciso_tools.write_file(self.workdir, arguments.get("path"), arguments.get("content"))
        return ToolResult(text, f"write_file {arguments.get('path')} ({len(str(arguments.get('content')))} characters)")

    def _read_file(self, arguments: dict[str, Any]) -> ToolResult:
        _only(arguments, "path")
        return ToolResult(self.workdir.read(arguments.get("path")) or "(empty file)",
                          f"read_file {arguments.get('path')}")

    def _run_script(self, arguments: dict[str, Any]) -> ToolResult:
        _only(arguments, "path", "timeout")
        text, error = ciso_tools.run_script(self.task, self.workdir, arguments.get("path"), arguments.get("timeout"),
                                            self.time_left)
        return ToolResult(text, f"bash {arguments.get('path')}", error)

    def _test_rego(self, arguments: dict[str, Any]) -> ToolResult:
        _only(arguments, "policy", "input_file", "input", "query")
        text, error = ciso_tools.test_rego(self.workdir, arguments.get("policy"), arguments.get("input_file"),
                                           arguments.get("input"), arguments.get("query"), self.time_left)
        source = arguments.get("input_file") or ("the given input" if "input" in arguments else "{}")
        return ToolResult(text, f"test_rego {arguments.get('policy')} on {source}", error)

    def _test_kyverno(self, arguments: dict[str, Any]) -> ToolResult:
        _only(arguments, "policy", "resources_file")
        text, error = ciso_tools.test_kyverno_policy(self.task, self.workdir, self.toolkit.kubectl,
                                                     arguments.get("policy"), arguments.get("resources_file"))
        on = arguments.get("resources_file") or "the cluster's resources"
        return ToolResult(text, f"test_kyverno_policy {arguments.get('policy')} on {on}", error)

    def _hand_in(self, arguments: dict[str, Any]) -> ToolResult:
        _only(arguments, "artifacts")
        artifacts = ciso_tools.check_artifacts(self.workdir, arguments.get("artifacts"))
        self.handin.record_artifacts(artifacts)
        shown = ", ".join(f"{role}={path}" for role, path in artifacts.items())
        return ToolResult(f"handed in: {shown}", f"hand_in {shown}")

    # ---- helpers ---------------------------------------------------------------------------------------------------
    def _parameters(self, name: str) -> str:
        spec = next((s for s in self.specs if s["name"] == name), None)
        if spec is None:
            return "{}"
        parameters = spec["parameters"]
        required = set(parameters.get("required") or [])
        return "{" + ", ".join(f"{p}{'' if p in required else '?'}" for p in parameters["properties"]) + "}"

    def _action(self, fallback: str) -> str:
        """How the toolkit worded the call it recorded, else ``fallback``."""
        return self.scratch.steps[-1].action if self.scratch.steps else fallback


def _only(arguments: dict[str, Any], *names: str) -> None:
    unknown = sorted(set(arguments) - set(names))
    if unknown:
        raise BadArguments(f"unknown parameters {unknown}")
