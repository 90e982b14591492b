"""What the agent will hand in: the latest diagnosis (draft or final) or the CISO artifacts.

Kept apart from the loop so that whatever stops the loop (the step limit, the token budget, the
deadline) hands in the same thing: the last diagnosis the model recorded, else nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ...agents.base import Submission


@dataclass
class Handin:
    started: float = field(default_factory=time.time)  # when the agent started (epoch seconds)
    diagnosis: dict[str, Any] | None = None
    diagnosed_at: float | None = None  # seconds from the start to the first recording of these root causes
    artifacts: dict[str, str] = field(default_factory=dict)
    final: bool = False  # the model handed in: the loop ends

    def record_diagnosis(self, diagnosis: dict[str, Any], *, final: bool) -> None:
        # MTTD counts from when the model first named these root causes, so a draft recorded early and
        # handed in after the repair keeps its time; a changed mind restarts the clock.
        if self.diagnosis is None or _roots(self.diagnosis) != _roots(diagnosis):
            self.diagnosed_at = time.time() - self.started
        self.diagnosis = diagnosis
        self.final = self.final or final

    def record_artifacts(self, artifacts: dict[str, str]) -> None:
        self.artifacts = dict(artifacts)
        self.final = True

    def submission(self, notes: str) -> Submission:
        return Submission(diagnosis=self.diagnosis, artifacts=dict(self.artifacts),
                          diagnosed_at=self.diagnosed_at if self.diagnosis is not None else None, notes=notes)


def _roots(diagnosis: dict[str, Any]) -> frozenset[str]:
    return frozenset(e.get("name", "") for e in diagnosis.get("entities", []) if e.get("contributing_factor"))
