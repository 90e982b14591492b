"""Per-resource rules the API server applies around create and update.

These follow the ``RESTCreateStrategy``/``RESTUpdateStrategy`` of each
registry in kube-apiserver (pkg/registry/...): what a create resets, which
part of an object the main endpoint and the status subresource may change,
when ``metadata.generation`` moves, which objects an update may create, the
selector a Job generates for itself, and the Service values an update that
leaves them out keeps.
"""

from __future__ import annotations

from .resources import Resource
from .service_allocation import (
    IPAllocator, PortAllocator, needs_cluster_ip, needs_health_check_port, needs_node_ports,
)

# Resources whose PUT creates a missing object (AllowCreateOnUpdate).
CREATE_ON_UPDATE = {"events", "events.events.k8s.io", "endpoints", "leases.coordination.k8s.io",
                    "endpointslices.discovery.k8s.io", "limitranges", "priorityclasses.scheduling.k8s.io"}

APIREGISTRATION = "apiregistration.k8s.io"
JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
JOB_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")
DAEMON_SET_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"

# Kinds whose status a create keeps (their status is not a subresource or is set by the creator).
_STATUS_KEPT_ON_CREATE = {"Node", "CustomResourceDefinition"}
# The status a create starts an object with.
_INITIAL_STATUS = {
    "Namespace": {"phase": "Active"},
    "Service": {"loadBalancer": {}},
    "Ingress": {"loadBalancer": {}},
    "PersistentVolumeClaim": {"phase": "Pending"},
    "PersistentVolume": {"phase": "Pending"},
}
# Go writes non-omitempty status counters even when they are zero.
_EMPTY_STATUS = {
    "Deployment": {}, "Job": {}, "CronJob": {},
    "ReplicaSet": {"replicas": 0},
    "ReplicationController": {"replicas": 0},
    "StatefulSet": {"replicas": 0, "availableReplicas": 0},
    "DaemonSet": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                  "numberReady": 0},
    "HorizontalPodAutoscaler": {"desiredReplicas": 0},
    "PodDisruptionBudget": {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0},
}


def spec_part(res: Resource, obj: dict) -> dict:
    """Everything but metadata and status: what the main endpoint owns and generation tracks."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def prepare_for_create(res: Resource, obj: dict, now: str = "") -> None:
    """``now``: the creation time, for the conditions a create sets (a local APIService is available at once)."""
    meta = obj["metadata"]
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
        meta.pop(key, None)
    if res.has_generation:
        meta["generation"] = 1
    if res.has_status and res.kind not in _STATUS_KEPT_ON_CREATE:
        obj.pop("status", None)
    kind = res.kind
    if kind == "Pod":
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(obj.get("spec") or {})}
    elif kind == "Namespace":
        obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]
        obj["status"] = dict(_INITIAL_STATUS[kind])
    elif kind in _INITIAL_STATUS:
        obj["status"] = dict(_INITIAL_STATUS[kind])
    elif kind in _EMPTY_STATUS:
        obj["status"] = dict(_EMPTY_STATUS[kind])
    if kind == "APIService" and res.group == APIREGISTRATION:
        obj["status"] = {}
        if not (obj.get("spec") or {}).get("service"):
            obj["status"]["conditions"] = [local_available_condition(now)]
    if kind == "Job" and res.group == "batch":
        _generate_job_selector(obj)
    if kind == "DaemonSet" and res.group == "apps":
        _daemon_set_template_generation(obj, None)


def local_available_condition(now: str) -> dict:
    """NewLocalAvailableAPIServiceCondition: an APIService without a service is served by this server."""
    return {"type": "Available", "status": "True", "lastTransitionTime": now, "reason": "Local",
            "message": "Local APIServices are always available"}


def _generate_job_selector(job: dict) -> None:
    """Unless the user manages the selector, a Job selects its pods by its uid (job strategy)."""
    spec = job.get("spec")
    if not isinstance(spec, dict) or spec.get("manualSelector"):
        return
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    meta = job["metadata"]
    template_meta = template.setdefault("metadata", {})
    labels = template_meta.get("labels")
    if not isinstance(labels, dict):
        labels = template_meta["labels"] = {}
    for key in JOB_NAME_LABELS:
        labels.setdefault(key, meta.get("name", ""))
    for key in JOB_UID_LABELS:
        labels.setdefault(key, meta["uid"])
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match_labels = selector.get("matchLabels")
    if not isinstance(match_labels, dict):
        match_labels = selector["matchLabels"] = {}
    match_labels.setdefault(JOB_UID_LABELS[1], meta["uid"])
    spec["manualSelector"] = False


def prepare_for_update(res: Resource, new: dict, old: dict) -> None:
    """Main-endpoint update: status is the status subresource's business."""
    if res.has_status and res.kind not in ("Node",):
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    if res.kind == "Namespace":
        # spec.finalizers are changed through /finalize only.
        new["spec"] = old.get("spec", {})
        new["status"] = old.get("status", {})
    elif res.kind == "Service" and not res.group:
        _keep_allocated_values(new, old)
        _drop_type_dependent_fields(new, old)
    elif res.kind == "DaemonSet" and res.group == "apps":
        _daemon_set_template_generation(new, old)
    bump_generation(res, new, old)


