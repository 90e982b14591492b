"""The horizontal-pod-autoscaler controller (autoscaling/v2), syncing each HPA every 15 s.

Each sync reads the target's scale (spec.replicas and the selector of a
Deployment, ReplicaSet, StatefulSet or ReplicationController), computes a
proposal per metric from what metrics-server reports (the Metrics model) for
the pods the selector picks, keeps the largest, stabilizes and limits it
(``hpa_scaling``), writes the target's scale subresource when the count
changes, and records ``status`` (currentReplicas, desiredReplicas,
lastScaleTime, currentMetrics, which ``kubectl get hpa`` shows as
``cpu: 85%/50%``) and the conditions AbleToScale, ScalingActive and
ScalingLimited, with upstream's reasons, messages and events
(``SuccessfulRescale`` "New size: 4; reason: cpu resource utilization
(percentage of request) above target", ``FailedGetResourceMetric``,
``FailedComputeMetricsReplicas``, ``FailedGetScale``, ...).

The first sync comes 15 s after the HPA appears, as upstream's rate-limited
queue hands it out, so a new HPA shows ``<unknown>`` targets for a while.
Only resource metrics have a source in the twin; Pods, Object and External
metrics fail as they do on a cluster without a custom or external metrics API.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Hashable, Iterable

from .. import quantity
from ..apiserver.resources import Resource
from ..errors import StatusError
from ..selectors import LabelSelector
from ..store import Change, clone
from .events import EventSource
from .hpa_scaling import (READY_FOR_NEW_SCALE, SCALE_DOWN_STABILIZED, ScalingHistory, limit_by_behavior,
                          limit_by_rules, stabilize, stabilize_with_behavior)
from .manager import Controller
from .replica_calculator import MetricsError, PodMetric, raw_resource_replicas, resource_metrics, resource_replicas

SYNC_PERIOD = 15.0
SOURCE = EventSource("horizontal-pod-autoscaler")
SCALABLE = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet"), ("", "ReplicationController")}
_NO_CUSTOM_METRICS = "unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) " \
                     "registered"
_NO_EXTERNAL_METRICS = "unable to fetch metrics from external metrics API: no external metrics API " \
                       "(external.metrics.k8s.io) registered"

Key = tuple[str, str]


@dataclass
class _HPAState:
    next_sync: float
    history: ScalingHistory = field(default_factory=ScalingHistory)


@dataclass
class _Scale:
    """What the scale subresource of the target tells: its storage resource, the object, replicas, selector."""

    res: Resource
    target: dict
    replicas: int
    selector: str


class _MetricFailure(Exception):
    """One metric could not be computed: the condition reason, the condition's error and the overall error."""

    def __init__(self, reason: str, detail: str, error: str | None = None):
        super().__init__(error or detail)
        self.reason = reason
        self.detail = detail
        self.error = error or detail


class HorizontalPodAutoscalerController(Controller):
    name = "horizontal-pod-autoscaler"
    watches = ("horizontalpodautoscalers.autoscaling",)

    def __init__(self, manager):
        super().__init__(manager)
        self.hpas = self.resource("autoscaling", "v2", "horizontalpodautoscalers")
        self.pods = self.resource("", "v1", "pods")
        self._state: dict[Key, _HPAState] = {}

    def keys_for(self, change: Change) -> Iterable[Hashable]:
        meta = change.obj["metadata"]
        return [(meta["namespace"], meta["name"])]

    def reconcile(self, key: Key, now: float) -> float | None:
        hpa = self.get(self.hpas, *key)
        if hpa is None:
            self._state.pop(key, None)
            return None
        state = self._state.get(key)
        if state is None:
            state = self._state[key] = _HPAState(next_sync=now + SYNC_PERIOD)
        if now < state.next_sync - 1e-6:
            return state.next_sync - now
        state.next_sync = now + SYNC_PERIOD
        _Sync(self, hpa, state.history, now).run()
        return SYNC_PERIOD


