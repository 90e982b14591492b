"""Semantic validation of built-in objects, with Kubernetes' field paths and messages.

One set of rules per kind: what a create must satisfy and, for kinds with
immutable parts, what an update may change. An update that leaves
everything outside metadata and status alone (status writes, label edits,
a binding) is checked for its metadata only, as the status strategies do;
objects were valid when stored, so this keeps frequent controller writes
cheap. Custom resources are validated from their CRD schema elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...errors import FieldError
from . import apiregistration, config, name_rules, networking, objectmeta, pod, policy, rbac, storage, workloads
from .. import service_allocation
from ..resources import Resource
from ..strategies import spec_part

Check = Callable[[dict], list[FieldError]]
UpdateCheck = Callable[[dict, dict], list[FieldError]]
RBAC = "rbac.authorization.k8s.io"


@dataclass(frozen=True)
class Rules:
    create: Check
    update: UpdateCheck | None = None  # None: the create rules again, on the updated object
    status: UpdateCheck | None = None  # a status write's own checks, beside its metadata's


_RULES: dict[tuple[str, str], Rules] = {
    ("", "Pod"): Rules(pod.pod, pod.pod_update),
    ("", "Service"): Rules(networking.service, networking.service_update),
    ("", "ConfigMap"): Rules(config.config_map, config.config_map_update),
    ("", "Secret"): Rules(config.secret, config.secret_update),
    ("", "ServiceAccount"): Rules(config.service_account),
    ("", "Namespace"): Rules(config.namespace),
    ("", "PersistentVolumeClaim"): Rules(storage.persistent_volume_claim,
                                         storage.persistent_volume_claim_update),
    ("", "PersistentVolume"): Rules(storage.persistent_volume),
    ("", "ReplicationController"): Rules(workloads.replication_controller, workloads.replication_controller_update,
                                         workloads.replication_controller_status),
    ("apps", "Deployment"): Rules(workloads.deployment, workloads.deployment_update),
    ("apps", "ReplicaSet"): Rules(workloads.replica_set, workloads.replica_set_update),
    ("apps", "StatefulSet"): Rules(workloads.stateful_set, workloads.stateful_set_update),
    ("apps", "DaemonSet"): Rules(workloads.daemon_set, workloads.daemon_set_update),
    ("batch", "Job"): Rules(workloads.job, workloads.job_update),
    ("batch", "CronJob"): Rules(workloads.cron_job, workloads.cron_job_update),
    ("autoscaling", "HorizontalPodAutoscaler"): Rules(policy.horizontal_pod_autoscaler),
    ("policy", "PodDisruptionBudget"): Rules(policy.pod_disruption_budget),
    ("scheduling.k8s.io", "PriorityClass"): Rules(policy.priority_class,
                                                  policy.priority_class_update),
    ("networking.k8s.io", "NetworkPolicy"): Rules(networking.network_policy,
                                                  networking.network_policy_update),
    ("networking.k8s.io", "Ingress"): Rules(networking.ingress, networking.ingress_update),
    ("networking.k8s.io", "IngressClass"): Rules(networking.ingress_class,
                                                 networking.ingress_class_update),
    ("storage.k8s.io", "StorageClass"): Rules(storage.storage_class,
                                              storage.storage_class_update),
    (RBAC, "Role"): Rules(rbac.role),
    (RBAC, "ClusterRole"): Rules(rbac.cluster_role),
    (RBAC, "RoleBinding"): Rules(rbac.role_binding, rbac.role_binding_update),
    (RBAC, "ClusterRoleBinding"): Rules(rbac.cluster_role_binding,
                                        rbac.cluster_role_binding_update),
    ("apiregistration.k8s.io", "APIService"): Rules(apiregistration.api_service, apiregistration.api_service_update,
                                                    apiregistration.api_service_status),
}


def validate(api, res: Resource, obj: dict, old: dict | None, subresource: str = "") -> list[FieldError]:
    """The field errors of ``obj`` (a create when ``old`` is None); a valid Service gets its IPs and ports."""
    if res.crd is not None:
        return []
    rules = _RULES.get((res.group, res.kind)) or Rules(_metadata_only(res))
    if old is None:
        problems = rules.create(obj)
    elif subresource in ("status", "binding") or spec_part(res, obj) == spec_part(res, old):
        problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
        if subresource == "status" and rules.status is not None:
            problems += rules.status(obj, old)
    elif rules.update is not None:
        problems = rules.update(obj, old)
    else:
        problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"]) + rules.create(obj)
    if not problems and res.kind == "Service" and not res.group:
        problems = service_allocation.allocate(api, obj, old)
    return problems


def _metadata_only(res: Resource) -> Check:
    """Kinds without rules of their own: ObjectMeta with DNS-subdomain names."""
    def check(obj: dict) -> list[FieldError]:
        return objectmeta.object_meta(obj["metadata"], res.namespaced, name_rules.name_is_dns_subdomain)
    return check
