"""``noop``: submits nothing and changes nothing; the floor every scenario must fail at."""

from __future__ import annotations

from .base import Submission, Task, Trajectory


class NoopAgent:
    name = "noop"

    def run(self, task: Task, trajectory: Trajectory) -> Submission:
        return Submission()
