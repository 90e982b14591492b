"""The HPA's replica calculation for resource metrics, as kube-controller-manager's ReplicaCalculator does it.

Given the pods a target's selector picks and what metrics-server reports for
them, the proposal is ``ceil(ratio * ready pods)`` where the ratio is the
current utilization (or average value) over the target, unless the ratio is
within the 0.1 tolerance of 1. Pods being deleted or Failed are ignored;
Pending pods, and for CPU pods not yet ready or too recently started to have
a clean sample, count as unready; pods metrics-server has nothing for are
missing. On a scale up, unready and missing pods count as using nothing; on
a scale down, missing pods count as using their full request (or the target
when it is above 100%); if that flips the direction, the replica count stays.
Errors carry upstream's texts, which end up in the HPA's conditions and events.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import quantity
from ..clock import parse_time
from ..metrics import Metrics
from .pod_conditions import condition

TOLERANCE = 0.1
CPU_INITIALIZATION_PERIOD = 300.0
DELAY_OF_INITIAL_READINESS_STATUS = 30.0


class MetricsError(Exception):
    """A failure to compute a proposal; ``str()`` is upstream's message."""


@dataclass(frozen=True)
class PodMetric:
    value: int  # milli-units (millicores, milli-bytes), as upstream's MilliValue
    timestamp: float
    window: float


def resource_metrics(metrics: Metrics, pods: list[dict], resource: str,
                     container: str = "") -> tuple[dict[str, PodMetric], float]:
    """What the resource metrics API reports for these pods, by pod name, and the first report's timestamp."""
    found: dict[str, PodMetric] = {}
    reported = []
    for pod in pods:
        meta = pod["metadata"]
        sample = metrics.pod_sample(meta["namespace"], meta["name"])
        if sample is None:
            continue
        reported.append(sample)
        if container:
            usage = sample.usage.get(container)
            if usage is None:
                raise MetricsError(f"failed to get container metrics: container {container} not present in metrics "
                                   f"for pod {meta['namespace']}/{meta['name']}")
            found[meta["name"]] = PodMetric(_milli(usage, resource), sample.timestamp, sample.window)
            continue
        found[meta["name"]] = PodMetric(sum(_milli(u, resource) for u in sample.usage.values()), sample.timestamp,
                                        sample.window)
    if not reported:
        raise MetricsError("no metrics returned from resource metrics API")
    return found, reported[0].timestamp