def _daemon_set_template_generation(new: dict, old: dict | None) -> None:
    """The DaemonSet's template generation, which apps/v1 carries as an annotation: 1, then one more per
    template change (the DaemonSet controller labels its pods with it)."""
    generation = 1
    if old is not None:
        previous = (old["metadata"].get("annotations") or {}).get(DAEMON_SET_TEMPLATE_GENERATION, "")
        generation = int(previous) if previous.isdigit() else 0
        if (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template"):
            generation += 1
    annotations = new["metadata"].get("annotations")
    new["metadata"]["annotations"] = {**(annotations if isinstance(annotations, dict) else {}),
                                      DAEMON_SET_TEMPLATE_GENERATION: str(generation)}


def _keep_allocated_values(new: dict, old: dict) -> None:
    """An update that leaves out the cluster IP or node ports keeps the allocated ones (idempotent PUTs)."""
    spec, old_spec = new.get("spec"), old.get("spec") or {}
    if not isinstance(spec, dict):
        return
    if needs_cluster_ip(old_spec) and needs_cluster_ip(spec):
        if not spec.get("clusterIP"):
            spec["clusterIP"] = old_spec.get("clusterIP")
            if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
                spec["clusterIPs"] = list(old_spec["clusterIPs"])
        elif spec.get("clusterIP") != old_spec.get("clusterIP") and spec.get("clusterIPs") == old_spec.get(
                "clusterIPs"):
            spec["clusterIPs"] = [spec["clusterIP"]]  # the user changed clusterIP alone
    if needs_node_ports(old_spec) and needs_node_ports(spec):
        ports = [p for p in spec.get("ports") or () if isinstance(p, dict)]
        used = {p.get("nodePort") for p in old_spec.get("ports") or ()} & {p.get("nodePort") for p in ports}
        by_name = {p.get("name", ""): p.get("nodePort") for p in old_spec.get("ports") or ()}
        for port in ports:
            if not port.get("nodePort") and by_name.get(port.get("name", "")) not in used:
                port["nodePort"] = by_name.get(port.get("name", ""))
    if needs_health_check_port(old_spec) and needs_health_check_port(spec) and not spec.get("healthCheckNodePort"):
        spec["healthCheckNodePort"] = old_spec.get("healthCheckNodePort")


def _drop_type_dependent_fields(new: dict, old: dict) -> None:
    """Switching type clears the values the old type had allocated, unless the user changed them too."""
    spec, old_spec = new.get("spec"), old.get("spec") or {}
    if not isinstance(spec, dict):
        return
    if needs_cluster_ip(old_spec) and not needs_cluster_ip(spec):
        for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if spec.get(key) == old_spec.get(key):
                spec.pop(key, None)
    if needs_node_ports(old_spec) and not needs_node_ports(spec):
        ports = spec.get("ports") or []
        if [p.get("nodePort") for p in ports] == [p.get("nodePort") for p in old_spec.get("ports") or ()]:
            for port in ports:
                port.pop("nodePort", None)
    if needs_health_check_port(old_spec) and not needs_health_check_port(spec) and \
            spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    if old_spec.get("type") == "LoadBalancer" and spec.get("type") != "LoadBalancer" and \
            spec.get("allocateLoadBalancerNodePorts") == old_spec.get("allocateLoadBalancerNodePorts"):
        spec.pop("allocateLoadBalancerNodePorts", None)
    reachable = ("NodePort", "LoadBalancer")
    if old_spec.get("type") in reachable and spec.get("type") not in reachable and \
            spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)
    if spec.get("type") != "LoadBalancer" and isinstance(new.get("status"), dict):
        new["status"] = dict(new["status"], loadBalancer={})


def prepare_for_status_update(res: Resource, new: dict, old: dict) -> None:
    """Status update: only status (and, as upstream, nothing in spec) may change."""
    for key, value in old.items():
        if key not in ("status", "metadata"):
            new[key] = value
    for key in list(new):
        if key not in old and key not in ("status", "metadata"):
            del new[key]
    meta, old_meta = new["metadata"], old["metadata"]
    # Status writers may not change metadata other than labels/annotations/finalizers/ownerReferences;
    # kube-aggregator's status strategy keeps those too.
    kept = ("generation", "deletionTimestamp", "deletionGracePeriodSeconds")
    if res.kind == "APIService" and res.group == APIREGISTRATION:
        kept += ("labels", "annotations", "finalizers", "ownerReferences")
    for key in kept:
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)


def bump_generation(res: Resource, new: dict, old: dict) -> None:
    meta = new["metadata"]
    old_gen = old["metadata"].get("generation")
    if not res.has_generation and res.crd is None:
        if old_gen is not None:
            meta["generation"] = old_gen
        else:
            meta.pop("generation", None)
        return
    gen = old_gen or 1
    if spec_part(res, new) != spec_part(res, old) or _deletion_started(new, old):
        gen += 1
    meta["generation"] = gen


def _deletion_started(new: dict, old: dict) -> bool:
    return bool(new["metadata"].get("deletionTimestamp")) and not old["metadata"].get("deletionTimestamp")


def qos_class(spec: dict) -> str:
    """The pod's QoS class, from its containers' requests and limits (pkg/apis/core/helper/qos)."""
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    requests_seen = limits_seen = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        for name in ("cpu", "memory"):
            if name in req or name in lim:
                requests_seen = True
            if name in lim:
                limits_seen = True
            if name not in lim:
                guaranteed = False
            elif name in req and str(req[name]) != str(lim[name]):
                guaranteed = False
    if not requests_seen and not limits_seen:
        return "BestEffort"
    if guaranteed and limits_seen:
        return "Guaranteed"
    return "Burstable"
