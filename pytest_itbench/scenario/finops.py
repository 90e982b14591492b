"""The FinOps parts of a scenario file: the priced cluster the scenario builds (``finops:``) and its ground truth.

A FinOps scenario prices its cluster (OpenCost's custom pricing), may give it autoscaled node groups, and
sets the budget its cost alerts compare spend with. Its ground truth is SRE's (entity groups, aliases,
propagations, recommended actions) plus what an optimal repair reaches (the namespace's hourly CPU and
memory cost, its CPU and memory efficiency) and whether the budget itself was the fault.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .durations import parse_duration
from .sre_truth import SreGroundTruth

INSTANCE_TYPE_HINT = "an instance type of the twin's catalog, e.g. m5.large (docs/twin.md, 'Node groups')"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Pricing(_Model):
    """OpenCost custom pricing: dollars per vCPU-hour, per GiB-hour of memory, per GiB-hour of storage."""

    CPU: float = Field(gt=0)
    RAM: float = Field(gt=0)
    storage: float = Field(default=0.00005479, ge=0)


class NodeGroup(_Model):
    """An autoscaled node group: the cluster autoscaler keeps between min_size and max_size of its nodes."""

    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    instance_type: str = Field(min_length=1, description=INSTANCE_TYPE_HINT)
    min_size: int = Field(ge=0)
    max_size: int = Field(ge=1)
    labels: dict[str, str] = Field(default_factory=dict)
    taints: tuple[dict[str, str], ...] = ()

    @model_validator(mode="after")
    def _sizes(self):
        if self.min_size > self.max_size:
            raise ValueError(f"node group {self.name}: min_size {self.min_size} is above max_size {self.max_size}")
        return self


class Budget(_Model):
    """Hourly budgets in dollars: the application namespace's allocation, and the whole cluster's bill."""

    namespace: float | None = Field(default=None, gt=0)
    cluster: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _some(self):
        if self.namespace is None and self.cluster is None:
            raise ValueError("a budget gives namespace, cluster or both (dollars per hour)")
        return self


class Efficiency(_Model):
    """The efficiency (usage / request) below which the efficiency alerts fire, per resource."""

    cpu: float = Field(default=0.2, gt=0, lt=1)
    memory: float = Field(default=0.3, gt=0, lt=1)


class FinopsSetup(_Model):
    """The cluster a FinOps scenario builds after deploying its application and before its faults."""

    pricing: Pricing | None = None  # None: OpenCost's default custom prices
    node_groups: tuple[NodeGroup, ...] = ()
    budget: Budget
    efficiency: Efficiency = Efficiency()
    manifests: tuple[str, ...] = ()  # files (relative to the scenario) applied after the application: HPAs, ...
    settle: float = 600.0  # cluster seconds after setup: node groups at their minimum, usage rates filled

    @field_validator("settle", mode="before")
    @classmethod
    def _duration(cls, value):
        return parse_duration(value)

    @field_validator("node_groups")
    @classmethod
    def _unique(cls, groups):
        names = [g.name for g in groups]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"node group names must be unique; repeated: {', '.join(dupes)}")
        return groups


class Optimal(_Model):
    """What an optimal repair reaches, read over the application's namespace (ITBench's proximity targets)."""

    cpu_cost: float | None = Field(default=None, gt=0)  # dollars per hour
    memory_cost: float | None = Field(default=None, gt=0)
    cpu_efficiency: float | None = Field(default=None, gt=0, le=1)
    memory_efficiency: float | None = Field(default=None, gt=0, le=1)
    cluster_cost: float | None = Field(default=None, gt=0)  # dollars per hour, nodes and volumes


class FinopsGroundTruth(SreGroundTruth):
    optimal: Optimal = Optimal()
    # keep: spend was the fault, the budget was right and must not rise; raise: spend rose legitimately and
    # the budget is what must change (cutting the service to fit it is the wrong repair).
    budget: Literal["keep", "raise"] = "keep"
