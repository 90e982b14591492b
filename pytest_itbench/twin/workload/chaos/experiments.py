"""Chaos Mesh's experiment controllers, as one reconcile loop per experiment object.

Each reconcile does what Chaos Mesh's pipeline of controllers does in turn:

* **finalizer**: a new experiment gets ``chaos-mesh/records``; a deleted one keeps it until every
  record is recovered;
* **desired phase**: ``Run``, or ``Stop`` once ``creationTimestamp + duration`` has passed, while
  the ``experiment.chaos-mesh.org/pause`` annotation says ``true``, or once deleted (events
  ``Started``, ``TimeUp``, ``Paused``, ``Deleted``);
* **records**: selected once (``namespace/pod`` or ``namespace/pod/container`` ids, per selector
  key), then each applied or recovered towards the desired phase with an event per operation
  (``Applied``, ``Recovered``, or ``Failed to apply chaos: ...``);
* **conditions**: ``Selected``, ``AllInjected``, ``AllRecovered``, ``Paused``.

After each change, the faults of every injected record are rebuilt for the traffic engine.
"""

from __future__ import annotations

from typing import Hashable, Iterable

from ... import quantity
from ...clock import format_time, parse_time
from ...controllers.events import EventSource
from ...controllers.manager import Controller, ControllerManager
from ...errors import NotFound
from ...store import Change, clone
from ..units import parse_go_duration
from .faults import Injected
from .kinds import KINDS, PAUSE_IMAGE, ApplyError, Injection, Kind
from .selection import SelectionError, Target, select

FINALIZER = "chaos-mesh/records"
PAUSE_ANNOTATION = "experiment.chaos-mesh.org/pause"
INJECTED, NOT_INJECTED = "Injected", "Not Injected"
MAX_EVENTS = 10  # record events kept, as Chaos Mesh's default maxEvents
SOURCE = EventSource("chaos-controller-manager")


