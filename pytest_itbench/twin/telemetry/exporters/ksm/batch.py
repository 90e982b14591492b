"""kube-state-metrics' Job and HorizontalPodAutoscaler families.

A Job is labelled ``job_name``, not ``job``: the target's ``job`` label would otherwise clash.
"""

from __future__ import annotations

from typing import Iterable

from ..base import MetricFamily
from .common import (Row, condition_rows, conditions_by_type, family, flag, owner_rows, quantity_milli,
                     timestamp_row)

# ---- Jobs (labels namespace, job_name) ------------------------------------------------------------------------
JOB_INFO = family("kube_job_info", "Information about job.", stable=True)
JOB_CREATED = family("kube_job_created", "Unix creation timestamp", stable=True)
JOB_PARALLELISM = family("kube_job_spec_parallelism",
                         "The maximum desired number of pods the job should run at any given time.", stable=True)
JOB_COMPLETIONS = family("kube_job_spec_completions",
                         "The desired number of successfully finished pods the job should be run with.", stable=True)
JOB_DEADLINE = family("kube_job_spec_active_deadline_seconds", "The duration in seconds relative to the startTime "
                      "that the job may be active before the system tries to terminate it.", stable=True)
JOB_SUCCEEDED = family("kube_job_status_succeeded", "The number of pods which reached Phase Succeeded.", stable=True)
JOB_FAILED = family("kube_job_status_failed", "The number of pods which reached Phase Failed and the reason for failure.",
                    stable=True)
JOB_ACTIVE = family("kube_job_status_active", "The number of actively running pods.", stable=True)
JOB_READY = family("kube_job_status_ready", "The number of ready pods that belong to this Job.")
JOB_COMPLETE = family("kube_job_complete", "The job has completed its execution.", stable=True)
JOB_FAILED_CONDITION = family("kube_job_failed", "The job has failed its execution.", stable=True)
JOB_START_TIME = family("kube_job_status_start_time",
                        "StartTime represents time when the job was acknowledged by the Job Manager.", stable=True)
JOB_COMPLETION_TIME = family("kube_job_status_completion_time",
                             "CompletionTime represents time when the job was completed.", stable=True)
JOB_SUSPENDED = family("kube_job_status_suspended", "The number of pods which reached Phase Suspended.")
JOB_OWNER = family("kube_job_owner", "Information about the Job's owner.", stable=True)

JOB_FAMILIES = (JOB_INFO, JOB_CREATED, JOB_PARALLELISM, JOB_COMPLETIONS, JOB_DEADLINE, JOB_SUCCEEDED, JOB_FAILED,
                JOB_ACTIVE, JOB_READY, JOB_COMPLETE, JOB_FAILED_CONDITION, JOB_START_TIME, JOB_COMPLETION_TIME,
                JOB_SUSPENDED, JOB_OWNER)

_JOB_FAILURE_REASONS = ("BackoffLimitExceeded", "DeadlineExceeded", "Evicted")


def job_labels(obj: dict) -> dict[str, str]:
    return {"namespace": obj["metadata"].get("namespace", ""), "job_name": obj["metadata"]["name"]}


def job_rows(j: dict) -> Iterable[Row]:
    meta, spec, status = j["metadata"], j.get("spec") or {}, j.get("status") or {}
    conditions = status.get("conditions") or ()
    yield JOB_INFO, {}, 1.0
    yield from timestamp_row(JOB_CREATED, meta.get("creationTimestamp"))
    for fam, key in ((JOB_PARALLELISM, "parallelism"), (JOB_COMPLETIONS, "completions"),
                     (JOB_DEADLINE, "activeDeadlineSeconds")):
        if spec.get(key) is not None:
            yield fam, {}, float(spec[key])
    yield JOB_SUCCEEDED, {}, float(status.get("succeeded", 0))
    yield from _failed(status)
    yield JOB_ACTIVE, {}, float(status.get("active", 0))
    yield JOB_READY, {}, float(status.get("ready") or 0)
    for condition in conditions:
        kind, state = condition.get("type"), condition.get("status", "")
        if kind == "Complete":
            yield from condition_rows(JOB_COMPLETE, state)
        elif kind == "Failed":
            yield from condition_rows(JOB_FAILED_CONDITION, state)
        elif kind == "Suspended":
            yield JOB_SUSPENDED, {}, flag(state == "True")
    yield from timestamp_row(JOB_START_TIME, status.get("startTime"))
    yield from timestamp_row(JOB_COMPLETION_TIME, status.get("completionTime"))
    yield from owner_rows(JOB_OWNER, meta)


def _failed(status: dict) -> Iterable[Row]:
    failed = float(status.get("failed", 0))
    if failed == 0:
        yield JOB_FAILED, {}, 0.0
        return
    known = False
    for condition in status.get("conditions") or ():
        if condition.get("type") == "Failed":
            for reason in _JOB_FAILURE_REASONS:
                matches = condition.get("reason") == reason
                known = known or matches
                yield JOB_FAILED, {"reason": reason}, flag(matches)
    if not known:
        yield JOB_FAILED, {"reason": ""}, failed