def _milli(usage, resource: str) -> int:
    if resource == "cpu":
        return -(-usage.cpu_nanocores // 1_000_000)
    return usage.memory_bytes * 1000


def group_pods(pods: list[dict], metrics: dict[str, PodMetric], resource: str,
               now: float) -> tuple[int, set[str], set[str], set[str]]:
    """Ready pod count, and the unready, missing and ignored pod names."""
    ready_count = 0
    unready: set[str] = set()
    missing: set[str] = set()
    ignored: set[str] = set()
    for pod in pods:
        name = pod["metadata"]["name"]
        status = pod.get("status") or {}
        if pod["metadata"].get("deletionTimestamp") or status.get("phase") == "Failed":
            ignored.add(name)
            continue
        if status.get("phase", "Pending") == "Pending":
            unready.add(name)
            continue
        metric = metrics.get(name)
        if metric is None:
            missing.add(name)
            continue
        if resource == "cpu" and _cpu_sample_unready(pod, metric, now):
            unready.add(name)
            continue
        ready_count += 1
    return ready_count, unready, missing, ignored


def _cpu_sample_unready(pod: dict, metric: PodMetric, now: float) -> bool:
    ready = condition(pod, "Ready")
    started = (pod.get("status") or {}).get("startTime")
    if ready is None or not started:
        return True
    start = parse_time(started)
    transition = parse_time(ready["lastTransitionTime"]) if ready.get("lastTransitionTime") else start
    if start + CPU_INITIALIZATION_PERIOD > now:
        # Still starting: unready, or the sample straddles the last readiness change.
        return ready.get("status") == "False" or metric.timestamp < transition + metric.window
    # Unready and never ready since it started.
    return ready.get("status") == "False" and start + DELAY_OF_INITIAL_READINESS_STATUS > transition


def pod_requests(pods: list[dict], resource: str, container: str = "") -> dict[str, int]:
    """Each pod's request of the resource in milli-units; every container must request it."""
    out = {}
    for pod in pods:
        spec = pod.get("spec") or {}
        containers = list(spec.get("containers") or ()) + [c for c in spec.get("initContainers") or ()
                                                           if c.get("restartPolicy") == "Always"]
        total = 0
        for c in containers:
            if container and c.get("name") != container:
                continue
            request = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            if request is None:
                raise MetricsError(f"missing request for {resource} in container {c.get('name')} of Pod "
                                   f"{pod['metadata']['name']}")
            total += quantity.parse(str(request)).milli_value
        out[pod["metadata"]["name"]] = total
    return out


def utilization_ratio(metrics: dict[str, PodMetric], requests: dict[str, int],
                      target_utilization: int) -> tuple[float, int, int]:
    """Usage over target, current utilization (percent of request) and the raw average, as upstream rounds them."""
    metrics_total = requests_total = entries = 0
    for name, metric in metrics.items():
        if name not in requests:
            continue  # extraneous metrics
        metrics_total += metric.value
        requests_total += requests[name]
        entries += 1
    if requests_total == 0:
        raise MetricsError("no metrics returned matched known pods")
    utilization = metrics_total * 100 // requests_total
    return utilization / target_utilization, utilization, metrics_total // entries


def resource_replicas(current: int, target_utilization: int, metrics: dict[str, PodMetric], pods: list[dict],
                      resource: str, container: str, now: float) -> tuple[int, int, int]:
    """GetResourceReplicas: (replicas, utilization percent, raw average usage in milli-units)."""
    if not pods:
        raise MetricsError("no pods returned by selector while calculating replica count")
    ready_count, unready, missing, ignored = group_pods(pods, metrics, resource, now)
    metrics = {k: v for k, v in metrics.items() if k not in ignored and k not in unready}
    if not metrics:
        raise MetricsError("did not receive metrics for targeted pods (pods might be unready)")
    requests = pod_requests(pods, resource, container)
    ratio, utilization, raw = utilization_ratio(metrics, requests, target_utilization)
    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if abs(1.0 - ratio) <= TOLERANCE:
            return current, utilization, raw
        return math.ceil(ratio * ready_count), utilization, raw
    if missing:
        if ratio < 1.0:
            fallback = max(100, target_utilization)
            for name in missing:
                metrics[name] = PodMetric(requests[name] * fallback // 100, 0.0, 0.0)
        elif ratio > 1.0:
            for name in missing:
                metrics[name] = PodMetric(0, 0.0, 0.0)
    if scale_up_with_unready:
        for name in unready:
            metrics[name] = PodMetric(0, 0.0, 0.0)
    new_ratio, _, _ = utilization_ratio(metrics, requests, target_utilization)
    return _settle(current, ratio, new_ratio, len(metrics)), utilization, raw


def raw_resource_replicas(current: int, target_milli: int, metrics: dict[str, PodMetric], pods: list[dict],
                          resource: str, now: float) -> tuple[int, int]:
    """GetRawResourceReplicas (an averageValue target): (replicas, average usage in milli-units)."""
    if not pods:
        raise MetricsError("no pods returned by selector while calculating replica count")
    ready_count, unready, missing, ignored = group_pods(pods, metrics, resource, now)
    metrics = {k: v for k, v in metrics.items() if k not in ignored and k not in unready}
    if not metrics:
        raise MetricsError("did not receive metrics for targeted pods (pods might be unready)")
    ratio, usage = _usage_ratio(metrics, target_milli)
    scale_up_with_unready = bool(unready) and ratio > 1.0
    if not scale_up_with_unready and not missing:
        if abs(1.0 - ratio) <= TOLERANCE:
            return current, usage
        return math.ceil(ratio * ready_count), usage
    if missing:
        for name in missing:
            metrics[name] = PodMetric(target_milli if ratio < 1.0 else 0, 0.0, 0.0)
    if scale_up_with_unready:
        for name in unready:
            metrics[name] = PodMetric(0, 0.0, 0.0)
    new_ratio, _ = _usage_ratio(metrics, target_milli)
    return _settle(current, ratio, new_ratio, len(metrics)), usage


def _usage_ratio(metrics: dict[str, PodMetric], target_milli: int) -> tuple[float, int]:
    average = sum(m.value for m in metrics.values()) // len(metrics)
    return average / target_milli, average


def _settle(current: int, ratio: float, new_ratio: float, counted: int) -> int:
    """The proposal after filling in unready and missing pods, unless that changes the direction."""
    if abs(1.0 - new_ratio) <= TOLERANCE or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current
    proposal = math.ceil(new_ratio * counted)
    if (new_ratio < 1.0 and proposal > current) or (new_ratio > 1.0 and proposal < current):
        return current
    return proposal