class _Sync:
    """One reconcileAutoscaler pass over one HPA."""

    def __init__(self, controller: HorizontalPodAutoscalerController, hpa: dict, history: ScalingHistory,
                 now: float):
        self.c = controller
        self.hpa = hpa
        self.history = history
        self.now = now
        self.spec = hpa.get("spec") or {}
        self.original = clone(hpa.get("status") or {})
        self.status = hpa.setdefault("status", {})
        self.conditions: list[dict] = list(self.status.get("conditions") or [])

    def run(self) -> None:
        scale = self._scale()
        if scale is None:
            self._write_status()
            return
        self._condition("AbleToScale", "True", "SucceededGetScale",
                        "the HPA controller was able to get the target's current scale")
        current = scale.replicas
        self.history.record_initial(current, self.now)
        min_replicas = self.spec.get("minReplicas")
        min_replicas = 1 if min_replicas is None else min_replicas
        max_replicas = self.spec.get("maxReplicas", 0)
        statuses: list[dict] = []
        rescale, desired, reason = True, 0, ""
        if current == 0 and min_replicas != 0:
            rescale = False
            self._condition("ScalingActive", "False", "ScalingDisabled",
                            "scaling is disabled since the replica count of the target is zero")
        elif current > max_replicas:
            reason, desired = "Current number of replicas above Spec.MaxReplicas", max_replicas
        elif current < min_replicas:
            reason, desired = "Current number of replicas below Spec.MinReplicas", min_replicas
        else:
            proposal, metric, statuses, error = self._replicas_for_metrics(scale, current)
            if proposal < 0:
                self._set_status(current, self.status.get("desiredReplicas", 0), statuses, False)
                self._write_status()
                self._event("Warning", "FailedComputeMetricsReplicas", error)
                return
            if proposal > desired:
                desired = proposal
            if desired > current:
                reason = f"{metric} above target"
            elif desired < current:
                reason = "All metrics below target"
            desired = self._normalize(current, desired, min_replicas, max_replicas)
            rescale = desired != current
        if rescale:
            try:
                self._write_scale(scale, desired)
            except StatusError as exc:
                self._event("Warning", "FailedRescale", f"New size: {desired}; reason: {reason}; error: {exc.message}")
                self._condition("AbleToScale", "False", "FailedUpdateScale",
                                f"the HPA controller was unable to update the target scale: {exc.message}")
                self._set_status(current, self.status.get("desiredReplicas", 0), statuses, False)
                self._write_status()
                return
            self._condition("AbleToScale", "True", "SucceededRescale",
                            f"the HPA controller was able to update the target scale to {desired}")
            self._event("Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
            self.history.record_scale(self.spec.get("behavior"), current, desired, self.now)
        else:
            desired = current
        self._set_status(current, desired, statuses, rescale)
        self._write_status()

    # ---- the target's scale -------------------------------------------------------------------------------
    def _scale(self) -> _Scale | None:
        ref = self.spec.get("scaleTargetRef") or {}
        api_version, kind = ref.get("apiVersion") or "", ref.get("kind") or ""
        group = api_version.rpartition("/")[0]
        res = self.c.api.catalog.for_api_version(api_version, kind)
        if res is None or (group, kind) not in SCALABLE:
            return self._scale_failed(f'no matches for kind "{kind}" in group "{group}"')
        namespace = self.hpa["metadata"]["namespace"]
        target = self.c.store.get(res.bucket, namespace, ref.get("name") or "")
        if target is None:
            return self._scale_failed(f'{res.group_resource} "{ref.get("name")}" not found')
        spec = target.get("spec") or {}
        selector = spec.get("selector")
        if kind == "ReplicationController":
            text = ",".join(f"{k}={v}" for k, v in sorted((selector or {}).items()))
        else:
            parsed = LabelSelector.from_object(selector)
            text = str(parsed) if parsed is not None else ""
        return _Scale(self.c.api.storage_of(res), target, spec.get("replicas", 1), text)

    def _scale_failed(self, error: str) -> None:
        self._event("Warning", "FailedGetScale", error)
        self._condition("AbleToScale", "False", "FailedGetScale",
                        f"the HPA controller was unable to get the target's current scale: {error}")
        return None

    def _write_scale(self, scale: _Scale, replicas: int) -> None:
        meta = scale.target["metadata"]
        updated = clone(scale.target)
        updated["spec"]["replicas"] = replicas
        updated["metadata"].pop("resourceVersion", None)
        self.c.api.update(scale.res, meta["namespace"], meta["name"], updated, self.c.ctx, subresource="scale",
                          check_rv=False)

    # ---- metrics -------------------------------------------------------------------------------------------
    def _replicas_for_metrics(self, scale: _Scale, current: int) -> tuple[int, str, list[dict], str]:
        """The largest proposal, its metric, the metric statuses and an error (proposal -1 when none worked)."""
        if not scale.selector:
            self._event("Warning", "SelectorRequired", "selector is required")
            self._condition("ScalingActive", "False", "InvalidSelector",
                            "the HPA target's scale is missing a selector")
            return -1, "", [], "selector is required"
        selector = LabelSelector.parse(scale.selector)
        pods = [p for p in self.c.store.list(self.c.pods.bucket, self.hpa["metadata"]["namespace"])[0]
                if selector.matches(p["metadata"].get("labels"))]
        specs = self.spec.get("metrics") or []
        statuses: list[dict] = [{"type": ""} for _ in specs]
        replicas, metric = 0, ""
        failures: list[_MetricFailure] = []
        for i, spec in enumerate(specs):
            try:
                proposal, name, statuses[i] = self._replicas_for_metric(spec, current, pods)
            except _MetricFailure as failure:
                self._event("Warning", failure.reason, failure.detail)
                failures.append(failure)
                continue
            if replicas == 0 or proposal > replicas:
                replicas, metric = proposal, name
        if failures and (len(failures) >= len(specs) or replicas < current):
            first = failures[0]
            self._condition("ScalingActive", "False", first.reason,
                            f"the HPA was unable to compute the replica count: {first.detail}")
            return -1, "", statuses, (f"invalid metrics ({len(failures)} invalid out of {len(specs)}), first error "
                                      f"is: {first.error}")
        self._condition("ScalingActive", "True", "ValidMetricFound",
                        f"the HPA was able to successfully calculate a replica count from {metric}")
        return replicas, metric, statuses, ""

    def _replicas_for_metric(self, spec: dict, current: int, pods: list[dict]) -> tuple[int, str, dict]:
        kind = spec.get("type")
        if kind in ("Resource", "ContainerResource"):
            return self._resource_metric(spec, current, pods)
        if kind == "Pods":
            name = ((spec.get("pods") or {}).get("metric") or {}).get("name", "")
            detail = f"unable to get metric {name}: {_NO_CUSTOM_METRICS}"
            raise _MetricFailure("FailedGetPodsMetric", detail, f"failed to get pods metric value: {detail}")
        if kind == "Object":
            name = ((spec.get("object") or {}).get("metric") or {}).get("name", "")
            detail = f"unable to get metric {name}: {_NO_CUSTOM_METRICS}"
            raise _MetricFailure("FailedGetObjectMetric", detail, f"failed to get object metric value: {detail}")
        if kind == "External":
            name = ((spec.get("external") or {}).get("metric") or {}).get("name", "")
            detail = f"unable to get external metric {self.hpa['metadata']['namespace']}/{name}: " \
                     f"{_NO_EXTERNAL_METRICS}"
            raise _MetricFailure("FailedGetExternalMetric", f"failed to get {name} external metric: {detail}")
        raise _MetricFailure("InvalidMetricSourceType", f'unknown metric source type "{kind}"')

    def _resource_metric(self, spec: dict, current: int, pods: list[dict]) -> tuple[int, str, dict]:
        container_metric = spec.get("type") == "ContainerResource"
        key = "containerResource" if container_metric else "resource"
        source = spec.get(key) or {}
        resource, target = source.get("name", ""), source.get("target") or {}
        container = source.get("container", "") if container_metric else ""
        reason = "FailedGetContainerResourceMetric" if container_metric else "FailedGetResourceMetric"
        try:
            if target.get("averageValue") is not None:
                target_milli = quantity.parse(str(target["averageValue"])).milli_value
                try:
                    metrics = self._pod_metrics(pods, resource, container)
                    replicas, usage = raw_resource_replicas(current, target_milli, metrics, pods, resource, self.now)
                except MetricsError as exc:
                    raise MetricsError(f"failed to get {resource} usage: {exc}") from None
                value: dict = {"averageValue": quantity.format_decimal(Fraction(usage, 1000))}
                name = f"{resource} resource"
            elif target.get("averageUtilization") is not None:
                try:
                    metrics = self._pod_metrics(pods, resource, container)
                    replicas, utilization, raw = resource_replicas(current, target["averageUtilization"], metrics,
                                                                   pods, resource, container, self.now)
                except MetricsError as exc:
                    raise MetricsError(f"failed to get {resource} utilization: {exc}") from None
                value = {"averageUtilization": utilization,
                         "averageValue": quantity.format_decimal(Fraction(raw, 1000))}
                name = f"{resource} {'container ' if container_metric else ''}resource utilization (percentage " \
                       f"of request)"
            else:
                raise MetricsError("invalid resource metric source: neither an average utilization target nor an "
                                   "average value (usage) target was set")
        except MetricsError as exc:
            raise _MetricFailure(reason, str(exc)) from None
        status_source = {"name": resource, "current": value}
        if container_metric:
            status_source["container"] = container
        return replicas, name, {"type": spec["type"], key: status_source}

    def _pod_metrics(self, pods: list[dict], resource: str, container: str) -> dict[str, PodMetric]:
        try:
            return resource_metrics(self.c.manager.metrics, pods, resource, container)[0]
        except MetricsError as exc:
            raise MetricsError(f"unable to get metrics for resource {resource}: {exc}") from None

    # ---- normalizing ------------------------------------------------------------------------------------------
    def _normalize(self, current: int, desired: int, min_replicas: int, max_replicas: int) -> int:
        behavior = self.spec.get("behavior")
        if behavior:
            stabilized, stabilized_reason = stabilize_with_behavior(self.history, behavior, current, desired,
                                                                    self.now)
            able = stabilized_reason if stabilized != desired else READY_FOR_NEW_SCALE
            limited, limiting = limit_by_behavior(self.history, behavior, current, stabilized, min_replicas,
                                                  max_replicas, self.now)
        else:
            stabilized = stabilize(self.history, desired, self.now)
            able = SCALE_DOWN_STABILIZED if stabilized != desired else READY_FOR_NEW_SCALE
            limited, limiting = limit_by_rules(current, stabilized, min_replicas, max_replicas)
        self._condition("AbleToScale", "True", *able)
        self._condition("ScalingLimited", "False" if limited == stabilized else "True", *limiting)
        return limited

    # ---- status, conditions and events -------------------------------------------------------------------------
    def _set_status(self, current: int, desired: int, metrics: list[dict], rescaled: bool) -> None:
        status: dict = {"currentReplicas": current, "desiredReplicas": desired}
        last_scale = self.status.get("lastScaleTime")
        if rescaled:
            last_scale = self.c.clock.timestamp(self.now)
        if last_scale:
            status["lastScaleTime"] = last_scale
        if metrics:
            status["currentMetrics"] = metrics
        self.status.clear()
        self.status.update(status)

    def _condition(self, type_: str, status: str, reason: str, message: str) -> None:
        """setCondition: update in place (a new status moves lastTransitionTime), or append."""
        for cond in self.conditions:
            if cond.get("type") == type_:
                if cond.get("status") != status:
                    cond["lastTransitionTime"] = self.c.clock.timestamp(self.now)
                cond.update(status=status, reason=reason, message=message)
                return
        self.conditions.append({"type": type_, "status": status, "lastTransitionTime":
                                self.c.clock.timestamp(self.now), "reason": reason, "message": message})

    def _write_status(self) -> None:
        if self.conditions:
            self.status["conditions"] = self.conditions
        if self.status != self.original:
            self.c.update_status(self.c.hpas, self.hpa)

    def _event(self, type_: str, reason: str, message: str) -> None:
        self.c.events.record(self.hpa, type_, reason, message, SOURCE)
