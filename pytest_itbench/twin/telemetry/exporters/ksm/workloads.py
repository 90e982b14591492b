"""kube-state-metrics' Deployment, ReplicaSet, StatefulSet and DaemonSet families."""

from __future__ import annotations

import math
from typing import Iterable

from .common import Row, condition_rows, family, flag, owner_rows, timestamp_row

# ---- Deployments (labels namespace, deployment) -----------------------------------------------------------
DEPLOYMENT_OWNER = family("kube_deployment_owner", "Information about the Deployment's owner.")
DEPLOYMENT_CREATED = family("kube_deployment_created", "Unix creation timestamp", stable=True)
DEPLOYMENT_REPLICAS = family("kube_deployment_status_replicas", "The number of replicas per deployment.", stable=True)
DEPLOYMENT_READY = family("kube_deployment_status_replicas_ready", "The number of ready replicas per deployment.",
                          stable=True)
DEPLOYMENT_AVAILABLE = family("kube_deployment_status_replicas_available",
                              "The number of available replicas per deployment.", stable=True)
DEPLOYMENT_UNAVAILABLE = family("kube_deployment_status_replicas_unavailable",
                                "The number of unavailable replicas per deployment.", stable=True)
DEPLOYMENT_UPDATED = family("kube_deployment_status_replicas_updated", "The number of updated replicas per deployment.",
                            stable=True)
DEPLOYMENT_TERMINATING = family("kube_deployment_status_terminating_replicas",
                                "The number of terminating replicas per deployment.")
DEPLOYMENT_OBSERVED = family("kube_deployment_status_observed_generation",
                             "The generation observed by the deployment controller.", stable=True)
DEPLOYMENT_CONDITION = family("kube_deployment_status_condition", "The current status conditions of a deployment.",
                              stable=True)
DEPLOYMENT_SPEC_REPLICAS = family("kube_deployment_spec_replicas", "Number of desired pods for a deployment.",
                                  stable=True)
DEPLOYMENT_PAUSED = family("kube_deployment_spec_paused",
                           "Whether the deployment is paused and will not be processed by the deployment controller.",
                           stable=True)
DEPLOYMENT_MAX_UNAVAILABLE = family("kube_deployment_spec_strategy_rollingupdate_max_unavailable",
                                    "Maximum number of unavailable replicas during a rolling update of a deployment.",
                                    stable=True)
DEPLOYMENT_MAX_SURGE = family("kube_deployment_spec_strategy_rollingupdate_max_surge",
                              "Maximum number of replicas that can be scheduled above the desired number of replicas "
                              "during a rolling update of a deployment.", stable=True)
DEPLOYMENT_GENERATION = family("kube_deployment_metadata_generation",
                               "Sequence number representing a specific generation of the desired state.", stable=True)
DEPLOYMENT_DELETION = family("kube_deployment_deletion_timestamp", "Unix deletion timestamp")

DEPLOYMENT_FAMILIES = (DEPLOYMENT_OWNER, DEPLOYMENT_CREATED, DEPLOYMENT_REPLICAS, DEPLOYMENT_READY, DEPLOYMENT_AVAILABLE,
                       DEPLOYMENT_UNAVAILABLE, DEPLOYMENT_UPDATED, DEPLOYMENT_TERMINATING, DEPLOYMENT_OBSERVED,
                       DEPLOYMENT_CONDITION, DEPLOYMENT_SPEC_REPLICAS, DEPLOYMENT_PAUSED, DEPLOYMENT_MAX_UNAVAILABLE,
                       DEPLOYMENT_MAX_SURGE, DEPLOYMENT_GENERATION, DEPLOYMENT_DELETION)

# Condition reasons kube-state-metrics reports as they are; any other is "unknown" (bounded cardinality).
_DEPLOYMENT_REASONS = frozenset({"ReplicaSetUpdated", "ReplicaSetCreateError", "NewReplicaSetCreated",
                                 "FoundNewReplicaSet", "NewReplicaSetAvailable", "ProgressDeadlineExceeded",
                                 "DeploymentPaused", "DeploymentResumed", "MinimumReplicasAvailable",
                                 "MinimumReplicasUnavailable", ""})


def deployment_labels(obj: dict) -> dict[str, str]:
    return {"namespace": obj["metadata"].get("namespace", ""), "deployment": obj["metadata"]["name"]}


