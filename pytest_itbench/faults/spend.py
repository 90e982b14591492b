"""Faults that waste money without breaking anything (the FinOps domain): replicas nobody needs, requests far
above use, a CronJob whose jobs pile up, a volume nobody uses that is still billed.

Each raises what OpenCost allocates (a container's allocation is the larger of its request and its use) or
what the cloud bills (nodes, volumes), and leaves the service healthy, so the only symptom is the spend.
"""

from __future__ import annotations

import copy

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from kubernetes.utils import parse_quantity
from pydantic import Field, field_validator

from ._k8s import container_index, read_workload
from ._template import restore_container_field, set_container_field
from .base import Fault, FaultArgs, FaultError, FaultRecord
from .workloads import ContainerArgs, _scale

WORKLOADS = ("Deployment", "StatefulSet")
COST_ALERTS = ("NamespaceCostOverBudget",)


def _quantity(value: str, what: str) -> str:
    try:
        parse_quantity(value)
    except (ValueError, ArithmeticError):
        raise ValueError(f"{what} {value!r} is not a Kubernetes quantity (e.g. 2, 500m, 4Gi)") from None
    return value


# ---- replicas -------------------------------------------------------------------------------------------------------
class ReplicaArgs(FaultArgs):
    replicas: int = Field(ge=2, le=50)


class OverprovisionedReplicas(Fault):
    name = "overprovisioned-kubernetes-workload-replicas"
    description = "Scales the workload far beyond what its traffic needs: idle replicas that are paid for."
    Args = ReplicaArgs
    target_kinds = WORKLOADS
    expected_alerts = COST_ALERTS

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        replicas = read_workload(api, record.target)["spec"].get("replicas", 1)
        record.saved.setdefault("replicas", replicas)
        _scale(api, record, record.args.replicas)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "replicas" in record.saved:
            _scale(api, record, record.saved["replicas"])


# ---- requests -------------------------------------------------------------------------------------------------------
class RequestArgs(ContainerArgs):
    cpu: str | None = None  # the request to set, e.g. "4"
    memory: str | None = None  # e.g. "8Gi"

    @field_validator("cpu", "memory")
    @classmethod
    def _quantities(cls, value, info):
        return None if value is None else _quantity(value, info.field_name)


class OversizedRequests(Fault):
    name = "oversized-kubernetes-workload-container-requests"
    description = ("Raises a container's CPU and memory requests far above what it uses (and its limits with "
                   "them, where they would fall below): the scheduler reserves, and OpenCost bills, the request.")
    Args = RequestArgs
    target_kinds = WORKLOADS
    expected_alerts = COST_ALERTS

    def check(self, target, args):
        checked = super().check(target, args)
        if checked.cpu is None and checked.memory is None:
            raise ValueError("give the cpu request, the memory request or both")
        return checked

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        args: RequestArgs = record.args
        _, container = container_index(read_workload(api, record.target), args.container, record.target)
        # From what the container had before the fault, so a second injection changes nothing.
        resources = copy.deepcopy(record.saved["resources"] if "resources" in record.saved
                                  else container.get("resources")) or {}
        for resource, value in (("cpu", args.cpu), ("memory", args.memory)):
            if value is None:
                continue
            resources.setdefault("requests", {})[resource] = value
            limit = (resources.get("limits") or {}).get(resource)
            if limit is not None and parse_quantity(str(limit)) < parse_quantity(value):
                resources["limits"][resource] = value
        set_container_field(api, record, "resources", resources)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        restore_container_field(api, record, "resources")


# ---- a runaway CronJob ----------------------------------------------------------------------------------------------
class CronJobArgs(FaultArgs):
    name: str = "report-export"
    schedule: str = "* * * * *"  # every minute
    run_seconds: int = Field(default=3600, ge=60)  # how long each job runs: far longer than the schedule's period
    cpu: str = "500m"
    memory: str = "512Mi"

    @field_validator("cpu", "memory")
    @classmethod
    def _quantities(cls, value, info):
        return _quantity(value, info.field_name)


