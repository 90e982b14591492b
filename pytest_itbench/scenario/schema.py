"""The scenario file's schema: one YAML file per scenario, validated before anything runs.

A scenario says what environment to build (an application), what to break (faults from the registry,
with typed arguments), what must be seen before the agent starts (expected alerts), what the agent is
told (the task), how long it has, what the truth is (kept from the agent), and how it is judged.

The schema is versioned (``apiVersion``); fields are deprecated, never silently removed.
"""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .durations import parse_duration
from .finops import FinopsGroundTruth, FinopsSetup
from .sre_truth import EntityGroup, Propagation, SreGroundTruth  # noqa: F401  (re-exported)

API_VERSION = "itbench.io/v1"
DOMAINS = ("sre", "ciso", "finops")
COMPLEXITIES = ("easy", "medium", "hard")
# The classes within a domain (``category``). CISO's rhel9-ansible-opa runs on simulated RHEL 9 hosts
# (ciso.hosts, docs/ciso-hosts.md) instead of cluster objects.
CATEGORIES = {"ciso": ("kyverno", "kubectl-opa", "kyverno-update", "rhel9-ansible-opa")}
LATER_CATEGORIES: dict[str, tuple[str, ...]] = {}
HOSTS_CATEGORY = "rhel9-ansible-opa"
CISO_RESULTS = ("pass", "fail", "skip", "error", "warn")

TRUTH_PREFIX = "ground_truth."  # how the scenario's own check reports a ground-truth problem (the loader refines it)
_ID = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$")
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


# ---- CISO --------------------------------------------------------------------------------------------------------
_DEFAULT_ARTIFACTS = {"kubectl-opa": {"script": "script.sh", "policy": "policy.rego"},
                      "rhel9-ansible-opa": {"playbook": "playbook.yml", "policy": "policy.rego"},
                      "kyverno": {"policy": "policy.yaml"}, "kyverno-update": {"policy": "policy.yaml"}}


