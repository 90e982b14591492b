"""The Job controller's pod-failure back-off (pkg/controller/job/backoff_utils.go).

After a pod of a Job fails, its replacement waits 10 s, then 20 s, 40 s ...
doubling per failure since the last success, up to 10 minutes, counted from
when the last failed pod finished. A success resets the count (failures that
finished after it still count).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..clock import parse_time

DEFAULT_BACKOFF = 10.0
MAX_BACKOFF = 600.0


@dataclass(frozen=True)
class BackoffRecord:
    failures_after_last_success: int = 0
    last_failure: float | None = None

    def with_finished(self, succeeded: list[dict], failed: list[dict]) -> "BackoffRecord":
        """The record after newly finished pods are counted."""
        failed_times = sorted(finished_time(p) for p in failed)
        if not succeeded:
            if not failed_times:
                return self
            return BackoffRecord(self.failures_after_last_success + len(failed_times), failed_times[-1])
        last_success = max(finished_time(p) for p in succeeded)
        after = [t for t in failed_times if t > last_success]
        return BackoffRecord(len(after), after[-1] if after else None)

    def remaining(self, now: float) -> float:
        """Seconds until the next pod may be created."""
        if self.failures_after_last_success == 0 or self.last_failure is None:
            return 0.0
        backoff = min(DEFAULT_BACKOFF * 2 ** min(self.failures_after_last_success - 1, 32), MAX_BACKOFF)
        return max(backoff - (now - self.last_failure), 0.0)


def finished_time(pod: dict) -> float:
    """When a pod finished: its last container's finishedAt, else when it stopped being Ready, else when its
    deletion's grace period ends, else its creation."""
    status = pod.get("status") or {}
    latest = None
    for container in status.get("containerStatuses") or ():
        terminated = (container.get("state") or {}).get("terminated") or {}
        if not terminated.get("finishedAt"):
            latest = None
            break
        stamp = parse_time(terminated["finishedAt"])
        latest = stamp if latest is None or stamp > latest else latest
    if latest is not None:
        return latest
    for cond in status.get("conditions") or ():
        if cond.get("type") == "Ready" and cond.get("status") == "False" and cond.get("lastTransitionTime"):
            return parse_time(cond["lastTransitionTime"])
    meta = pod["metadata"]
    if meta.get("deletionTimestamp"):
        return parse_time(meta["deletionTimestamp"]) + (meta.get("deletionGracePeriodSeconds") or 0)
    return parse_time(meta["creationTimestamp"]) if meta.get("creationTimestamp") else 0.0
