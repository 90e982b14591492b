"""Replica arithmetic of the deployment controller: surge and unavailability budgets, proportions, orderings.

Pure functions over Deployment and ReplicaSet dicts, after
pkg/controller/deployment/util in kube-controller-manager.
"""

from __future__ import annotations

import math

from .deployment_revisions import desired_replicas_annotation, max_replicas_annotation

MAX_INT32 = 2 ** 31 - 1


def replicas(obj: dict) -> int:
    """``spec.replicas`` of a Deployment or ReplicaSet (defaulted to 1 by the API server)."""
    value = obj["spec"].get("replicas")
    return 1 if value is None else value


def is_rolling_update(d: dict) -> bool:
    return (d["spec"].get("strategy") or {}).get("type") == "RollingUpdate"


def scaled_value(value: int | str | None, total: int, round_up: bool) -> int:
    """An int-or-percent against ``total`` (GetScaledValueFromIntOrPercent); percentages round as asked."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise ValueError(f"invalid type: string is not a percentage: {value!r}")
    fraction = int(value[:-1]) * total / 100
    return math.ceil(fraction) if round_up else math.floor(fraction)


def resolve_fenceposts(max_surge: int | str | None, max_unavailable: int | str | None,
                       desired: int) -> tuple[int, int]:
    """Surge (rounded up) and unavailability (rounded down); never both zero, or a rollout could not move."""
    surge = scaled_value(max_surge, desired, True)
    unavailable = scaled_value(max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _fenceposts(d: dict) -> tuple[int, int]:
    rolling = (d["spec"].get("strategy") or {}).get("rollingUpdate") or {}
    try:
        return resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"), replicas(d))
    except ValueError:
        return 0, 0  # validation keeps these out; upstream ignores the error here too


def max_surge(d: dict) -> int:
    return _fenceposts(d)[0] if is_rolling_update(d) else 0


def max_unavailable(d: dict) -> int:
    if not is_rolling_update(d) or replicas(d) == 0:
        return 0
    return min(_fenceposts(d)[1], replicas(d))


def total_replicas(rss: list[dict | None]) -> int:
    return sum(replicas(rs) for rs in rss if rs is not None)


def status_sum(rss: list[dict | None], field: str) -> int:
    """The sum of one status counter over ReplicaSets (replicas, readyReplicas, availableReplicas)."""
    return sum((rs.get("status") or {}).get(field, 0) for rs in rss if rs is not None)


def active(rss: list[dict | None]) -> list[dict]:
    """ReplicaSets that have, or ought to have, pods."""
    return [rs for rs in rss if rs is not None and replicas(rs) > 0]


def new_rs_replicas(d: dict, all_rss: list[dict | None], new_rs: dict) -> int:
    """How many replicas the new ReplicaSet may have now."""
    strategy = (d["spec"].get("strategy") or {}).get("type")
    if strategy == "Recreate":
        return replicas(d)
    if strategy != "RollingUpdate":
        raise ValueError(f"deployment type {strategy} isn't supported")
    surge = scaled_value(((d["spec"].get("strategy") or {}).get("rollingUpdate") or {}).get("maxSurge"),
                         replicas(d), True)
    current = total_replicas(all_rss)
    most = replicas(d) + surge
    if current >= most:
        return replicas(new_rs)
    return replicas(new_rs) + min(most - current, replicas(d) - replicas(new_rs))


def is_saturated(d: dict, rs: dict | None) -> bool:
    """The ReplicaSet holds, wants and has available all the Deployment's replicas."""
    if rs is None:
        return False
    want = replicas(d)
    return replicas(rs) == want and desired_replicas_annotation(rs) == want and \
        (rs.get("status") or {}).get("availableReplicas", 0) == want


def by_creation(rss: list[dict]) -> list[dict]:
    """Oldest first; names break ties."""
    return sorted(rss, key=lambda rs: (rs["metadata"].get("creationTimestamp", ""), rs["metadata"]["name"]))


def active_or_latest(new_rs: dict | None, old_rss: list[dict]) -> dict | None:
    """The only active ReplicaSet, or the newest when none is active; None when several are active."""
    if new_rs is None and not old_rss:
        return None
    newest_first = list(reversed(by_creation(old_rss)))
    candidates = active(newest_first + [new_rs])
    if not candidates:
        return new_rs if new_rs is not None else newest_first[0]
    return candidates[0] if len(candidates) == 1 else None


def by_size_newer(rss: list[dict]) -> list[dict]:
    """Largest first; among equals the newest (scaling up gives new ReplicaSets their share first)."""
    return sorted(by_creation(rss)[::-1], key=lambda rs: -replicas(rs))


def by_size_older(rss: list[dict]) -> list[dict]:
    """Largest first; among equals the oldest (scaling down takes from old ReplicaSets first)."""
    return sorted(by_creation(rss), key=lambda rs: -replicas(rs))


def proportion(rs: dict, d: dict, to_add: int, added: int) -> int:
    """This ReplicaSet's share of ``to_add`` more (or fewer) replicas, ``added`` being already handed out."""
    if replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = _fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _fraction(rs: dict, d: dict) -> int:
    if replicas(d) == 0:
        return -replicas(rs)
    deployment_replicas = replicas(d) + max_surge(d)
    annotated = max_replicas_annotation(rs)
    if annotated is None:
        annotated = (d.get("status") or {}).get("replicas", 0)
    if annotated == 0:
        return 0
    return _round_half_away(replicas(rs) * deployment_replicas / annotated) - replicas(rs)


def _round_half_away(x: float) -> int:
    """Go's math.Round: halves away from zero (Python's round() goes to even)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))
