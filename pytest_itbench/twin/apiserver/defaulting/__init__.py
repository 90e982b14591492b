"""Defaulting: the fields a v1.31 API server fills in when a client leaves them out.

One function per kind, following pkg/apis/*/v1/defaults.go (and the few
normalisations the Service REST storage makes), so that ``kubectl get -o
yaml`` reads like a real cluster. Objects arrive in their storage version.
Custom resources are defaulted from their CRD schema elsewhere.
"""

from __future__ import annotations

import base64
from typing import Callable

from . import pod as defaults_pod
from .pod import round_resource_list
from ..resources import Resource

RBAC_GROUP = "rbac.authorization.k8s.io"


def apply_defaults(res: Resource, obj: dict) -> None:
    """Fill defaults in place, for an object in its storage version."""
    if res.crd is not None:
        return
    defaulter = _DEFAULTERS.get((res.group, res.kind))
    if defaulter is not None:
        defaulter(obj)


def _spec(obj: dict) -> dict:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


# ---- apps ------------------------------------------------------------------------------------------

def _deployment(obj: dict) -> None:
    spec = _spec(obj)
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    defaults_pod.template(spec.get("template"))


def _replica_set(obj: dict) -> None:
    spec = _spec(obj)
    spec.setdefault("replicas", 1)
    defaults_pod.template(spec.get("template"))


def _daemon_set(obj: dict) -> None:
    spec = _spec(obj)
    strategy = spec.setdefault("updateStrategy", {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    defaults_pod.template(spec.get("template"))


def _stateful_set(obj: dict) -> None:
    spec = _spec(obj)
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = spec.setdefault("updateStrategy", {})
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        strategy.setdefault("rollingUpdate", {})
    if strategy["type"] == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), dict):
        strategy["rollingUpdate"].setdefault("partition", 0)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    for when in ("whenDeleted", "whenScaled"):
        if not retention.get(when):
            retention[when] = "Retain"
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    defaults_pod.template(spec.get("template"))
    for claim in spec.get("volumeClaimTemplates") or ():
        if isinstance(claim, dict):
            # Claim templates are whole PersistentVolumeClaims and are written back as such.
            claim.setdefault("apiVersion", "v1")
            claim.setdefault("kind", "PersistentVolumeClaim")
            claim.setdefault("metadata", {}).setdefault("creationTimestamp", None)
            _persistent_volume_claim(claim)


# ---- batch -----------------------------------------------------------------------------------------

def _job(obj: dict) -> None:
    spec = _spec(obj)
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    template = spec.get("template")
    labels = (template.get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    meta = obj["metadata"]
    if labels and not meta.get("labels"):
        meta["labels"] = dict(labels)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("manualSelector", False)
    failure_policy = spec.get("podFailurePolicy")
    if isinstance(failure_policy, dict):
        for rule in failure_policy.get("rules") or ():
            for pattern in rule.get("onPodConditions") or ():
                pattern.setdefault("status", "True")
    spec.setdefault("podReplacementPolicy", "Failed" if failure_policy else "TerminatingOrFailed")
    defaults_pod.template(template)


def _cron_job(obj: dict) -> None:
    spec = _spec(obj)
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict):
        job_template.setdefault("metadata", {}).setdefault("creationTimestamp", None)
        defaults_pod.template((job_template.get("spec") or {}).get("template"))


# ---- core ------------------------------------------------------------------------------------------

