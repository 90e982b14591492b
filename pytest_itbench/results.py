"""One trial's outcome and figures, as plain JSON-safe data.

A result travels from the trial (run.py) to the test report (``report.user_properties``, which xdist
ships to the controller), to the JSONL file, JUnit properties, Allure and the leaderboard; so it is
plain data and round-trips through ``to_dict``/``from_dict``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PASSED, FAILED, ERROR = "passed", "failed", "error"

# Names of the figures the reports read from ``TrialResult.figures`` (the run and the evaluators write
# them). Times are seconds from the agent's start; a figure the trial could not score is left out or None.
MTTD, MTTR, NTAM, STEPS, TOKENS = "mttd", "mttr", "ntam", "steps", "tokens"
TTP = "ttp"  # CISO: time to posture, seconds from the agent's start to its submission when the posture is right
# What the agent's trajectory shows (report/trajectory_analysis.py): counts of its steps, and its tokens
# priced by the session's price table (None when some tokens could not be priced).
TOOL_CALLS, REPEATED_ACTIONS, LONGEST_REPEAT = "tool_calls", "repeated_actions", "longest_repeat"
UNKNOWN_TOOLS, FAILED_COMMANDS = "unknown_tools", "failed_commands"
TOKENS_IN, TOKENS_OUT, COST_USD = "tokens_in", "tokens_out", "cost_usd"


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
class Attachment:
    """Evidence a trial hands to the reports (Allure attachments, the JSONL record).

    Large evidence (a trajectory, the final state of changed objects) is a file the trial wrote, named
    by ``path``; small evidence may travel inline as ``content`` (JSON-safe data for json and yaml, a
    string for text). Either way it stays plain data, so it crosses xdist's process boundary.
    """

    name: str  # what a reader sees: "task", "trajectory", "submission", "events", "changed objects", ...
    media: str = "json"  # json, yaml or text: how it is rendered
    path: str | None = None
    content: Any = None


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
    category: str | None = None  # the class within the domain (CISO: kyverno, kubectl-opa, ...), if any
    faults: list[str] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    started_at: float | None = None  # wall-clock epoch seconds of the trial's start and end
    finished_at: float | None = None
    variant: int = 0  # the held-out variant that ran (--itbench-variant; 0: the public catalog, scenario/variants.py)
    noise: str = "off"  # the noise level the trial ran at (--itbench-noise or the scenario's noise:; noise/)
    selection: str = ""  # the id of the session's selection (study/selection.py): results of other ids never merge
    shard: str = ""  # K/N under --itbench-shard; "" for the whole selection
    resumed_from: str = ""  # the results file this result was replayed from (--itbench-resume); "" when it ran

    @property
    def trial_id(self) -> str:
        """The scenario with its variant (``id@vN`` for N > 0): what the reports tell trials apart by."""
        return self.scenario_id if not self.variant else f"{self.scenario_id}@v{self.variant}"

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
        attachments = [Attachment(**a) for a in data.get("attachments", [])]
        return cls(**{**data, "checks": checks, "attachments": attachments})