def deployment_rows(d: dict) -> Iterable[Row]:
    meta, spec, status = d["metadata"], d.get("spec") or {}, d.get("status") or {}
    replicas = int(spec.get("replicas", 1))
    yield from owner_rows(DEPLOYMENT_OWNER, meta, controller_label=False)
    yield from timestamp_row(DEPLOYMENT_CREATED, meta.get("creationTimestamp"))
    yield DEPLOYMENT_REPLICAS, {}, float(status.get("replicas", 0))
    yield DEPLOYMENT_READY, {}, float(status.get("readyReplicas", 0))
    yield DEPLOYMENT_AVAILABLE, {}, float(status.get("availableReplicas", 0))
    yield DEPLOYMENT_UNAVAILABLE, {}, float(status.get("unavailableReplicas", 0))
    yield DEPLOYMENT_UPDATED, {}, float(status.get("updatedReplicas", 0))
    if status.get("terminatingReplicas") is not None:
        yield DEPLOYMENT_TERMINATING, {}, float(status["terminatingReplicas"])
    yield DEPLOYMENT_OBSERVED, {}, float(status.get("observedGeneration", 0))
    for condition in status.get("conditions") or ():
        reason = condition.get("reason", "")
        yield from condition_rows(DEPLOYMENT_CONDITION, condition.get("status", ""), label="status",
                                  extra={"reason": reason if reason in _DEPLOYMENT_REASONS else "unknown",
                                         "condition": condition.get("type", "")})
    yield DEPLOYMENT_SPEC_REPLICAS, {}, float(replicas)
    yield DEPLOYMENT_PAUSED, {}, flag(bool(spec.get("paused")))
    rolling = (spec.get("strategy") or {}).get("rollingUpdate")
    if rolling is not None:
        yield DEPLOYMENT_MAX_UNAVAILABLE, {}, float(_scaled(rolling.get("maxUnavailable", "25%"), replicas, False))
        yield DEPLOYMENT_MAX_SURGE, {}, float(_scaled(rolling.get("maxSurge", "25%"), replicas, True))
    yield DEPLOYMENT_GENERATION, {}, float(meta.get("generation", 0))
    yield from timestamp_row(DEPLOYMENT_DELETION, meta.get("deletionTimestamp"))


