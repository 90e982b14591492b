"""The Job controller, as kube-controller-manager's job controller (v1.31), and the TTL-after-finished cleanup.

A sync of a Job that has not finished:

* claims its pods (adopted pods get the tracking finalizer) and counts the
  active, ready and terminating ones;
* decides whether the Job has failed (more failed pods than
  ``backoffLimit``, restarts past it with ``restartPolicy: OnFailure``, or
  ``activeDeadlineSeconds`` passed) or met its success criteria (enough
  succeeded pods, or an Indexed Job's ``successPolicy``). A failed Job's
  active pods are deleted;
* otherwise keeps ``min(parallelism, completions - succeeded)`` pods running:
  creates pods (named ``<job>-<5 chars>``, or ``<job>-<index>-<5 chars>`` with
  the completion index annotation, label, hostname and env for Indexed Jobs)
  with the ``batch.kubernetes.io/job-tracking`` finalizer, waiting out the
  pod-failure back-off first, or deletes the surplus; a suspended Job has its
  pods deleted and gets the ``Suspended`` condition;
* tracks finished pods as 1.31 does: their uids go to
  ``status.uncountedTerminatedPods``, their finalizers are removed, then they
  move to the ``succeeded``/``failed`` counters. The interim
  ``SuccessCriteriaMet``/``FailureTarget`` condition is written first; the
  terminal ``Complete``/``Failed`` one once no pod is uncounted or still
  terminating, with the ``Completed`` or failure-reason event.

Pod events are batched as upstream does: a pod change syncs its Job a second
later. A finished Job with ``ttlSecondsAfterFinished`` is deleted (in the
foreground) that long after it finished, as the ttl-after-finished
controller does; pods still holding the tracking finalizer after their Job
finished or went away get it removed (the controller's orphan-pod worker).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Hashable, Iterable

from ..apiserver.registry import DeleteOptions
from ..clock import parse_time
from ..errors import Conflict, NotFound, StatusError
from ..selectors import LabelSelector, SelectorError
from ..store import Change, clone
from . import job_indexes
from .controller_ref import controller_of
from .events import EventSource
from .item_backoff import ItemBackoff
from .job_backoff import BackoffRecord
from .manager import Controller
from .owner_index import OwnerIndex
from .pod_deletion_order import pods_to_delete
from .pod_readiness import is_active, is_ready
from .workload_pods import PodControl, TERMINAL_PHASES, claim_indexed, is_terminating, phase, pod_from_template

log = logging.getLogger(__name__)

SOURCE = EventSource("job-controller")
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
SYNC_BATCH_PERIOD = 1.0  # pod events sync their Job this much later
MAX_UNCOUNTED_PODS = 500
MAX_POD_CREATE_DELETE_PER_SYNC = 500
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")


class SyncFailed(Exception):
    """A pod create or delete the API refused; the sync is retried with back-off."""


@dataclass
class Finish:
    """The condition a sync decided the Job gets: interim (SuccessCriteriaMet, FailureTarget) or terminal."""

    type: str
    reason: str
    message: str

    @property
    def succeeded(self) -> bool:
        return self.type in ("SuccessCriteriaMet", "Complete")


@dataclass
class SyncState:
    job: dict
    status: dict
    pods: list[dict]
    active: list[dict]
    terminating: int
    ready: int
    succeeded: int
    failed: int
    record: BackoffRecord
    finish: Finish | None = None
    succeeded_indexes: set[int] = field(default_factory=set)
    requeue: list[float] = field(default_factory=list)
    failure: SyncFailed | None = None  # a refused create or delete: retried with back-off after the status


class JobController(Controller):
    name = "job"
    watches = ("jobs.batch", "pods")

    def __init__(self, manager):
        super().__init__(manager)
        self.jobs = self.resource("batch", "v1", "jobs")
        self.pods = self.resource("", "v1", "pods")
        self.pod_index = OwnerIndex("Job")
        self.pod_control = PodControl(self, SOURCE)
        self.backoff = ItemBackoff()
        self.records: dict[tuple[str, str], BackoffRecord] = {}

    # ---- what to look at -------------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[Hashable]:
        if change.bucket == "jobs.batch":
            return self._keys_for_job(change)
        self.pod_index.observe(change)
        return self._keys_for_pod(change)

    def _keys_for_job(self, change: Change) -> list[Hashable]:
        meta = change.obj["metadata"]
        key = (meta["namespace"], meta["name"])
        if change.type == "DELETED":
            # Its pods may still hold the tracking finalizer: release them.
            return [key] + [("orphan", ns, name) for ns, name in self.pod_index.owned(meta["uid"])]
        old = change.old
        if old is not None and old["metadata"].get("generation") == meta.get("generation"):
            self.enqueue(key, SYNC_BATCH_PERIOD)  # a status write: batched, as pod events are
            return []
        return [key]

    def _keys_for_pod(self, change: Change) -> list[Hashable]:
        pod, old = change.obj, change.old
        ns = pod["metadata"]["namespace"]
        refs = [controller_of(pod)] + ([controller_of(old)] if old is not None else [])
        owners = {ref["name"] for ref in refs if ref is not None and ref.get("kind") == "Job"}
        keys: list[Hashable] = []
        if refs[0] is None and change.type != "DELETED":
            if TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or ()):
                keys.append(("orphan", ns, pod["metadata"]["name"]))
            owners |= {j["metadata"]["name"] for j in self.store.list("jobs.batch", ns)[0] if _selects(j, pod)}
        elif refs[0] is not None and refs[0].get("kind") == "Job" and change.type != "DELETED" and \
                TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or ()):
            job = self.store.get("jobs.batch", ns, refs[0].get("name", ""))
            if job is None or job["metadata"]["uid"] != refs[0].get("uid"):
                keys.append(("orphan", ns, pod["metadata"]["name"]))  # its Job is gone
        for name in sorted(owners):
            self.enqueue((ns, name), SYNC_BATCH_PERIOD)
        return keys

    # ---- sync ------------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable, now: float) -> float | None:
        if len(key) == 3:  # ("orphan", namespace, pod)
            self._release_orphan(key[1], key[2])
            return None
        ns, name = key
        job = self.store.get("jobs.batch", ns, name)
        if job is None:
            self.backoff.forget(key)
            self.records.pop(key, None)
            return None
        if finished_condition(job) is not None:
            self.records.pop(key, None)
            self._release_finished_pods(job)
            return self._expire(job, now)
        if job["spec"].get("completionMode", "NonIndexed") not in ("NonIndexed", "Indexed"):
            self.events.record(job, "Warning", "UnknownCompletionMode",
                               "Skipped Job sync because completion mode is unknown", SOURCE)
            return None
        try:
            selector = LabelSelector.from_object(job["spec"].get("selector"))
        except SelectorError:
            return None
        if selector is None or selector.empty:
            return None
        try:
            after = self._sync(key, job, selector, now)
        except Conflict:
            raise
        except (SyncFailed, StatusError) as exc:
            log.debug("job %s/%s: %s", ns, name, exc)
            return self.backoff.failure(key)
        self.backoff.forget(key)
        return after

    def _sync(self, key: tuple[str, str], job: dict, selector: LabelSelector, now: float) -> float | None:
        pods = claim_indexed(self, job, selector, self.pod_index, self.pods, adopted=_with_tracking_finalizer)
        status = clone(job.get("status") or {})
        spec = job["spec"]
        indexed = spec.get("completionMode") == "Indexed"
        uncounted = status.get("uncountedTerminatedPods") or {}
        new_succeeded, new_failed = _newly_finished(job, pods, uncounted)
        active = [p for p in pods if is_active(p)]
        state = SyncState(
            job=job, status=status, pods=pods, active=active,
            terminating=sum(1 for p in pods if is_terminating(p) and phase(p) not in TERMINAL_PHASES),
            ready=sum(1 for p in active if is_ready(p)),
            succeeded=status.get("succeeded", 0) + len(new_succeeded) + len(uncounted.get("succeeded") or ()),
            failed=status.get("failed", 0) + len(new_failed) + len(uncounted.get("failed") or ()),
            record=self.records.get(key, BackoffRecord()).with_finished(new_succeeded, new_failed))
        if not status.get("startTime") and not _suspended(job):
            status["startTime"] = self.clock.timestamp(now)
        state.finish = self._decide_finish(state, now)
        if indexed:
            state.succeeded_indexes = _succeeded_indexes(job, pods)
            state.succeeded = len(state.succeeded_indexes)
            if state.finish is None:
                state.finish = _success_policy(job, state.succeeded_indexes)
        condition_changed = False
        active_count = len(active)
        if state.finish is not None:
            deleted, deleted_ready = self._delete_pods(state, active, keep_finalizers=True)
            active_count -= deleted
            state.terminating += deleted
            state.ready -= deleted_ready
        else:
            manage_called = not job["metadata"].get("deletionTimestamp")
            if manage_called:
                active_count = self._manage(state, now)
            if _complete(job, state.succeeded, active_count):
                state.finish = Finish("SuccessCriteriaMet", *COMPLETIONS_REACHED)
            elif manage_called:
                condition_changed = self._suspend_conditions(state, now)
        needs_flush = condition_changed or active_count != status.get("active", 0) or \
            state.ready != status.get("ready") or state.terminating != status.get("terminating")
        _set_count(status, "active", active_count)
        status["ready"] = state.ready
        status["terminating"] = state.terminating
        self._track(key, state, needs_flush, now)
        if state.failure is not None:
            raise state.failure
        return min(state.requeue) if state.requeue else None

    def _decide_finish(self, state: SyncState, now: float) -> Finish | None:
        job, status = state.job, state.status
        met = _true_condition(status, "SuccessCriteriaMet")
        if met is not None:
            return Finish("SuccessCriteriaMet", met.get("reason", ""), met.get("message", ""))
        target = _true_condition(status, "FailureTarget")
        if target is not None:
            return Finish("Failed", target.get("reason", ""), target.get("message", ""))
        spec = job["spec"]
        if state.failed > spec.get("backoffLimit", 6) or _past_backoff_limit_on_failure(job, state.pods):
            return Finish("FailureTarget", *BACKOFF_LIMIT_EXCEEDED)
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None and status.get("startTime") and not _suspended(job):
            remaining = parse_time(status["startTime"]) + deadline - now
            if remaining <= 0:
                return Finish("FailureTarget", *DEADLINE_EXCEEDED)
            state.requeue.append(remaining)
        return None

    # ---- managing pods -----------------------------------------------------------------------------
    def _manage(self, state: SyncState, now: float) -> int:
        """Create or delete pods towards the wanted number of active ones; the number active afterwards."""
        job = state.job
        spec = job["spec"]
        active = len(state.active)
        if _suspended(job):
            removed, removed_ready = self._delete_pods(state, state.active)
            state.terminating += removed
            state.ready -= removed_ready
            return active - removed
        parallelism = spec.get("parallelism", 1)
        completions = spec.get("completions")
        if completions is None:
            want = active if state.succeeded > 0 else parallelism
        else:
            want = max(min(completions - state.succeeded, parallelism), 0)
        surplus = _surplus(job, state.active, max(active - want, 0), now)[:MAX_POD_CREATE_DELETE_PER_SYNC]
        if surplus:
            removed, removed_ready = self._delete_pods(state, surplus)
            state.terminating += removed
            state.ready -= removed_ready
            return active - removed
        replacing = state.terminating if _only_replace_failed(job) else 0
        missing = want - replacing - active
        if missing <= 0:
            return active
        wait = state.record.remaining(now)
        if wait > 0:
            state.requeue.append(max(wait, SYNC_BATCH_PERIOD))
            return 0  # v1.31 reports no active pods while it waits out the back-off
        missing = min(missing, MAX_POD_CREATE_DELETE_PER_SYNC)
        indexes: list[int | None] = [None] * missing
        if spec.get("completionMode") == "Indexed":
            running = {job_indexes.index_of(p) for p in state.active}
            indexes = job_indexes.first_pending(missing, completions or 0, state.succeeded_indexes, running)
        return active + self._create_pods(state, indexes)

    def _create_pods(self, state: SyncState, indexes: list[int | None]) -> int:
        """Slow start: batches of 1, 2, 4 ...; a refused create ends it. How many were created."""
        job = state.job
        template = clone(job["spec"]["template"])
        if job["spec"].get("completionMode") == "Indexed":
            job_indexes.with_index_env(template)
        meta = template.setdefault("metadata", {})
        meta["finalizers"] = [*(f for f in meta.get("finalizers") or () if f != TRACKING_FINALIZER),
                              TRACKING_FINALIZER]
        created, position, batch = 0, 0, min(len(indexes), 1)
        while batch > 0:
            for index in indexes[position:position + batch]:
                try:
                    if self.pod_control.create(job, _job_pod(job, template, index)) is not None:
                        created += 1
                except StatusError as exc:
                    state.failure = state.failure or SyncFailed(exc.message)
            if state.failure is not None:
                break  # the rest wait for the retry
            position += batch
            batch = min(2 * batch, len(indexes) - position)
        return created

    def _delete_pods(self, state: SyncState, pods: list[dict], *, keep_finalizers: bool = False) -> tuple[int, int]:
        """Delete pods; (how many went, of which ready). deleteJobPods drops the tracking finalizer first, so the
        pod is not counted as failed; deleteActivePods (``keep_finalizers``) leaves it for tracking to count."""
        removed = ready = 0
        for pod in pods:
            try:
                if not keep_finalizers:
                    self._remove_finalizer(pod)
                self.pod_control.delete(state.job, pod["metadata"]["name"])
            except Conflict:
                raise
            except StatusError as exc:
                state.failure = state.failure or SyncFailed(exc.message)
                continue
            removed += 1
            ready += is_ready(pod)
        return removed, ready

    def _suspend_conditions(self, state: SyncState, now: float) -> bool:
        """The Suspended condition (and event) as the Job is suspended or resumed; whether it changed."""
        job, status = state.job, state.status
        if _suspended(job):
            changed = _ensure_condition(status, "Suspended", "True", "JobSuspended", "Job suspended",
                                        self.clock.timestamp(now))
            if changed:
                self.events.record(job, "Normal", "Suspended", "Job suspended", SOURCE)
            return changed
        changed = _ensure_condition(status, "Suspended", "False", "JobResumed", "Job resumed",
                                    self.clock.timestamp(now))
        if changed:
            self.events.record(job, "Normal", "Resumed", "Job resumed", SOURCE)
            # The deadline counts from the resumption, as for a Job created suspended.
            status["startTime"] = self.clock.timestamp(now)
        return changed

    # ---- tracking finished pods ---------------------------------------------------------------------
    def _track(self, key: tuple[str, str], state: SyncState, needs_flush: bool, now: float) -> None:
        """trackJobStatusAndRemoveFinalizers: count finished pods through uncountedTerminatedPods, then
        finish the Job when everything is counted."""
        job, status = state.job, state.status
        indexed = job["spec"].get("completionMode") == "Indexed"
        completions = job["spec"].get("completions") or 0
        uncounted = status.setdefault("uncountedTerminatedPods", {})
        with_finalizer = {p["metadata"]["uid"] for p in state.pods if _has_finalizer(p)}
        needs_flush = _count_released(status, with_finalizer) or needs_flush
        to_release: list[dict] = []
        for pod in state.pods:
            if not _has_finalizer(pod):
                continue
            considered_failed = _pod_failed(pod, job)
            if not (job["metadata"].get("deletionTimestamp") or state.finish is not None or
                    phase(pod) == "Succeeded" or considered_failed):
                continue
            to_release.append(pod)
            uid = pod["metadata"]["uid"]
            if phase(pod) == "Succeeded" and uid not in (uncounted.get("failed") or ()):
                if indexed:
                    continue  # the completion index is what counts, no uid needed
                if uid not in (uncounted.get("succeeded") or ()):
                    uncounted.setdefault("succeeded", []).append(uid)
                    needs_flush = True
            elif considered_failed or (state.finish is not None and not state.finish.succeeded):
                index = job_indexes.index_of(pod)
                if uid not in (uncounted.get("failed") or ()) and (not indexed or 0 <= index < completions):
                    uncounted.setdefault("failed", []).append(uid)
                    needs_flush = True
            if len(uncounted.get("succeeded") or ()) + len(uncounted.get("failed") or ()) >= MAX_UNCOUNTED_PODS:
                break
        if indexed:
            text = job_indexes.format_indexes(state.succeeded_indexes)
            if text != status.get("completedIndexes", ""):
                needs_flush = True
            _set_count(status, "succeeded", len(state.succeeded_indexes))
            if text:
                status["completedIndexes"] = text
            else:
                status.pop("completedIndexes", None)
        finish = state.finish
        stamp = self.clock.timestamp(now)
        if finish is not None and finish.type == "FailureTarget":
            status.setdefault("conditions", []).append(_condition("FailureTarget", "True", finish.reason,
                                                                  finish.message, stamp))
            needs_flush = True
            finish = Finish("Failed", finish.reason, finish.message)
        elif finish is not None and finish.type == "SuccessCriteriaMet":
            if _true_condition(status, "SuccessCriteriaMet") is None:
                status.setdefault("conditions", []).append(_condition("SuccessCriteriaMet", "True", finish.reason,
                                                                      finish.message, stamp))
                needs_flush = True
            finish = Finish("Complete", finish.reason, finish.message)
        _drop_empty(uncounted)
        if needs_flush:
            self._write_status(job, status)
            self.records[key] = state.record
        for pod in to_release:
            self._remove_finalizer(pod)
            with_finalizer.discard(pod["metadata"]["uid"])
        needs_flush = _count_released(status, with_finalizer)
        finished = finish is not None and self._enact_finished(status, finish, state.terminating, stamp)
        if needs_flush or finished:
            self._write_status(job, status)
        if finished:
            self._record_finished(job, status, finish)

    def _enact_finished(self, status: dict, finish: Finish, terminating: int, stamp: str) -> bool:
        uncounted = status.get("uncountedTerminatedPods") or {}
        if uncounted.get("succeeded") or uncounted.get("failed") or terminating > 0:
            return False  # every pod must be counted and gone first
        _ensure_condition(status, finish.type, "True", finish.reason, finish.message, stamp)
        if finish.type == "Complete":
            status["completionTime"] = stamp
        return True

    def _record_finished(self, job: dict, status: dict, finish: Finish) -> None:
        if finish.type == "Complete":
            completions = job["spec"].get("completions")
            if completions is not None and status.get("succeeded", 0) > completions:
                self.events.record(job, "Warning", "TooManySucceededPods",
                                   "Too many succeeded pods running after completion count reached", SOURCE)
            self.events.record(job, "Normal", "Completed", "Job completed", SOURCE)
        else:
            self.events.record(job, "Warning", finish.reason, finish.message, SOURCE)

    def _write_status(self, job: dict, status: dict) -> None:
        current = self.store.get("jobs.batch", job["metadata"]["namespace"], job["metadata"]["name"])
        if current is None or current["metadata"]["uid"] != job["metadata"]["uid"]:
            raise NotFound("jobs.batch", job["metadata"]["name"])
        if current.get("status") != status:
            self.update_status(self.jobs, {**job, "metadata": current["metadata"], "status": clone(status)})

    def _remove_finalizer(self, pod: dict) -> None:
        current = self.store.get("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
        if current is None or current["metadata"]["uid"] != pod["metadata"]["uid"] or not _has_finalizer(current):
            return
        updated = clone(current)
        finalizers = [f for f in current["metadata"]["finalizers"] if f != TRACKING_FINALIZER]
        if finalizers:
            updated["metadata"]["finalizers"] = finalizers
        else:
            del updated["metadata"]["finalizers"]
        try:
            self.update(self.pods, updated)
        except NotFound:
            pass

    # ---- finished and deleted Jobs ------------------------------------------------------------------------
    def _release_finished_pods(self, job: dict) -> None:
        for ns, name in self.pod_index.owned(job["metadata"]["uid"]):
            pod = self.store.get("pods", ns, name)
            if pod is not None and _has_finalizer(pod):
                self._remove_finalizer(pod)

    def _release_orphan(self, namespace: str, name: str) -> None:
        """syncOrphanPod: a pod whose Job is gone or finished no longer needs the tracking finalizer."""
        pod = self.store.get("pods", namespace, name)
        if pod is None or not _has_finalizer(pod):
            return
        ref = controller_of(pod)
        if ref is not None:
            if ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
                return
            job = self.store.get("jobs.batch", namespace, ref.get("name", ""))
            if job is not None and job["metadata"]["uid"] == ref.get("uid") and finished_condition(job) is None:
                return  # still tracked by its Job
        self._remove_finalizer(pod)

    def _expire(self, job: dict, now: float) -> float | None:
        """ttlSecondsAfterFinished: delete the Job (and, in the foreground, its pods) once its time is up."""
        ttl = job["spec"].get("ttlSecondsAfterFinished")
        if ttl is None or job["metadata"].get("deletionTimestamp"):
            return None
        cond = finished_condition(job)
        finished_at = parse_time(cond["lastTransitionTime"]) if cond and cond.get("lastTransitionTime") else now
        remaining = finished_at + ttl - now
        if remaining > 0:
            return remaining
        meta = job["metadata"]
        try:
            self.api.delete(self.jobs, meta["namespace"], meta["name"],
                            DeleteOptions(propagation="Foreground", uid=meta["uid"]), self.ctx)
        except (NotFound, Conflict):
            pass
        return None


# ---- pods of a Job ---------------------------------------------------------------------------------------

def _job_pod(job: dict, template: dict, index: int | None) -> dict:
    pod = pod_from_template(template, job)
    if index is not None:
        meta = pod["metadata"]
        meta.setdefault("annotations", {})[job_indexes.INDEX_KEY] = str(index)
        meta.setdefault("labels", {})[job_indexes.INDEX_KEY] = str(index)
        meta["generateName"] = job_indexes.generate_name(job["metadata"]["name"], index)
        pod["spec"]["hostname"] = f"{job['metadata']['name']}-{index}"
    return pod


def _with_tracking_finalizer(pod: dict) -> dict:
    if _has_finalizer(pod):
        return pod
    meta = dict(pod["metadata"])
    meta["finalizers"] = [*(meta.get("finalizers") or ()), TRACKING_FINALIZER]
    return {**pod, "metadata": meta}


def _has_finalizer(pod: dict) -> bool:
    return TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or ())


def _pod_failed(pod: dict, job: dict) -> bool:
    """isPodFailed: Failed, or (unless only failed pods are replaced) deleted before it succeeded."""
    if phase(pod) == "Failed":
        return True
    if _only_replace_failed(job):
        return False
    return is_terminating(pod) and phase(pod) != "Succeeded"


def _newly_finished(job: dict, pods: list[dict], uncounted: dict) -> tuple[list[dict], list[dict]]:
    """Finished pods still holding the finalizer and not yet in uncountedTerminatedPods."""
    indexed = job["spec"].get("completionMode") == "Indexed"
    completions = job["spec"].get("completions") or 0
    succeeded, failed = [], []
    for pod in pods:
        if not _has_finalizer(pod):
            continue
        if indexed and not 0 <= job_indexes.index_of(pod) < completions:
            continue
        uid = pod["metadata"]["uid"]
        if phase(pod) == "Succeeded" and uid not in (uncounted.get("succeeded") or ()):
            succeeded.append(pod)
        elif _pod_failed(pod, job) and uid not in (uncounted.get("failed") or ()):
            failed.append(pod)
    return succeeded, failed


def _succeeded_indexes(job: dict, pods: list[dict]) -> set[int]:
    completions = job["spec"].get("completions") or 0
    indexes = job_indexes.parse((job.get("status") or {}).get("completedIndexes"), completions)
    for pod in pods:
        index = job_indexes.index_of(pod)
        if phase(pod) == "Succeeded" and _has_finalizer(pod) and 0 <= index < completions:
            indexes.add(index)
    return indexes


def _surplus(job: dict, active: list[dict], at_least: int, now: float) -> list[dict]:
    """activePodsForRemoval: for Indexed Jobs first pods with a duplicate or invalid index, then the least
    advanced pods."""
    chosen: list[dict] = []
    left = list(active)
    if job["spec"].get("completionMode") == "Indexed":
        completions = job["spec"].get("completions") or 0
        by_index: dict[int, list[dict]] = {}
        left = []
        for pod in active:
            index = job_indexes.index_of(pod)
            if not 0 <= index < completions:
                chosen.append(pod)
            else:
                by_index.setdefault(index, []).append(pod)
        for index in sorted(by_index):
            group = by_index[index]
            if len(group) > 1:
                doomed = pods_to_delete(group, [], len(group) - 1, now)
                chosen += doomed
                group = [p for p in group if p not in doomed]
            left += group
    if len(chosen) < at_least:
        chosen += pods_to_delete(left, [], at_least - len(chosen), now)
    return chosen


def _past_backoff_limit_on_failure(job: dict, pods: list[dict]) -> bool:
    """With restartPolicy OnFailure failures show as restarts: their sum counts against backoffLimit."""
    spec = job["spec"]
    if (spec["template"].get("spec") or {}).get("restartPolicy") != "OnFailure":
        return False
    restarts = 0
    for pod in pods:
        if phase(pod) in ("Running", "Pending"):
            status = pod.get("status") or {}
            for group in ("initContainerStatuses", "containerStatuses"):
                restarts += sum(c.get("restartCount", 0) for c in status.get(group) or ())
    limit = spec.get("backoffLimit", 6)
    return restarts > 0 if limit == 0 else restarts >= limit


def _success_policy(job: dict, succeeded: set[int]) -> Finish | None:
    """An Indexed Job's successPolicy: the first rule its succeeded indexes satisfy."""
    completions = job["spec"].get("completions") or 0
    for number, rule in enumerate((job["spec"].get("successPolicy") or {}).get("rules") or ()):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = job_indexes.parse(rule["succeededIndexes"], completions)
            done = len(required & succeeded)
            met = done == len(required) if count is None else done >= count
        else:
            met = count is not None and len(succeeded) >= count
        if met:
            return Finish("SuccessCriteriaMet", "SuccessPolicy", f"Matched rules at index {number}")
    return None


