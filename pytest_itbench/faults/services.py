"""Faults on Services."""

from __future__ import annotations

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from .base import Fault, FaultArgs, FaultError, FaultRecord


class TargetPortArgs(FaultArgs):
    targetPort: int  # a port the selected pods do not listen on


class ModifiedTargetPort(Fault):
    name = "modified-target-port-kubernetes-service"
    description = "Points every port of a Service at a targetPort its pods do not listen on."
    Args = TargetPortArgs
    target_kinds = ("Service",)
    expected_alerts = ("HighRequestErrorRate",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        svc = _read(api, record)
        ports = svc["spec"].get("ports") or []
        if all(p.get("targetPort") == record.args.targetPort for p in ports) and "ports" in record.saved:
            return
        record.saved.setdefault("ports", ports)
        _patch(api, record, [dict(p, targetPort=record.args.targetPort) for p in ports])

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "ports" in record.saved:
            _patch(api, record, record.saved["ports"])


def _read(api: ApiClient, record: FaultRecord) -> dict:
    t = record.target
    try:
        return api.sanitize_for_serialization(client.CoreV1Api(api).read_namespaced_service(t.name, t.namespace))
    except ApiException as exc:
        raise FaultError(f"cannot read Service {t.namespace}/{t.name}: {exc.reason}") from None


def _patch(api: ApiClient, record: FaultRecord, ports: list[dict]) -> None:
    t = record.target
    try:
        client.CoreV1Api(api).patch_namespaced_service(
            t.name, t.namespace, [{"op": "replace", "path": "/spec/ports", "value": ports}])
    except ApiException as exc:
        raise FaultError(f"cannot patch Service {t.namespace}/{t.name}: {exc.reason}") from None


FAULTS = (ModifiedTargetPort(),)
