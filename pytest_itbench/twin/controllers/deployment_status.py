"""A Deployment's status: counts from its ReplicaSets, and the Available, Progressing and ReplicaFailure conditions.

Reasons and messages are kube-controller-manager's (pkg/controller/deployment),
so ``kubectl describe``, ``kubectl rollout status`` and anything that reads
conditions see what they would on a real cluster.
"""

from __future__ import annotations

from ..clock import parse_time
from .deployment_replicas import MAX_INT32, max_unavailable, replicas, status_sum

AVAILABLE = "Available"
PROGRESSING = "Progressing"
REPLICA_FAILURE = "ReplicaFailure"

# Progressing reasons
REPLICA_SET_UPDATED = "ReplicaSetUpdated"
FAILED_RS_CREATE = "ReplicaSetCreateError"
NEW_REPLICA_SET = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
# Available reasons
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"


def condition(status: dict, type_: str) -> dict | None:
    for cond in status.get("conditions") or ():
        if cond.get("type") == type_:
            return cond
    return None


def new_condition(type_: str, status: str, reason: str, message: str, stamp: str) -> dict:
    return {"type": type_, "status": status, "lastUpdateTime": stamp, "lastTransitionTime": stamp,
            "reason": reason, "message": message}


def set_condition(status: dict, cond: dict) -> None:
    """Add or replace a condition; the same status and reason again changes nothing, the same status keeps its
    lastTransitionTime."""
    current = condition(status, cond["type"])
    if current is not None and current.get("status") == cond["status"] and current.get("reason") == cond["reason"]:
        return
    if current is not None and current.get("status") == cond["status"]:
        cond = {**cond, "lastTransitionTime": current.get("lastTransitionTime")}
    status["conditions"] = [c for c in status.get("conditions") or () if c.get("type") != cond["type"]] + [cond]


def remove_condition(status: dict, type_: str) -> None:
    conditions = [c for c in status.get("conditions") or () if c.get("type") != type_]
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)


def has_progress_deadline(d: dict) -> bool:
    deadline = d["spec"].get("progressDeadlineSeconds")
    return deadline is not None and deadline != MAX_INT32


def has_revision_history_limit(d: dict) -> bool:
    limit = d["spec"].get("revisionHistoryLimit")
    return limit is not None and limit != MAX_INT32


def calculate_status(all_rss: list[dict | None], new_rs: dict | None, d: dict, stamp: str) -> dict:
    """The status the ReplicaSets add up to, with the Available condition brought up to date."""
    available = status_sum(all_rss, "availableReplicas")
    total = sum(replicas(rs) for rs in all_rss if rs is not None)
    current = d.get("status") or {}
    counts = {
        "observedGeneration": d["metadata"].get("generation", 0),
        "replicas": status_sum(all_rss, "replicas"),
        "updatedReplicas": status_sum([new_rs], "replicas"),
        "readyReplicas": status_sum(all_rss, "readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": max(total - available, 0),
    }
    status: dict = {k: v for k, v in counts.items() if v}  # Go omits zero counters (omitempty)
    if current.get("conditions"):
        status["conditions"] = [dict(c) for c in current["conditions"]]
    if "collisionCount" in current:
        status["collisionCount"] = current["collisionCount"]
    if available >= replicas(d) - max_unavailable(d):
        set_condition(status, new_condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE,
                                            "Deployment has minimum availability.", stamp))
    else:
        set_condition(status, new_condition(AVAILABLE, "False", MINIMUM_REPLICAS_UNAVAILABLE,
                                            "Deployment does not have minimum availability.", stamp))
    return status


def deployment_complete(d: dict, status: dict) -> bool:
    """Every desired replica updated and available, no old ones left, the latest spec observed."""
    want = replicas(d)
    return status.get("updatedReplicas", 0) == want and status.get("replicas", 0) == want and \
        status.get("availableReplicas", 0) == want and \
        status.get("observedGeneration", 0) >= d["metadata"].get("generation", 0)


def deployment_progressing(d: dict, new: dict) -> bool:
    """New pods were added or became ready or available, or old ones went away, since the last status."""
    old = d.get("status") or {}
    old_old = old.get("replicas", 0) - old.get("updatedReplicas", 0)
    new_old = new.get("replicas", 0) - new.get("updatedReplicas", 0)
    return new.get("updatedReplicas", 0) > old.get("updatedReplicas", 0) or new_old < old_old or \
        new.get("readyReplicas", 0) > old.get("readyReplicas", 0) or \
        new.get("availableReplicas", 0) > old.get("availableReplicas", 0)


def deployment_timed_out(d: dict, new: dict, now: float) -> bool:
    """No progress for longer than progressDeadlineSeconds since the Progressing condition last moved."""
    if not has_progress_deadline(d):
        return False
    cond = condition(new, PROGRESSING)
    if cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    return parse_time(cond["lastUpdateTime"]) + d["spec"]["progressDeadlineSeconds"] < now


def replica_failure(all_rss: list[dict | None], new_rs: dict | None) -> dict | None:
    """The ReplicaFailure condition of the new ReplicaSet (else of any other) as a Deployment condition."""
    for rs in ([new_rs] if new_rs is not None else []) + [rs for rs in all_rss if rs is not None]:
        for cond in (rs.get("status") or {}).get("conditions") or ():
            if cond.get("type") == REPLICA_FAILURE:
                stamp = cond.get("lastTransitionTime")
                return {"type": REPLICA_FAILURE, "status": cond.get("status"), "lastUpdateTime": stamp,
                        "lastTransitionTime": stamp, "reason": cond.get("reason"), "message": cond.get("message")}
    return None
