"""Faults on how workloads reach each other: a Service deleted or selecting nothing, ingress blocked by a
NetworkPolicy, a DNS policy that cannot resolve cluster names."""

from __future__ import annotations

import copy

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from pydantic import Field

from ._k8s import patch_workload, read_workload
from .base import Fault, FaultArgs, FaultError, FaultRecord

WORKLOADS = ("Deployment", "StatefulSet")
# What the API server fills in or owns: a re-created Service gets its own.
_SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "selfLink",
                  "deletionTimestamp", "deletionGracePeriodSeconds")


def _read_service(api: ApiClient, record: FaultRecord) -> dict | None:
    t = record.target
    try:
        return api.sanitize_for_serialization(client.CoreV1Api(api).read_namespaced_service(t.name, t.namespace))
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise FaultError(f"cannot read Service {t.namespace}/{t.name}: {exc.reason}") from None


def _missing(record: FaultRecord) -> FaultError:
    t = record.target
    return FaultError(f"Service {t.namespace}/{t.name} does not exist, so the {record.fault} fault has nothing "
                      f"to act on")


class DeletedService(Fault):
    name = "deleted-kubernetes-service"
    description = "Deletes a Service: its clients can no longer resolve its name."
    target_kinds = ("Service",)
    expected_alerts = ("HighRequestErrorRate",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        svc = _read_service(api, record)
        if svc is None:
            if "service" in record.saved:
                return  # already deleted by this injection
            raise _missing(record)
        record.saved.setdefault("service", _recreatable(svc))
        t = record.target
        try:
            client.CoreV1Api(api).delete_namespaced_service(t.name, t.namespace, _preload_content=False)
        except ApiException as exc:
            if exc.status != 404:
                raise FaultError(f"cannot delete Service {t.namespace}/{t.name}: {exc.reason}") from None

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "service" not in record.saved or _read_service(api, record) is not None:
            return  # never deleted, or already back (an agent re-created it)
        t = record.target
        try:
            client.CoreV1Api(api).create_namespaced_service(t.namespace, copy.deepcopy(record.saved["service"]))
        except ApiException as exc:
            raise FaultError(f"cannot re-create Service {t.namespace}/{t.name}: {exc.reason}") from None


def _recreatable(svc: dict) -> dict:
    """The Service as it can be created again: no server-owned metadata, no status, a fresh cluster IP."""
    body = copy.deepcopy(svc)
    body.pop("status", None)
    meta = body.get("metadata") or {}
    for key in _SERVER_FIELDS:
        meta.pop(key, None)
    spec = body.get("spec") or {}
    if spec.get("clusterIP") not in (None, "None"):
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
    return body


class SelectorArgs(FaultArgs):
    # Labels added to the Service's selector; no pod carries them, so the Service selects nothing.
    # (ITBench adds app.kubernetes.io/name: invalid-workload-<random>; a fixed value keeps runs deterministic.)
    selector: dict[str, str] = Field(default_factory=lambda: {"app.kubernetes.io/name": "invalid-workload"},
                                     min_length=1)


class InvalidServiceSelector(Fault):
    name = "invalid-kubernetes-service-selector"
    description = "Adds a label no pod carries to a Service's selector, so the Service has no endpoints."
    Args = SelectorArgs
    target_kinds = ("Service",)
    expected_alerts = ("HighRequestErrorRate",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        svc = _read_service(api, record)
        if svc is None:
            raise _missing(record)
        current = dict(svc["spec"].get("selector") or {})
        wanted = {**current, **record.args.selector}
        if current == wanted and "selector" in record.saved:
            return
        record.saved.setdefault("selector", current)
        self._set(api, record, wanted)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "selector" in record.saved and _read_service(api, record) is not None:
            self._set(api, record, record.saved["selector"])

    @staticmethod
    def _set(api: ApiClient, record: FaultRecord, selector: dict[str, str]) -> None:
        t = record.target
        try:
            client.CoreV1Api(api).patch_namespaced_service(
                t.name, t.namespace, [{"op": "replace", "path": "/spec/selector", "value": selector}])
        except ApiException as exc:
            raise FaultError(f"cannot patch Service {t.namespace}/{t.name}: {exc.reason}") from None


class IngressBlockingPolicy(Fault):
    """ITBench names the policy ``<workload>-ingress`` and selects the pod template's labels. Its rule list
    (``ingress: [{ports: []}]``) would admit every peer on every port under the NetworkPolicy semantics; the
    policy here has no ingress rule at all, which is what blocks every port."""

    name = "ingress-port-blocking-network-policy"
    description = "Creates a NetworkPolicy that isolates the workload's pods for ingress and allows nothing in."
    target_kinds = WORKLOADS
    # NoRequestsReceived once the workload's own served-request series has been flat for its rule's 5m window
    expected_alerts = ("HighRequestErrorRate", "NoRequestsReceived")

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        t = record.target
        labels = read_workload(api, t)["spec"]["template"]["metadata"].get("labels") or {}
        if not labels:
            raise FaultError(f"{t.kind} {t.namespace}/{t.name}: its pod template has no labels to select")
        name = f"{t.name}-ingress"
        body = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": name, "namespace": t.namespace},
                "spec": {"podSelector": {"matchLabels": labels}, "policyTypes": ["Ingress"], "ingress": []}}
        net = client.NetworkingV1Api(api)
        try:
            net.create_namespaced_network_policy(t.namespace, body)
        except ApiException as exc:
            if exc.status != 409:
                raise FaultError(f"cannot create NetworkPolicy {t.namespace}/{name}: {exc.reason}") from None
            if "policy" not in record.saved:
                raise FaultError(f"NetworkPolicy {t.namespace}/{name} already exists and is not this fault's; "
                                 f"refusing to take it over") from None
            return
        record.saved["policy"] = name

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        name = record.saved.get("policy")
        if name is None:
            return
        try:
            client.NetworkingV1Api(api).delete_namespaced_network_policy(name, record.target.namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise FaultError(f"cannot delete NetworkPolicy {record.target.namespace}/{name}: "
                                 f"{exc.reason}") from None


BROKEN_DNS_POLICY = "Default"  # the node's resolver, which knows no cluster name (ITBench's choice)


class FailingNameResolution(Fault):
    name = "failing-name-resolution-kubernetes-workload-dns-policy"
    description = "Sets the pod template's dnsPolicy to Default: the pods resolve through the node, not the " \
                  "cluster DNS, and cannot find any Service."
    target_kinds = WORKLOADS
    expected_alerts = ("HighRequestErrorRate",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        spec = read_workload(api, record.target)["spec"]["template"]["spec"]
        current = spec.get("dnsPolicy")
        if current == BROKEN_DNS_POLICY and "dnsPolicy" in record.saved:
            return
        record.saved.setdefault("dnsPolicy", current)
        op = "replace" if current is not None else "add"
        patch_workload(api, record.target, [{"op": op, "path": "/spec/template/spec/dnsPolicy",
                                             "value": BROKEN_DNS_POLICY}])

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "dnsPolicy" not in record.saved:
            return
        original = record.saved["dnsPolicy"] or "ClusterFirst"  # the API's default when unset
        patch_workload(api, record.target, [{"op": "replace", "path": "/spec/template/spec/dnsPolicy",
                                             "value": original}])


FAULTS = (DeletedService(), InvalidServiceSelector(), IngressBlockingPolicy(), FailingNameResolution())
