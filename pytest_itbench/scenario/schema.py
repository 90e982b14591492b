"""The scenario file's schema: one YAML file per scenario, validated before anything runs.

A scenario says what environment to build (an application), what to break (faults from the registry,
with typed arguments), what must be seen before the agent starts (expected alerts), what the agent is
told (the task), how long it has, what the truth is (kept from the agent), and how it is judged.

The schema is versioned (``apiVersion``); fields are deprecated, never silently removed.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

API_VERSION = "itbench.io/v1"
DOMAINS = ("sre", "ciso", "finops")
COMPLEXITIES = ("easy", "medium", "hard")

_ID = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$")
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def parse_duration(value: Any) -> float:
    """Seconds from ``90``, ``"90s"``, ``"15m"``, ``"1h30m"``."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or text like 90s, 15m or 1h30m")
    if isinstance(value, (int, float)):
        if value <= 0:
            raise ValueError("a duration must be positive")
        return float(value)
    if isinstance(value, str):
        match = _DURATION.match(value.strip())
        if match and any(match.groups()):
            hours, minutes, seconds = (int(g or 0) for g in match.groups())
            total = hours * 3600 + minutes * 60 + seconds
            if total > 0:
                return float(total)
    raise ValueError(f"{value!r} is not a duration: write a number of seconds or text like 90s, 15m or 1h30m")


Duration = Annotated[float, Field(description="seconds; YAML may say 90s, 15m or 1h30m")]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ObjectRef(_Model):
    """A Kubernetes object a fault acts on."""

    kind: str
    name: str
    namespace: str | None = None
    apiVersion: str | None = None


class FaultSpec(_Model):
    """One fault from the registry, with its typed arguments (validated against the fault's own schema)."""

    fault: str
    target: ObjectRef | None = None
    args: dict[str, Any] = Field(default_factory=dict)


class ComplexityInputs(_Model):
    """ITBench's SRE complexity: the cube root of chain length x resolution steps x technologies."""

    chain_length: int = Field(ge=1)
    resolution_steps: int = Field(ge=1)
    technologies: int = Field(ge=1)

    # ITBench publishes the formula but not the band edges; these give its paper's split (about a
    # quarter easy, half medium, a quarter hard) over its SRE scenarios' inputs.
    EASY_BELOW: ClassVar[float] = 2.0
    HARD_FROM: ClassVar[float] = 3.0

    @property
    def score(self) -> float:
        return (self.chain_length * self.resolution_steps * self.technologies) ** (1 / 3)

    @property
    def band(self) -> str:
        score = self.score
        if score < self.EASY_BELOW - 1e-9:
            return "easy"
        if score < self.HARD_FROM - 1e-9:
            return "medium"
        return "hard"


class NtamSettings(_Model):
    """Topology-aware NTAM's parameters (docs/plugin.md, "Scoring (SRE)"); unset ones keep their defaults."""

    w: float | None = Field(default=None, gt=0, le=1)  # rank decay of a correct prediction (default 0.7)
    t: float | None = Field(default=None, gt=0, le=1)  # decay per hop of a near miss (default 0.8)
    g: float | None = Field(default=None, ge=0)  # penalty rate for too many or too few entities (default 1)


class Evaluation(_Model):
    """Which checks decide the outcome, and their settings."""

    require: tuple[str, ...] = ()
    stability_window: float = 300.0  # seconds the alerts must stay clear (warped) after the agent
    ntam: NtamSettings | None = None

    @field_validator("stability_window", mode="before")
    @classmethod
    def _duration(cls, value):
        return parse_duration(value)


class EntityGroup(_Model):
    """A set of Kubernetes entities that count as one answer (ITBench's groundtruth ``groups``)."""

    id: str
    kind: str
    namespace: str | None = None
    filter: tuple[str, ...] = ()  # regular expressions over the entity's name
    root_cause: bool = False

    @field_validator("filter")
    @classmethod
    def _regexes(cls, patterns):
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
        return patterns


class Propagation(_Model):
    source: str
    target: str
    condition: str = ""
    effect: str = ""


class SreGroundTruth(_Model):
    groups: tuple[EntityGroup, ...] = Field(min_length=1)
    aliases: tuple[tuple[str, ...], ...] = ()
    propagations: tuple[Propagation, ...] = ()
    recommended_actions: tuple[str, ...] = ()  # kubectl commands the oracle runs with the agent's rights

    @model_validator(mode="after")
    def _references(self):
        ids = [g.id for g in self.groups]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"group ids must be unique; repeated: {', '.join(dupes)}")
        known = set(ids)
        for alias in self.aliases:
            unknown = [a for a in alias if a not in known]
            if unknown:
                raise ValueError(f"aliases name unknown groups: {', '.join(unknown)}")
        for p in self.propagations:
            for end in (p.source, p.target):
                if end not in known:
                    raise ValueError(f"propagation {p.source} -> {p.target} names unknown group {end!r}")
        if not any(g.root_cause for g in self.groups):
            raise ValueError("at least one group must be marked root_cause: true")
        return self


class Scenario(_Model):
    """One scenario file."""

    apiVersion: Literal["itbench.io/v1"] = API_VERSION
    id: str
    title: str
    domain: Literal["sre", "ciso", "finops"]
    complexity: Literal["easy", "medium", "hard"] | None = None
    complexity_inputs: ComplexityInputs | None = None
    tags: tuple[str, ...] = ()
    application: str | None = None
    faults: tuple[FaultSpec, ...] = ()
    expected_alerts: tuple[str, ...] = ()
    task: str = Field(min_length=1)
    time_limit: float = 900.0
    evaluation: Evaluation = Evaluation()
    ground_truth: dict[str, Any]  # validated per domain (SreGroundTruth, ...) in Scenario.truth
    extra: dict[str, Any] = Field(default_factory=dict)  # domain-specific settings (CISO setup, FinOps budget)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("an id is lowercase letters, digits, '-' and '.', starting and ending with a letter "
                             "or digit")
        return value

    @field_validator("time_limit", mode="before")
    @classmethod
    def _time_limit(cls, value):
        return parse_duration(value)

    @model_validator(mode="after")
    def _consistent(self):
        if self.domain == "sre":
            if self.complexity_inputs is None:
                raise ValueError("an SRE scenario gives complexity_inputs (chain_length, resolution_steps, "
                                 "technologies); its complexity is computed from them")
            if self.complexity is not None and self.complexity != self.complexity_inputs.band:
                raise ValueError(f"complexity {self.complexity!r} contradicts complexity_inputs, which give "
                                 f"{self.complexity_inputs.band!r} (score {self.complexity_inputs.score:.2f})")
            if not self.application:
                raise ValueError("an SRE scenario names its application")
            SreGroundTruth.model_validate(self.ground_truth)
        elif self.complexity is None:
            raise ValueError(f"a {self.domain} scenario states its complexity (easy, medium or hard)")
        if not math.isfinite(self.time_limit):
            raise ValueError("time_limit must be finite")
        return self

    @property
    def level(self) -> str:
        """easy, medium or hard (computed for SRE)."""
        if self.complexity_inputs is not None:
            return self.complexity_inputs.band
        return self.complexity or "medium"

    @property
    def truth(self) -> SreGroundTruth | dict:
        if self.domain == "sre":
            return SreGroundTruth.model_validate(self.ground_truth)
        return self.ground_truth