# ---- status ------------------------------------------------------------------------------------------------

def finished_condition(job: dict) -> dict | None:
    """The Job's Complete or Failed condition, if it is True."""
    for cond in (job.get("status") or {}).get("conditions") or ():
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            return cond
    return None


def _true_condition(status: dict, type_: str) -> dict | None:
    for cond in status.get("conditions") or ():
        if cond.get("type") == type_ and cond.get("status") == "True":
            return cond
    return None


def _condition(type_: str, status: str, reason: str, message: str, stamp: str) -> dict:
    cond = {"type": type_, "status": status, "lastProbeTime": stamp, "lastTransitionTime": stamp}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


def _ensure_condition(status: dict, type_: str, value: str, reason: str, message: str, stamp: str) -> bool:
    """Set a condition (a new False one is not added); whether anything changed."""
    conditions = list(status.get("conditions") or ())
    for i, cond in enumerate(conditions):
        if cond.get("type") == type_:
            if (cond.get("status"), cond.get("reason", ""), cond.get("message", "")) == (value, reason, message):
                return False
            conditions[i] = _condition(type_, value, reason, message, stamp)
            status["conditions"] = conditions
            return True
    if value == "False":
        return False
    status["conditions"] = conditions + [_condition(type_, value, reason, message, stamp)]
    return True


