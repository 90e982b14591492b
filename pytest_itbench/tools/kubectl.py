"""kubectl with the task's kubeconfig, a fresh discovery cache, the task's deadline, and a deny list.

Refused, because they would hang until the deadline or reach beyond the agent's kubeconfig: ``edit``,
``port-forward``, ``proxy``, ``attach``, ``logs -f``, ``get --watch``, ``exec -i``/``-t``, and flags
that switch cluster or identity (``--kubeconfig``, ``--server``, ``--token``, ``--as``, ...).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from collections.abc import Sequence
from typing import Any

from ..agents.base import Task, Trajectory
from ..agents.kubectl import Kubectl as _Runner
from .base import Tool, ToolError

DENIED_COMMANDS = {
    "edit": "it opens an editor and waits for it; use patch, set or apply",
    "port-forward": "it runs until stopped; query the Service from a pod with exec, or use the signal URLs",
    "proxy": "it runs until stopped; the API server is reachable with kubectl itself",
    "attach": "it attaches to a running process and waits; use logs",
}
IDENTITY_FLAGS = ("--kubeconfig", "--server", "-s", "--token", "--as", "--as-group", "--as-uid", "--user",
                  "--cluster", "--context", "--username", "--password", "--client-key", "--client-certificate",
                  "--certificate-authority", "--insecure-skip-tls-verify")
COMMANDS = {"get", "describe", "logs", "exec", "apply", "create", "delete", "patch", "scale", "rollout", "set",
            "label", "annotate", "expose", "run", "top", "explain", "api-resources", "api-versions", "auth",
            "wait", "replace", "diff", "cordon", "uncordon", "drain", "taint", "autoscale", "cp", "debug",
            "events", "version", "cluster-info", "config", "kustomize", "certificate", "completion", "plugin",
            *DENIED_COMMANDS}


class KubectlFailed(ToolError):
    def __init__(self, command: str, code: int, stderr: str):
        super().__init__(f"{command} failed (exit {code}): {stderr.strip() or 'no error output'}")
        self.code = code
        self.stderr = stderr


def refusal(args: Sequence[str]) -> str | None:
    """Why ``kubectl ARGS`` is refused, or None when it may run."""
    words = list(args)
    if "--" in words:  # what follows is the command exec runs in the container
        words = words[:words.index("--")]
    command = next((w for w in words if w in COMMANDS), next((w for w in words if not w.startswith("-")), ""))
    if command in DENIED_COMMANDS:
        return f"kubectl {command} is not allowed: {DENIED_COMMANDS[command]}"
    for word in words:
        flag, _, value = word.partition("=")
        if flag in IDENTITY_FLAGS:
            return f"{flag} is not allowed: the tool uses the task's kubeconfig and nothing else"
        if value.lower() in ("false", "0"):
            continue
        if command == "logs" and flag in ("-f", "--follow"):
            return f"kubectl logs {word} is not allowed: following logs never ends; read them with --tail or --since"
        if command == "get" and flag in ("-w", "--watch", "--watch-only"):
            return f"kubectl get {word} is not allowed: watching never ends; get the objects again instead"
        if command == "exec" and (flag in ("--stdin", "--tty") or re.fullmatch(r"-[a-zA-Z]*[it][a-zA-Z]*", word)):
            return (f"kubectl exec {word} is not allowed: an interactive session waits for input; run a command "
                    f"without -i/-t")
    return None


class KubectlTool(Tool):
    """``kubectl(args)``: run kubectl as the agent; ``json(args)``: the same, parsed from ``-o json``."""

    name = "kubectl"

    def __init__(self, task: Task, trajectory: Trajectory, binary: str | None = None):
        super().__init__(task, trajectory)
        try:
            self.runner = _Runner(task, binary)
        except RuntimeError as exc:
            raise ToolError(f"kubectl: {exc}") from None

    def __call__(self, args: str | Sequence[str], *, thought: str = "", check: bool = True) -> str:
        """Standard output of ``kubectl ARGS`` (a string is split like a shell would; a leading ``kubectl``
        is dropped). Raises KubectlFailed on a non-zero exit when ``check``, ToolError when refused."""
        return self.run(args, thought=thought, check=check).stdout

    def run(self, args: str | Sequence[str], *, thought: str = "", check: bool = True
            ) -> subprocess.CompletedProcess[str]:
        argv = shlex.split(args) if isinstance(args, str) else list(args)
        if argv and argv[0] == "kubectl":
            argv = argv[1:]
        shown = "kubectl " + shlex.join(argv)
        started = time.time()
        why = refusal(argv) if argv else "no kubectl command given"
        if why is not None:
            self.record(thought, shown, f"refused: {why}", started, error=f"refused: {why}")
            raise ToolError(why)
        self.timeout()  # raises past the deadline
        try:
            result = self.runner.run(argv)
        except subprocess.TimeoutExpired:
            self.record(thought, shown, "stopped at the task's deadline", started,
                        error="stopped at the task's deadline")
            raise ToolError(f"{shown} was stopped at the task's deadline") from None
        text = "\n".join(part.strip() for part in (result.stdout, result.stderr) if part.strip())
        failed = f"exit {result.returncode}: {result.stderr.strip() or 'no error output'}" if result.returncode else ""
        self.record(thought, shown, text if result.returncode == 0 else f"exit {result.returncode}: {text}", started,
                    error=failed)
        if check and result.returncode != 0:
            raise KubectlFailed(shown, result.returncode, result.stderr)
        return result

    def json(self, args: str | Sequence[str], *, thought: str = "") -> Any:
        """``kubectl ARGS -o json``, parsed."""
        argv = shlex.split(args) if isinstance(args, str) else list(args)
        out = self(argv + ["-o", "json"], thought=thought)
        try:
            return json.loads(out)
        except ValueError:
            raise ToolError(f"kubectl {shlex.join(argv)} -o json did not print JSON: {out[:300]}") from None
