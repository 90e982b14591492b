"""Chaos Mesh's Schedule: an experiment spawned again and again on a cron schedule.

As Chaos Mesh's schedule controllers do: at each missed run since ``status.time`` (or the
schedule's creation), unless paused, spawn a child experiment of ``spec.type`` from the embedded
spec (``networkChaos``, ``podChaos``, ...), named ``<schedule>-<random suffix>``, labelled
``managed-by: <schedule>`` and owned by the schedule (events ``Spawned``, or ``Forbid`` while a
child is unfinished under ``concurrencyPolicy: Forbid``); keep ``status.active`` listing the
children; delete the oldest finished children beyond ``historyLimit``.
"""

from __future__ import annotations

from typing import Hashable, Iterable

from ...clock import format_time, parse_time
from ...controllers.cron import CronSchedule
from ...controllers.manager import Controller, ControllerManager
from ...store import Change, clone
from ..units import parse_go_duration
from .experiments import INJECTED, NOT_INJECTED, PAUSE_ANNOTATION, SOURCE
from .kinds import BY_KIND, KINDS

GROUP_VERSION = "chaos-mesh.org/v1alpha1"
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the API server's generateName alphabet
MAX_MISSED = 100


class ScheduleController(Controller):
    name = "chaos-mesh-schedule"
    identity = "system:serviceaccount:chaos-mesh:chaos-controller-manager"
    field_manager = "chaos-controller-manager"
    watches = ("schedules.chaos-mesh.org", *KINDS)

    def __init__(self, manager: ControllerManager):
        super().__init__(manager)
        self.schedules = self.resource("chaos-mesh.org", "v1alpha1", "schedules")

    def keys_for(self, change: Change) -> Iterable[Hashable]:
        meta = change.obj["metadata"]
        if change.bucket == "schedules.chaos-mesh.org":
            return [(meta.get("namespace", ""), meta["name"])]
        owner = (meta.get("labels") or {}).get("managed-by")
        return [(meta.get("namespace", ""), owner)] if owner else []

    def reconcile(self, key: Hashable, now: float) -> float | None:
        namespace, name = key
        stored = self.store.get("schedules.chaos-mesh.org", namespace, name)
        if stored is None or stored["metadata"].get("deletionTimestamp"):
            return None
        schedule = clone(stored)
        spec = schedule.get("spec") or {}
        kind = BY_KIND.get(spec.get("type") or "")
        if kind is None:
            self.events.record(schedule, "Warning", "Failed",
                               f"Failed to generate new object: unsupported type {spec.get('type')!r}", SOURCE)
            return None
        children = sorted((c for c in self.store.list(kind.bucket, namespace)[0]
                           if (c["metadata"].get("labels") or {}).get("managed-by") == name),
                          key=lambda c: (c["metadata"]["creationTimestamp"], c["metadata"]["name"]))
        after = self._spawn(schedule, kind, children, now)
        self._collect(schedule, children, now)
        children = [c for c in self.store.list(kind.bucket, namespace)[0]
                    if (c["metadata"].get("labels") or {}).get("managed-by") == name]
        status = schedule.setdefault("status", {})
        active = sorted(({"apiVersion": GROUP_VERSION, "kind": kind.kind, "name": c["metadata"]["name"],
                          "namespace": namespace, "resourceVersion": c["metadata"]["resourceVersion"],
                          "uid": c["metadata"]["uid"]} for c in children), key=lambda r: r["name"])
        status["active"] = active
        if schedule != stored:
            self.update(self.schedules, schedule)
        return after

    def _spawn(self, schedule: dict, kind, children: list[dict], now: float) -> float | None:
        """Spawn a child if a run is due; the seconds until the next run."""
        meta, spec = schedule["metadata"], schedule["spec"]
        if (meta.get("annotations") or {}).get(PAUSE_ANNOTATION) == "true":
            return None
        try:
            cron = CronSchedule(_five_fields(spec.get("schedule") or ""))
        except ValueError as exc:
            self.events.record(schedule, "Warning", "Failed",
                               f"Failed to get run time: unparseable schedule: {spec.get('schedule')} : {exc}", SOURCE)
            return None
        status = schedule.get("status") or {}
        earliest = parse_time(status["time"]) if status.get("time") else parse_time(meta["creationTimestamp"])
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None:
            earliest = max(earliest, now - deadline)
        missed, upcoming, count = None, cron.next(earliest), 0
        while upcoming is not None and upcoming <= now and count <= MAX_MISSED:
            missed, upcoming, count = upcoming, cron.next(upcoming), count + 1
        if missed is None:
            return None if upcoming is None else upcoming - now
        if (spec.get("concurrencyPolicy") or "Forbid") == "Forbid":
            running = next((c for c in children if not finished(c, now)), None)
            if running is not None:
                self.events.record(schedule, "Warning", "Forbid", "Forbid spawning new job because: "
                                   f"{running['metadata']['name']} is still running", SOURCE)
                return None if upcoming is None else upcoming - now
        child = self._child(schedule, kind)
        self.create(self.resource("chaos-mesh.org", "v1alpha1", kind.plural), child)
        self.events.record(schedule, "Normal", "Spawned", f"Create new object: {child['metadata']['name']}", SOURCE)
        schedule.setdefault("status", {})["time"] = format_time(now)
        return None if upcoming is None else upcoming - now

    def _child(self, schedule: dict, kind) -> dict:
        meta = schedule["metadata"]
        suffix = "".join(self.rng.choice(SUFFIX_ALPHABET) for _ in range(5))
        return {"apiVersion": GROUP_VERSION, "kind": kind.kind,
                "metadata": {"name": f"{meta['name']}-{suffix}", "namespace": meta.get("namespace"),
                             "labels": {"managed-by": meta["name"]},
                             "ownerReferences": [{"apiVersion": GROUP_VERSION, "kind": "Schedule", "name": meta["name"],
                                                  "uid": meta["uid"], "controller": True,
                                                  "blockOwnerDeletion": True}]},
                "spec": clone(schedule["spec"].get(kind.embedded) or {})}

    def _collect(self, schedule: dict, children: list[dict], now: float) -> None:
        """Delete the oldest finished children beyond the history limit."""
        limit = (schedule.get("spec") or {}).get("historyLimit") or 1
        for child in children[:max(len(children) - limit, 0)]:
            if finished(child, now):
                kind = BY_KIND[child["kind"]]
                self.delete(self.resource("chaos-mesh.org", "v1alpha1", kind.plural),
                            child["metadata"].get("namespace"), child["metadata"]["name"])
            else:
                self.events.record(schedule, "Warning", "Skip",
                                   f"Skip removing history: {child['metadata']['name']} is still running", SOURCE)


def finished(chaos: dict, now: float) -> bool:
    """Chaos Mesh's IsChaosFinished: a one-shot experiment once every record is injected; any other once it has
    stopped with every record recovered and its duration has run out."""
    spec = chaos.get("spec") or {}
    experiment = (chaos.get("status") or {}).get("experiment") or {}
    records = experiment.get("containerRecords") or []
    if chaos.get("kind") == "PodChaos" and spec.get("action") in ("pod-kill", "container-kill"):
        return bool(records) and all(r.get("phase") == INJECTED for r in records)
    if experiment.get("desiredPhase") == "Run" or any(r.get("phase") != NOT_INJECTED for r in records):
        return False
    duration = spec.get("duration")
    if not duration:
        return False
    return parse_time(chaos["metadata"]["creationTimestamp"]) + parse_go_duration(duration) <= now


def _five_fields(text: str) -> str:
    """Chaos Mesh's parser takes an optional seconds field; one that fires at second 0 is the five-field
    schedule without it."""
    fields = text.split()
    if len(fields) == 6 and not text.startswith("@"):
        if fields[0] != "0":
            raise ValueError(f"a seconds field of {fields[0]!r} is not supported")
        return " ".join(fields[1:])
    return text