def _count_released(status: dict, with_finalizer: set[str]) -> bool:
    """Move uncounted pods whose finalizer is gone to the succeeded/failed counters; whether any moved."""
    uncounted = status.setdefault("uncountedTerminatedPods", {})
    moved = False
    for kind in ("succeeded", "failed"):
        uids = uncounted.get(kind) or []
        remaining = [uid for uid in uids if uid in with_finalizer]
        if len(remaining) != len(uids):
            moved = True
            _set_count(status, kind, status.get(kind, 0) + len(uids) - len(remaining))
            uncounted[kind] = remaining
    _drop_empty(uncounted)
    return moved


def _drop_empty(uncounted: dict) -> None:
    for kind in ("succeeded", "failed"):
        if not uncounted.get(kind):
            uncounted.pop(kind, None)


def _set_count(status: dict, key: str, value: int) -> None:
    if value:
        status[key] = value
    else:
        status.pop(key, None)  # omitempty


def _complete(job: dict, succeeded: int, active: int) -> bool:
    completions = job["spec"].get("completions")
    if completions is None:
        return succeeded > 0 and active == 0  # any success completes a work-queue Job once the rest finish
    return succeeded >= completions and active == 0


def _suspended(job: dict) -> bool:
    return bool(job["spec"].get("suspend"))


def _only_replace_failed(job: dict) -> bool:
    spec = job["spec"]
    return spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None


def _selects(job: dict, pod: dict) -> bool:
    try:
        selector = LabelSelector.from_object(job["spec"].get("selector"))
    except SelectorError:
        return False
    return selector is not None and not selector.empty and selector.matches(pod["metadata"].get("labels"))