def _service(obj: dict) -> None:
    spec = _spec(obj)
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        client_ip = spec.setdefault("sessionAffinityConfig", {}).setdefault("clientIP", {})
        client_ip.setdefault("timeoutSeconds", 10800)
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    kind = spec["type"]
    for port in spec.get("ports") or ():
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    externally_reachable = kind in ("NodePort", "LoadBalancer") or (kind == "ClusterIP" and spec.get("externalIPs"))
    if externally_reachable and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if kind in ("ClusterIP", "NodePort", "LoadBalancer"):
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if kind == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    if kind == "ExternalName":
        return
    # The REST storage keeps clusterIP and clusterIPs[0] the same and fills the IP families.
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    elif spec.get("clusterIPs") and not spec.get("clusterIP"):
        spec["clusterIP"] = spec["clusterIPs"][0]
    headless_without_selector = spec.get("clusterIP") == "None" and not spec.get("selector")
    if not spec.get("ipFamilyPolicy"):
        spec["ipFamilyPolicy"] = "RequireDualStack" if headless_without_selector else "SingleStack"
    if not spec.get("ipFamilies"):
        ips = [ip for ip in spec.get("clusterIPs") or () if ip != "None"]
        spec["ipFamilies"] = [("IPv6" if ":" in ip else "IPv4") for ip in ips] or ["IPv4"]
        if headless_without_selector and spec["ipFamilyPolicy"] != "SingleStack":
            # A headless Service without selector takes both families, even on a single-stack cluster.
            spec["ipFamilies"] = ["IPv4", "IPv6"]


def _replication_controller(obj: dict) -> None:
    """SetDefaults_ReplicationController: selector and labels from the template's labels when empty, one replica."""
    spec = _spec(obj)
    template = spec.get("template")
    labels = (template.get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    if isinstance(labels, dict):
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj["metadata"]
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    defaults_pod.template(template)


def _secret(obj: dict) -> None:
    if not obj.get("type"):
        obj["type"] = "Opaque"
    # stringData is write-only: the v1 conversion folds it into data (winning over a data key).
    plain = obj.pop("stringData", None)
    if isinstance(plain, dict) and plain:
        data = obj.setdefault("data", {})
        for key, value in plain.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


def _namespace(obj: dict) -> None:
    meta = obj["metadata"]
    if meta.get("name"):
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = meta["labels"] = {}
        labels["kubernetes.io/metadata.name"] = meta["name"]


def _persistent_volume_claim(obj: dict) -> None:
    spec = _spec(obj)
    spec.setdefault("volumeMode", "Filesystem")
    status = obj.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"
    resources = spec.setdefault("resources", {})
    for key in ("requests", "limits"):
        if isinstance(resources.get(key), dict):
            round_resource_list(resources[key])


def _persistent_volume(obj: dict) -> None:
    spec = _spec(obj)
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"
    spec.setdefault("volumeMode", "Filesystem")
    if isinstance(spec.get("capacity"), dict):
        round_resource_list(spec["capacity"])


def _endpoints(obj: dict) -> None:
    for subset in obj.get("subsets") or ():
        for port in subset.get("ports") or ():
            if not port.get("protocol"):
                port["protocol"] = "TCP"


def _limit_range(obj: dict) -> None:
    for item in _spec(obj).get("limits") or ():
        for key in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            if isinstance(item.get(key), dict):
                round_resource_list(item[key])
        if item.get("type") != "Container":
            continue
        default = item.setdefault("default", {})
        default_request = item.setdefault("defaultRequest", {})
        for name, value in (item.get("max") or {}).items():
            default.setdefault(name, value)
        for name, value in default.items():
            default_request.setdefault(name, value)
        for name, value in (item.get("min") or {}).items():
            default_request.setdefault(name, value)


def _resource_quota(obj: dict) -> None:
    hard = _spec(obj).get("hard")
    if isinstance(hard, dict):
        round_resource_list(hard)


def _node(obj: dict) -> None:
    status = obj.get("status")
    if isinstance(status, dict) and status.get("allocatable") is None and status.get("capacity") is not None:
        status["allocatable"] = dict(status["capacity"])


# ---- networking, policy, scheduling, storage, rbac, autoscaling --------------------------------------

def _network_policy(obj: dict) -> None:
    spec = _spec(obj)
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction) or ():
            for port in rule.get("ports") or ():
                if not port.get("protocol"):
                    port["protocol"] = "TCP"
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


