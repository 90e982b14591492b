"""kubectl as an agent runs it: the task's kubeconfig, a discovery cache of its own, the task's deadline."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

from .base import Task


class Kubectl:
    def __init__(self, task: Task, binary: str | None = None):
        found = binary or shutil.which("kubectl")
        if found is None:
            raise RuntimeError("kubectl is not on PATH; install it (https://kubernetes.io/docs/tasks/tools/) "
                               "or put it on PATH")
        self.binary = found
        self.task = task
        os.makedirs(task.workdir, exist_ok=True)
        self.env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
        # Only the task's kubeconfig: the harness' own (admin) credentials must not leak in from the environment.
        self.env.update(KUBECONFIG=os.path.abspath(task.kubeconfig),
                        KUBECACHEDIR=tempfile.mkdtemp(prefix="kubecache-", dir=task.workdir))

    def run(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        """Run ``kubectl ARGS`` in the workdir; raises subprocess.TimeoutExpired at the deadline."""
        return subprocess.run([self.binary, *args], capture_output=True, text=True, env=self.env,
                              cwd=self.task.workdir, stdin=subprocess.DEVNULL, timeout=max(self.task.remaining(), 0.1))
