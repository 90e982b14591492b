"""The CronJob controller, as kube-controller-manager's cronjob controller v2 (v1.31).

Each sync of a CronJob:

* deletes the oldest finished Jobs beyond ``successfulJobsHistoryLimit`` and
  ``failedJobsHistoryLimit``;
* updates ``status.active`` from its Jobs (``SawCompletedJob`` when one
  finishes, ``MissingJob`` when one is gone) and ``lastSuccessfulTime``;
* finds the most recent scheduled time not yet run (on the twin's clock, in
  the schedule's ``timeZone``); if there is one and it is not past
  ``startingDeadlineSeconds`` (``MissSchedule``), applies the
  ``concurrencyPolicy`` (Forbid skips while a Job runs, Replace deletes the
  running ones) and creates the Job ``<cronjob>-<scheduled minutes since the
  epoch>`` with the ``batch.kubernetes.io/cronjob-scheduled-timestamp``
  annotation, setting ``lastScheduleTime``;
* looks again at the next scheduled time.

Only the most recent missed time is run: after a long suspension a CronJob
starts one Job, not one per missed time, as upstream.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from email.utils import format_datetime
from typing import Hashable, Iterable

from ..apiserver.validation.cron_schedule import ScheduleError
from ..clock import parse_time
from ..errors import AlreadyExists, Conflict, NotFound, StatusError
from ..store import Change, clone
from .controller_ref import controller_of, controller_ref
from .cron import CronSchedule, UnknownTimeZone, load_zone
from .events import EventSource
from .item_backoff import ItemBackoff
from .manager import Controller
from .workload_pods import namespace_terminating

log = logging.getLogger(__name__)

SOURCE = EventSource("cronjob-controller")
SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MANY_MISSED = 100  # beyond this many missed times, the controller warns of clock skew
UNSUPPORTED_TZ = ("CRON_TZ or TZ used in schedule {schedule} is not officially supported, see "
                  "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")


class CronJobController(Controller):
    name = "cronjob"
    watches = ("cronjobs.batch", "jobs.batch")

    def __init__(self, manager):
        super().__init__(manager)
        self.cronjobs = self.resource("batch", "v1", "cronjobs")
        self.jobs = self.resource("batch", "v1", "jobs")
        self.backoff = ItemBackoff()

    # ---- what to look at -------------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[Hashable]:
        if change.bucket == "jobs.batch":
            refs = [controller_of(change.obj)] + ([controller_of(change.old)] if change.old is not None else [])
            names = {r["name"] for r in refs if r is not None and r.get("kind") == "CronJob"}
            return [(change.obj["metadata"]["namespace"], name) for name in sorted(names)]
        meta = change.obj["metadata"]
        old = change.old
        if change.type == "MODIFIED" and old is not None and _schedule_of(old) != _schedule_of(change.obj):
            return (("schedule-changed", meta["namespace"], meta["name"]),)
        return ((meta["namespace"], meta["name"]),)

    def _rescheduled(self, namespace: str, name: str, now: float) -> None:
        """A new schedule is first looked at when it next fires, so changing it never starts a Job by itself."""
        cronjob = self.store.get("cronjobs.batch", namespace, name)
        if cronjob is None:
            return
        try:
            schedule = _schedule(cronjob)
        except (ScheduleError, UnknownTimeZone):
            self.events.record(cronjob, "Warning", "UnParseableCronJobSchedule",
                               f"unparseable schedule for cronjob: {cronjob['spec'].get('schedule', '')}", SOURCE)
            return
        after = _next_duration(cronjob, now, schedule)
        if after is not None:
            self.enqueue((namespace, name), after)

    # ---- sync ------------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable, now: float) -> float | None:
        if len(key) == 3:  # ("schedule-changed", namespace, name)
            self._rescheduled(key[1], key[2], now)
            return None
        ns, name = key
        cronjob = self.store.get("cronjobs.batch", ns, name)
        if cronjob is None:
            self.backoff.forget(key)
            return None
        jobs = [j for j in self.store.list("jobs.batch", ns)[0]
                if (ref := controller_of(j)) is not None and ref.get("kind") == "CronJob" and ref.get("name") == name]
        status = clone(cronjob.get("status") or {})
        try:
            changed = self._cleanup_finished(cronjob, status, jobs)
            after, synced = self._sync(cronjob, status, jobs, now)
            changed = changed or synced
        except Conflict:
            raise
        except StatusError as exc:
            log.debug("cronjob %s/%s: %s", ns, name, exc)
            if status != (cronjob.get("status") or {}):
                self._write_status(cronjob, status)
            return self.backoff.failure(key)
        if changed and status != (cronjob.get("status") or {}):
            self._write_status(cronjob, status)
        self.backoff.forget(key)
        return after

    def _sync(self, cronjob: dict, status: dict, jobs: list[dict], now: float) -> tuple[float | None, bool]:
        """syncCronJob: the seconds until the next look (None: not before a change), and whether the status
        changed."""
        changed = False
        children = {j["metadata"]["uid"] for j in jobs}
        for job in jobs:
            uid = job["metadata"]["uid"]
            active = _in_active(status, uid)
            finished = _finished_type(job)
            if not active and finished is None:
                self.events.record(cronjob, "Warning", "UnexpectedJob",
                                   f"Saw a job that the controller did not create or forgot: "
                                   f"{job['metadata']['name']}", SOURCE)
            elif active and finished is not None:
                _remove_active(status, uid)
                self.events.record(cronjob, "Normal", "SawCompletedJob",
                                   f"Saw completed job: {job['metadata']['name']}, status: {finished}", SOURCE)
                changed = True
            elif finished == "Complete":
                completed = (job.get("status") or {}).get("completionTime")
                last = status.get("lastSuccessfulTime")
                if completed and (last is None or parse_time(completed) > parse_time(last)):
                    status["lastSuccessfulTime"] = completed
                    changed = True
        for ref in list(status.get("active") or ()):
            if ref.get("uid") in children:
                continue
            if self.store.get("jobs.batch", ref.get("namespace", ""), ref.get("name", "")) is None:
                self.events.record(cronjob, "Normal", "MissingJob", f"Active job went missing: {ref.get('name')}",
                                   SOURCE)
                _remove_active(status, ref.get("uid"))
                changed = True
        if cronjob["metadata"].get("deletionTimestamp"):
            return None, changed
        spec = cronjob["spec"]
        if spec.get("timeZone") is not None:
            try:
                load_zone(spec["timeZone"])
            except UnknownTimeZone as exc:
                self.events.record(cronjob, "Warning", "UnknownTimeZone",
                                   f"invalid timeZone: {json.dumps(spec['timeZone'])}: {exc}", SOURCE)
                return None, changed
        if spec.get("suspend"):
            return None, changed
        if "TZ" in spec.get("schedule", ""):
            self.events.record(cronjob, "Warning", "UnsupportedSchedule",
                               UNSUPPORTED_TZ.format(schedule=json.dumps(spec["schedule"])), SOURCE)
        try:
            schedule = _schedule(cronjob)
        except (ScheduleError, UnknownTimeZone) as exc:
            self.events.record(cronjob, "Warning", "UnparseableSchedule",
                               f"unparseable schedule: {json.dumps(spec.get('schedule', ''))} : {exc}", SOURCE)
            return None, changed
        view = {**cronjob, "status": status}
        try:
            scheduled = _next_unmet(view, now, schedule)
        except _InvalidSchedule as exc:
            self.events.record(cronjob, "Warning", "InvalidSchedule",
                               f"invalid schedule: {spec.get('schedule', '')} : {exc}", SOURCE)
            return None, changed
        if scheduled is None:
            return _next_duration(view, now, schedule), changed
        if scheduled[1] > MANY_MISSED:
            self.events.record(cronjob, "Warning", "TooManyMissedTimes",
                               "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check "
                               "clock skew", SOURCE)
        scheduled_time = scheduled[0]
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and scheduled_time + deadline < now:
            moment = datetime.fromtimestamp(scheduled_time, timezone.utc)
            self.events.record(cronjob, "Warning", "MissSchedule",
                               f"Missed scheduled time to start a job: {_rfc1123z(moment)}", SOURCE)
            return _next_duration(view, now, schedule), changed
        job_name = job_name_for(cronjob, scheduled_time)
        last = status.get("lastScheduleTime")
        if any(ref.get("name") == job_name for ref in status.get("active") or ()) or \
                (last is not None and parse_time(last) == scheduled_time):
            return _next_duration(view, now, schedule), changed  # this time already has its Job
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and status.get("active"):
            self.events.record(cronjob, "Normal", "JobAlreadyActive",
                               "Not starting job because prior execution is running and concurrency policy is "
                               "Forbid", SOURCE)
            return _next_duration(view, now, schedule), changed
        if policy == "Replace":
            for ref in list(status.get("active") or ()):
                job = self.store.get("jobs.batch", ref.get("namespace", ""), ref.get("name", ""))
                if job is None:
                    self.events.record(cronjob, "Warning", "FailedGet",
                                       f'Get job: jobs.batch "{ref.get("name")}" not found', SOURCE)
                    raise NotFound("jobs.batch", ref.get("name", ""))
                self._delete_job(cronjob, status, job)
                changed = True
        created = self._create_job(cronjob, status, scheduled_time)
        if created is None:
            return None, changed
        status["active"] = [*(status.get("active") or ()), _reference(created)]
        status["lastScheduleTime"] = self.clock.timestamp(scheduled_time)
        view = {**cronjob, "status": status}
        return _next_duration(view, now, schedule), True

    # ---- jobs ----------------------------------------------------------------------------------------
    def _create_job(self, cronjob: dict, status: dict, scheduled_time: float) -> dict | None:
        """Create the Job for ``scheduled_time``; None when there is nothing more to do this sync."""
        job = job_from_template(cronjob, scheduled_time)
        try:
            created = self.create(self.jobs, job)
        except AlreadyExists:
            existing = self.store.get("jobs.batch", job["metadata"]["namespace"], job["metadata"]["name"])
            if existing is None:
                raise
            ref = controller_of(existing)
            if ref is None or ref.get("uid") != cronjob["metadata"]["uid"] or \
                    _in_active(status, existing["metadata"]["uid"]):
                return None  # someone else's Job, or already ours and listed
            return existing  # ours, but the status missed it
        except StatusError as exc:
            if not namespace_terminating(exc):
                self.events.record(cronjob, "Warning", "FailedCreate", f"Error creating job: {exc.message}", SOURCE)
            raise
        self.events.record(cronjob, "Normal", "SuccessfulCreate", f"Created job {created['metadata']['name']}",
                           SOURCE)
        return created

    def _delete_job(self, cronjob: dict, status: dict, job: dict) -> bool:
        meta = job["metadata"]
        try:
            self.delete(self.jobs, meta["namespace"], meta["name"], propagation="Background")
        except StatusError as exc:
            self.events.record(cronjob, "Warning", "FailedDelete", f"Deleted job: {exc.message}", SOURCE)
            return False
        _remove_active(status, meta["uid"])
        self.events.record(cronjob, "Normal", "SuccessfulDelete", f"Deleted job {meta['name']}", SOURCE)
        return True

    def _cleanup_finished(self, cronjob: dict, status: dict, jobs: list[dict]) -> bool:
        """Delete the oldest finished Jobs beyond the history limits; whether the status changed."""
        spec = cronjob["spec"]
        changed = False
        for kind, limit in (("Complete", spec.get("successfulJobsHistoryLimit")),
                            ("Failed", spec.get("failedJobsHistoryLimit"))):
            if limit is None:
                continue
            finished = sorted((j for j in jobs if _finished_type(j) == kind), key=_start_order)
            for job in finished[:max(len(finished) - limit, 0)]:
                changed = self._delete_job(cronjob, status, job) or changed
        return changed

    def _write_status(self, cronjob: dict, status: dict) -> None:
        current = self.store.get("cronjobs.batch", cronjob["metadata"]["namespace"], cronjob["metadata"]["name"])
        if current is None or current["metadata"]["uid"] != cronjob["metadata"]["uid"]:
            return
        if not status.get("active"):
            status.pop("active", None)
        self.update_status(self.cronjobs, {**current, "status": status})


class _InvalidSchedule(ValueError):
    """A schedule that parses but never fires (the 31st of February)."""


def job_name_for(cronjob: dict, scheduled_time: float) -> str:
    """``<cronjob>-<scheduled time in minutes since the epoch>``: one name per scheduled time."""
    return f"{cronjob['metadata']['name']}-{int(scheduled_time) // 60}"


def job_from_template(cronjob: dict, scheduled_time: float) -> dict:
    """getJobFromTemplate2: the template's labels, annotations and spec, the scheduled time, owned by the
    CronJob."""
    template = cronjob["spec"].get("jobTemplate") or {}
    source = template.get("metadata") or {}
    zone = load_zone(cronjob["spec"].get("timeZone"))
    annotations = dict(source.get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP] = _rfc3339(datetime.fromtimestamp(scheduled_time, zone))
    meta: dict = {"name": job_name_for(cronjob, scheduled_time), "namespace": cronjob["metadata"]["namespace"],
                  "annotations": annotations, "ownerReferences": [controller_ref(cronjob)]}
    if source.get("labels"):
        meta["labels"] = dict(source["labels"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": clone(template.get("spec") or {})}


def _schedule(cronjob: dict) -> CronSchedule:
    """formatSchedule then cron.ParseStandard: ``timeZone`` applies unless the schedule names its own TZ."""
    spec = cronjob["spec"]
    text = spec.get("schedule", "")
    if "TZ" in text:
        return CronSchedule(text)
    return CronSchedule(text, load_zone(spec.get("timeZone")))


def _most_recent(cronjob: dict, now: float, schedule: CronSchedule,
                 with_deadline: bool) -> tuple[float, float | None, int]:
    """mostRecentScheduleTime: (earliest time considered, the most recent unmet time or None, missed count)."""
    status = cronjob.get("status") or {}
    earliest = parse_time(status["lastScheduleTime"]) if status.get("lastScheduleTime") else \
        parse_time(cronjob["metadata"]["creationTimestamp"])
    deadline = cronjob["spec"].get("startingDeadlineSeconds")
    if with_deadline and deadline is not None:
        earliest = max(earliest, now - deadline)  # nothing older than this will be started
    first = schedule.next(earliest)
    if first is None:
        raise _InvalidSchedule("time difference between two schedules is less than 1 second")
    if now < first:
        return earliest, None, 0
    second = schedule.next(first)
    if second is not None and now < second:
        return earliest, first, 0
    interval = round(second - first) if second is not None else 0
    if interval < 1:
        raise _InvalidSchedule("time difference between two schedules is less than 1 second")
    missed = int(now - first) // interval + 1
    # Step back a little before the estimate and walk forward: irregular schedules (6-16/4) land right.
    moment = schedule.next(first + (missed - 2) * interval)
    recent = None
    while moment is not None and moment <= now:
        recent = moment
        moment = schedule.next(moment)
    return earliest, recent, missed


def _next_unmet(cronjob: dict, now: float, schedule: CronSchedule) -> tuple[float, int] | None:
    """nextScheduleTime: the most recent scheduled time at or before now not yet run, and how many were missed."""
    _, recent, missed = _most_recent(cronjob, now, schedule, with_deadline=True)
    if recent is None or recent > now:
        return None
    return recent, missed


def _next_duration(cronjob: dict, now: float, schedule: CronSchedule) -> float | None:
    """Seconds until the schedule next fires after its most recent time (the twin's clock has no skew to pad)."""
    try:
        earliest, recent, missed = _most_recent(cronjob, now, schedule, with_deadline=False)
    except _InvalidSchedule:
        earliest, recent, missed = now, now, 0
    if recent is None:
        recent = earliest if missed == 0 else now
    upcoming = schedule.next(recent)
    return None if upcoming is None else max(upcoming - now, 0.0)


def _schedule_of(cronjob: dict) -> tuple:
    spec = cronjob.get("spec") or {}
    return spec.get("schedule"), spec.get("timeZone")


def _finished_type(job: dict) -> str | None:
    for cond in (job.get("status") or {}).get("conditions") or ():
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            return cond["type"]
    return None


def _in_active(status: dict, uid: str) -> bool:
    return any(ref.get("uid") == uid for ref in status.get("active") or ())


def _remove_active(status: dict, uid: str | None) -> None:
    status["active"] = [ref for ref in status.get("active") or () if ref.get("uid") != uid]


def _reference(job: dict) -> dict:
    meta = job["metadata"]
    return {"kind": "Job", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"],
            "apiVersion": "batch/v1", "resourceVersion": meta["resourceVersion"]}


def _start_order(job: dict) -> tuple:
    """byJobStartTime: started Jobs first, earliest first, then by name."""
    start = (job.get("status") or {}).get("startTime")
    return (start is None, parse_time(start) if start else 0.0, job["metadata"]["name"])


def _rfc3339(moment: datetime) -> str:
    text = moment.isoformat(timespec="seconds")
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _rfc1123z(moment: datetime) -> str:
    """Go's time.RFC1123Z: ``Mon, 02 Jan 2006 15:04:05 -0700``."""
    return format_datetime(moment).replace("-0000", "+0000")
