"""What the Prometheus API reports about alerting and recording rules, and who provides it.

The rule evaluator (a later part of the twin) implements :class:`RulesProvider`;
``/api/v1/rules`` and ``/api/v1/alerts`` render its groups in Prometheus'
shape. Times are Unix seconds on the twin's clock; ``None`` means never.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Protocol, Sequence, Union


@dataclass(frozen=True)
class ActiveAlert:
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    state: str  # "pending" or "firing"
    active_at: float
    value: float
    keep_firing_since: Optional[float] = None


@dataclass(frozen=True)
class AlertingRuleStatus:
    name: str
    query: str
    duration: float  # the rule's `for`, seconds
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    alerts: Sequence[ActiveAlert] = ()
    state: str = "inactive"  # "inactive", "pending" or "firing": the most severe of its alerts
    health: str = "unknown"  # "ok", "err" or "unknown" (not evaluated yet)
    last_error: str = ""
    evaluation_time: float = 0.0  # seconds the last evaluation took
    last_evaluation: Optional[float] = None
    keep_firing_for: float = 0.0


@dataclass(frozen=True)
class RecordingRuleStatus:
    name: str
    query: str
    labels: Mapping[str, str] = field(default_factory=dict)
    health: str = "unknown"
    last_error: str = ""
    evaluation_time: float = 0.0
    last_evaluation: Optional[float] = None


RuleStatus = Union[AlertingRuleStatus, RecordingRuleStatus]


@dataclass(frozen=True)
class RuleGroupStatus:
    name: str
    file: str
    rules: Sequence[RuleStatus]
    interval: float  # seconds
    limit: int = 0
    evaluation_time: float = 0.0
    last_evaluation: Optional[float] = None


class RulesProvider(Protocol):
    def rule_groups(self) -> Sequence[RuleGroupStatus]:
        """The loaded rule groups in file order, with each rule's current state."""
