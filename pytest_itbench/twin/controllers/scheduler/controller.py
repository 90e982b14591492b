"""kube-scheduler as a controller of the twin: assigns pending pods to nodes.

Every pod, node, claim, volume and storage-class change reaches ``keys_for``,
which keeps the scheduler's cache and queue current (as kube-scheduler's
informer handlers do) and asks for a scheduling round when a pod became
worth trying. A round tries the active pods, highest priority first: a pod
that fits is bound (after its volumes, when it has claims to bind); one that
does not gets ``PodScheduled=False`` and a FailedScheduling event with
upstream's message, after preemption has had its chance, and waits in the
queue for a cluster change or its back-off.
"""

from __future__ import annotations

import logging
from typing import Hashable, Iterable

from ...apiserver.pod_binding import bind_pod, set_pod_condition
from ...errors import Conflict, NotFound, StatusError
from ...store import Change
from ..events import EventSource
from ..manager import Controller
from . import algorithm
from .cache import ClusterCache
from .framework import ClusterView, CycleState
from .plugins import volume_binding
from .podinfo import PodInfo, PodKey, scheduling_fields_changed
from .preemption import Candidate, preempt
from .queue import GATED, QueuedPod, SchedulingQueue
from .volume_wait import BIND_TIMEOUT, TIMED_OUT, VolumeWait, claims_bound, write_plan

log = logging.getLogger(__name__)

SCHEDULER_NAME = "default-scheduler"
ROUND = "scheduling-round"  # the one work-queue key: the scheduler keeps its own queue of pods
NOTE_LIMIT = 1024  # events.k8s.io note length
_VOLUME_EVENTS = {"persistentvolumeclaims": "PersistentVolumeClaim", "persistentvolumes": "PersistentVolume",
                  "storageclasses.storage.k8s.io": "StorageClass"}


def _source(action: str) -> EventSource:
    return EventSource(SCHEDULER_NAME, new_api=True, action=action)


def truncate(message: str) -> str:
    return message if len(message) <= NOTE_LIMIT else message[:NOTE_LIMIT - 4] + " ..."


def _terminal(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def waits_for_us(pod: dict) -> bool:
    """A pod this scheduler must place: ours by name, not bound, not finished, not being deleted."""
    spec = pod.get("spec") or {}
    return (spec.get("schedulerName") or SCHEDULER_NAME) == SCHEDULER_NAME and not spec.get("nodeName") \
        and not _terminal(pod) and not pod["metadata"].get("deletionTimestamp")


def _pod_changed(old: dict, new: dict) -> bool:
    """isPodUpdated: anything but status and bookkeeping metadata changed."""
    def strip(pod: dict) -> tuple:
        meta = {k: v for k, v in pod["metadata"].items() if k not in ("resourceVersion", "generation",
                                                                          "managedFields")}
        return meta, pod.get("spec")
    return strip(old) != strip(new)


def _reference(pod: dict) -> dict:
    meta = pod["metadata"]
    return {"kind": "Pod", "apiVersion": "v1", "namespace": meta["namespace"], "name": meta["name"],
            "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", "")}


