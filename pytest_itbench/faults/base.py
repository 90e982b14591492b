"""What a fault is: typed arguments, an idempotent inject and a remove, through the Kubernetes API only.

A fault changes ordinary cluster state with the official client (ARCHITECTURE.md, rule 1), so the same
fault works on the twin and on a real cluster, and the twin's behaviour follows from the state alone
(rule 2). Injecting twice equals injecting once. What a fault needs to undo itself is kept by the
harness (a :class:`FaultRecord`), never written into the cluster where an agent could read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from kubernetes.client import ApiClient
from pydantic import BaseModel, ConfigDict

from ..scenario.schema import ObjectRef


class FaultArgs(BaseModel):
    """Base of every fault's argument model: unknown arguments are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoArgs(FaultArgs):
    pass


class FaultError(RuntimeError):
    """The fault could not be injected or removed: an environment problem, not the agent's."""


@dataclass
class FaultRecord:
    """What one injection changed, so that ``remove`` can put it back."""

    fault: str
    target: ObjectRef | None
    args: FaultArgs
    saved: dict[str, Any] = field(default_factory=dict)


class Fault:
    """A registered fault. Subclasses set ``name``, ``Args``, ``target_kinds``, ``expected_alerts``."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[FaultArgs]] = NoArgs
    target_kinds: ClassVar[tuple[str, ...]] = ("Deployment",)
    expected_alerts: ClassVar[tuple[str, ...]] = ()

    def check(self, target: ObjectRef | None, args: dict[str, Any]) -> FaultArgs:
        """Validate a scenario's target and arguments (raises ValueError / pydantic.ValidationError)."""
        if self.target_kinds and target is None:
            raise ValueError(f"the {self.name} fault needs a target of kind {' or '.join(self.target_kinds)}")
        if target is not None and self.target_kinds and target.kind not in self.target_kinds:
            raise ValueError(f"the {self.name} fault acts on {' or '.join(self.target_kinds)}, not {target.kind}")
        if target is not None and target.namespace is None and target.kind not in ("Node", "Namespace"):
            raise ValueError(f"the {self.name} fault's target needs a namespace")
        return self.Args.model_validate(args)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        raise NotImplementedError

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        raise NotImplementedError
