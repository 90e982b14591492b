"""Taints and tolerations as the taint-eviction controller reads them (k8s.io/api/core/v1 helpers)."""

from __future__ import annotations


def tolerates(toleration: dict, taint: dict) -> bool:
    """Toleration.ToleratesTaint: an empty effect or key matches any; ``Exists`` ignores the value."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def matching_tolerations(taints: list[dict], tolerations: list[dict]) -> tuple[bool, list[dict]]:
    """Whether every taint is tolerated, and the first toleration that tolerates each."""
    used = []
    for taint in taints:
        found = next((t for t in tolerations if tolerates(t, taint)), None)
        if found is None:
            return False, []
        used.append(found)
    return True, used


def min_toleration_seconds(used: list[dict]) -> float | None:
    """How long the pod may stay: the shortest tolerationSeconds (0 when none is left), None for ever."""
    if not used:
        return 0.0
    seconds = [t["tolerationSeconds"] for t in used if t.get("tolerationSeconds") is not None]
    if not seconds:
        return None
    return float(max(0, min(seconds)))


def no_execute_taints(node: dict | None) -> list[dict]:
    return [t for t in ((node or {}).get("spec") or {}).get("taints") or () if t.get("effect") == "NoExecute"]
