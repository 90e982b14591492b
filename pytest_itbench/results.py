"""One trial's outcome and figures, as plain JSON-safe data.

A result travels from the trial (run.py) to the test report (``report.user_properties``, which xdist
ships to the controller), to the JSONL file, JUnit properties, Allure and the leaderboard; so it is
plain data and round-trips through ``to_dict``/``from_dict``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PASSED, FAILED, ERROR = "passed", "failed", "error"


@dataclass
class CheckResult:
    """One required or informative check: its verdict and a one-line reason."""

    name: str  # diagnosis, mitigation, ...
    passed: bool
    detail: str = ""
    required: bool = True
    value: float | None = None  # a score where the check has one (F1, NTAM, ...)

    def line(self) -> str:
        mark = "PASS" if self.passed else "FAIL"
        optional = "" if self.required else " (informative)"
        return f"{mark} {self.name}{optional}: {self.detail}"


@dataclass
class TrialResult:
    scenario_id: str
    domain: str
    complexity: str
    agent: str
    run: int  # 1..N for --itbench-runs
    seed: int
    outcome: str = ERROR  # passed, failed, error
    checks: list[CheckResult] = field(default_factory=list)
    figures: dict[str, float | None] = field(default_factory=dict)  # mttd, mttr, ntam, f1, steps, tokens ...
    phases: dict[str, float] = field(default_factory=dict)  # wall seconds per lifecycle phase
    error: str = ""  # for an environment error: what broke and how to rerun
    backend: str = "twin"
    versions: dict[str, str] = field(default_factory=dict)
    application: str | None = None
    faults: list[str] = field(default_factory=list)

    def verdict(self) -> str:
        """The readable failure message: one line per check."""
        return "\n".join(c.line() for c in self.checks)

    def decide(self) -> None:
        """passed only if every required check holds."""
        required = [c for c in self.checks if c.required]
        self.outcome = PASSED if required and all(c.passed for c in required) else FAILED

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrialResult":
        checks = [CheckResult(**c) for c in data.get("checks", [])]
        return cls(**{**data, "checks": checks})