def _scaled(value: int | str, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if isinstance(value, int):
        return value
    percent = int(value.rstrip("%"))
    exact = percent * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


# ---- ReplicaSets (labels namespace, replicaset) -------------------------------------------------------------
REPLICASET_CREATED = family("kube_replicaset_created", "Unix creation timestamp", stable=True)
REPLICASET_REPLICAS = family("kube_replicaset_status_replicas", "The number of replicas per ReplicaSet.", stable=True)
REPLICASET_FULLY_LABELED = family("kube_replicaset_status_fully_labeled_replicas",
                                  "The number of fully labeled replicas per ReplicaSet.", stable=True)
REPLICASET_READY = family("kube_replicaset_status_ready_replicas", "The number of ready replicas per ReplicaSet.",
                          stable=True)
REPLICASET_TERMINATING = family("kube_replicaset_status_terminating_replicas",
                                "The number of terminating replicas per ReplicaSet.")
REPLICASET_OBSERVED = family("kube_replicaset_status_observed_generation",
                             "The generation observed by the ReplicaSet controller.", stable=True)
REPLICASET_SPEC_REPLICAS = family("kube_replicaset_spec_replicas", "Number of desired pods for a ReplicaSet.",
                                  stable=True)
REPLICASET_GENERATION = family("kube_replicaset_metadata_generation",
                               "Sequence number representing a specific generation of the desired state.", stable=True)
REPLICASET_OWNER = family("kube_replicaset_owner", "Information about the ReplicaSet's owner.", stable=True)

REPLICASET_FAMILIES = (REPLICASET_CREATED, REPLICASET_REPLICAS, REPLICASET_FULLY_LABELED, REPLICASET_READY,
                       REPLICASET_TERMINATING, REPLICASET_OBSERVED, REPLICASET_SPEC_REPLICAS, REPLICASET_GENERATION,
                       REPLICASET_OWNER)


def replicaset_labels(obj: dict) -> dict[str, str]:
    return {"namespace": obj["metadata"].get("namespace", ""), "replicaset": obj["metadata"]["name"]}


def replicaset_rows(r: dict) -> Iterable[Row]:
    meta, spec, status = r["metadata"], r.get("spec") or {}, r.get("status") or {}
    yield from timestamp_row(REPLICASET_CREATED, meta.get("creationTimestamp"))
    yield REPLICASET_REPLICAS, {}, float(status.get("replicas", 0))
    yield REPLICASET_FULLY_LABELED, {}, float(status.get("fullyLabeledReplicas", 0))
    yield REPLICASET_READY, {}, float(status.get("readyReplicas", 0))
    if status.get("terminatingReplicas") is not None:
        yield REPLICASET_TERMINATING, {}, float(status["terminatingReplicas"])
    yield REPLICASET_OBSERVED, {}, float(status.get("observedGeneration", 0))
    if spec.get("replicas") is not None:
        yield REPLICASET_SPEC_REPLICAS, {}, float(spec["replicas"])
    yield REPLICASET_GENERATION, {}, float(meta.get("generation", 0))
    yield from owner_rows(REPLICASET_OWNER, meta)


# ---- StatefulSets (labels namespace, statefulset) -------------------------------------------------------------
STATEFULSET_CREATED = family("kube_statefulset_created", "Unix creation timestamp", stable=True)
STATEFULSET_REPLICAS = family("kube_statefulset_status_replicas", "The number of replicas per StatefulSet.",
                              stable=True)
STATEFULSET_AVAILABLE = family("kube_statefulset_status_replicas_available",
                               "The number of available replicas per StatefulSet.", stable=True)
STATEFULSET_CURRENT = family("kube_statefulset_status_replicas_current",
                             "The number of current replicas per StatefulSet.", stable=True)
STATEFULSET_READY = family("kube_statefulset_status_replicas_ready", "The number of ready replicas per StatefulSet.",
                           stable=True)
STATEFULSET_UPDATED = family("kube_statefulset_status_replicas_updated",
                             "The number of updated replicas per StatefulSet.", stable=True)
STATEFULSET_OBSERVED = family("kube_statefulset_status_observed_generation",
                              "The generation observed by the StatefulSet controller.", stable=True)
STATEFULSET_SPEC_REPLICAS = family("kube_statefulset_replicas", "Number of desired pods for a StatefulSet.",
                                   stable=True)
STATEFULSET_ORDINALS_START = family("kube_statefulset_ordinals_start", "Start ordinal of the StatefulSet.",
                                    stable=True)
STATEFULSET_GENERATION = family("kube_statefulset_metadata_generation", "Sequence number representing a specific "
                                "generation of the desired state for the StatefulSet.", stable=True)
STATEFULSET_RETENTION = family("kube_statefulset_persistentvolumeclaim_retention_policy",
                               "Count of retention policy for StatefulSet template PVCs", stable=True)
STATEFULSET_CURRENT_REVISION = family("kube_statefulset_status_current_revision", "Indicates the version of the "
                                      "StatefulSet used to generate Pods in the sequence [0,currentReplicas).",
                                      stable=True)
STATEFULSET_UPDATE_REVISION = family("kube_statefulset_status_update_revision", "Indicates the version of the "
                                     "StatefulSet used to generate Pods in the sequence "
                                     "[replicas-updatedReplicas,replicas)", stable=True)
STATEFULSET_DELETION = family("kube_statefulset_deletion_timestamp", "Unix deletion timestamp", stable=True)

STATEFULSET_FAMILIES = (STATEFULSET_CREATED, STATEFULSET_REPLICAS, STATEFULSET_AVAILABLE, STATEFULSET_CURRENT,
                        STATEFULSET_READY, STATEFULSET_UPDATED, STATEFULSET_OBSERVED, STATEFULSET_SPEC_REPLICAS,
                        STATEFULSET_ORDINALS_START, STATEFULSET_GENERATION, STATEFULSET_RETENTION,
                        STATEFULSET_CURRENT_REVISION, STATEFULSET_UPDATE_REVISION, STATEFULSET_DELETION)


def statefulset_labels(obj: dict) -> dict[str, str]:
    return {"namespace": obj["metadata"].get("namespace", ""), "statefulset": obj["metadata"]["name"]}


def statefulset_rows(s: dict) -> Iterable[Row]:
    meta, spec, status = s["metadata"], s.get("spec") or {}, s.get("status") or {}
    yield from timestamp_row(STATEFULSET_CREATED, meta.get("creationTimestamp"))
    yield STATEFULSET_REPLICAS, {}, float(status.get("replicas", 0))
    yield STATEFULSET_AVAILABLE, {}, float(status.get("availableReplicas", 0))
    yield STATEFULSET_CURRENT, {}, float(status.get("currentReplicas", 0))
    yield STATEFULSET_READY, {}, float(status.get("readyReplicas", 0))
    yield STATEFULSET_UPDATED, {}, float(status.get("updatedReplicas", 0))
    yield STATEFULSET_OBSERVED, {}, float(status.get("observedGeneration", 0))
    if spec.get("replicas") is not None:
        yield STATEFULSET_SPEC_REPLICAS, {}, float(spec["replicas"])
    if spec.get("ordinals") is not None:
        yield STATEFULSET_ORDINALS_START, {}, float(spec["ordinals"].get("start", 0))
    yield STATEFULSET_GENERATION, {}, float(meta.get("generation", 0))
    policy = spec.get("persistentVolumeClaimRetentionPolicy") or {}
    if policy.get("whenDeleted") or policy.get("whenScaled"):
        yield STATEFULSET_RETENTION, {"when_deleted": policy.get("whenDeleted", ""),
                                      "when_scaled": policy.get("whenScaled", "")}, 1.0
    yield STATEFULSET_CURRENT_REVISION, {"revision": status.get("currentRevision", "")}, 1.0
    yield STATEFULSET_UPDATE_REVISION, {"revision": status.get("updateRevision", "")}, 1.0
    yield from timestamp_row(STATEFULSET_DELETION, meta.get("deletionTimestamp"))


# ---- DaemonSets (labels namespace, daemonset) -------------------------------------------------------------------
DAEMONSET_CREATED = family("kube_daemonset_created", "Unix creation timestamp", stable=True)
DAEMONSET_CURRENT = family("kube_daemonset_status_current_number_scheduled",
                           "The number of nodes running at least one daemon pod and are supposed to.", stable=True)
DAEMONSET_DESIRED = family("kube_daemonset_status_desired_number_scheduled",
                           "The number of nodes that should be running the daemon pod.", stable=True)
DAEMONSET_AVAILABLE = family("kube_daemonset_status_number_available", "The number of nodes that should be running "
                             "the daemon pod and have one or more of the daemon pod running and available",
                             stable=True)
DAEMONSET_MISSCHEDULED = family("kube_daemonset_status_number_misscheduled",
                                "The number of nodes running a daemon pod but are not supposed to.", stable=True)
DAEMONSET_READY = family("kube_daemonset_status_number_ready", "The number of nodes that should be running the daemon "
                         "pod and have one or more of the daemon pod running and ready.", stable=True)
DAEMONSET_UNAVAILABLE = family("kube_daemonset_status_number_unavailable", "The number of nodes that should be "
                               "running the daemon pod and have none of the daemon pod running and available",
                               stable=True)
DAEMONSET_OBSERVED = family("kube_daemonset_status_observed_generation",
                            "The most recent generation observed by the daemon set controller.", stable=True)
DAEMONSET_UPDATED = family("kube_daemonset_status_updated_number_scheduled",
                           "The total number of nodes that are running updated daemon pod", stable=True)
DAEMONSET_GENERATION = family("kube_daemonset_metadata_generation",
                              "Sequence number representing a specific generation of the desired state.", stable=True)
DAEMONSET_DELETION = family("kube_daemonset_deletion_timestamp", "Unix deletion timestamp")

DAEMONSET_FAMILIES = (DAEMONSET_CREATED, DAEMONSET_CURRENT, DAEMONSET_DESIRED, DAEMONSET_AVAILABLE,
                      DAEMONSET_MISSCHEDULED, DAEMONSET_READY, DAEMONSET_UNAVAILABLE, DAEMONSET_OBSERVED,
                      DAEMONSET_UPDATED, DAEMONSET_GENERATION, DAEMONSET_DELETION)


def daemonset_labels(obj: dict) -> dict[str, str]:
    return {"namespace": obj["metadata"].get("namespace", ""), "daemonset": obj["metadata"]["name"]}


def daemonset_rows(d: dict) -> Iterable[Row]:
    meta, status = d["metadata"], d.get("status") or {}
    yield from timestamp_row(DAEMONSET_CREATED, meta.get("creationTimestamp"))
    yield DAEMONSET_CURRENT, {}, float(status.get("currentNumberScheduled", 0))
    yield DAEMONSET_DESIRED, {}, float(status.get("desiredNumberScheduled", 0))
    yield DAEMONSET_AVAILABLE, {}, float(status.get("numberAvailable", 0))
    yield DAEMONSET_MISSCHEDULED, {}, float(status.get("numberMisscheduled", 0))
    yield DAEMONSET_READY, {}, float(status.get("numberReady", 0))
    yield DAEMONSET_UNAVAILABLE, {}, float(status.get("numberUnavailable", 0))
    yield DAEMONSET_OBSERVED, {}, float(status.get("observedGeneration", 0))
    yield DAEMONSET_UPDATED, {}, float(status.get("updatedNumberScheduled", 0))
    yield DAEMONSET_GENERATION, {}, float(meta.get("generation", 0))
    yield from timestamp_row(DAEMONSET_DELETION, meta.get("deletionTimestamp"))
