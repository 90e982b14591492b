"""Which pods a ReplicaSet deletes first when it has too many (ActivePodsWithRanks in kube-controller-manager).

Pods earlier in start-up go first, so a scale-down removes the least useful
ones: unscheduled before scheduled, Pending before Unknown before Running,
not ready before ready, a lower ``controller.kubernetes.io/pod-deletion-cost``
first, pods doubled up on a node with their siblings before lone ones, the
most recently ready first (in power-of-two buckets of age, as
LogarithmicScaleDown does), the most restarted first, and the youngest
first.
"""

from __future__ import annotations

import functools
import math
import re

from ..clock import parse_time
from .pod_readiness import is_active, is_ready, ready_since, restart_counts

DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}  # other phases rank with Pending
_INT32 = (-2 ** 31, 2 ** 31 - 1)
_DECIMAL = re.compile(r"[+-]?[0-9]+")  # what Go's strconv.ParseInt accepts


def pods_to_delete(pods: list[dict], related: list[dict], count: int, now: float) -> list[dict]:
    """The ``count`` pods of ``pods`` to delete; ``related`` are the pods of every ReplicaSet of the same owner."""
    if count >= len(pods):
        return list(pods)
    on_node: dict[str, int] = {}
    for pod in related:
        if is_active(pod):
            node = pod.get("spec", {}).get("nodeName", "")
            on_node[node] = on_node.get(node, 0) + 1
    ranked = [_Ranked(pod, on_node.get(pod.get("spec", {}).get("nodeName", ""), 0), now) for pod in pods]
    ranked.sort(key=functools.cmp_to_key(_compare))
    return [r.pod for r in ranked[:count]]


class _Ranked:
    __slots__ = ("pod", "rank", "now", "node", "phase", "ready", "cost")

    def __init__(self, pod: dict, rank: int, now: float):
        self.pod = pod
        self.rank = rank  # active siblings on the same node
        self.now = now
        self.node = pod.get("spec", {}).get("nodeName", "")
        self.phase = _PHASE_ORDER.get(pod.get("status", {}).get("phase", ""), 0)
        self.ready = is_ready(pod)
        self.cost = deletion_cost(pod)


def _compare(a: _Ranked, b: _Ranked) -> int:
    if _less(a, b):
        return -1
    if _less(b, a):
        return 1
    return 0


def _less(a: _Ranked, b: _Ranked) -> bool:
    if a.node != b.node and (not a.node or not b.node):
        return not a.node
    if a.phase != b.phase:
        return a.phase < b.phase
    if a.ready != b.ready:
        return not a.ready
    if a.cost != b.cost:
        return a.cost < b.cost
    if a.rank != b.rank:
        return a.rank > b.rank
    if a.ready and b.ready:
        ta, tb = ready_since(a.pod), ready_since(b.pod)
        if ta != tb:
            return _newer_first(a, b, ta, tb)
    ra, rb = restart_counts(a.pod), restart_counts(b.pod)
    if ra[0] != rb[0]:
        return ra[0] > rb[0]
    if ra[1] != rb[1]:
        return ra[1] > rb[1]
    ca, cb = _created(a.pod), _created(b.pod)
    if ca != cb:
        return _newer_first(a, b, ca, cb)
    return False


def _newer_first(a: _Ranked, b: _Ranked, ta: float | None, tb: float | None) -> bool:
    """The younger first, by power-of-two buckets of age; within a bucket by uid. A missing time is youngest."""
    if ta is None or tb is None:
        return ta is None
    diff = _age_bucket(ta, a.now) - _age_bucket(tb, a.now)
    if diff == 0:
        return a.pod["metadata"].get("uid", "") < b.pod["metadata"].get("uid", "")
    return diff < 0


def _age_bucket(t: float, now: float) -> int:
    nanos = (now - t) * 1e9
    return int(math.log2(nanos)) if nanos > 0 else -1


def _created(pod: dict) -> float | None:
    stamp = pod["metadata"].get("creationTimestamp")
    return parse_time(stamp) if stamp else None


def deletion_cost(pod: dict) -> int:
    """The pod-deletion-cost annotation; 0 when absent or not an int32."""
    value = (pod["metadata"].get("annotations") or {}).get(DELETION_COST_ANNOTATION)
    if value is None or not _DECIMAL.fullmatch(value):
        return 0
    cost = int(value)
    return cost if _INT32[0] <= cost <= _INT32[1] else 0