# ---- HorizontalPodAutoscalers (labels namespace, horizontalpodautoscaler; autoscaling/v2) ------------------------
HPA_INFO = family("kube_horizontalpodautoscaler_info", "Information about this autoscaler.")
HPA_GENERATION = family("kube_horizontalpodautoscaler_metadata_generation",
                        "The generation observed by the HorizontalPodAutoscaler controller.", stable=True)
HPA_MAX = family("kube_horizontalpodautoscaler_spec_max_replicas", "Upper limit for the number of pods that can be set "
                 "by the autoscaler; cannot be smaller than MinReplicas.", stable=True)
HPA_MIN = family("kube_horizontalpodautoscaler_spec_min_replicas",
                 "Lower limit for the number of pods that can be set by the autoscaler, default 1.", stable=True)
HPA_SPEC_TARGET = family("kube_horizontalpodautoscaler_spec_target_metric", "The metric specifications used by this "
                         "autoscaler when calculating the desired replica count.")
HPA_STATUS_TARGET = family("kube_horizontalpodautoscaler_status_target_metric", "The current metric status used by "
                           "this autoscaler when calculating the desired replica count.", stable=True)
HPA_CURRENT = family("kube_horizontalpodautoscaler_status_current_replicas",
                     "Current number of replicas of pods managed by this autoscaler.", stable=True)
HPA_DESIRED = family("kube_horizontalpodautoscaler_status_desired_replicas",
                     "Desired number of replicas of pods managed by this autoscaler.", stable=True)
HPA_CONDITION = family("kube_horizontalpodautoscaler_status_condition", "The condition of this autoscaler.",
                       stable=True)
HPA_CREATED = family("kube_horizontalpodautoscaler_created", "Unix creation timestamp")
HPA_DELETION = family("kube_horizontalpodautoscaler_deletion_timestamp", "Unix deletion timestamp")

HPA_FAMILIES = (HPA_INFO, HPA_GENERATION, HPA_MAX, HPA_MIN, HPA_SPEC_TARGET, HPA_STATUS_TARGET, HPA_CURRENT,
                HPA_DESIRED, HPA_CONDITION, HPA_CREATED, HPA_DELETION)

# Where each metric source type keeps its metric's name: a nested metric identifier, or the resource name.
_SOURCE_KEYS = {"Object": "object", "Pods": "pods", "Resource": "resource", "ContainerResource": "containerResource",
                "External": "external"}


def hpa_labels(obj: dict) -> dict[str, str]:
    return {"namespace": obj["metadata"].get("namespace", ""), "horizontalpodautoscaler": obj["metadata"]["name"]}


def hpa_rows(a: dict) -> Iterable[Row]:
    meta, spec, status = a["metadata"], a.get("spec") or {}, a.get("status") or {}
    target = spec.get("scaleTargetRef") or {}
    info = {"scaletargetref_kind": target.get("kind", ""), "scaletargetref_name": target.get("name", "")}
    if target.get("apiVersion"):
        info["scaletargetref_api_version"] = target["apiVersion"]
    yield HPA_INFO, info, 1.0
    yield HPA_GENERATION, {}, float(meta.get("generation", 0))
    yield HPA_MAX, {}, float(spec.get("maxReplicas", 0))
    yield HPA_MIN, {}, float(spec.get("minReplicas") if spec.get("minReplicas") is not None else 1)
    yield from _metric_values(HPA_SPEC_TARGET, spec.get("metrics") or (), "target")
    yield from _metric_values(HPA_STATUS_TARGET, status.get("currentMetrics") or (), "current")
    yield HPA_CURRENT, {}, float(status.get("currentReplicas", 0))
    yield HPA_DESIRED, {}, float(status.get("desiredReplicas", 0))
    yield from conditions_by_type(HPA_CONDITION, status.get("conditions") or ())
    yield from timestamp_row(HPA_CREATED, meta.get("creationTimestamp"))
    yield from timestamp_row(HPA_DELETION, meta.get("deletionTimestamp"))


def _metric_values(fam: MetricFamily, metrics: Iterable[dict], field: str) -> Iterable[Row]:
    """``metric_name`` and ``metric_target_type`` (value, utilization, average) of each metric's target or
    current value; quantities as ``MilliValue() / 1000``."""
    for m in metrics:
        key = _SOURCE_KEYS.get(m.get("type", ""))
        if key is None or key not in m:
            continue
        source = m[key]
        name = source.get("name", "") if key in ("resource", "containerResource") \
            else (source.get("metric") or {}).get("name", "")
        values = source.get(field) or {}
        found: dict[str, float] = {}
        if values.get("value") is not None:
            found["value"] = quantity_milli(values["value"])
        if values.get("averageValue") is not None:
            found["average"] = quantity_milli(values["averageValue"])
        if values.get("averageUtilization") is not None:
            found["utilization"] = float(values["averageUtilization"])
        for kind, value in found.items():
            yield fam, {"metric_name": name, "metric_target_type": kind}, value