class Scheduler(Controller):
    name = "scheduler"
    identity = "system:kube-scheduler"
    field_manager = "kube-scheduler"
    watches = ("pods", "nodes", *_VOLUME_EVENTS)

    def __init__(self, manager):
        super().__init__(manager)
        self.cache = ClusterCache()
        self.pending = SchedulingQueue()
        self.volume_waits: dict[PodKey, VolumeWait] = {}
        self._binding: PodInfo | None = None  # the pod being bound: its binding's write need not be parsed again
        self.pods = self.resource("", "v1", "pods")
        self._writable = {"persistentvolumeclaims": self.resource("", "v1", "persistentvolumeclaims"),
                          "persistentvolumes": self.resource("", "v1", "persistentvolumes")}

    # ---- informer side: keep the cache and the queue current ---------------------------------------------
    def keys_for(self, change: Change) -> Iterable[Hashable]:
        try:
            worth_a_round = self._observe(change)
        except Exception:  # a write must never fail because the scheduler could not follow it
            log.exception("scheduler could not follow %s %s", change.type, change.bucket)
            worth_a_round = True
        return (ROUND,) if worth_a_round else ()

    def _observe(self, change: Change) -> bool:
        now = self.clock.now()
        if change.bucket == "pods":
            return self._observe_pod(change, now)
        if change.bucket == "nodes":
            if change.type == "DELETED":
                self.cache.remove_node(change.obj["metadata"]["name"])
                return False
            moved = False
            for event in sorted(self.cache.set_node(change.obj)):
                moved |= self.pending.cluster_event(event, now)
            return moved
        return self.pending.cluster_event(_VOLUME_EVENTS[change.bucket], now) or bool(self.volume_waits)

    def _observe_pod(self, change: Change, now: float) -> bool:
        pod = change.obj
        meta = pod["metadata"]
        key: PodKey = (meta["namespace"], meta["name"])
        gone = change.type == "DELETED" or _terminal(pod)
        event = self._follow_assigned(key, pod, change.old, gone)
        worth = False
        if not gone and waits_for_us(pod):
            nominated = (pod.get("status") or {}).get("nominatedNodeName")
            self.cache.set_nominated(key, PodInfo(pod) if nominated else None, nominated)
            if key not in self.pending:
                worth = self.pending.add(key, (pod.get("spec") or {}).get("priority") or 0, now)
            elif change.old is not None and _pod_changed(change.old, pod):
                worth = self.pending.updated(key, now)
        else:
            self.cache.set_nominated(key, None, None)
            self.pending.delete(key)
            if gone:
                self.volume_waits.pop(key, None)
        if event is not None:
            worth |= self.pending.cluster_event(event, now)
        return worth

    def _follow_assigned(self, key: PodKey, pod: dict, old: dict | None, gone: bool) -> str | None:
        """Keep the node totals right for a pod bound to a node; the kind of event it is, if any."""
        node_name = (pod.get("spec") or {}).get("nodeName")
        previous = self.cache.node_of(key)
        if node_name and not gone:
            if previous is None or self.cache.is_assumed(key) or previous != node_name:
                self.cache.add_pod(self._pod_info(pod, old), node_name)
                return "AssignedPodAdd"
            if old is not None and scheduling_fields_changed(old, pod):
                self.cache.add_pod(PodInfo(pod), node_name)
                labels_changed = old["metadata"].get("labels") != pod["metadata"].get("labels")
                return "AssignedPodLabel" if labels_changed else "AssignedPodUpdate"
            self.cache.pod(key).refresh(pod)
            return None
        if previous is not None and (gone or not self.cache.is_assumed(key)):
            self.cache.remove_pod(key)
            self.volume_waits.pop(key, None)
            return "AssignedPodDelete"
        return None

    def _pod_info(self, pod: dict, old: dict | None) -> PodInfo:
        binding = self._binding
        if binding is not None and binding.uid == pod["metadata"].get("uid") and old is not None and \
                not scheduling_fields_changed(old, pod):
            binding.refresh(pod)
            return binding
        return PodInfo(pod)

    # ---- scheduling rounds ------------------------------------------------------------------------------
    def reconcile(self, key: Hashable, now: float) -> float | None:
        # The cache is also changed by writes from other threads (API clients): hold the store's lock.
        with self.store.lock:
            view = ClusterView(self.cache.node_list, self._lookup, self._listing, self.cache)
            self._finish_volume_waits(now)
            while (queued := self.pending.pop(now)) is not None:
                try:
                    self._schedule_one(queued, view, now)
                except Exception as exc:  # one pod that cannot be handled must not stall the others
                    if isinstance(exc, StatusError):
                        log.info("scheduling %s/%s: %s", *queued.key, exc.message)
                    else:
                        log.exception("scheduling %s/%s failed", *queued.key)
                    self.pending.failed(queued, set(), now)
            due = [d for d in (self.pending.next_due(), *(w.deadline for w in self.volume_waits.values()))
                   if d is not None]
        return max(min(due) - now, 0.0) if due else None

    def _lookup(self, bucket: str, namespace: str, name: str) -> dict | None:
        return self.store.get(bucket, namespace, name)

    def _listing(self, bucket: str, namespace: str | None) -> list[dict]:
        return self.store.list(bucket, namespace)[0]

    def _schedule_one(self, queued: QueuedPod, view: ClusterView, now: float) -> None:
        namespace, name = queued.key
        pod = self.store.get(self.pods.bucket, namespace, name)
        if pod is None or not waits_for_us(pod):
            self.pending.delete(queued.key)
            return
        if (pod.get("spec") or {}).get("schedulingGates"):
            # Not tried until an update removes its gates (the API server wrote its SchedulingGated condition).
            self.pending.failed(queued, {GATED}, now)
            return
        state = CycleState(PodInfo(pod), view, now)
        try:
            node = algorithm.schedule(state, self.cache, self.rng)
        except algorithm.NoNodesAvailable as exc:
            self._fail(queued, pod, "Unschedulable", exc.message, set(), "", now)
            return
        except algorithm.FitError as exc:
            pdbs = self._listing("poddisruptionbudgets.policy", None)
            outcome = preempt(state, self.cache, exc.diagnosis, pdbs, self.rng)
            exc.diagnosis.post_filter_msg = outcome.message
            if outcome.candidate is not None:
                self._evict_victims(pod, outcome.candidate)
            self._fail(queued, pod, "Unschedulable", exc.message, exc.diagnosis.rejectors, outcome.nominate, now)
            return
        plan = volume_binding.plan_for(state, node)
        if plan is not None and (plan.static or plan.provision):
            self._bind_volumes_first(queued, state.pod, plan, node, now)
            return
        self.pending.done(queued.key)
        self._bind(pod, node, state.pod)

    # ---- outcomes -------------------------------------------------------------------------------------------
    def _bind(self, pod: dict, node: str, info: PodInfo | None = None) -> None:
        meta = pod["metadata"]
        self._binding = info
        try:
            bound = bind_pod(self.api, meta["namespace"], meta["name"], node, self.ctx, uid=meta.get("uid"))
        except (Conflict, NotFound) as exc:  # bound by someone else, or gone
            log.debug("binding %s/%s to %s: %s", meta["namespace"], meta["name"], node, exc.message)
            key = (meta["namespace"], meta["name"])
            if self.cache.is_assumed(key):
                self.cache.remove_pod(key)
            return
        finally:
            self._binding = None
        self.events.record(bound, "Normal", "Scheduled",
                           f"Successfully assigned {meta['namespace']}/{meta['name']} to {node}", _source("Binding"))

    def _fail(self, queued: QueuedPod, pod: dict, reason: str, message: str, rejectors: set[str],
              nominate: str | None, now: float) -> None:
        """handleSchedulingFailure: the event, the pod's condition (and nomination), and back to the queue."""
        self.events.record(pod, "Warning", "FailedScheduling", truncate(message), _source("Scheduling"))
        self.pending.failed(queued, rejectors, now)
        self._write_condition(pod, reason, message, nominate)

    def _write_condition(self, pod: dict, reason: str, message: str, nominate: str | None) -> None:
        meta = pod["metadata"]
        current = self.get(self.pods, meta["namespace"], meta["name"])
        if current is None or current["spec"].get("nodeName") or current["metadata"].get("uid") != meta.get("uid"):
            return
        status = current.setdefault("status", {})
        changed = set_pod_condition(status, {"type": "PodScheduled", "status": "False", "reason": reason,
                                             "message": message}, self.clock.timestamp())
        if nominate is not None and (status.get("nominatedNodeName") or "") != nominate:
            if nominate:
                status["nominatedNodeName"] = nominate
            else:
                status.pop("nominatedNodeName", None)
            changed = True
        if changed:
            self.update_status(self.pods, current)

    def _evict_victims(self, preemptor: dict, candidate: Candidate) -> None:
        """prepareCandidate: mark each victim as disrupted, delete it, say why; un-nominate lesser pods."""
        uid = preemptor["metadata"].get("uid", "")
        priority = (preemptor.get("spec") or {}).get("priority") or 0
        for victim in candidate.victims:
            namespace, name = victim.key
            current = self.get(self.pods, namespace, name)
            if current is None or current["metadata"].get("uid") != victim.uid:
                continue
            if set_pod_condition(current.setdefault("status", {}), {
                    "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                    "message": f"{SCHEDULER_NAME}: preempting to accommodate a higher priority pod"},
                    self.clock.timestamp()):
                current = self.update_status(self.pods, current)
            self.delete(self.pods, namespace, name, uid=victim.uid)
            self.events.record(current, "Normal", "Preempted", f"Preempted by pod {uid} on node {candidate.node}",
                               _source("Preempting"), related=_reference(preemptor))
        for other in list(self.cache.nominated_on(candidate.node)):
            if other.priority < priority:
                current = self.get(self.pods, *other.key)
                if current is not None and (current.get("status") or {}).pop("nominatedNodeName", None):
                    self.update_status(self.pods, current)

    # ---- volumes before the pod ----------------------------------------------------------------------------
    def _bind_volumes_first(self, queued: QueuedPod, pod: PodInfo, plan, node: str, now: float) -> None:
        """Reserve and PreBind: the pod stays in flight, counted on its node, until its claims are bound."""
        self.cache.assume(pod, node)
        try:
            claims = write_plan(self._lookup, self._write, plan, node)
        except StatusError as exc:
            self._volume_binding_failed(queued, pod.obj, f'running PreBind plugin "VolumeBinding": binding volumes: '
                                                         f'{exc.message}', now)
            return
        self.volume_waits[queued.key] = VolumeWait(queued, pod.uid, node, claims, now + BIND_TIMEOUT)

    def _write(self, bucket: str, obj: dict) -> None:
        self.update(self._writable[bucket], obj)

    def _finish_volume_waits(self, now: float) -> None:
        for key in sorted(self.volume_waits):
            wait = self.volume_waits[key]
            pod = self.store.get(self.pods.bucket, *key)
            if pod is None or pod["metadata"].get("uid") != wait.uid or not waits_for_us(pod):
                del self.volume_waits[key]
                self.cache.remove_pod(key)
                self.pending.delete(key)
            elif claims_bound(self._lookup, key[0], wait.claims):
                del self.volume_waits[key]
                self.pending.done(key)
                self._bind(pod, wait.node)
            elif now >= wait.deadline:
                self._volume_binding_failed(wait.queued, pod, TIMED_OUT, now)

    def _volume_binding_failed(self, queued: QueuedPod, pod: dict, message: str, now: float) -> None:
        self.volume_waits.pop(queued.key, None)
        self.cache.remove_pod(queued.key)
        self._fail(queued, pod, "SchedulerError", message, set(), None, now)