class ChaosController(Controller):
    name = "chaos-mesh"
    identity = "system:serviceaccount:chaos-mesh:chaos-controller-manager"
    field_manager = "chaos-controller-manager"
    watches = tuple(KINDS)

    def __init__(self, manager: ControllerManager, faults: Injected, runs_java):
        super().__init__(manager)
        self.faults = faults
        self._runs_java = runs_java  # (pod, container) -> whether that container runs a JVM
        self._runs: dict[tuple[str, str, str, str], str] = {}  # (bucket, ns, name, record id) -> container id
        self.pods = self.resource("", "v1", "pods")

    def keys_for(self, change: Change) -> Iterable[Hashable]:
        meta = change.obj["metadata"]
        return [(change.bucket, meta.get("namespace", ""), meta["name"])]

    # ---- one experiment -------------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable, now: float) -> float | None:
        bucket, namespace, name = key
        kind = KINDS[bucket]
        res = self.resource("chaos-mesh.org", "v1alpha1", kind.plural)
        stored = self.store.get(bucket, namespace, name)
        if stored is None:
            self._rebuild()
            return None
        obj = clone(stored)
        meta, spec = obj["metadata"], obj.get("spec") or {}
        deleting = bool(meta.get("deletionTimestamp"))
        if not deleting and FINALIZER not in (meta.get("finalizers") or []):
            meta.setdefault("finalizers", []).append(FINALIZER)
            self.update(res, obj)
            self.events.record(obj, "Normal", "FinalizerInited", "Finalizer has been inited", SOURCE)
            return 0.0
        status = obj.setdefault("status", {})
        experiment = status.setdefault("experiment", {})
        desired, until_stop = self._desired(obj, kind, now, deleting)
        if experiment.get("desiredPhase") != desired:
            self._phase_event(obj, experiment.get("desiredPhase"), desired, deleting, now)
            experiment["desiredPhase"] = desired
        records = experiment.get("containerRecords")
        if records is None:
            records = self._select(obj, kind)
            if records is not None:
                experiment["containerRecords"] = records
        retry = False
        for record in records or ():
            retry |= self._sync(obj, kind, record, desired, now)
        status["conditions"] = _conditions(records, obj)
        if deleting and all(r["phase"] == NOT_INJECTED for r in records or ()):
            meta["finalizers"] = [f for f in meta.get("finalizers") or () if f != FINALIZER]
            self.events.record(obj, "Normal", "FinalizerInited", "Finalizer has been removed", SOURCE)
        if obj != stored:
            try:
                self.update(res, obj)
            except NotFound:
                pass
        self._rebuild()
        if retry:
            return 10.0
        return until_stop if desired == "Run" and until_stop else None

    def _desired(self, obj: dict, kind: Kind, now: float, deleting: bool) -> tuple[str, float | None]:
        """The desired phase, and seconds until the duration runs out (if it has not yet)."""
        if deleting:
            return "Stop", None
        duration = (obj.get("spec") or {}).get("duration")
        until_stop = None
        if duration and not kind.one_shot(obj.get("spec") or {}):
            try:
                stop = parse_time(obj["metadata"]["creationTimestamp"]) + parse_go_duration(duration)
            except ValueError:
                stop = None
            if stop is not None:
                if stop <= now:
                    return "Stop", None
                until_stop = stop - now
        if (obj["metadata"].get("annotations") or {}).get(PAUSE_ANNOTATION) == "true":
            return "Stop", until_stop
        return "Run", until_stop

    def _phase_event(self, obj: dict, before: str | None, after: str, deleting: bool, now: float) -> None:
        if after == "Run":
            self.events.record(obj, "Normal", "Started", "Experiment has started", SOURCE)
        elif deleting:
            self.events.record(obj, "Normal", "Deleted", "Experiment has been deleted", SOURCE)
        elif (obj["metadata"].get("annotations") or {}).get(PAUSE_ANNOTATION) == "true":
            self.events.record(obj, "Normal", "Paused", "Experiment has been paused", SOURCE)
        else:
            self.events.record(obj, "Normal", "TimeUp", "Time up according to the duration", SOURCE)

    def _select(self, obj: dict, kind: Kind) -> list[dict] | None:
        records = []
        spec = obj.get("spec") or {}
        namespace = obj["metadata"].get("namespace", "")
        for key, part in kind.selectors(spec).items():
            try:
                targets = select(self.store, part, namespace, self.rng, containers=kind.containers_for(key, spec))
            except SelectionError as exc:
                self.events.record(obj, "Warning", "Failed", f"Failed to select targets: {exc}", SOURCE)
                return None
            records += [{"id": t.id, "selectorKey": key, "phase": NOT_INJECTED, "injectedCount": 0,
                         "recoveredCount": 0} for t in targets]
        return records

    def _sync(self, obj: dict, kind: Kind, record: dict, desired: str, now: float) -> bool:
        """Move one record towards the desired phase; True when it failed and should be retried."""
        phase = record["phase"]
        if desired == "Run" and phase == INJECTED or desired == "Stop" and phase == NOT_INJECTED:
            return False
        target = _target(record["id"])
        operation = "Apply" if desired == "Run" else "Recover"
        try:
            if operation == "Apply":
                kind.apply(self, obj, target)
                self._runs[self._run_key(obj, record)] = self._container_id(target)
            else:
                kind.recover(self, obj, target)
        except ApplyError as exc:
            _record_event(record, "Failed", operation, str(exc), now)
            activity = "apply chaos" if operation == "Apply" else "recover chaos"
            self.events.record(obj, "Warning", "Failed", f"Failed to {activity}: {exc}", SOURCE)
            return True
        if operation == "Apply":
            record["phase"] = INJECTED
            record["injectedCount"] = record.get("injectedCount", 0) + 1
            _record_event(record, "Succeeded", "Apply", "", now)
            self.events.record(obj, "Normal", "Applied", f"Successfully apply chaos for {record['id']}", SOURCE)
        else:
            record["phase"] = NOT_INJECTED
            record["recoveredCount"] = record.get("recoveredCount", 0) + 1
            _record_event(record, "Succeeded", "Recover", "", now)
            self.events.record(obj, "Normal", "Recovered", f"Successfully recover chaos for {record['id']}", SOURCE)
        return False

    # ---- the faults ----------------------------------------------------------------------------------------------
    def _rebuild(self) -> None:
        """Every injected record's faults, from the experiments as stored."""
        rebuilt = Injected()
        for bucket, kind in KINDS.items():
            for obj in self.store.list(bucket)[0]:
                records = ((obj.get("status") or {}).get("experiment") or {}).get("containerRecords") or ()
                injected = [Injection(r.get("selectorKey", "."), _target(r["id"]),
                                      self._runs.get(self._run_key(obj, r), ""), self._memory_limit(_target(r["id"])))
                            for r in records if r.get("phase") == INJECTED]
                if injected:
                    kind.faults(obj, injected, rebuilt)
        self.faults.replace(rebuilt)

    @staticmethod
    def _run_key(obj: dict, record: dict) -> tuple[str, str, str, str]:
        meta = obj["metadata"]
        return obj.get("kind", ""), meta.get("namespace", ""), meta["name"], record["id"]

    # ---- what kinds ask of the cluster -------------------------------------------------------------------------------
    def delete_pod(self, target: Target, grace_period: int | None) -> None:
        if self.delete(self.pods, target.namespace, target.pod, grace_period=grace_period) is None:
            raise ApplyError(f'pods "{target.pod}" not found')

    def swap_images(self, target: Target, prefix: str, *, to_pause: bool) -> None:
        """pod-failure: every container's image becomes the pause image; the originals are kept in annotations."""
        pod = self.get(self.pods, target.namespace, target.pod)
        if pod is None:
            if to_pause:
                raise ApplyError(f'pods "{target.pod}" not found')
            return
        annotations = pod["metadata"].setdefault("annotations", {})
        changed = False
        for section, suffix in (("containers", "normal"), ("initContainers", "init")):
            for container in pod["spec"].get(section) or ():
                key = f"{prefix}-{container['name']}-{suffix}-image"
                key = key if len(key) <= 63 else container["name"]
                if to_pause and key not in annotations:
                    annotations[key], container["image"] = container["image"], PAUSE_IMAGE
                    changed = True
                elif not to_pause and key in annotations:
                    container["image"] = annotations.pop(key)
                    changed = True
        if changed:
            self.update(self.pods, pod)

    def runs_java(self, target: Target) -> bool:
        pod = self.store.get("pods", target.namespace, target.pod)
        return pod is not None and self._runs_java(pod, target.container or "")

    def mounts(self, target: Target, path: str) -> bool:
        pod = self.store.get("pods", target.namespace, target.pod) or {}
        for container in (pod.get("spec") or {}).get("containers") or ():
            if container["name"] == target.container:
                return any(m.get("mountPath", "").rstrip("/") == path.rstrip("/")
                           for m in container.get("volumeMounts") or ())
        return False

    def _container_id(self, target: Target) -> str:
        pod = self.store.get("pods", target.namespace, target.pod) or {}
        for status in (pod.get("status") or {}).get("containerStatuses") or ():
            if status.get("name") == target.container:
                return status.get("containerID") or ""
        return ""

    def _memory_limit(self, target: Target) -> int | None:
        pod = self.store.get("pods", target.namespace, target.pod) or {}
        for container in (pod.get("spec") or {}).get("containers") or ():
            if container["name"] == target.container:
                limit = ((container.get("resources") or {}).get("limits") or {}).get("memory")
                return int(quantity.value(limit)) if limit else None
        return None


def _target(record_id: str) -> Target:
    parts = record_id.split("/")
    return Target(parts[0], parts[1], parts[2] if len(parts) > 2 else None)


def _record_event(record: dict, type_: str, operation: str, message: str, now: float) -> None:
    events = record.setdefault("events", [])
    event = {"type": type_, "operation": operation, "timestamp": format_time(now)}
    if message:
        event["message"] = message
    events.append(event)
    del events[:-MAX_EVENTS]


def _conditions(records: list[dict] | None, obj: dict) -> list[dict]:
    paused = (obj["metadata"].get("annotations") or {}).get(PAUSE_ANNOTATION) == "true"

    def condition(kind: str, value: bool) -> dict:
        return {"type": kind, "status": "True" if value else "False"}

    selected = records is not None
    return [condition("Selected", selected),
            condition("AllInjected", selected and all(r["phase"] == INJECTED for r in records)),
            condition("AllRecovered", selected and all(r["phase"] == NOT_INJECTED for r in records)),
            condition("Paused", paused)]
