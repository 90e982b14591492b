"""Conversion between API versions that share storage.

A real API server stores one version of each resource and converts on the
way in and out. The twin does the same for the two pairs a v1.31 cluster
serves from one storage: HorizontalPodAutoscaler ``autoscaling/v1`` <->
``autoscaling/v2`` (stored as v2) and Event ``v1`` <-> ``events.k8s.io/v1``
(stored as core v1). Custom resources with several versions are converted
by rewriting ``apiVersion`` only (the ``None`` conversion strategy).
"""

from __future__ import annotations

import json

from ..store import clone

HPA_V1_ANNOTATIONS = (
    "autoscaling.alpha.kubernetes.io/metrics",
    "autoscaling.alpha.kubernetes.io/current-metrics",
    "autoscaling.alpha.kubernetes.io/conditions",
    "autoscaling.alpha.kubernetes.io/behavior",
)


def convert(obj: dict, api_version: str) -> dict:
    """Return ``obj`` as ``api_version`` (the same dict when nothing changes)."""
    have = obj.get("apiVersion")
    if have == api_version:
        return obj
    kind = obj.get("kind")
    if kind == "HorizontalPodAutoscaler":
        if have == "autoscaling/v2" and api_version == "autoscaling/v1":
            return hpa_v2_to_v1(obj)
        if have == "autoscaling/v1" and api_version == "autoscaling/v2":
            return hpa_v1_to_v2(obj)
    if kind == "Event":
        if have == "v1" and api_version == "events.k8s.io/v1":
            return event_core_to_events(obj)
        if have == "events.k8s.io/v1" and api_version == "v1":
            return event_events_to_core(obj)
    out = dict(obj)
    out["apiVersion"] = api_version
    return out


# ---- HorizontalPodAutoscaler ---------------------------------------------------------

def hpa_v2_to_v1(obj: dict) -> dict:
    out = clone(obj)
    out["apiVersion"] = "autoscaling/v1"
    spec = out.get("spec") or {}
    status = out.get("status") or {}
    metrics = spec.pop("metrics", None) or []
    behavior = spec.pop("behavior", None)
    annotations = dict((out.get("metadata") or {}).get("annotations") or {})
    other_metrics = []
    for metric in metrics:
        res = metric.get("resource") or {}
        target = res.get("target") or {}
        if metric.get("type") == "Resource" and res.get("name") == "cpu" and target.get("type") == "Utilization" \
                and "targetCPUUtilizationPercentage" not in spec:
            spec["targetCPUUtilizationPercentage"] = target.get("averageUtilization")
        else:
            other_metrics.append(metric)
    if other_metrics:
        annotations["autoscaling.alpha.kubernetes.io/metrics"] = json.dumps(other_metrics, separators=(",", ":"))
    if behavior:
        annotations["autoscaling.alpha.kubernetes.io/behavior"] = json.dumps(behavior, separators=(",", ":"))
    current = status.pop("currentMetrics", None) or []
    conditions = status.pop("conditions", None)
    for metric in current:
        res = metric.get("resource") or {}
        if metric.get("type") == "Resource" and res.get("name") == "cpu":
            value = (res.get("current") or {}).get("averageUtilization")
            if value is not None:
                status["currentCPUUtilizationPercentage"] = value
    if conditions:
        annotations["autoscaling.alpha.kubernetes.io/conditions"] = json.dumps(conditions, separators=(",", ":"))
    # v1 always writes both counts (they are not omitempty there).
    status.setdefault("currentReplicas", 0)
    status.setdefault("desiredReplicas", 0)
    if annotations:
        out.setdefault("metadata", {})["annotations"] = annotations
    out["spec"] = spec
    out["status"] = status
    return out


def hpa_v1_to_v2(obj: dict) -> dict:
    out = clone(obj)
    out["apiVersion"] = "autoscaling/v2"
    meta = out.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    spec = out.get("spec") or {}
    status = out.get("status") or {}
    metrics = []
    cpu = spec.pop("targetCPUUtilizationPercentage", None)
    if cpu is not None:
        metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": cpu}}})
    extra = annotations.pop("autoscaling.alpha.kubernetes.io/metrics", None)
    if extra:
        metrics.extend(json.loads(extra))
    if metrics:
        spec["metrics"] = metrics
    behavior = annotations.pop("autoscaling.alpha.kubernetes.io/behavior", None)
    if behavior:
        spec["behavior"] = json.loads(behavior)
    current_cpu = status.pop("currentCPUUtilizationPercentage", None)
    if current_cpu is not None:
        status["currentMetrics"] = [{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": current_cpu}}}]
    conditions = annotations.pop("autoscaling.alpha.kubernetes.io/conditions", None)
    if conditions:
        status["conditions"] = json.loads(conditions)
    annotations.pop("autoscaling.alpha.kubernetes.io/current-metrics", None)
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out["spec"] = spec
    out["status"] = status
    return out


# ---- Event ----------------------------------------------------------------------------

_CORE_TO_EVENTS = {
    # core field: events.k8s.io field
    "involvedObject": "regarding",
    "related": "related",
    "message": "note",
    "reason": "reason",
    "type": "type",
    "action": "action",
    "reportingComponent": "reportingController",
    "reportingInstance": "reportingInstance",
    "eventTime": "eventTime",
}


def event_core_to_events(obj: dict) -> dict:
    out = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": obj.get("metadata", {})}
    for core, new in _CORE_TO_EVENTS.items():
        if obj.get(core) is not None:
            out[new] = obj[core]
    source = obj.get("source") or {}
    if "reportingController" not in out and source.get("component"):
        out["deprecatedSource"] = source
    elif source:
        out["deprecatedSource"] = source
    if obj.get("firstTimestamp"):
        out["deprecatedFirstTimestamp"] = obj["firstTimestamp"]
    if obj.get("lastTimestamp"):
        out["deprecatedLastTimestamp"] = obj["lastTimestamp"]
    if obj.get("count"):
        out["deprecatedCount"] = obj["count"]
    if obj.get("series"):
        out["series"] = obj["series"]
    if "eventTime" not in out:
        out["eventTime"] = None
    return out


def event_events_to_core(obj: dict) -> dict:
    out = {"apiVersion": "v1", "kind": "Event", "metadata": obj.get("metadata", {})}
    for core, new in _CORE_TO_EVENTS.items():
        if obj.get(new) is not None:
            out[core] = obj[new]
    out.setdefault("involvedObject", {})
    if obj.get("deprecatedSource"):
        out["source"] = obj["deprecatedSource"]
    elif obj.get("reportingController"):
        out["source"] = {"component": obj["reportingController"]}
    if obj.get("deprecatedFirstTimestamp"):
        out["firstTimestamp"] = obj["deprecatedFirstTimestamp"]
    if obj.get("deprecatedLastTimestamp"):
        out["lastTimestamp"] = obj["deprecatedLastTimestamp"]
    if obj.get("deprecatedCount"):
        out["count"] = obj["deprecatedCount"]
    if obj.get("series"):
        out["series"] = obj["series"]
    return out
