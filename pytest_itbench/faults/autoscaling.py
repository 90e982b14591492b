"""A HorizontalPodAutoscaler whose utilization targets are far below what the workload uses, so it scales the
workload out to its maximum and stays there."""

from __future__ import annotations

import copy

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from pydantic import Field, model_validator

from ._k8s import read_workload
from .base import Fault, FaultArgs, FaultError, FaultRecord

WORKLOADS = ("Deployment", "StatefulSet")


class HpaArgs(FaultArgs):
    # Target average utilization (percent of the request) per resource; ITBench writes cpu 20 and memory 30.
    # A resource the workload requests nothing of has no utilization: leave it out (null), or the autoscaler
    # reports FailedGetResourceMetric and will not scale down on the other metric either.
    cpu: int | None = Field(default=20, ge=1)
    memory: int | None = Field(default=30, ge=1)
    # Only used when the workload has no autoscaler yet. ITBench's application install creates one per
    # Deployment (min 1, max 10, cpu 70 %, memory 80 %); the applications here ship none, so the fault adds
    # that autoscaler, already misconfigured, with a smaller maximum.
    min_replicas: int = Field(default=1, ge=1)
    max_replicas: int = Field(default=4, ge=2)

    @model_validator(mode="after")
    def _some_metric(self):
        if self.cpu is None and self.memory is None:
            raise ValueError("give a target for cpu, memory or both")
        if self.min_replicas >= self.max_replicas:
            raise ValueError("min_replicas must be below max_replicas (KubeHpaMaxedOut ignores an autoscaler "
                             "whose minimum is its maximum)")
        return self


def _metrics(args: HpaArgs) -> list[dict]:
    return [{"type": "Resource", "resource": {"name": name, "target": {"type": "Utilization",
                                                                       "averageUtilization": value}}}
            for name, value in (("cpu", args.cpu), ("memory", args.memory)) if value is not None]


class MisconfiguredAutoscaler(Fault):
    name = "misconfigured-kubernetes-horizontal-pod-autoscaler"
    description = "Sets the workload's HorizontalPodAutoscaler targets far below its usage (creating the " \
                  "autoscaler if the workload has none), so it scales out to its maximum."
    Args = HpaArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubeHpaMaxedOut",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        t = record.target
        hpa_api = client.AutoscalingV2Api(api)
        wanted = _metrics(record.args)
        existing = self._read(api, record)
        if existing is None:
            if record.saved:
                raise FaultError(f"HorizontalPodAutoscaler {t.namespace}/{t.name} this fault created is gone")
            workload = read_workload(api, t)
            body = {"metadata": {"name": t.name, "namespace": t.namespace},
                    "spec": {"scaleTargetRef": {"apiVersion": workload["apiVersion"], "kind": t.kind, "name": t.name},
                             "minReplicas": record.args.min_replicas, "maxReplicas": record.args.max_replicas,
                             "metrics": wanted}}
            try:
                hpa_api.create_namespaced_horizontal_pod_autoscaler(t.namespace, body)
            except ApiException as exc:
                raise FaultError(f"cannot create HorizontalPodAutoscaler {t.namespace}/{t.name}: "
                                 f"{exc.reason}") from None
            record.saved["created"] = True
            return
        if existing["spec"].get("metrics") == wanted and record.saved:
            return
        record.saved.setdefault("metrics", copy.deepcopy(existing["spec"].get("metrics")))
        self._patch_metrics(api, record, wanted)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        t = record.target
        if record.saved.get("created"):
            try:
                client.AutoscalingV2Api(api).delete_namespaced_horizontal_pod_autoscaler(t.name, t.namespace)
            except ApiException as exc:
                if exc.status != 404:
                    raise FaultError(f"cannot delete HorizontalPodAutoscaler {t.namespace}/{t.name}: "
                                     f"{exc.reason}") from None
        elif "metrics" in record.saved and self._read(api, record) is not None:
            self._patch_metrics(api, record, record.saved["metrics"])

    @staticmethod
    def _read(api: ApiClient, record: FaultRecord) -> dict | None:
        t = record.target
        try:
            found = client.AutoscalingV2Api(api).read_namespaced_horizontal_pod_autoscaler(t.name, t.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise FaultError(f"cannot read HorizontalPodAutoscaler {t.namespace}/{t.name}: {exc.reason}") from None
        return api.sanitize_for_serialization(found)

    @staticmethod
    def _patch_metrics(api: ApiClient, record: FaultRecord, metrics: list[dict] | None) -> None:
        t = record.target
        op = {"op": "add", "path": "/spec/metrics", "value": metrics} if metrics is not None else \
            {"op": "remove", "path": "/spec/metrics"}
        try:
            client.AutoscalingV2Api(api).patch_namespaced_horizontal_pod_autoscaler(t.name, t.namespace, [op])
        except ApiException as exc:
            raise FaultError(f"cannot patch HorizontalPodAutoscaler {t.namespace}/{t.name}: {exc.reason}") from None


FAULTS = (MisconfiguredAutoscaler(),)