def _ingress_class(obj: dict) -> None:
    parameters = _spec(obj).get("parameters")
    if isinstance(parameters, dict) and not parameters.get("scope"):
        parameters["scope"] = "Cluster"


def _endpoint_slice(obj: dict) -> None:
    for port in obj.get("ports") or ():
        if port.get("name") is None:
            port["name"] = ""
        if not port.get("protocol"):
            port["protocol"] = "TCP"


def _priority_class(obj: dict) -> None:
    if not obj.get("preemptionPolicy"):
        obj["preemptionPolicy"] = "PreemptLowerPriority"


def _storage_class(obj: dict) -> None:
    if not obj.get("reclaimPolicy"):
        obj["reclaimPolicy"] = "Delete"
    if not obj.get("volumeBindingMode"):
        obj["volumeBindingMode"] = "Immediate"


def _binding(obj: dict) -> None:
    role_ref = obj.get("roleRef")
    if isinstance(role_ref, dict) and not role_ref.get("apiGroup"):
        role_ref["apiGroup"] = RBAC_GROUP
    for subject in obj.get("subjects") or ():
        if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = RBAC_GROUP


def _horizontal_pod_autoscaler(obj: dict) -> None:
    spec = _spec(obj)
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 80}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _scaling_rules(behavior.get("scaleUp"), stabilization=0, policies=[
            {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}])
        behavior["scaleDown"] = _scaling_rules(behavior.get("scaleDown"), stabilization=None, policies=[
            {"type": "Percent", "value": 100, "periodSeconds": 15}])


def _scaling_rules(given: dict | None, stabilization: int | None, policies: list[dict]) -> dict:
    """One direction of HPA behavior: the given fields over the defaults (scale-down keeps no window)."""
    rules: dict = {"selectPolicy": "Max", "policies": policies}
    if stabilization is not None:
        rules["stabilizationWindowSeconds"] = stabilization
    for key, value in (given or {}).items():
        if value is not None:
            rules[key] = value
    return rules


def _api_service(obj: dict) -> None:
    service = _spec(obj).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443  # SetDefaults_ServiceReference


def _custom_resource_definition(obj: dict) -> None:
    spec = _spec(obj)
    names = spec.get("names")
    if isinstance(names, dict) and names.get("kind"):
        if not names.get("singular"):
            names["singular"] = names["kind"].lower()
        if not names.get("listKind"):
            names["listKind"] = names["kind"] + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}


_DEFAULTERS: dict[tuple[str, str], Callable[[dict], None]] = {
    ("apps", "Deployment"): _deployment,
    ("apps", "ReplicaSet"): _replica_set,
    ("apps", "DaemonSet"): _daemon_set,
    ("apps", "StatefulSet"): _stateful_set,
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cron_job,
    ("", "Pod"): defaults_pod.pod,
    ("", "Service"): _service,
    ("", "ReplicationController"): _replication_controller,
    ("", "Secret"): _secret,
    ("", "Namespace"): _namespace,
    ("", "PersistentVolumeClaim"): _persistent_volume_claim,
    ("", "PersistentVolume"): _persistent_volume,
    ("", "Endpoints"): _endpoints,
    ("", "LimitRange"): _limit_range,
    ("", "ResourceQuota"): _resource_quota,
    ("", "Node"): _node,
    ("networking.k8s.io", "NetworkPolicy"): _network_policy,
    ("networking.k8s.io", "IngressClass"): _ingress_class,
    ("discovery.k8s.io", "EndpointSlice"): _endpoint_slice,
    ("scheduling.k8s.io", "PriorityClass"): _priority_class,
    ("storage.k8s.io", "StorageClass"): _storage_class,
    (RBAC_GROUP, "RoleBinding"): _binding,
    (RBAC_GROUP, "ClusterRoleBinding"): _binding,
    ("autoscaling", "HorizontalPodAutoscaler"): _horizontal_pod_autoscaler,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _custom_resource_definition,
    ("apiregistration.k8s.io", "APIService"): _api_service,
}
