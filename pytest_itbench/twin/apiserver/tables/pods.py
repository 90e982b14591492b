"""``kubectl get pods``: READY, STATUS (the reason logic of printPod), RESTARTS, AGE; IP and nodes on wide."""

from __future__ import annotations

from ...clock import parse_time
from .core import Column, age, age_column, api_doc, human_duration, name_column, register

NODE_UNREACHABLE_REASON = "NodeLost"

_COMPLETED = {
    "Succeeded": {"type": "Completed", "status": "True", "reason": "Succeeded",
                  "message": "The pod has completed successfully."},
    "Failed": {"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."},
}


def _restartable(container: dict | None) -> bool:
    """A sidecar: an init container that keeps running (restartPolicy Always)."""
    return bool(container) and container.get("restartPolicy") == "Always"


def _condition_true(status: dict, type_: str) -> bool:
    for condition in status.get("conditions") or ():
        if condition.get("type") == type_:
            return condition.get("status") == "True"
    return False


def _last_termination(container_status: dict) -> float | None:
    finished = (((container_status.get("lastState") or {}).get("terminated")) or {}).get("finishedAt")
    return parse_time(finished) if finished else None


def _latest(current: float | None, candidate: float | None) -> float | None:
    if candidate is None:
        return current
    return candidate if current is None or candidate > current else current


def _terminated_reason(terminated: dict, prefix: str) -> str:
    if terminated.get("reason"):
        return prefix + terminated["reason"]
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{terminated.get('exitCode', 0)}"


def pod_row(pod: dict, now: float) -> list:
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    phase = status.get("phase", "")
    reason = status.get("reason") or phase
    for condition in status.get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    init_containers = spec.get("initContainers") or []
    init_specs = {c.get("name"): c for c in init_containers}
    total = len(spec.get("containers") or ()) + sum(1 for c in init_containers if _restartable(c))
    ready = 0
    restarts = 0
    last_restart: float | None = None
    sidecar_restarts = 0
    last_sidecar_restart: float | None = None

    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for index, cs in enumerate(init_statuses):
        restarts += cs.get("restartCount", 0)
        last_restart = _latest(last_restart, _last_termination(cs))
        sidecar = _restartable(init_specs.get(cs.get("name")))
        if sidecar:
            sidecar_restarts += cs.get("restartCount", 0)
            last_sidecar_restart = _latest(last_sidecar_restart, _last_termination(cs))
        state = cs.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated is not None and terminated.get("exitCode", 0) == 0:
            continue
        if sidecar and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        # The first init container that has not finished decides the status.
        if terminated is not None:
            reason = _terminated_reason(terminated, "Init:")
        elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{index}/{len(init_containers)}"
        initializing = True
        break

    if not initializing or _condition_true(status, "Initialized"):
        restarts, last_restart = sidecar_restarts, last_sidecar_restart
        has_running = False
        # In reverse, so that the first container with a waiting or terminated reason has the last word.
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += cs.get("restartCount", 0)
            last_restart = _latest(last_restart, _last_termination(cs))
            state = cs.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated is not None:
                reason = _terminated_reason(terminated, "")
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(status, "Ready") else "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == NODE_UNREACHABLE_REASON:
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_cell = str(restarts)
    if restarts and last_restart is not None:
        restarts_cell = f"{restarts} ({human_duration(now - last_restart)} ago)"

    pod_ips = status.get("podIPs") or []
    pod_ip = pod_ips[0].get("ip", "") if pod_ips else ""
    return [meta.get("name", ""), f"{ready}/{total}", reason, restarts_cell, age(pod, now),
            pod_ip or "<none>", spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>",
            _readiness_gates(spec, status)]


def _readiness_gates(spec: dict, status: dict) -> str:
    gates = spec.get("readinessGates") or []
    if not gates:
        return "<none>"
    true = 0
    for gate in gates:
        for condition in status.get("conditions") or ():
            if condition.get("type") == gate.get("conditionType"):
                true += condition.get("status") == "True"
                break
    return f"{true}/{len(gates)}"


def pod_conditions(pod: dict) -> list[dict]:
    completed = _COMPLETED.get((pod.get("status") or {}).get("phase", ""))
    return [completed] if completed else []


register("", "Pod", [
    name_column(),
    Column("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", description="The aggregate status of the containers in this pod."),
    Column("Restarts", description="The number of times the containers in this pod have been restarted and when "
                                   "the last container in this pod has restarted."),
    age_column(),
    Column("IP", description=api_doc("core.v1.PodStatus", "podIP"), priority=1),
    Column("Node", description=api_doc("core.v1.PodSpec", "nodeName"), priority=1),
    Column("Nominated Node", description=api_doc("core.v1.PodStatus", "nominatedNodeName"), priority=1),
    Column("Readiness Gates", description=api_doc("core.v1.PodSpec", "readinessGates"), priority=1),
], pod_row, pod_conditions)