class RunawayCronJob(Fault):
    name = "runaway-kubernetes-cronjob"
    description = ("Creates a CronJob in the namespace that starts a job every minute, lets them run concurrently, "
                   "and whose jobs each run for an hour: jobs pile up and so does their bill.")
    Args = CronJobArgs
    target_kinds = ("Namespace",)
    expected_alerts = COST_ALERTS

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        if record.saved.get("created"):
            return
        args: CronJobArgs = record.args
        ns = record.target.name
        labels = {"app.kubernetes.io/name": args.name}
        body = {"metadata": {"name": args.name, "labels": labels}, "spec": {
            "schedule": args.schedule, "concurrencyPolicy": "Allow",
            "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
            "jobTemplate": {"metadata": {"labels": labels}, "spec": {"backoffLimit": 0, "template": {
                "metadata": {"labels": labels}, "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "export", "image": "busybox:1.36",
                                    "command": ["sh", "-c", f"echo exporting; sleep {args.run_seconds}"],
                                    "resources": {"requests": {"cpu": args.cpu, "memory": args.memory},
                                                  "limits": {"cpu": args.cpu, "memory": args.memory}}}]}}}}}}
        try:
            client.BatchV1Api(api).create_namespaced_cron_job(ns, body)
        except ApiException as exc:
            if exc.status != 409:
                raise FaultError(f"cannot create CronJob {ns}/{args.name}: {exc.reason}: {exc.body}") from None
            return  # someone else's CronJob of that name: left alone, and left on removal
        record.saved["created"] = True

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if not record.saved.get("created"):
            return
        ns, name = record.target.name, record.args.name
        batch = client.BatchV1Api(api)
        try:
            # Foreground-free: the garbage collector removes the CronJob's jobs and their pods with it.
            batch.delete_namespaced_cron_job(name, ns, propagation_policy="Background")
        except ApiException as exc:
            if exc.status != 404:
                raise FaultError(f"cannot delete CronJob {ns}/{name}: {exc.reason}") from None
        record.saved["created"] = False


# ---- an orphaned volume ---------------------------------------------------------------------------------------------
class VolumeArgs(FaultArgs):
    name: str = "pvc-0b7c-reports-archive"
    size: str = "2Ti"
    storage_class: str = "archive"  # a class without a provisioner: the volume was provisioned by hand
    claim: str = "reports-archive"  # the claim it was bound to, in the target namespace, long deleted

    @field_validator("size")
    @classmethod
    def _size(cls, value):
        return _quantity(value, "size")


class OrphanedVolume(Fault):
    name = "orphaned-kubernetes-persistent-volume"
    description = ("Leaves behind a large PersistentVolume with reclaim policy Retain whose claim in the namespace "
                   "is gone: Released, used by nothing, billed by the hour.")
    Args = VolumeArgs
    target_kinds = ("Namespace",)
    expected_alerts = ("ClusterCostOverBudget",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        if record.saved.get("created"):
            return
        args: VolumeArgs = record.args
        body = {"metadata": {"name": args.name, "labels": {"app.kubernetes.io/name": args.claim}}, "spec": {
            "capacity": {"storage": args.size}, "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": args.storage_class,
            "hostPath": {"path": f"/var/lib/volumes/{args.name}"},
            # The claim it served: deleted, so the volume controller finds it gone and marks the volume Released.
            "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": record.target.name,
                         "name": args.claim, "uid": "5c1f3a52-93b8-4e0c-9d55-6f1e0e2a7b41"}}}
        try:
            client.CoreV1Api(api).create_persistent_volume(body)
        except ApiException as exc:
            if exc.status != 409:
                raise FaultError(f"cannot create PersistentVolume {args.name}: {exc.reason}: {exc.body}") from None
            return
        record.saved["created"] = True

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if not record.saved.get("created"):
            return
        try:
            client.CoreV1Api(api).delete_persistent_volume(record.args.name)
        except ApiException as exc:
            if exc.status != 404:
                raise FaultError(f"cannot delete PersistentVolume {record.args.name}: {exc.reason}") from None
        record.saved["created"] = False


FAULTS = (OverprovisionedReplicas(), OversizedRequests(), RunawayCronJob(), OrphanedVolume())
