"""Container logs, read through kubectl with the task's kubeconfig (never followed)."""

from __future__ import annotations

from .base import Tool
from .kubectl import KubectlTool


class LogsTool(Tool):
    name = "logs"

    def __init__(self, kubectl: KubectlTool):
        super().__init__(kubectl.task, kubectl.trajectory)
        self.kubectl = kubectl

    def __call__(self, pod: str, namespace: str, *, container: str | None = None, tail: int = 100,
                 previous: bool = False, since: str | None = None, thought: str = "") -> list[str]:
        """The last ``tail`` lines of a container's log (``pod`` may be ``deployment/NAME``); ``previous``
        reads the container's previous instance (after a crash or an OOM kill)."""
        args = ["logs", pod, "--namespace", namespace, f"--tail={tail}"]
        if container:
            args += ["--container", container]
        if previous:
            args.append("--previous")
        if since:
            args.append(f"--since={since}")
        return self.kubectl(args, thought=thought).splitlines()
