"""What workload controllers read from a pod's status: active, ready, available (k8s.io/kubernetes/pkg/api/v1/pod)."""

from __future__ import annotations

from ..clock import parse_time


def is_active(pod: dict) -> bool:
    """Neither finished nor being deleted: a pod that counts towards a controller's replicas."""
    return pod.get("status", {}).get("phase") not in ("Succeeded", "Failed") and \
        not pod["metadata"].get("deletionTimestamp")


def ready_condition(pod: dict) -> dict | None:
    for cond in pod.get("status", {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return cond
    return None


def is_ready(pod: dict) -> bool:
    cond = ready_condition(pod)
    return cond is not None and cond.get("status") == "True"


def ready_since(pod: dict) -> float | None:
    """When a ready pod became ready (its Ready condition's lastTransitionTime); None if not ready."""
    cond = ready_condition(pod)
    if cond is None or cond.get("status") != "True" or not cond.get("lastTransitionTime"):
        return None
    return parse_time(cond["lastTransitionTime"])


def is_available(pod: dict, min_ready_seconds: int, now: float) -> bool:
    """Ready, and for longer than ``minReadySeconds``."""
    if not is_ready(pod):
        return False
    if not min_ready_seconds:
        return True
    since = ready_since(pod)
    return since is not None and since + min_ready_seconds < now


def restart_counts(pod: dict) -> tuple[int, int]:
    """The highest restart count among regular containers, then among sidecars (restartable init containers)."""
    status = pod.get("status", {})
    regular = max((c.get("restartCount") or 0 for c in status.get("containerStatuses") or ()), default=0)
    sidecars = {c.get("name") for c in pod.get("spec", {}).get("initContainers") or ()
                if c.get("restartPolicy") == "Always"}
    sidecar = max((c.get("restartCount") or 0 for c in status.get("initContainerStatuses") or ()
                   if c.get("name") in sidecars), default=0)
    return regular, sidecar
