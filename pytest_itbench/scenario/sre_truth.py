"""The ground truth SRE and FinOps scenarios share: ITBench's entity groups, aliases and propagation chain,
and the recommended actions the oracle runs."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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


