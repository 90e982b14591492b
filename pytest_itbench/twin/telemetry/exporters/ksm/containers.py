"""kube-state-metrics' per-container pod families, for regular and init containers.

Statuses are reported in the order of ``status.containerStatuses`` (``initContainerStatuses``);
requests and limits come from the spec, with the pod's node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..base import MetricFamily
from .common import Row, family, flag, resource_rows, timestamp_row


@dataclass(frozen=True)
class ContainerFamilies:
    spec_key: str  # containers / initContainers
    status_key: str  # containerStatuses / initContainerStatuses
    info: MetricFamily
    limits: MetricFamily
    requests: MetricFamily
    state_started: MetricFamily
    last_terminated_reason: MetricFamily
    last_terminated_exitcode: MetricFamily
    last_terminated_timestamp: MetricFamily
    ready: MetricFamily
    restarts: MetricFamily
    running: MetricFamily
    terminated: MetricFamily
    terminated_reason: MetricFamily
    waiting: MetricFamily
    waiting_reason: MetricFamily

    def all(self) -> tuple[MetricFamily, ...]:
        return (self.info, self.limits, self.requests, self.state_started, self.last_terminated_reason,
                self.last_terminated_exitcode, self.last_terminated_timestamp, self.ready, self.restarts,
                self.running, self.terminated, self.terminated_reason, self.waiting, self.waiting_reason)


_SCHEDULER_HINT = " It is recommended to use the kube_pod_resource_{} metric exposed by kube-scheduler instead, as it is more precise."

CONTAINERS = ContainerFamilies(
    "containers", "containerStatuses",
    info=family("kube_pod_container_info", "Information about a container in a pod.", stable=True),
    limits=family("kube_pod_container_resource_limits",
                  "The number of requested limit resource by a container." + _SCHEDULER_HINT.format("limits"),
                  stable=True),
    requests=family("kube_pod_container_resource_requests",
                    "The number of requested request resource by a container." + _SCHEDULER_HINT.format("requests"),
                    stable=True),
    state_started=family("kube_pod_container_state_started", "Start time in unix timestamp for a pod container.",
                         stable=True),
    last_terminated_reason=family("kube_pod_container_status_last_terminated_reason",
                                  "Describes the last reason the container was in terminated state."),
    last_terminated_exitcode=family("kube_pod_container_status_last_terminated_exitcode",
                                    "Describes the exit code for the last container in terminated state."),
    last_terminated_timestamp=family("kube_pod_container_status_last_terminated_timestamp",
                                     "Last terminated time for a pod container in unix timestamp."),
    ready=family("kube_pod_container_status_ready", "Describes whether the containers readiness check succeeded.",
                 stable=True),
    restarts=family("kube_pod_container_status_restarts_total", "The number of container restarts per container.",
                    "counter", stable=True),
    running=family("kube_pod_container_status_running",
                   "Describes whether the container is currently in running state.", stable=True),
    terminated=family("kube_pod_container_status_terminated",
                      "Describes whether the container is currently in terminated state.", stable=True),
    terminated_reason=family("kube_pod_container_status_terminated_reason",
                             "Describes the reason the container is currently in terminated state."),
    waiting=family("kube_pod_container_status_waiting",
                   "Describes whether the container is currently in waiting state.", stable=True),
    waiting_reason=family("kube_pod_container_status_waiting_reason",
                          "Describes the reason the container is currently in waiting state.", stable=True),
)

INIT_CONTAINERS = ContainerFamilies(
    "initContainers", "initContainerStatuses",
    info=family("kube_pod_init_container_info", "Information about an init container in a pod.", stable=True),
    limits=family("kube_pod_init_container_resource_limits",
                  "The number of requested limit resource by an init container."),
    requests=family("kube_pod_init_container_resource_requests",
                    "The number of requested request resource by an init container."),
    state_started=family("kube_pod_init_container_state_started",
                         "Start time in unix timestamp for a pod init container."),
    last_terminated_reason=family("kube_pod_init_container_status_last_terminated_reason",
                                  "Describes the last reason the init container was in terminated state."),
    last_terminated_exitcode=family("kube_pod_init_container_status_last_terminated_exitcode",
                                    "Describes the exit code for the last init container in terminated state."),
    last_terminated_timestamp=family("kube_pod_init_container_status_last_terminated_timestamp",
                                     "Last terminated time for a pod init container in unix timestamp."),
    ready=family("kube_pod_init_container_status_ready",
                 "Describes whether the init containers readiness check succeeded.", stable=True),
    restarts=family("kube_pod_init_container_status_restarts_total", "The number of restarts for the init container.",
                    "counter", stable=True),
    running=family("kube_pod_init_container_status_running",
                   "Describes whether the init container is currently in running state.", stable=True),
    terminated=family("kube_pod_init_container_status_terminated",
                      "Describes whether the init container is currently in terminated state.", stable=True),
    terminated_reason=family("kube_pod_init_container_status_terminated_reason",
                             "Describes the reason the init container is currently in terminated state."),
    waiting=family("kube_pod_init_container_status_waiting",
                   "Describes whether the init container is currently in waiting state.", stable=True),
    waiting_reason=family("kube_pod_init_container_status_waiting_reason",
                          "Describes the reason the init container is currently in waiting state."),
)


def container_rows(pod: dict, f: ContainerFamilies) -> Iterable[Row]:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    specs = spec.get(f.spec_key) or ()
    statuses = status.get(f.status_key) or ()
    node = spec.get("nodeName", "")
    for c in specs:
        for cs in statuses:
            if cs.get("name") == c["name"]:
                info = {"container": cs["name"], "image_spec": c.get("image", ""), "image": cs.get("image", ""),
                        "image_id": cs.get("imageID", ""), "container_id": cs.get("containerID", "")}
                if f is INIT_CONTAINERS:
                    info["restart_policy"] = c.get("restartPolicy", "")
                yield f.info, info, 1.0
    for c in specs:
        resources = c.get("resources") or {}
        where = {"container": c["name"], "node": node}
        yield from resource_rows(f.limits, resources.get("limits") or {}, where)
        yield from resource_rows(f.requests, resources.get("requests") or {}, where)
    for cs in statuses:
        yield from _status_rows(cs, f)


def _status_rows(cs: dict, f: ContainerFamilies) -> Iterable[Row]:
    name = {"container": cs["name"]}
    state, last = cs.get("state") or {}, (cs.get("lastState") or {}).get("terminated")
    running, terminated, waiting = state.get("running"), state.get("terminated"), state.get("waiting")
    if running is not None:
        yield from timestamp_row(f.state_started, running.get("startedAt"), name)
    elif terminated is not None:
        yield from timestamp_row(f.state_started, terminated.get("startedAt"), name)
    if last is not None:
        yield f.last_terminated_reason, {**name, "reason": last.get("reason", "")}, 1.0
        yield f.last_terminated_exitcode, name, float(last.get("exitCode", 0))
        yield from timestamp_row(f.last_terminated_timestamp, last.get("finishedAt"), name)
    yield f.ready, name, flag(bool(cs.get("ready")))
    yield f.restarts, name, float(cs.get("restartCount", 0))
    yield f.running, name, flag(running is not None)
    yield f.terminated, name, flag(terminated is not None)
    if terminated is not None:
        yield f.terminated_reason, {**name, "reason": terminated.get("reason", "")}, 1.0
    yield f.waiting, name, flag(waiting is not None)
    if waiting is not None:
        yield f.waiting_reason, {**name, "reason": waiting.get("reason", "")}, 1.0
