"""Faults on capacity: a namespace ResourceQuota too small for a workload, and a workload given a low priority
that batch pods then preempt.

Both size themselves from the cluster's state at injection (what the namespace's pods request, what each node
has left), so that exactly the target is left without room, whatever else runs beside it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from kubernetes.utils import parse_quantity

from .base import Fault, FaultArgs, FaultError, FaultRecord
from ._k8s import read_workload
from ._template import (POD_SPEC, node_ready, nodes, pod_request, pod_spec, quantity_text, restore_field, set_field,
                        workload_pods)

WORKLOADS = ("Deployment", "StatefulSet")
Resource = Literal["memory", "cpu"]


def _resource(spec: dict, wanted: Resource | None, record: FaultRecord) -> tuple[str, Decimal]:
    """The resource to size by (memory, else cpu, unless given) and what one pod of the target requests of it."""
    for resource in ([wanted] if wanted else ["memory", "cpu"]):
        request = pod_request(spec, resource)
        if request > 0:
            return resource, request
    t = record.target
    raise FaultError(f"{t.kind} {t.namespace}/{t.name} requests no {wanted or 'memory or cpu'}: nothing to size by")


# ---- ResourceQuota --------------------------------------------------------------------------------------------------
class QuotaArgs(FaultArgs):
    name: str | None = None  # default: <namespace>-resource-quota
    resource: Resource | None = None  # requests.<resource>; default memory if the workload requests it, else cpu
    hard: str | None = None  # default: what the namespace's pods request, less half of one pod of the workload


class InsufficientResourceQuota(Fault):
    name = "insufficient-kubernetes-resource-quota"
    description = ("Creates a ResourceQuota in the workload's namespace that the running pods fit but the "
                   "workload's next pod does not, then restarts the workload: its new pods are refused at creation.")
    Args = QuotaArgs
    target_kinds = WORKLOADS
    # No pod is created, so nothing is Pending: the workload's Service loses its endpoints and its callers fail.
    expected_alerts = ("HighRequestErrorRate",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        args: QuotaArgs = record.args
        t = record.target
        name = args.name or f"{t.namespace}-resource-quota"
        core = client.CoreV1Api(api)
        if "quota" in record.saved:
            try:
                core.read_namespaced_resource_quota(name, t.namespace)
                return
            except ApiException as exc:
                if exc.status != 404:
                    raise FaultError(f"cannot read ResourceQuota {t.namespace}/{name}: {exc.reason}") from None
        workload = read_workload(api, t)
        resource, per_pod = _resource(pod_spec(workload), args.resource, record)
        hard = args.hard
        if hard is None:
            pods = core.list_namespaced_pod(t.namespace).items
            used = sum((pod_request(api.sanitize_for_serialization(p.spec), resource) for p in pods
                        if p.status.phase not in ("Succeeded", "Failed") and not p.metadata.deletion_timestamp),
                       Decimal(0))
            hard = quantity_text(used - per_pod / 2, resource)
        quota = {"metadata": {"name": name, "namespace": t.namespace},
                 "spec": {"hard": {f"requests.{resource}": hard}}}
        try:
            core.create_namespaced_resource_quota(t.namespace, quota)
        except ApiException as exc:
            raise FaultError(f"cannot create ResourceQuota {t.namespace}/{name}: {exc.reason}: {exc.body}") from None
        record.saved["quota"] = name
        for pod in workload_pods(api, t, workload):  # the restart ITBench does (scale to zero and back)
            try:
                core.delete_namespaced_pod(pod["metadata"]["name"], t.namespace, _preload_content=False)
            except ApiException as exc:
                if exc.status != 404:
                    raise FaultError(f"cannot delete pod {t.namespace}/{pod['metadata']['name']}: {exc.reason}") \
                        from None

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        name = record.saved.get("quota")
        if name is None:
            return
        try:
            client.CoreV1Api(api).delete_namespaced_resource_quota(name, record.target.namespace,
                                                                  _preload_content=False)
        except ApiException as exc:
            if exc.status != 404:
                raise FaultError(f"cannot delete ResourceQuota {record.target.namespace}/{name}: {exc.reason}") \
                    from None


# ---- priority and preemption ----------------------------------------------------------------------------------------
class PreemptionArgs(FaultArgs):
    priority_class: str = "low-priority"  # created with ``value``, and given to the workload
    value: int = -1000  # below the default 0 of every other pod, so only the workload can be preempted
    batch: str = "eviction-pods"  # the batch Deployments (one per node) that take the room, at priority 0
    image: str = "busybox:1.36"
    resource: Resource | None = None  # sized by memory if the workload requests it, else cpu


class PriorityPreemption(Fault):
    name = "priority-kubernetes-workload-priority-preemption"
    description = ("Lowers the workload's priority (a new PriorityClass below the default) and starts batch pods "
                   "on every node that fill what the other pods leave: the scheduler preempts the workload for "
                   "them, and its pods stay Pending.")
    Args = PreemptionArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodNotReady",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        args: PreemptionArgs = record.args
        t = record.target
        if "priorityClassName" in record.saved:
            return
        workload = read_workload(api, t)
        spec = pod_spec(workload)
        resource, per_pod = _resource(spec, args.resource, record)
        target_uids = {p["metadata"]["uid"] for p in workload_pods(api, t, workload)}
        sizes = self._batch_sizes(api, resource, per_pod, target_uids)
        scheduling = client.SchedulingV1Api(api)
        try:
            scheduling.create_priority_class({"metadata": {"name": args.priority_class}, "value": args.value,
                                              "preemptionPolicy": "PreemptLowerPriority",
                                              "description": "Preemptible workloads."})
            record.saved["created_class"] = args.priority_class
        except ApiException as exc:
            if exc.status != 409:
                raise FaultError(f"cannot create PriorityClass {args.priority_class}: {exc.reason}") from None
        record.saved["priorityClassName"] = spec.get("priorityClassName")
        set_field(api, t, f"{POD_SPEC}/priorityClassName", args.priority_class, "priorityClassName" in spec)
        apps = client.AppsV1Api(api)
        record.saved["batch"] = []
        for i, (node, amount) in enumerate(sizes, start=1):
            name = f"{args.batch}-{i}"
            try:
                apps.create_namespaced_deployment(t.namespace, self._batch(name, node, resource, amount, args))
            except ApiException as exc:
                raise FaultError(f"cannot create Deployment {t.namespace}/{name}: {exc.reason}: {exc.body}") from None
            record.saved["batch"].append(name)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        t = record.target
        apps = client.AppsV1Api(api)
        for name in record.saved.get("batch", ()):
            try:
                apps.delete_namespaced_deployment(name, t.namespace, propagation_policy="Background",
                                                  _preload_content=False)
            except ApiException as exc:
                if exc.status != 404:
                    raise FaultError(f"cannot delete Deployment {t.namespace}/{name}: {exc.reason}") from None
        if "priorityClassName" in record.saved:
            restore_field(api, t, "priorityClassName", record.saved["priorityClassName"])
        if "created_class" in record.saved:
            try:
                client.SchedulingV1Api(api).delete_priority_class(record.saved["created_class"], _preload_content=False)
            except ApiException as exc:
                if exc.status != 404:
                    raise FaultError(f"cannot delete PriorityClass {record.saved['created_class']}: {exc.reason}") \
                        from None

    @staticmethod
    def _batch_sizes(api: ApiClient, resource: str, per_pod: Decimal, target: set[str]) -> list[tuple[str, Decimal]]:
        """Per schedulable node, what a batch pod requests: all the node has left once its other pods (not the
        workload's) are counted, less half a pod of the workload. So the batch pod fits beside everything but the
        workload, and no node keeps room for a pod of the workload."""
        pods = [api.sanitize_for_serialization(p) for p in client.CoreV1Api(api).list_pod_for_all_namespaces().items]
        sizes = []
        for node in nodes(api):
            name = node["metadata"]["name"]
            if not node_ready(node) or (node.get("spec") or {}).get("unschedulable"):
                continue
            allocatable = Decimal(0)
            value = ((node.get("status") or {}).get("allocatable") or {}).get(resource)
            if value is not None:
                allocatable = parse_quantity(value)
            used = sum((pod_request(p["spec"], resource) for p in pods
                        if p["spec"].get("nodeName") == name and p["metadata"]["uid"] not in target
                        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")), Decimal(0))
            amount = allocatable - used - per_pod / 2
            if amount > 0:
                sizes.append((name, amount))
        return sorted(sizes)

    @staticmethod
    def _batch(name: str, node: str, resource: str, amount: Decimal, args: PreemptionArgs) -> dict:
        labels = {"app.kubernetes.io/name": args.batch, "app.kubernetes.io/instance": name}
        return {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "labels": labels},
                "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": labels}, "spec": {
                             "nodeSelector": {"kubernetes.io/hostname": node},
                             "terminationGracePeriodSeconds": 5,
                             "containers": [{"name": "batch", "image": args.image,
                                             "command": ["sh", "-c", "echo 'batch worker started'; sleep infinity"],
                                             "resources": {"requests": {
                                                 resource: quantity_text(amount, resource)}}}]}}}}


FAULTS = (InsufficientResourceQuota(), PriorityPreemption())