class ResourceRef(_Model):
    """A Kubernetes object in a CISO scenario's cluster (no namespace for cluster-scoped kinds)."""

    kind: str = Field(min_length=1)
    name: str = Field(min_length=1)
    namespace: str | None = None
    apiVersion: str | None = None

    def label(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


class PolicyRef(_Model):
    kind: Literal["ClusterPolicy", "Policy"] = "ClusterPolicy"
    name: str = Field(min_length=1)
    namespace: str | None = None

    @model_validator(mode="after")
    def _scoped(self):
        if self.kind == "Policy" and not self.namespace:
            raise ValueError("a Policy is namespaced: give its namespace")
        return self


class CisoSetup(_Model):
    """The cluster (or, for rhel9-ansible-opa, the simulated hosts) a CISO scenario builds before the agent starts;
    file paths relative to the scenario file."""

    namespaces: tuple[str, ...] = ()
    manifests: tuple[str, ...] = ()  # required except for rhel9-ansible-opa (Scenario._check_ciso)
    hosts: str | None = None  # rhel9-ansible-opa: YAML host states, the violating variant (docs/ciso-hosts.md)
    compliant_hosts: str | None = None  # rhel9-ansible-opa: the compliant variant of the same hosts
    compliant_manifests: tuple[str, ...] = ()
    existing_policies: tuple[str, ...] = ()
    keep_unchanged: tuple[PolicyRef, ...] = ()
    artifacts: dict[str, str] = Field(default_factory=dict)  # role -> file name the task asks for
    agent_rules: tuple[dict[str, Any], ...] = ()  # extra cluster-wide RBAC rules for the agent
    script_timeout: float = 60.0

    @field_validator("script_timeout", mode="before")
    @classmethod
    def _duration(cls, value):
        return parse_duration(value)

    @field_validator("artifacts")
    @classmethod
    def _plain_names(cls, artifacts):
        for role, name in artifacts.items():
            if not name or "/" in name or name in (".", ".."):
                raise ValueError(f"artifact {role}: {name!r} is a file name in the agent's workdir, without '/'")
        return artifacts

    @field_validator("agent_rules")
    @classmethod
    def _rules(cls, rules):
        for rule in rules:
            if not isinstance(rule.get("resources"), list) or not isinstance(rule.get("verbs"), list):
                raise ValueError("an RBAC rule gives apiGroups, resources and verbs as lists")
        return rules

    def files(self) -> list[tuple[tuple, str]]:
        """(field path, relative file) for every file the section names."""
        out = []
        for name in ("manifests", "compliant_manifests", "existing_policies"):
            out += [((name, i), f) for i, f in enumerate(getattr(self, name))]
        for name in ("hosts", "compliant_hosts"):
            if getattr(self, name):
                out.append(((name,), getattr(self, name)))
        return out


class ExpectedResult(_Model):
    """A result a Kyverno policy must produce on a resource."""

    resource: ResourceRef
    result: Literal["pass", "fail", "skip", "error", "warn"]
    policy: str | None = None
    rule: str | None = None


class CisoGroundTruth(_Model):
    violating: tuple[ResourceRef, ...] = Field(min_length=1)
    compliant: tuple[ResourceRef, ...] = ()
    expected: tuple[ExpectedResult, ...] = ()
    reference_solution: dict[str, str] = Field(default_factory=dict)  # role -> file, relative to the scenario
    recommended_actions: tuple[str, ...] = ()  # kubectl commands the oracle runs in its workdir


# ---- held-out variants (docs/plugin.md, "Held-out variants") -----------------------------------------------------
class VariantTarget(_Model):
    """One eligible target of a movable fault, by name (kind and namespace are the fault's target's)."""

    name: str = Field(min_length=1)
    # The alerts this target raises when they differ from the public target's (the scenario's expected_alerts).
    expected_alerts: tuple[str, ...] | None = None


class TargetSelector(_Model):
    """Eligible targets picked from the application's manifests: objects of the fault target's kind and
    namespace whose labels match, optionally only stateless workloads, less the names excluded."""

    matchLabels: dict[str, str] = Field(default_factory=dict)
    stateless: bool = False  # only workloads without a PersistentVolumeClaim volume
    exclude: tuple[str, ...] = ()


class Variants(_Model):
    """Where a fault's target can move: the targets ``--itbench-variant=N`` draws from (N > 0).

    ``fault`` is the index of the movable fault in ``faults``; its target there is the public one (variant 0).
    Give eligible ``targets`` (names, or {name, expected_alerts}) or a ``select``or over the application's
    manifests; pytest_itbench/scenario/variants.py checks them against the application and draws."""

    fault: int = Field(default=0, ge=0)
    targets: tuple[str | VariantTarget, ...] = ()
    select: TargetSelector | None = None

    @model_validator(mode="after")
    def _one_source(self):
        if bool(self.targets) == (self.select is not None):
            raise ValueError("variants gives either targets (a list of names) or select (a selector over the "
                             "application's manifests), not both and not neither")
        return self

    def listed(self) -> list[VariantTarget]:
        return [t if isinstance(t, VariantTarget) else VariantTarget(name=t) for t in self.targets]


def truth_model(domain: Any) -> type[_Model] | None:
    """The model a domain's ground truth is validated against, field by field (None: checked as a whole)."""
    return {"ciso": CisoGroundTruth, "finops": FinopsGroundTruth}.get(domain)


class Scenario(_Model):
    """One scenario file."""

    apiVersion: Literal["itbench.io/v1"] = API_VERSION
    id: str
    title: str
    domain: Literal["sre", "ciso", "finops"]
    category: str | None = None  # the class within the domain (CATEGORIES)
    complexity: Literal["easy", "medium", "hard"] | None = None
    complexity_inputs: ComplexityInputs | None = None
    tags: tuple[str, ...] = ()
    application: str | None = None
    faults: tuple[FaultSpec, ...] = ()
    expected_alerts: tuple[str, ...] = ()
    control: dict[str, str] | None = None  # the benchmark control (CISO): {benchmark, id}
    ciso: CisoSetup | None = None  # the CISO cluster's setup
    finops: FinopsSetup | None = None  # the FinOps cluster's pricing, node groups and budget
    task: str = Field(min_length=1)
    time_limit: float = 900.0
    evaluation: Evaluation = Evaluation()
    ground_truth: dict[str, Any]  # validated per domain (SreGroundTruth, ...) in Scenario.truth
    extra: dict[str, Any] = Field(default_factory=dict)  # domain-specific settings (CISO setup, FinOps budget)
    variants: Variants | None = None  # movable fault targets for --itbench-variant (held-out variants)
    noise: Literal["off", "light", "heavy"] | None = None  # noise during the trial (noise/); None: the domain's default

    @field_validator("noise", mode="before")
    @classmethod
    def _noise(cls, value):
        return "off" if value is False else value  # YAML 1.1 reads a bare `off` as false

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
        if self.noise not in (None, "off") and self.domain != "sre":
            raise ValueError(f"noise {self.noise!r}: only SRE scenarios take noise (a FinOps scenario is judged on "
                             "the bill, which noise would change; a CISO scenario has no application)")
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
        if self.domain == "ciso" and self.ciso is None and self.category is None:
            # No cluster to build and nothing for the CISO evaluator to grade: a stand-in graded by a
            # project's own evaluator (the plugin's tests use such). The catalog's all give both.
            return self
        self._check_category()
        if self.domain == "ciso":
            self._check_ciso()
        elif self.ciso is not None:
            raise ValueError(f"a {self.domain} scenario has no ciso section")
        if self.domain == "finops":
            self._check_finops()
        elif self.finops is not None:
            raise ValueError(f"a {self.domain} scenario has no finops section")
        return self

    def _check_category(self) -> None:
        known = CATEGORIES.get(self.domain, ())
        if self.category is None:
            if known:
                raise ValueError(f"a {self.domain} scenario names its category: one of {', '.join(known)}")
            return
        if not known:
            raise ValueError(f"a {self.domain} scenario has no category")
        if self.category in LATER_CATEGORIES.get(self.domain, ()):
            raise ValueError(f"category {self.category!r} is not supported yet; supported: {', '.join(known)}")
        if self.category not in known:
            raise ValueError(f"unknown {self.domain} category {self.category!r}; one of {', '.join(known)}")

    def _check_ciso(self) -> None:
        if self.ciso is None:
            raise ValueError("a ciso scenario has a ciso section (namespaces, manifests, ...)")
        try:
            truth = CisoGroundTruth.model_validate(self.ground_truth)
        except ValidationError as exc:  # the loader reports each problem at its line (truth_problems)
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValueError(f"{TRUTH_PREFIX}{where}: {first['msg']}") from None
        if self.category == HOSTS_CATEGORY:
            if not (self.ciso.hosts and self.ciso.compliant_hosts):
                raise ValueError("a rhel9-ansible-opa scenario gives ciso.hosts and ciso.compliant_hosts: YAML files "
                                 "of host states (violating and compliant variants), relative to the scenario")
            cluster = [n for n in ("manifests", "compliant_manifests", "existing_policies", "keep_unchanged",
                                   "agent_rules") if getattr(self.ciso, n)]
            if cluster:
                raise ValueError(f"a rhel9-ansible-opa scenario runs on hosts, not cluster objects: drop ciso."
                                 f"{', ciso.'.join(cluster)}")
            if truth.expected or truth.recommended_actions:
                raise ValueError("ground_truth.expected and recommended_actions have no meaning for rhel9-ansible-opa")
            return
        if self.ciso.hosts or self.ciso.compliant_hosts:
            raise ValueError(f"ciso.hosts and ciso.compliant_hosts belong to rhel9-ansible-opa, not {self.category}")
        if not self.ciso.manifests:
            raise ValueError("ciso.manifests: give at least one manifest file (the scenario's cluster objects)")
        if self.category == "kubectl-opa":
            if not self.ciso.compliant_manifests:
                raise ValueError("a kubectl-opa scenario gives ciso.compliant_manifests: the compliant variant of "
                                 "its violating resources")
            if truth.expected:
                raise ValueError("ground_truth.expected (Kyverno results) has no meaning for kubectl-opa")
        if self.category == "kyverno-update" and not self.ciso.existing_policies:
            raise ValueError("a kyverno-update scenario gives ciso.existing_policies: the policies the agent edits")
        if self.category == "kyverno-update" and not truth.expected:
            raise ValueError("a kyverno-update scenario lists ground_truth.expected: the results wanted per resource")

    def _check_finops(self) -> None:
        if self.finops is None:
            # As for CISO: no priced cluster to build and nothing for the FinOps evaluator to grade, a stand-in
            # graded by a project's own evaluator (the plugin's tests use such). The catalog's all give one.
            return
        if not self.application:
            raise ValueError("a finops scenario names its application")
        try:
            FinopsGroundTruth.model_validate(self.ground_truth)
        except ValidationError as exc:  # the loader reports each problem at its line (truth_problems)
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValueError(f"{TRUTH_PREFIX}{where}: {first['msg']}") from None

    def referenced_files(self) -> list[tuple[tuple, str]]:
        """(field path, file relative to the scenario file) for every file the scenario names."""
        if self.domain == "finops" and self.finops is not None:
            return [(("finops", "manifests", i), f) for i, f in enumerate(self.finops.manifests)]
        if self.domain != "ciso" or self.ciso is None:
            return []
        files = [(("ciso", *loc), f) for loc, f in self.ciso.files()]
        solution = self.ground_truth.get("reference_solution") or {}
        if isinstance(solution, dict):
            files += [(("ground_truth", "reference_solution", role), f) for role, f in solution.items()]
        return files

    @property
    def artifacts(self) -> dict[str, str]:
        """CISO: the file names the task asks for, by role (the category's defaults, then the scenario's)."""
        if self.domain != "ciso" or self.ciso is None:
            return {}
        return {**_DEFAULT_ARTIFACTS.get(self.category or "", {}), **self.ciso.artifacts}

    @property
    def level(self) -> str:
        """easy, medium or hard (computed for SRE)."""
        if self.complexity_inputs is not None:
            return self.complexity_inputs.band
        return self.complexity or "medium"

    @property
    def truth(self) -> SreGroundTruth | CisoGroundTruth | FinopsGroundTruth | dict:
        if self.domain == "finops":
            return FinopsGroundTruth.model_validate(self.ground_truth)
        if self.domain == "sre":
            return SreGroundTruth.model_validate(self.ground_truth)
        if self.domain == "ciso" and self.ciso is not None:
            return CisoGroundTruth.model_validate(self.ground_truth)
        return self.ground_truth
