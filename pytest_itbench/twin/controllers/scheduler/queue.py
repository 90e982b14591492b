"""The scheduling queue: active pods by priority, back-off, and pods parked as unschedulable.

As kube-scheduler's PriorityQueue (with queueing hints off, as in v1.31):

* a new pod is *active*; active pods are tried highest priority first, then
  in the order they arrived;
* a pod that failed is parked as *unschedulable* until a cluster event that
  one of the plugins that rejected it cares about, or for five minutes at
  most; then it waits out its back-off (1 s, doubled per attempt, 10 s at
  most) before it is active again;
* a pod that failed without a plugin to blame (an error), or while an event
  of interest happened during its attempt, goes straight to back-off.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field

from .podinfo import PodKey

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
MAX_IN_UNSCHEDULABLE = 300.0  # podMaxInUnschedulablePodsDuration

# The plugins each kind of cluster event may help (EventsToRegister of each plugin).
ALL_FILTERS = frozenset({"NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
                         "VolumeBinding", "PodTopologySpread", "InterPodAffinity"})
INTERESTED: dict[str, frozenset[str]] = {
    "NodeAdd": ALL_FILTERS,
    "NodeTaint": frozenset({"NodeUnschedulable", "TaintToleration", "NodePorts", "PodTopologySpread"}),
    "NodeLabel": frozenset({"NodeAffinity", "NodePorts", "VolumeBinding", "PodTopologySpread",
                            "InterPodAffinity"}),
    "NodeAllocatable": frozenset({"NodeResourcesFit", "NodePorts"}),
    "AssignedPodAdd": frozenset({"InterPodAffinity", "PodTopologySpread"}),
    "AssignedPodLabel": frozenset({"InterPodAffinity", "PodTopologySpread"}),
    "AssignedPodUpdate": frozenset({"InterPodAffinity"}),
    "AssignedPodDelete": frozenset({"NodeResourcesFit", "NodePorts", "InterPodAffinity", "PodTopologySpread"}),
    "PersistentVolumeClaim": frozenset({"VolumeBinding"}),
    "PersistentVolume": frozenset({"VolumeBinding"}),
    "StorageClass": frozenset({"VolumeBinding"}),
}
GATED = "SchedulingGates"  # a gated pod waits for an update of its own, not for cluster events


def backoff(attempts: int) -> float:
    duration = INITIAL_BACKOFF
    for _ in range(1, attempts):
        if duration > MAX_BACKOFF - duration:
            return MAX_BACKOFF
        duration += duration
    return duration


@dataclass
class QueuedPod:
    key: PodKey
    priority: int
    timestamp: float  # when it (re-)entered the queue
    attempts: int = 0
    rejectors: frozenset[str] = frozenset()
    cycle: int = 0  # the scheduling cycle of its last attempt
    where: str = "active"  # active, backoff, unschedulable, in-flight

    @property
    def backoff_expiry(self) -> float:
        return self.timestamp + backoff(self.attempts)


@dataclass
class SchedulingQueue:
    pods: dict[PodKey, QueuedPod] = field(default_factory=dict)
    _unschedulable: dict[PodKey, QueuedPod] = field(default_factory=dict)  # what cluster events look through
    _active: list = field(default_factory=list)  # heap of (-priority, timestamp, seq, key)
    _timers: list = field(default_factory=list)  # heap of (due, seq, key): back-off ends, unschedulable timeouts
    _seq: itertools.count = field(default_factory=itertools.count)
    cycle: int = 0
    _move_request_cycle: int = -1

    # ---- pods coming and going ------------------------------------------------------------------------
    def add(self, key: PodKey, priority: int, now: float) -> bool:
        """A new pending pod; True if it became active."""
        if key in self.pods:
            return False
        self.pods[key] = QueuedPod(key, priority, now)
        self._activate(self.pods[key])
        return True

    def updated(self, key: PodKey, now: float) -> bool:
        """The pod itself changed (labels, tolerations, gates...): an unschedulable one is worth a new try."""
        queued = self.pods.get(key)
        if queued is None or queued.where != "unschedulable":
            return False
        self._requeue(queued, now)
        return True

    def delete(self, key: PodKey) -> None:
        self.pods.pop(key, None)  # heap entries of a forgotten pod are skipped when they come up
        self._unschedulable.pop(key, None)

    def __contains__(self, key: PodKey) -> bool:
        return key in self.pods

    # ---- the scheduling loop --------------------------------------------------------------------------
    def pop(self, now: float) -> QueuedPod | None:
        """The next pod to try now, if any."""
        self._fire_timers(now)
        while self._active:
            _, _, _, key = heapq.heappop(self._active)
            queued = self.pods.get(key)
            if queued is None or queued.where != "active":
                continue
            self.cycle += 1
            queued.cycle = self.cycle
            queued.attempts += 1
            self._move(queued, "in-flight")
            return queued
        return None

    def done(self, key: PodKey) -> None:
        """Scheduled: the queue lets go of it."""
        self.delete(key)

    def failed(self, queued: QueuedPod, rejectors: set[str], now: float) -> None:
        if self.pods.get(queued.key) is not queued:
            return  # deleted (or re-created) while it was being tried
        queued.timestamp = now
        queued.rejectors = frozenset(rejectors)
        if queued.rejectors == {GATED}:
            self._move(queued, "unschedulable")  # until the pod's own update removes its gates
        elif not rejectors or self._move_request_cycle >= queued.cycle:
            self._backoff(queued)
        else:
            self._move(queued, "unschedulable")
            self._timer(now + MAX_IN_UNSCHEDULABLE, queued.key)

    def cluster_event(self, event: str, now: float) -> bool:
        """A change to the cluster: move the pods it may help; True if any moved."""
        interested = INTERESTED[event]
        self._move_request_cycle = self.cycle
        moved = False
        for queued in list(self._unschedulable.values()):
            if queued.rejectors & interested:
                self._requeue(queued, now)
                moved = True
        return moved

    def next_due(self) -> float | None:
        """When a timer (a back-off ending, an unschedulable pod's five minutes) next fires."""
        while self._timers:
            due, _, key = self._timers[0]
            queued = self.pods.get(key)
            if queued is not None and queued.where in ("backoff", "unschedulable"):
                return due
            heapq.heappop(self._timers)
        return None

    # ---- moving between the sub-queues ------------------------------------------------------------------
    def _move(self, queued: QueuedPod, where: str) -> None:
        queued.where = where
        if where == "unschedulable":
            self._unschedulable[queued.key] = queued
        else:
            self._unschedulable.pop(queued.key, None)

    def _activate(self, queued: QueuedPod) -> None:
        self._move(queued, "active")
        heapq.heappush(self._active, (-queued.priority, queued.timestamp, next(self._seq), queued.key))

    def _backoff(self, queued: QueuedPod) -> None:
        self._move(queued, "backoff")
        self._timer(queued.backoff_expiry, queued.key)

    def _requeue(self, queued: QueuedPod, now: float) -> None:
        if queued.backoff_expiry > now:
            self._backoff(queued)
        else:
            queued.timestamp = now
            self._activate(queued)

    def _timer(self, due: float, key: PodKey) -> None:
        heapq.heappush(self._timers, (due, next(self._seq), key))

    def _fire_timers(self, now: float) -> None:
        while self._timers and self._timers[0][0] <= now + 1e-9:
            due, _, key = heapq.heappop(self._timers)
            queued = self.pods.get(key)
            if queued is None:
                continue
            if queued.where == "backoff" and queued.backoff_expiry <= due + 1e-9:
                queued.timestamp = now
                self._activate(queued)
            elif queued.where == "unschedulable" and queued.rejectors != {GATED} and \
                    queued.timestamp + MAX_IN_UNSCHEDULABLE <= due + 1e-9:
                self._requeue(queued, now)
