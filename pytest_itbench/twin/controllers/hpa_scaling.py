"""How far an HPA may move at once: stabilization windows, scaling policies and min/max.

As the horizontal-pod-autoscaler controller does: every sync records its
raw proposal. Without ``spec.behavior`` the scale-down is stabilized over
300 s (the highest recent proposal wins) and a scale-up is capped at
max(2 x current, 4) per sync. With ``behavior``, each direction has its
stabilization window and policies (Pods or Percent per period, the Max or
Min of them, or Disabled), applied to the scale events of that period.
Each step returns the reason and message the HPA's AbleToScale and
ScalingLimited conditions show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

DOWNSCALE_STABILIZATION = 300.0
SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4.0

READY_FOR_NEW_SCALE = ("ReadyForNewScale", "recommended size matches current size")
SCALE_DOWN_STABILIZED = ("ScaleDownStabilized", "recent recommendations were higher than current one, applying the "
                                                "highest recent recommendation")
SCALE_UP_STABILIZED = ("ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest "
                                            "recent recommendation")
WITHIN_RANGE = ("DesiredWithinRange", "the desired count is within the acceptable range")
TOO_MANY = ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
TOO_FEW = ("TooFewReplicas", "the desired replica count is less than the minimum replica count")
SCALE_UP_LIMIT = ("ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
SCALE_DOWN_LIMIT = ("ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate")


@dataclass
class ScalingHistory:
    """What one HPA remembers between syncs."""

    recommendations: list[tuple[float, int]] = field(default_factory=list)  # (time, raw proposal)
    scale_ups: list[tuple[float, int]] = field(default_factory=list)  # (time, replicas added)
    scale_downs: list[tuple[float, int]] = field(default_factory=list)  # (time, replicas removed)

    def record_initial(self, current: int, now: float) -> None:
        if not self.recommendations:
            self.recommendations.append((now, current))

    def record_scale(self, behavior: dict | None, before: int, after: int, now: float) -> None:
        if not behavior:
            return  # only policies read scale events
        rules = behavior.get("scaleUp" if after > before else "scaleDown") or {}
        longest = max((p.get("periodSeconds", 0) for p in rules.get("policies") or ()), default=0)
        events = self.scale_ups if after > before else self.scale_downs
        events[:] = [e for e in events if e[0] > now - longest]
        events.append((now, abs(after - before)))


# ---- without behavior ------------------------------------------------------------------------------------

def stabilize(history: ScalingHistory, proposal: int, now: float) -> int:
    """The highest proposal of the last 300 s (the downscale stabilization window)."""
    highest = proposal
    old = None
    for i, (when, replicas) in enumerate(history.recommendations):
        if when < now - DOWNSCALE_STABILIZATION:
            old = i
        elif replicas > highest:
            highest = replicas
    _record(history, old, proposal, now)
    return highest


def limit_by_rules(current: int, desired: int, min_replicas: int, max_replicas: int) -> tuple[int, tuple[str, str]]:
    """Min, max and the default scale-up limit of max(2 x current, 4)."""
    scale_up_limit = int(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM))
    if max_replicas > scale_up_limit:
        maximum, limiting = scale_up_limit, SCALE_UP_LIMIT
    else:
        maximum, limiting = max_replicas, TOO_MANY
    if desired < min_replicas:
        return min_replicas, TOO_FEW
    if desired > maximum:
        return maximum, limiting
    return desired, WITHIN_RANGE


# ---- with behavior -----------------------------------------------------------------------------------------

def stabilize_with_behavior(history: ScalingHistory, behavior: dict, current: int, proposal: int,
                            now: float) -> tuple[int, tuple[str, str]]:
    """Bring the proposal within the lowest (scale-up window) and highest (scale-down window) recent proposals."""
    up_window = (behavior.get("scaleUp") or {}).get("stabilizationWindowSeconds") or 0
    down_window = (behavior.get("scaleDown") or {}).get("stabilizationWindowSeconds")
    if down_window is None:
        down_window = DOWNSCALE_STABILIZATION
    up_recommendation = down_recommendation = proposal
    old = None
    for i, (when, replicas) in enumerate(history.recommendations):
        if when > now - up_window:
            up_recommendation = min(up_recommendation, replicas)
        if when > now - down_window:
            down_recommendation = max(down_recommendation, replicas)
        if when < now - up_window and when < now - down_window:
            old = i
    recommendation = min(max(current, up_recommendation), down_recommendation)
    _record(history, old, proposal, now)
    return recommendation, SCALE_UP_STABILIZED if proposal >= current else SCALE_DOWN_STABILIZED


def limit_by_behavior(history: ScalingHistory, behavior: dict, current: int, desired: int, min_replicas: int,
                      max_replicas: int, now: float) -> tuple[int, tuple[str, str]]:
    """Min, max and the scaling policies of the direction the HPA is moving in."""
    if desired > current:
        limit = max(_scale_up_limit(history, behavior.get("scaleUp") or {}, current, now), current)
        if max_replicas > limit:
            maximum, limiting = limit, SCALE_UP_LIMIT
        else:
            maximum, limiting = max_replicas, TOO_MANY
        if desired > maximum:
            return maximum, limiting
    elif desired < current:
        limit = min(_scale_down_limit(history, behavior.get("scaleDown") or {}, current, now), current)
        if min_replicas < limit:
            minimum, limiting = limit, SCALE_DOWN_LIMIT
        else:
            minimum, limiting = min_replicas, TOO_FEW
        if desired < minimum:
            return minimum, limiting
    return desired, WITHIN_RANGE


def _scale_up_limit(history: ScalingHistory, rules: dict, current: int, now: float) -> int:
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    proposals = []
    for policy in rules.get("policies") or ():
        start = current - _changed(history.scale_ups, policy, now) + _changed(history.scale_downs, policy, now)
        if policy.get("type") == "Pods":
            proposals.append(start + policy.get("value", 0))
        else:
            proposals.append(math.ceil(start * (1 + policy.get("value", 0) / 100)))
    if not proposals:
        return current
    return min(proposals) if select == "Min" else max(proposals)


def _scale_down_limit(history: ScalingHistory, rules: dict, current: int, now: float) -> int:
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    proposals = []
    for policy in rules.get("policies") or ():
        start = current - _changed(history.scale_ups, policy, now) + _changed(history.scale_downs, policy, now)
        if policy.get("type") == "Pods":
            proposals.append(start - policy.get("value", 0))
        else:
            proposals.append(int(start * (1 - policy.get("value", 0) / 100)))
    if not proposals:
        return current
    # The largest change is the lowest count, unless the policy asks for the smallest change.
    return max(proposals) if select == "Min" else min(proposals)


def _changed(events: list[tuple[float, int]], policy: dict, now: float) -> int:
    period = policy.get("periodSeconds", 0)
    return sum(change for when, change in events if when > now - period)


def _record(history: ScalingHistory, old: int | None, proposal: int, now: float) -> None:
    """Keep the raw proposal, in place of a sample older than every window if there is one."""
    if old is not None:
        history.recommendations[old] = (now, proposal)
    else:
        history.recommendations.append((now, proposal))
