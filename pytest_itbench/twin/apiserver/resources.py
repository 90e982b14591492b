"""The catalog of served resources: one entry per (group, version, resource).

Discovery, routing, field selectors, storage buckets and printing are all
keyed on these entries. Built-in resources are listed here as data; custom
resources are added and removed at run time as CRDs come and go.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..selectors import FieldGetter, path_getter

READ = ("get", "list", "watch")
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
NO_COLLECTION_DELETE = ("create", "delete", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class Subresource:
    name: str
    kind: str
    verbs: tuple[str, ...]
    group: str | None = None  # None: same as the parent
    version: str | None = None


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[Subresource, ...] = ()
    # Storage: objects of several versions (or groups) can share one bucket.
    bucket: str = ""
    storage_version: str = ""  # apiVersion objects are stored in
    has_generation: bool = False
    field_selectors: tuple[str, ...] = ()  # beyond metadata.name and metadata.namespace
    field_defaults: tuple[tuple[str, str], ...] = ()  # value a missing field selects as
    crd: str | None = None  # name of the CRD serving it
    virtual: bool = False  # not stored (reviews, metrics)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    def subresource(self, name: str) -> Subresource | None:
        for sub in self.subresources:
            if sub.name == name:
                return sub
        return None

    @property
    def has_status(self) -> bool:
        return self.subresource("status") is not None

    def field_getters(self) -> dict[str, FieldGetter]:
        getters = {"metadata.name": path_getter("metadata.name")}
        if self.namespaced:
            getters["metadata.namespace"] = path_getter("metadata.namespace")
        defaults = dict(self.field_defaults)
        for path in self.field_selectors:
            getters[path] = path_getter(path, defaults.get(path, ""))
        return getters

    def storage_version_hash(self) -> str:
        digest = hashlib.sha256(f"{self.group}/{self.version}/{self.kind}".encode()).digest()
        return base64.b64encode(digest[:8]).decode()


def _r(group: str, version: str, plural: str, kind: str, namespaced: bool = True, **kw) -> Resource:
    bucket = kw.pop("bucket", None) or (f"{plural}.{group}" if group else plural)
    storage_version = kw.pop("storage_version", None) or (f"{group}/{version}" if group else version)
    subresources = tuple(kw.pop("subresources", ()))
    return Resource(group, version, plural, kind, namespaced, bucket=bucket, storage_version=storage_version,
                    subresources=subresources, **kw)


def _status(kind: str) -> Subresource:
    return Subresource("status", kind, ("get", "patch", "update"))


def _scale() -> Subresource:
    return Subresource("scale", "Scale", ("get", "patch", "update"), "autoscaling", "v1")


ALL = ("all",)


def builtin_resources() -> list[Resource]:
    """The resources a v1.31 cluster serves that the twin models."""
    pod_fields = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                  "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName")
    event_fields = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                    "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                    "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type")
    events_api_fields = ("regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
                         "regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath", "reason",
                         "reportingController", "type")
    return [
        # ---- core/v1
        _r("", "v1", "bindings", "Binding", verbs=("create",), virtual=True),
        _r("", "v1", "configmaps", "ConfigMap", short_names=("cm",)),
        _r("", "v1", "endpoints", "Endpoints", short_names=("ep",)),
        _r("", "v1", "events", "Event", short_names=("ev",), field_selectors=event_fields),
        _r("", "v1", "limitranges", "LimitRange", short_names=("limits",)),
        _r("", "v1", "namespaces", "Namespace", False, short_names=("ns",), verbs=NO_COLLECTION_DELETE,
           subresources=(Subresource("finalize", "Namespace", ("update",)), _status("Namespace")),
           field_selectors=("status.phase",)),
        _r("", "v1", "nodes", "Node", False, short_names=("no",), subresources=(_status("Node"),),
           field_selectors=("spec.unschedulable",), field_defaults=(("spec.unschedulable", "false"),)),
        _r("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", short_names=("pvc",),
           subresources=(_status("PersistentVolumeClaim"),)),
        _r("", "v1", "persistentvolumes", "PersistentVolume", False, short_names=("pv",),
           subresources=(_status("PersistentVolume"),)),
        _r("", "v1", "pods", "Pod", short_names=("po",), categories=ALL, field_selectors=pod_fields,
           field_defaults=(("spec.hostNetwork", "false"),),
           subresources=(
               Subresource("binding", "Binding", ("create",)),
               Subresource("eviction", "Eviction", ("create",), "policy", "v1"),
               Subresource("exec", "PodExecOptions", ("create", "get")),
               Subresource("log", "Pod", ("get",)),
               Subresource("portforward", "PodPortForwardOptions", ("create", "get")),
               _status("Pod"),
           )),
        _r("", "v1", "replicationcontrollers", "ReplicationController", short_names=("rc",), categories=ALL,
           has_generation=True, subresources=(_scale(), _status("ReplicationController")),
           field_selectors=("status.replicas",)),
        _r("", "v1", "resourcequotas", "ResourceQuota", short_names=("quota",),
           subresources=(_status("ResourceQuota"),)),
        _r("", "v1", "secrets", "Secret", field_selectors=("type",)),
        _r("", "v1", "serviceaccounts", "ServiceAccount", short_names=("sa",),
           subresources=(Subresource("token", "TokenRequest", ("create",), "authentication.k8s.io", "v1"),)),
        _r("", "v1", "services", "Service", short_names=("svc",), categories=ALL, verbs=NO_COLLECTION_DELETE,
           subresources=(_status("Service"),)),
        # ---- apps/v1
        _r("apps", "v1", "controllerrevisions", "ControllerRevision"),
        _r("apps", "v1", "daemonsets", "DaemonSet", short_names=("ds",), categories=ALL, has_generation=True,
           subresources=(_status("DaemonSet"),)),
        _r("apps", "v1", "deployments", "Deployment", short_names=("deploy",), categories=ALL,
           has_generation=True, subresources=(_scale(), _status("Deployment"))),
        _r("apps", "v1", "replicasets", "ReplicaSet", short_names=("rs",), categories=ALL, has_generation=True,
           subresources=(_scale(), _status("ReplicaSet")), field_selectors=("status.replicas",)),
        _r("apps", "v1", "statefulsets", "StatefulSet", short_names=("sts",), categories=ALL,
           has_generation=True, subresources=(_scale(), _status("StatefulSet"))),
        # ---- apiregistration.k8s.io/v1 (kube-aggregator's own kind)
        _r("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, categories=("api-extensions",),
           subresources=(_status("APIService"),)),
        # ---- authentication / authorization
        _r("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", False, verbs=("create",),
           virtual=True),
        _r("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, verbs=("create",), virtual=True),
        _r("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview",
           verbs=("create",), virtual=True),
        _r("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False,
           verbs=("create",), virtual=True),
        _r("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False,
           verbs=("create",), virtual=True),
        _r("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False,
           verbs=("create",), virtual=True),
        # ---- autoscaling: v2 is the storage version, v1 is converted
        _r("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", short_names=("hpa",),
           categories=ALL, has_generation=True, subresources=(_status("HorizontalPodAutoscaler"),)),
        _r("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", short_names=("hpa",),
           categories=ALL, has_generation=True, subresources=(_status("HorizontalPodAutoscaler"),),
           storage_version="autoscaling/v2", bucket="horizontalpodautoscalers.autoscaling"),
        # ---- batch/v1
        _r("batch", "v1", "cronjobs", "CronJob", short_names=("cj",), categories=ALL, has_generation=True,
           subresources=(_status("CronJob"),)),
        _r("batch", "v1", "jobs", "Job", categories=ALL, has_generation=True, subresources=(_status("Job"),),
           field_selectors=("status.successful",)),
        # ---- the rest
        _r("coordination.k8s.io", "v1", "leases", "Lease"),
        _r("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", field_selectors=("addressType",)),
        _r("events.k8s.io", "v1", "events", "Event", short_names=("ev",), bucket="events", storage_version="v1",
           field_selectors=events_api_fields),
        _r("networking.k8s.io", "v1", "ingresses", "Ingress", short_names=("ing",), has_generation=True,
           subresources=(_status("Ingress"),)),
        _r("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False, has_generation=True),
        _r("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", short_names=("netpol",),
           has_generation=True),
        _r("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", short_names=("pdb",),
           has_generation=True, subresources=(_status("PodDisruptionBudget"),)),
        _r("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
        _r("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
        _r("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
        _r("rbac.authorization.k8s.io", "v1", "roles", "Role"),
        _r("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, short_names=("sc",)),
        _r("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, short_names=("pc",)),
        _r("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False,
           short_names=("crd", "crds"), has_generation=True,
           subresources=(_status("CustomResourceDefinition"),)),
        _r("metrics.k8s.io", "v1beta1", "nodes", "NodeMetrics", False, verbs=("get", "list"), virtual=True),
        _r("metrics.k8s.io", "v1beta1", "pods", "PodMetrics", verbs=("get", "list"), virtual=True),
    ]


# The order a v1.31 kube-apiserver lists its groups in /apis.
GROUP_ORDER = [
    "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io",
    "autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io", "policy", "rbac.authorization.k8s.io",
    "storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
    "coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "flowcontrol.apiserver.k8s.io", "metrics.k8s.io",
]
# Preferred version per group when several are served.
PREFERRED = {"autoscaling": "v2"}


@dataclass
class Catalog:
    """The resources served right now; thread-safe, changes bump ``generation``."""

    resources: list[Resource] = field(default_factory=builtin_resources)
    generation: int = 0
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        self._reindex()

    def _reindex(self) -> None:
        by_gvr: dict[tuple[str, str, str], Resource] = {}
        by_gvk: dict[tuple[str, str, str], Resource] = {}
        for res in self.resources:
            by_gvr[(res.group, res.version, res.plural)] = res
            by_gvk.setdefault((res.group, res.version, res.kind), res)
        self._by_gvr = by_gvr
        self._by_gvk = by_gvk
        self.generation += 1

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        return self._by_gvr.get((group, version, plural))

    def for_kind(self, group: str, version: str, kind: str) -> Resource | None:
        return self._by_gvk.get((group, version, kind))

    def for_api_version(self, api_version: str, kind: str) -> Resource | None:
        group, _, version = api_version.rpartition("/")
        return self.for_kind(group, version, kind)

    def in_bucket(self, bucket: str) -> list[Resource]:
        return [r for r in self.resources if r.bucket == bucket]

    def storage_resource(self, bucket: str) -> Resource | None:
        """The entry whose version is the bucket's storage version."""
        for res in self.resources:
            if res.bucket == bucket and res.api_version == res.storage_version:
                return res
        return None

    def group_versions(self) -> dict[str, list[str]]:
        """Served versions per group, preferred version first, in the server's order."""
        out: dict[str, list[str]] = {}
        for res in self.resources:
            versions = out.setdefault(res.group, [])
            if res.version not in versions:
                versions.append(res.version)
        for group, versions in out.items():
            preferred = PREFERRED.get(group)
            versions.sort(key=lambda v: (v != preferred, _version_priority(v)))
        order = {g: i for i, g in enumerate(GROUP_ORDER)}
        return dict(sorted(out.items(), key=lambda kv: (kv[0] != "", order.get(kv[0], len(order)), kv[0])))

    def in_group_version(self, group: str, version: str) -> list[Resource]:
        return sorted((r for r in self.resources if r.group == group and r.version == version),
                      key=lambda r: r.plural)

    def add(self, resources: Iterable[Resource]) -> None:
        with self._lock:
            self.resources = self.resources + list(resources)
            self._reindex()

    def remove_where(self, predicate: Callable[[Resource], bool]) -> None:
        with self._lock:
            self.resources = [r for r in self.resources if not predicate(r)]
            self._reindex()

    def resolve_short(self, name: str) -> list[Resource]:
        return [r for r in self.resources if name in (r.plural, r.singular) or name in r.short_names]


def _version_priority(version: str) -> tuple:
    """Kubernetes version priority: GA > beta > alpha, higher numbers first."""
    import re
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (3, version)
    major, stage, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor)
