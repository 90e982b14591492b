"""The pod status the kubelet reports, generated from its view of the pod's containers.

Phase, the kubelet's conditions (PodReadyToStartContainers, Initialized,
Ready, ContainersReady, PodScheduled, in that order after any condition
others own), container statuses (regular containers sorted by name, init
containers in spec order) with their state, last state, readiness and
restart count, addresses and QoS class, as kubelet 1.31 generates them.
Conditions keep their ``lastTransitionTime`` while their status holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...apiserver.strategies import qos_class
from ...clock import format_time
from .runtime import INIT, REGULAR, SIDECAR, Instance, Slot

KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
ZERO_TIME = "1970-01-01T00:00:00Z"


@dataclass
class PodView:
    """What the status is generated from (the pod worker fills it)."""

    slots: list[Slot]
    host_ip: str
    pod_ip: str
    sandbox_ready: bool
    start_time: float | None
    terminal: bool  # no container will run again
    reason: str | None = None
    message: str | None = None
    phase: str | None = None  # a pod-level verdict overrides the containers' (DeadlineExceeded: Failed)


def build(pod: dict, view: PodView, now: float) -> dict:
    spec = pod.get("spec") or {}
    old = pod.get("status") or {}
    has_init = bool(spec.get("initContainers"))
    init_statuses = [container_status(s, has_init) for s in view.slots if s.kind != REGULAR]
    regular = sorted((s for s in view.slots if s.kind == REGULAR), key=lambda s: s.name)
    statuses = [container_status(s, has_init) for s in regular]
    phase = view.phase or _phase(spec, view, old)
    status: dict = {"phase": phase, "conditions": _conditions(spec, view, init_statuses, statuses, phase, old, now)}
    reason, message = view.reason, view.message
    if reason is None and old.get("phase") == phase:
        reason, message = old.get("reason"), old.get("message")
    if message:
        status["message"] = message
    if reason:
        status["reason"] = reason
    if old.get("nominatedNodeName"):
        status["nominatedNodeName"] = old["nominatedNodeName"]
    if view.host_ip:
        status["hostIP"] = view.host_ip
        status["hostIPs"] = [{"ip": view.host_ip}]
    if view.pod_ip:
        status["podIP"] = view.pod_ip
        status["podIPs"] = [{"ip": view.pod_ip}]
    if view.start_time is not None:
        status["startTime"] = format_time(view.start_time)
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    status["containerStatuses"] = statuses
    status["qosClass"] = old.get("qosClass") or qos_class(spec)
    return status


def rejected(pod: dict, reason: str, message: str, start_time: float) -> dict:
    """The status of a pod the kubelet refused to admit."""
    old = pod.get("status") or {}
    status = {"phase": "Failed"}
    others = [c for c in old.get("conditions") or () if c.get("type") not in KUBELET_CONDITIONS[:-1]]
    if others:
        status["conditions"] = others
    status.update({"message": f"Pod was rejected: {message}", "reason": reason,
                   "startTime": format_time(start_time), "qosClass": old.get("qosClass") or qos_class(pod["spec"])})
    return status


# ---- containers --------------------------------------------------------------------------------------------------

def container_status(slot: Slot, has_init: bool) -> dict:
    current = slot.current
    status: dict = {"name": slot.name}
    last: dict = {}
    if current is None or (not current.running and slot.waiting is not None and not _done(slot)):
        reason, message = slot.waiting or ("PodInitializing" if has_init else "ContainerCreating", None)
        waiting = {"reason": reason}
        if message:
            waiting["message"] = message
        state = {"waiting": waiting}
        if current is not None and current.exited:
            last = {"terminated": terminated(current)}
        elif slot.previous is not None and slot.previous.exited:
            last = {"terminated": terminated(slot.previous)}
    elif current.running:
        state = {"running": {"startedAt": format_time(current.started)}}
        if slot.previous is not None:
            last = {"terminated": terminated(slot.previous)}
    else:
        state = {"terminated": terminated(current)}
        if slot.previous is not None:
            last = {"terminated": terminated(slot.previous)}
    status["state"] = state
    status["lastState"] = last
    status["ready"] = slot.ready
    status["restartCount"] = current.attempt if current is not None else 0
    if current is not None and current.image is not None:
        status["image"] = str(current.image.reference)
        status["imageID"] = current.image.repo_digest
        status["containerID"] = f"containerd://{current.id}"
    else:
        status["image"] = slot.spec.get("image", "")
        status["imageID"] = ""
    status["started"] = slot.started_ok
    mounts = _volume_mounts(slot.spec)
    if mounts:
        status["volumeMounts"] = mounts
    return status


def _done(slot: Slot) -> bool:
    """An init container that completed is not restarted, so it keeps its terminated state."""
    return slot.kind == INIT and slot.current is not None and slot.current.succeeded


def terminated(instance: Instance) -> dict:
    state: dict = {"exitCode": instance.exit_code or 0}
    if instance.reason:
        state["reason"] = instance.reason
    if instance.message:
        state["message"] = instance.message
    state["startedAt"] = format_time(instance.started) if instance.started is not None else ZERO_TIME
    state["finishedAt"] = format_time(instance.finished or 0)
    state["containerID"] = f"containerd://{instance.id}"
    return state


def _volume_mounts(container: dict) -> list[dict]:
    mounts = []
    for mount in container.get("volumeMounts") or ():
        entry = {"name": mount.get("name", ""), "mountPath": mount.get("mountPath", "")}
        if mount.get("readOnly"):
            entry["readOnly"] = True
            entry["recursiveReadOnly"] = "Disabled"
        mounts.append(entry)
    return mounts


# ---- phase ---------------------------------------------------------------------------------------------------

def _phase(spec: dict, view: PodView, old: dict) -> str:
    if old.get("phase") in ("Succeeded", "Failed"):
        return old["phase"]  # pods never leave a terminal phase
    policy = spec.get("restartPolicy", "Always")
    pending_init = failed_init = 0
    running = waiting = stopped = succeeded = 0
    for slot in view.slots:
        current = slot.current
        if slot.kind == INIT:
            if current is None or current.running:
                pending_init += 1
            elif current.exit_code != 0:
                failed_init += 1
            continue
        if slot.kind == SIDECAR:
            if current is not None and current.running:
                running += 1
                if not slot.started_ok:
                    pending_init += 1
            elif current is None:
                pending_init += 1
                waiting += 1
            continue
        if current is None:
            waiting += 1
        elif current.running:
            running += 1
        else:
            stopped += 1
            if current.exit_code == 0 and slot.waiting is None:
                succeeded += 1
    if failed_init and policy == "Never":
        return "Failed"
    any_regular_started = any(s.kind == REGULAR and s.current is not None for s in view.slots)
    if (pending_init and not any_regular_started) or waiting:
        return "Pending"
    if running:
        return "Running"
    if stopped:
        if view.terminal:
            return "Succeeded" if stopped == succeeded else "Failed"
        if policy == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        return "Failed" if policy == "Never" else "Running"
    return "Pending"


# ---- conditions --------------------------------------------------------------------------------------------------

def _conditions(spec: dict, view: PodView, init_statuses: list[dict], statuses: list[dict], phase: str,
                old: dict, now: float) -> list[dict]:
    previous = {c.get("type"): c for c in old.get("conditions") or ()}
    conditions = [c for c in old.get("conditions") or () if c.get("type") not in KUBELET_CONDITIONS]
    generated = [
        ("PodReadyToStartContainers", "True" if view.sandbox_ready else "False", None, None),
        _initialized(spec, init_statuses, statuses, phase),
        _ready(spec, conditions, init_statuses, statuses, phase),
        _containers_ready(spec, init_statuses, statuses, phase),
        ("PodScheduled", "True", None, None),
    ]
    for type_, status, reason, message in generated:
        condition = {"type": type_, "status": status}  # lastProbeTime is null: the API server leaves nulls out
        before = previous.get(type_)
        if before is not None and before.get("status") == status and before.get("lastTransitionTime"):
            condition["lastTransitionTime"] = before["lastTransitionTime"]
        else:
            condition["lastTransitionTime"] = format_time(now)
        if reason:
            condition["reason"] = reason
        if message:
            condition["message"] = message
        conditions.append(condition)
    return conditions


def _names(items: list[str]) -> str:
    return "[" + " ".join(items) + "]"


def _containers_ready(spec: dict, init_statuses: list[dict], statuses: list[dict], phase: str) -> tuple:
    if phase == "Succeeded":
        return "ContainersReady", "False", "PodCompleted", None
    if phase == "Failed":
        return "ContainersReady", "False", "PodFailed", None
    by_name = {s["name"]: s for s in init_statuses + statuses}
    sidecars = [c["name"] for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    unready = [n for n in sidecars + [c["name"] for c in spec.get("containers") or ()]
               if not by_name.get(n, {}).get("ready")]
    if unready:
        return "ContainersReady", "False", "ContainersNotReady", f"containers with unready status: {_names(unready)}"
    return "ContainersReady", "True", None, None


def _ready(spec: dict, others: list[dict], init_statuses: list[dict], statuses: list[dict], phase: str) -> tuple:
    _, status, reason, message = _containers_ready(spec, init_statuses, statuses, phase)
    if status != "True":
        return "Ready", status, reason, message
    problems = []
    for gate in spec.get("readinessGates") or ():
        wanted = gate.get("conditionType", "")
        found = next((c for c in others if c.get("type") == wanted), None)
        if found is None:
            problems.append(f'corresponding condition of pod readiness gate "{wanted}" does not exist.')
        elif found.get("status") != "True":
            problems.append(f'the status of pod readiness gate "{wanted}" is not "True", but {found.get("status")}')
    if problems:
        return "Ready", "False", "ReadinessGatesNotReady", ", ".join(problems)
    return "Ready", "True", None, None


def _initialized(spec: dict, init_statuses: list[dict], statuses: list[dict], phase: str) -> tuple:
    if phase == "Succeeded":
        return "Initialized", "True", "PodCompleted", None
    if any(s["state"].get("running") or s["state"].get("terminated") or s["lastState"] for s in statuses):
        return "Initialized", "True", None, None
    by_name = {s["name"]: s for s in init_statuses}
    incomplete = []
    for container in spec.get("initContainers") or ():
        status = by_name.get(container["name"])
        if status is None:
            continue
        done = status.get("started") if container.get("restartPolicy") == "Always" else status.get("ready")
        if not done:
            incomplete.append(container["name"])
    if incomplete:
        return ("Initialized", "False", "ContainersNotInitialized",
                f"containers with incomplete status: {_names(incomplete)}")
    return "Initialized", "True", None, None
