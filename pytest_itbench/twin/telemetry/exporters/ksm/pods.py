"""kube-state-metrics' pod families (labels ``namespace``, ``pod``, ``uid`` on every series)."""

from __future__ import annotations

import ipaddress
from typing import Iterable

from .common import Row, condition_rows, family, flag, owner_rows, timestamp_row, unix
from .containers import CONTAINERS, INIT_CONTAINERS, container_rows

INFO = family("kube_pod_info", "Information about pod.", stable=True)
OWNER = family("kube_pod_owner", "Information about the Pod's owner.", stable=True)
CREATED = family("kube_pod_created", "Unix creation timestamp", stable=True)
DELETION = family("kube_pod_deletion_timestamp", "Unix deletion timestamp")
START_TIME = family("kube_pod_start_time", "Start time in unix timestamp for a pod.", stable=True)
COMPLETION_TIME = family("kube_pod_completion_time", "Completion time in unix timestamp for a pod.", stable=True)
IPS = family("kube_pod_ips", "Pod IP addresses")
PHASE = family("kube_pod_status_phase", "The pods current phase.", stable=True)
READY = family("kube_pod_status_ready", "Describes whether the pod is ready to serve requests.", stable=True)
SCHEDULED = family("kube_pod_status_scheduled", "Describes the status of the scheduling process for the pod.",
                   stable=True)
SCHEDULED_TIME = family("kube_pod_status_scheduled_time", "Unix timestamp when pod moved into scheduled status",
                        stable=True)
UNSCHEDULABLE = family("kube_pod_status_unschedulable", "Describes the unschedulable status for the pod.", stable=True)
UNSCHEDULED_TIME = family("kube_pod_status_unscheduled_time", "Unix timestamp when pod moved into unscheduled status")
INITIALIZED_TIME = family("kube_pod_status_initialized_time", "Initialized time in unix timestamp for a pod.")
CONTAINERS_READY_TIME = family("kube_pod_status_container_ready_time",
                               "Readiness achieved time in unix timestamp for a pod containers.")
READY_TIME = family("kube_pod_status_ready_time", "Readiness achieved time in unix timestamp for a pod.")
QOS_CLASS = family("kube_pod_status_qos_class", "The pods current qosClass.")
REASON = family("kube_pod_status_reason", "The pod status reasons")
RESTART_POLICY = family("kube_pod_restart_policy", "Describes the restart policy in use by this pod.", stable=True)
SERVICE_ACCOUNT = family("kube_pod_service_account", "The service account for a pod.")
SCHEDULER = family("kube_pod_scheduler", "The scheduler for a pod.")
TOLERATIONS = family("kube_pod_tolerations", "Information about the pod tolerations")
PVC_INFO = family("kube_pod_spec_volumes_persistentvolumeclaims_info",
                  "Information about persistentvolumeclaim and ephemeral volumes in a pod.", stable=True)
PVC_READONLY = family("kube_pod_spec_volumes_persistentvolumeclaims_readonly",
                      "Describes whether a persistentvolumeclaim is mounted read only. Ephemeral volumes always report "
                      "0 since the ephemeral volume source does not support a read-only flag.", stable=True)

FAMILIES = (INFO, OWNER, CREATED, DELETION, START_TIME, COMPLETION_TIME, IPS, PHASE, READY, SCHEDULED, SCHEDULED_TIME,
            UNSCHEDULABLE, UNSCHEDULED_TIME, INITIALIZED_TIME, CONTAINERS_READY_TIME, READY_TIME, QOS_CLASS, REASON,
            RESTART_POLICY, SERVICE_ACCOUNT, SCHEDULER, TOLERATIONS, PVC_INFO, PVC_READONLY,
            *CONTAINERS.all(), *INIT_CONTAINERS.all())

_PHASES = ("Pending", "Succeeded", "Failed", "Unknown", "Running")
_QOS_CLASSES = ("BestEffort", "Burstable", "Guaranteed")
_STATUS_REASONS = ("Evicted", "NodeAffinity", "NodeLost", "PreemptionByScheduler", "SchedulingGated", "Shutdown",
                   "TerminationByKubelet", "UnexpectedAdmissionError")


def object_labels(pod: dict) -> dict[str, str]:
    meta = pod["metadata"]
    return {"namespace": meta.get("namespace", ""), "pod": meta["name"], "uid": meta.get("uid", "")}


