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

from ..errors import FieldError
from . import (name_rules, service_allocation, validation_config, validation_meta, validation_networking,
               validation_pod, validation_policy, validation_rbac, validation_storage, validation_workloads)
from .resources import Resource
from .strategies import spec_part

Check = Callable[[dict], list[FieldError]]
UpdateCheck = Callable[[dict, dict], list[FieldError]]
RBAC = "rbac.authorization.k8s.io"


@dataclass(frozen=True)
class Rules:
    create: Check
    update: UpdateCheck | None = None  # None: the create rules again, on the updated object


_RULES: dict[tuple[str, str], Rules] = {
    ("", "Pod"): Rules(validation_pod.pod, validation_pod.pod_update),
    ("", "Service"): Rules(validation_networking.service, validation_networking.service_update),
    ("", "ConfigMap"): Rules(validation_config.config_map, validation_config.config_map_update),
    ("", "Secret"): Rules(validation_config.secret, validation_config.secret_update),
    ("", "ServiceAccount"): Rules(validation_config.service_account),
    ("", "Namespace"): Rules(validation_config.namespace),
    ("", "PersistentVolumeClaim"): Rules(validation_storage.persistent_volume_claim,
                                         validation_storage.persistent_volume_claim_update),
    ("", "PersistentVolume"): Rules(validation_storage.persistent_volume),
    ("apps", "Deployment"): Rules(validation_workloads.deployment, validation_workloads.deployment_update),
    ("apps", "ReplicaSet"): Rules(validation_workloads.replica_set, validation_workloads.replica_set_update),
    ("apps", "StatefulSet"): Rules(validation_workloads.stateful_set, validation_workloads.stateful_set_update),
    ("apps", "DaemonSet"): Rules(validation_workloads.daemon_set, validation_workloads.daemon_set_update),
    ("batch", "Job"): Rules(validation_workloads.job, validation_workloads.job_update),
    ("batch", "CronJob"): Rules(validation_workloads.cron_job, validation_workloads.cron_job_update),
    ("autoscaling", "HorizontalPodAutoscaler"): Rules(validation_policy.horizontal_pod_autoscaler),
    ("policy", "PodDisruptionBudget"): Rules(validation_policy.pod_disruption_budget),
    ("scheduling.k8s.io", "PriorityClass"): Rules(validation_policy.priority_class,
                                                  validation_policy.priority_class_update),
    ("networking.k8s.io", "NetworkPolicy"): Rules(validation_networking.network_policy,
                                                  validation_networking.network_policy_update),
    ("networking.k8s.io", "Ingress"): Rules(validation_networking.ingress, validation_networking.ingress_update),
    ("networking.k8s.io", "IngressClass"): Rules(validation_networking.ingress_class,
                                                 validation_networking.ingress_class_update),
    ("storage.k8s.io", "StorageClass"): Rules(validation_storage.storage_class,
                                              validation_storage.storage_class_update),
    (RBAC, "Role"): Rules(validation_rbac.role),
    (RBAC, "ClusterRole"): Rules(validation_rbac.cluster_role),
    (RBAC, "RoleBinding"): Rules(validation_rbac.role_binding, validation_rbac.role_binding_update),
    (RBAC, "ClusterRoleBinding"): Rules(validation_rbac.cluster_role_binding,
                                        validation_rbac.cluster_role_binding_update),
}


def validate(api, res: Resource, obj: dict, old: dict | None, subresource: str = "") -> list[FieldError]:
    """The field errors of ``obj`` (a create when ``old`` is None); a valid Service gets its IPs and ports."""
    if res.crd is not None:
        return []
    rules = _RULES.get((res.group, res.kind)) or Rules(_metadata_only(res))
    if old is None:
        problems = rules.create(obj)
    elif subresource in ("status", "binding") or spec_part(res, obj) == spec_part(res, old):
        problems = validation_meta.object_meta_update(obj["metadata"], old["metadata"])
    elif rules.update is not None:
        problems = rules.update(obj, old)
    else:
        problems = validation_meta.object_meta_update(obj["metadata"], old["metadata"]) + rules.create(obj)
    if not problems and res.kind == "Service" and not res.group:
        problems = service_allocation.allocate(api, obj, old)
    return problems


def _metadata_only(res: Resource) -> Check:
    """Kinds without rules of their own: ObjectMeta with DNS-subdomain names."""
    def check(obj: dict) -> list[FieldError]:
        return validation_meta.object_meta(obj["metadata"], res.namespaced, name_rules.name_is_dns_subdomain)
    return check