def rows(pod: dict) -> Iterable[Row]:
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    controller = next((o for o in meta.get("ownerReferences") or () if o.get("controller")), {})
    yield INFO, {"host_ip": status.get("hostIP", ""), "pod_ip": status.get("podIP", ""),
                 "node": spec.get("nodeName", ""), "created_by_kind": controller.get("kind", ""),
                 "created_by_name": controller.get("name", ""), "priority_class": spec.get("priorityClassName", ""),
                 "host_network": "true" if spec.get("hostNetwork") else "false"}, 1.0
    yield from owner_rows(OWNER, meta)
    yield from timestamp_row(CREATED, meta.get("creationTimestamp"))
    yield from timestamp_row(DELETION, meta.get("deletionTimestamp"))
    yield from timestamp_row(START_TIME, status.get("startTime"))
    yield from _completion(status)
    yield from _ips(status)
    phase = status.get("phase", "")
    if phase:
        for candidate in _PHASES:
            yield PHASE, {"phase": candidate}, flag(phase == candidate)
    yield from _conditions(status.get("conditions") or ())
    qos = status.get("qosClass", "")
    if qos:
        for candidate in _QOS_CLASSES:
            yield QOS_CLASS, {"qos_class": candidate}, flag(qos == candidate)
    yield from _reasons(status)
    yield RESTART_POLICY, {"type": spec.get("restartPolicy", "")}, 1.0
    yield SERVICE_ACCOUNT, {"service_account": spec.get("serviceAccountName", "")}, 1.0
    yield SCHEDULER, {"name": spec.get("schedulerName", "")}, 1.0
    yield from _tolerations(spec.get("tolerations") or ())
    yield from _claims(pod)
    yield from container_rows(pod, CONTAINERS)
    yield from container_rows(pod, INIT_CONTAINERS)


def _completion(status: dict) -> Iterable[Row]:
    finished = [unix(cs["state"]["terminated"].get("finishedAt")) for cs in status.get("containerStatuses") or ()
                if (cs.get("state") or {}).get("terminated")]
    latest = max((t for t in finished if t is not None), default=None)
    if latest:
        yield COMPLETION_TIME, {}, latest


def _ips(status: dict) -> Iterable[Row]:
    for entry in status.get("podIPs") or ():
        try:
            address = ipaddress.ip_address(entry.get("ip", ""))
        except ValueError:
            continue  # kube-state-metrics skips what it cannot parse
        yield IPS, {"ip": entry["ip"], "ip_family": str(address.version)}, 1.0


def _conditions(conditions: Iterable[dict]) -> Iterable[Row]:
    for c in conditions:
        kind, state = c.get("type"), c.get("status", "")
        if kind == "Ready":
            yield from condition_rows(READY, state)
            if state == "True":
                yield from timestamp_row(READY_TIME, c.get("lastTransitionTime"))
        elif kind == "PodScheduled":
            yield from condition_rows(SCHEDULED, state)
            if state == "True":
                yield from timestamp_row(SCHEDULED_TIME, c.get("lastTransitionTime"))
            elif state == "False":
                yield UNSCHEDULABLE, {}, 1.0
                yield from timestamp_row(UNSCHEDULED_TIME, c.get("lastTransitionTime"))
        elif kind == "Initialized" and state == "True":
            yield from timestamp_row(INITIALIZED_TIME, c.get("lastTransitionTime"))
        elif kind == "ContainersReady" and state == "True":
            yield from timestamp_row(CONTAINERS_READY_TIME, c.get("lastTransitionTime"))


def _reasons(status: dict) -> Iterable[Row]:
    """Only the reasons that are set, from the pod's reason, its conditions or a container's termination."""
    reason = status.get("reason", "")
    found = {reason}
    found.update(c.get("reason", "") for c in status.get("conditions") or ())
    found.update(((cs.get("state") or {}).get("terminated") or {}).get("reason", "")
                 for cs in status.get("containerStatuses") or ())
    for candidate in _STATUS_REASONS:
        if candidate in found:
            yield REASON, {"reason": candidate}, 1.0
    if reason and reason not in _STATUS_REASONS:
        yield REASON, {"reason": "Other"}, 1.0


def _tolerations(tolerations: Iterable[dict]) -> Iterable[Row]:
    seen = set()
    for t in tolerations:
        seconds = t.get("tolerationSeconds")
        labels = {"key": t.get("key", ""), "operator": t.get("operator", ""), "value": t.get("value", ""),
                  "effect": t.get("effect", ""), "toleration_seconds": "" if seconds is None else str(seconds)}
        key = tuple(labels.values())
        if key not in seen:
            seen.add(key)
            yield TOLERATIONS, labels, 1.0


def _claims(pod: dict) -> Iterable[Row]:
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        claim = volume.get("persistentVolumeClaim")
        if claim is not None:
            labels = {"volume": volume["name"], "persistentvolumeclaim": claim.get("claimName", ""),
                      "ephemeral": "false"}
            yield PVC_INFO, labels, 1.0
            yield PVC_READONLY, labels, flag(bool(claim.get("readOnly")))
        elif volume.get("ephemeral") is not None:
            # The generated claim of an ephemeral volume is named <pod>-<volume>.
            labels = {"volume": volume["name"], "persistentvolumeclaim": f"{pod['metadata']['name']}-{volume['name']}",
                      "ephemeral": "true"}
            yield PVC_INFO, labels, 1.0
            yield PVC_READONLY, labels, 0.0
