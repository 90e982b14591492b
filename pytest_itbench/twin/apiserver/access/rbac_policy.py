"""The bootstrap RBAC policy a v1.31 cluster starts with: its ClusterRoles, Roles and their bindings.

These are the objects kube-apiserver's RBAC post-start hook creates (user-facing
roles, system component roles, the ``system:controller:*`` roles of
kube-controller-manager, and the kube-system leader-election roles), with
their labels, annotations and rules. ``admin``, ``edit`` and ``view`` carry
no rules of their own: the ClusterRole aggregation controller fills them from
the ``system:aggregate-to-*`` roles.
"""

from __future__ import annotations

from typing import Iterable

_API_VERSION = "rbac.authorization.k8s.io/v1"
_AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
_BOOTSTRAP = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"

READ = ("get", "list", "watch")
WRITE = ("create", "delete", "deletecollection", "patch", "update")
READ_WRITE = READ + WRITE
EVENTS_GROUPS = ("", "events.k8s.io")
EVENT_WRITE = ("create", "patch", "update")


def rule(verbs: Iterable[str], groups: Iterable[str] = (), resources: Iterable[str] = (),
         names: Iterable[str] = (), urls: Iterable[str] = ()) -> dict:
    """A PolicyRule with sorted fields, as the bootstrap policy builds them."""
    out: dict = {"verbs": sorted(set(verbs))}
    for key, values in (("apiGroups", groups), ("resources", resources), ("resourceNames", names),
                        ("nonResourceURLs", urls)):
        if values:
            out[key] = sorted(set(values))
    return out


def _events_rule() -> dict:
    return rule(EVENT_WRITE, EVENTS_GROUPS, ["events"])


def _meta(name: str, namespace: str | None = None, labels: dict | None = None) -> dict:
    meta: dict = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = dict(_BOOTSTRAP, **(labels or {}))
    meta["annotations"] = dict(_AUTOUPDATE)
    return meta


def cluster_role(name: str, rules: list[dict], labels: dict | None = None,
                 aggregate_from: str | None = None) -> dict:
    role = {"apiVersion": _API_VERSION, "kind": "ClusterRole", "metadata": _meta(name, labels=labels)}
    if aggregate_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {_AGGREGATE_TO + aggregate_from: "true"}}]}
    else:
        role["rules"] = rules
    return role


def _binding(kind: str, name: str, role_kind: str, role: str, subjects: list[dict],
             namespace: str | None = None) -> dict:
    out = {"apiVersion": _API_VERSION, "kind": kind, "metadata": _meta(name, namespace),
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role}}
    if subjects:
        out["subjects"] = subjects
    return out


def _user(name: str) -> dict:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}


def _group(name: str) -> dict:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}


def _service_account(name: str, namespace: str = "kube-system") -> dict:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def _aggregate_label(role: str) -> dict:
    return {_AGGREGATE_TO + role: "true"}


# ---- user-facing and system component ClusterRoles -----------------------------------------------------

def _aggregate_to_admin() -> list[dict]:
    return [
        rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
        rule(READ_WRITE, ["rbac.authorization.k8s.io"], ["roles", "rolebindings"]),
    ]


def _aggregate_to_edit() -> list[dict]:
    return [
        rule(READ, [""], ["pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets",
                          "services/proxy"]),
        rule(["impersonate"], [""], ["serviceaccounts"]),
        rule(WRITE, [""], ["pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"]),
        rule(["create"], [""], ["pods/eviction"]),
        rule(WRITE, [""], ["replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
                           "services/proxy", "persistentvolumeclaims", "configmaps", "secrets", "events"]),
        rule(["create"], [""], ["serviceaccounts/token"]),
        rule(WRITE, ["apps"], ["statefulsets", "statefulsets/scale", "daemonsets", "deployments",
                               "deployments/scale", "deployments/rollback", "replicasets", "replicasets/scale"]),
        rule(WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
        rule(WRITE, ["batch"], ["jobs", "cronjobs"]),
        rule(WRITE, ["extensions"], ["daemonsets", "deployments", "deployments/scale", "deployments/rollback",
                                     "ingresses", "replicasets", "replicasets/scale", "replicationcontrollers/scale",
                                     "networkpolicies"]),
        rule(WRITE, ["policy"], ["poddisruptionbudgets"]),
        rule(WRITE, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
        rule(READ_WRITE, ["coordination.k8s.io"], ["leases"]),
    ]


def _aggregate_to_view() -> list[dict]:
    return [
        rule(READ, [""], ["pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                          "services", "services/status", "endpoints", "persistentvolumeclaims",
                          "persistentvolumeclaims/status", "configmaps"]),
        rule(READ, [""], ["limitranges", "resourcequotas", "bindings", "events", "pods/status",
                          "resourcequotas/status", "namespaces/status", "replicationcontrollers/status",
                          "pods/log"]),
        rule(READ, [""], ["namespaces"]),
        rule(READ, ["discovery.k8s.io"], ["endpointslices"]),
        rule(READ, ["apps"], ["controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale",
                              "daemonsets", "daemonsets/status", "deployments", "deployments/status",
                              "deployments/scale", "replicasets", "replicasets/status", "replicasets/scale"]),
        rule(READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
        rule(READ, ["batch"], ["jobs", "cronjobs", "cronjobs/status", "jobs/status"]),
        rule(READ, ["extensions"], ["daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                                    "deployments/status", "ingresses", "ingresses/status", "replicasets",
                                    "replicasets/scale", "replicasets/status", "replicationcontrollers/scale",
                                    "networkpolicies"]),
        rule(READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
        rule(READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
    ]


def _kube_controller_manager() -> list[dict]:
    return [
        _events_rule(),
        rule(["create"], ["coordination.k8s.io"], ["leases"]),
        rule(["get", "update"], ["coordination.k8s.io"], ["leases"], ["kube-controller-manager"]),
        rule(["create"], [""], ["secrets", "serviceaccounts"]),
        rule(["delete"], [""], ["secrets"]),
        rule(["get"], [""], ["namespaces", "configmaps", "secrets", "serviceaccounts"]),
        rule(["update"], [""], ["secrets", "serviceaccounts"]),
        rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
        rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
        rule(["list", "watch"], ["*"], ["*"]),
        rule(["create"], [""], ["serviceaccounts/token"]),
    ]


def _kube_scheduler() -> list[dict]:
    return [
        _events_rule(),
        rule(["create"], ["coordination.k8s.io"], ["leases"]),
        rule(["get", "update"], ["coordination.k8s.io"], ["leases"], ["kube-scheduler"]),
        rule(READ, [""], ["nodes"]),
        rule(["delete", "get", "list", "watch"], [""], ["pods"]),
        rule(["create"], [""], ["bindings", "pods/binding"]),
        rule(["patch", "update"], [""], ["pods/status"]),
        rule(READ, [""], ["replicationcontrollers", "services"]),
        rule(READ, ["apps", "extensions"], ["replicasets"]),
        rule(READ, ["apps"], ["statefulsets"]),
        rule(READ, ["policy"], ["poddisruptionbudgets"]),
        rule(READ, [""], ["persistentvolumeclaims", "persistentvolumes"]),
        rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
        rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
        rule(READ, ["storage.k8s.io"], ["csinodes"]),
        rule(READ, [""], ["namespaces"]),
        rule(READ, ["storage.k8s.io"], ["csidrivers"]),
        rule(READ, ["storage.k8s.io"], ["csistoragecapacities"]),
    ]


def _node() -> list[dict]:
    return [
        rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
        rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews", "localsubjectaccessreviews"]),
        rule(READ, [""], ["services"]),
        rule(["create", "get", "list", "watch"], [""], ["nodes"]),
        rule(["update", "patch"], [""], ["nodes/status"]),
        rule(["update", "patch"], [""], ["nodes"]),
        rule(["create", "update", "patch"], [""], ["events"]),
        rule(READ, [""], ["pods"]),
        rule(["create", "delete"], [""], ["pods"]),
        rule(["update", "patch"], [""], ["pods/status"]),
        rule(["create"], [""], ["pods/eviction"]),
        rule(READ, [""], ["secrets", "configmaps"]),
        rule(["get"], [""], ["persistentvolumeclaims", "persistentvolumes"]),
        rule(["get"], [""], ["endpoints"]),
        rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
        rule(["get", "create", "update", "patch", "delete"], ["coordination.k8s.io"], ["leases"]),
        rule(["get"], ["storage.k8s.io"], ["volumeattachments"]),
        rule(["create"], [""], ["serviceaccounts/token"]),
        rule(["get", "update", "patch"], [""], ["persistentvolumeclaims/status"]),
        rule(READ, ["storage.k8s.io"], ["csidrivers"]),
        rule(["create", "delete", "get", "patch", "update"], ["storage.k8s.io"], ["csinodes"]),
        rule(READ, ["node.k8s.io"], ["runtimeclasses"]),
    ]


def _approver(signer: str) -> list[dict]:
    return [rule(["approve"], ["certificates.k8s.io"], ["signers"], [f"kubernetes.io/{signer}"])]


def _cluster_roles() -> list[dict]:
    csr = "system:certificates.k8s.io:"
    return [
        cluster_role("admin", [], aggregate_from="admin"),
        cluster_role("cluster-admin", [rule(["*"], ["*"], ["*"]), rule(["*"], urls=["*"])]),
        cluster_role("edit", [], _aggregate_label("admin"), aggregate_from="edit"),
        cluster_role("system:aggregate-to-admin", _aggregate_to_admin(), _aggregate_label("admin")),
        cluster_role("system:aggregate-to-edit", _aggregate_to_edit(), _aggregate_label("edit")),
        cluster_role("system:aggregate-to-view", _aggregate_to_view(), _aggregate_label("view")),
        cluster_role("system:auth-delegator", [
            rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
            rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"])]),
        cluster_role("system:basic-user", [
            rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
            rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"])]),
        cluster_role(csr + "certificatesigningrequests:nodeclient", [
            rule(["create"], ["certificates.k8s.io"], ["certificatesigningrequests/nodeclient"])]),
        cluster_role(csr + "certificatesigningrequests:selfnodeclient", [
            rule(["create"], ["certificates.k8s.io"], ["certificatesigningrequests/selfnodeclient"])]),
        cluster_role(csr + "kube-apiserver-client-approver", _approver("kube-apiserver-client")),
        cluster_role(csr + "kube-apiserver-client-kubelet-approver", _approver("kube-apiserver-client-kubelet")),
        cluster_role(csr + "kubelet-serving-approver", _approver("kubelet-serving")),
        cluster_role(csr + "legacy-unknown-approver", _approver("legacy-unknown")),
        cluster_role("system:discovery", [rule(["get"], urls=[
            "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
            "/version", "/version/"])]),
        cluster_role("system:heapster", [
            rule(READ, [""], ["events", "namespaces", "nodes", "pods"]),
            rule(READ, ["extensions"], ["deployments"])]),
        cluster_role("system:kube-aggregator", [rule(READ, [""], ["endpoints", "services"])]),
        cluster_role("system:kube-controller-manager", _kube_controller_manager()),
        cluster_role("system:kube-dns", [rule(["list", "watch"], [""], ["endpoints", "services"])]),
        cluster_role("system:kube-scheduler", _kube_scheduler()),
        cluster_role("system:kubelet-api-admin", [
            rule(READ, [""], ["nodes"]),
            rule(["proxy"], [""], ["nodes"]),
            rule(["*"], [""], ["nodes/proxy", "nodes/metrics", "nodes/stats", "nodes/log"])]),
        cluster_role("system:monitoring", [rule(["get"], urls=[
            "/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz", "/readyz/*"])]),
        cluster_role("system:node", _node()),
        cluster_role("system:node-bootstrapper", [
            rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"])]),
        cluster_role("system:node-problem-detector", [
            rule(["get"], [""], ["nodes"]),
            rule(["patch"], [""], ["nodes/status"]),
            _events_rule()]),
        cluster_role("system:node-proxier", [
            rule(["list", "watch"], [""], ["services", "endpoints"]),
            rule(READ, [""], ["nodes"]),
            _events_rule(),
            rule(["list", "watch"], ["discovery.k8s.io"], ["endpointslices"])]),
        cluster_role("system:persistent-volume-provisioner", [
            rule(["create", "delete", "get", "list", "watch"], [""], ["persistentvolumes"]),
            rule(["get", "list", "update", "watch"], [""], ["persistentvolumeclaims"]),
            rule(READ, ["storage.k8s.io"], ["storageclasses"]),
            rule(["watch"], [""], ["events"]),
            _events_rule()]),
        cluster_role("system:public-info-viewer", [rule(["get"], urls=[
            "/healthz", "/livez", "/readyz", "/version", "/version/"])]),
        cluster_role("system:service-account-issuer-discovery", [rule(["get"], urls=[
            "/.well-known/openid-configuration", "/openid/v1/jwks"])]),
        cluster_role("system:volume-scheduler", [
            rule(["get", "list", "patch", "update", "watch"], [""], ["persistentvolumes"]),
            rule(READ, ["storage.k8s.io"], ["storageclasses"]),
            rule(["get", "list", "patch", "update", "watch"], [""], ["persistentvolumeclaims"])]),
        cluster_role("view", [], _aggregate_label("edit"), aggregate_from="view"),
    ]


def _cluster_role_bindings() -> list[dict]:
    crb = "ClusterRoleBinding"
    everyone = [_group("system:authenticated"), _group("system:unauthenticated")]
    return [
        _binding(crb, "cluster-admin", "ClusterRole", "cluster-admin", [_group("system:masters")]),
        _binding(crb, "system:basic-user", "ClusterRole", "system:basic-user", [_group("system:authenticated")]),
        _binding(crb, "system:discovery", "ClusterRole", "system:discovery", [_group("system:authenticated")]),
        _binding(crb, "system:kube-controller-manager", "ClusterRole", "system:kube-controller-manager",
                 [_user("system:kube-controller-manager")]),
        _binding(crb, "system:kube-dns", "ClusterRole", "system:kube-dns", [_service_account("kube-dns")]),
        _binding(crb, "system:kube-scheduler", "ClusterRole", "system:kube-scheduler",
                 [_user("system:kube-scheduler")]),
        _binding(crb, "system:monitoring", "ClusterRole", "system:monitoring", [_group("system:monitoring")]),
        _binding(crb, "system:node", "ClusterRole", "system:node", []),
        _binding(crb, "system:node-proxier", "ClusterRole", "system:node-proxier", [_user("system:kube-proxy")]),
        _binding(crb, "system:public-info-viewer", "ClusterRole", "system:public-info-viewer", everyone),
        _binding(crb, "system:service-account-issuer-discovery", "ClusterRole",
                 "system:service-account-issuer-discovery", [_group("system:serviceaccounts")]),
        _binding(crb, "system:volume-scheduler", "ClusterRole", "system:volume-scheduler",
                 [_user("system:kube-scheduler")]),
    ]


# ---- kube-controller-manager's controllers, each with its own service account in kube-system -------------

AGGREGATION_CONTROLLER = "clusterrole-aggregation-controller"


def _controller_rules() -> dict[str, list[dict]]:
    events = _events_rule()
    finalizers = "/finalizers"
    return {
        "attachdetach-controller": [
            rule(["list", "watch"], [""], ["persistentvolumes", "persistentvolumeclaims"]),
            rule(READ, [""], ["nodes"]),
            rule(["patch", "update"], [""], ["nodes/status"]),
            rule(["list", "watch"], [""], ["pods"]),
            events,
            rule(["create", "delete", "get", "list", "watch"], ["storage.k8s.io"], ["volumeattachments"]),
            rule(READ, ["storage.k8s.io"], ["csidrivers"]),
            rule(READ, ["storage.k8s.io"], ["csinodes"])],
        "certificate-controller": [
            rule(["delete", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
            rule(["update"], ["certificates.k8s.io"], ["certificatesigningrequests/status",
                                                       "certificatesigningrequests/approval"]),
            rule(["approve"], ["certificates.k8s.io"], ["signers"], ["kubernetes.io/kube-apiserver-client-kubelet"]),
            rule(["sign"], ["certificates.k8s.io"], ["signers"], [
                "kubernetes.io/kube-apiserver-client", "kubernetes.io/kube-apiserver-client-kubelet",
                "kubernetes.io/kubelet-serving", "kubernetes.io/legacy-unknown"]),
            rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
            events],
        AGGREGATION_CONTROLLER: [
            rule(["escalate", "get", "list", "watch", "update", "patch"], ["rbac.authorization.k8s.io"],
                 ["clusterroles"])],
        "cronjob-controller": [
            rule(["get", "list", "watch", "update"], ["batch"], ["cronjobs"]),
            rule(["get", "list", "watch", "create", "update", "delete", "patch"], ["batch"], ["jobs"]),
            rule(["update"], ["batch"], ["cronjobs/status"]),
            rule(["update"], ["batch"], ["cronjobs" + finalizers]),
            rule(["list", "watch", "delete"], [""], ["pods"]),
            events],
        "daemon-set-controller": [
            rule(READ, ["apps", "extensions"], ["daemonsets"]),
            rule(["update"], ["apps", "extensions"], ["daemonsets/status"]),
            rule(["update"], ["apps", "extensions"], ["daemonsets" + finalizers]),
            rule(["list", "watch"], [""], ["nodes"]),
            rule(["list", "watch", "create", "delete", "patch"], [""], ["pods"]),
            rule(["create"], [""], ["pods/binding"]),
            rule(["get", "list", "watch", "create", "delete", "update", "patch"], ["apps"], ["controllerrevisions"]),
            events],
        "deployment-controller": [
            rule(["get", "list", "watch", "update"], ["apps", "extensions"], ["deployments"]),
            rule(["update"], ["apps", "extensions"], ["deployments/status"]),
            rule(["update"], ["apps", "extensions"], ["deployments" + finalizers]),
            rule(["get", "list", "watch", "create", "update", "patch", "delete"], ["apps", "extensions"],
                 ["replicasets"]),
            rule(["get", "list", "watch", "update"], [""], ["pods"]),
            events],
        "disruption-controller": [
            rule(READ, ["apps", "extensions"], ["deployments"]),
            rule(READ, ["apps", "extensions"], ["replicasets"]),
            rule(READ, [""], ["replicationcontrollers"]),
            rule(READ, ["policy"], ["poddisruptionbudgets"]),
            rule(READ, ["apps"], ["statefulsets"]),
            rule(["update"], ["policy"], ["poddisruptionbudgets/status"]),
            rule(["patch", "update"], [""], ["pods/status"]),
            rule(["get"], ["*"], ["*/scale"]),
            events],
        "endpoint-controller": [
            rule(READ, [""], ["services", "pods"]),
            rule(["get", "list", "create", "update", "delete", "watch"], [""], ["endpoints"]),
            rule(["create"], [""], ["endpoints/restricted"]),
            events],
        "endpointslice-controller": [
            rule(READ, [""], ["services", "pods", "nodes"]),
            rule(["update"], [""], ["services" + finalizers]),
            rule(["get", "list", "create", "update", "delete", "watch"], ["discovery.k8s.io"], ["endpointslices"]),
            events],
        "endpointslicemirroring-controller": [
            rule(READ, [""], ["services", "endpoints"]),
            rule(["update"], [""], ["services" + finalizers]),
            rule(["update"], [""], ["endpoints" + finalizers]),
            rule(["get", "list", "create", "update", "delete", "watch"], ["discovery.k8s.io"], ["endpointslices"]),
            events],
        "ephemeral-volume-controller": [
            rule(READ, [""], ["pods"]),
            rule(["update"], [""], ["pods" + finalizers]),
            rule(["get", "list", "watch", "create"], [""], ["persistentvolumeclaims"]),
            events],
        "expand-controller": [
            rule(["get", "list", "watch", "update", "patch"], [""], ["persistentvolumes"]),
            rule(["update", "patch"], [""], ["persistentvolumeclaims/status"]),
            rule(READ, [""], ["persistentvolumeclaims"]),
            events],
        "generic-garbage-collector": [
            rule(["get", "list", "watch", "patch", "update", "delete"], ["*"], ["*"]),
            events],
        "horizontal-pod-autoscaler": [
            rule(READ, ["autoscaling"], ["horizontalpodautoscalers"]),
            rule(["update"], ["autoscaling"], ["horizontalpodautoscalers/status"]),
            rule(["get", "update"], ["*"], ["*/scale"]),
            rule(["list", "watch"], [""], ["pods"]),
            rule(["list", "watch"], ["metrics.k8s.io"], ["pods"]),
            rule(READ, ["custom.metrics.k8s.io"], ["*"]),
            rule(READ, ["external.metrics.k8s.io"], ["*"]),
            events],
        "job-controller": [
            rule(["get", "list", "watch", "update", "patch"], ["batch"], ["jobs"]),
            rule(["update"], ["batch"], ["jobs/status"]),
            rule(["update"], ["batch"], ["jobs" + finalizers]),
            rule(["list", "watch", "create", "delete", "patch"], [""], ["pods"]),
            events],
        "legacy-service-account-token-cleaner": [
            rule(["get"], [""], ["configmaps"], ["kube-apiserver-legacy-service-account-token-tracking"]),
            rule(["patch", "delete"], [""], ["secrets"])],
        "namespace-controller": [
            rule(["get", "list", "watch", "delete"], [""], ["namespaces"]),
            rule(["update"], [""], ["namespaces/finalize", "namespaces/status"]),
            rule(["get", "list", "watch", "delete", "deletecollection"], ["*"], ["*"])],
        "node-controller": [
            rule(["get", "list", "update", "delete", "patch", "watch"], [""], ["nodes"]),
            rule(["patch", "update"], [""], ["nodes/status"]),
            rule(["patch", "update"], [""], ["pods/status"]),
            rule(["list", "watch", "delete", "get"], [""], ["pods"]),
            events],
        "persistent-volume-binder": [
            rule(["get", "list", "watch", "update", "create", "delete"], [""], ["persistentvolumes"]),
            rule(["update"], [""], ["persistentvolumes/status"]),
            rule(["get", "list", "watch", "update"], [""], ["persistentvolumeclaims"]),
            rule(["update"], [""], ["persistentvolumeclaims/status"]),
            rule(["get", "list", "watch", "create", "delete"], [""], ["pods"]),
            rule(READ, ["storage.k8s.io"], ["storageclasses"]),
            rule(["list", "watch"], [""], ["nodes"]),
            events,
            rule(["watch"], [""], ["events"])],
        "pod-garbage-collector": [
            rule(["list", "watch", "delete"], [""], ["pods"]),
            rule(READ, [""], ["nodes"]),
            rule(["patch"], [""], ["pods/status"])],
        "pv-protection-controller": [
            rule(["get", "list", "watch", "update"], [""], ["persistentvolumes"]),
            events],
        "pvc-protection-controller": [
            rule(["get", "list", "watch", "update"], [""], ["persistentvolumeclaims"]),
            rule(["update"], [""], ["persistentvolumeclaims/status"]),
            rule(READ, [""], ["pods"]),
            events],
        "replicaset-controller": [
            rule(["get", "list", "watch", "update"], ["apps", "extensions"], ["replicasets"]),
            rule(["update"], ["apps", "extensions"], ["replicasets/status"]),
            rule(["update"], ["apps", "extensions"], ["replicasets" + finalizers]),
            rule(["list", "watch", "patch", "create", "delete"], [""], ["pods"]),
            events],
        "replication-controller": [
            rule(["get", "list", "watch", "update"], [""], ["replicationcontrollers"]),
            rule(["update"], [""], ["replicationcontrollers/status"]),
            rule(["update"], [""], ["replicationcontrollers" + finalizers]),
            rule(["list", "watch", "patch", "create", "delete"], [""], ["pods"]),
            events],
        "resourcequota-controller": [
            rule(["list", "watch"], ["*"], ["*"]),
            rule(["update"], [""], ["resourcequotas/status"]),
            events],
        "root-ca-cert-publisher": [
            rule(["create", "update"], [""], ["configmaps"]),
            events],
        "route-controller": [
            rule(["list", "watch"], [""], ["nodes"]),
            rule(["patch"], [""], ["nodes/status"]),
            events],
        "service-account-controller": [
            rule(["create"], [""], ["serviceaccounts"]),
            events],
        "service-controller": [
            rule(READ, [""], ["services"]),
            rule(["patch", "update"], [""], ["services/status"]),
            rule(["list", "watch"], [""], ["nodes"]),
            events],
        "statefulset-controller": [
            rule(["list", "watch"], [""], ["pods"]),
            rule(READ, ["apps"], ["statefulsets"]),
            rule(["update"], ["apps"], ["statefulsets/status"]),
            rule(["update"], ["apps"], ["statefulsets" + finalizers]),
            rule(["get", "create", "delete", "update", "patch"], [""], ["pods"]),
            rule(["get", "list", "watch", "create", "delete", "update", "patch"], ["apps"], ["controllerrevisions"]),
            rule(["get", "create", "list", "watch"], [""], ["persistentvolumeclaims"]),
            rule(["update", "delete"], [""], ["persistentvolumeclaims"]),
            rule(["update"], [""], ["pods" + finalizers]),
            events],
        "ttl-after-finished-controller": [
            rule(["get", "list", "watch", "delete"], ["batch"], ["jobs"]),
            events],
        "ttl-controller": [
            rule(["update", "patch", "list", "watch"], [""], ["nodes"]),
            events],
        "validatingadmissionpolicy-status-controller": [
            rule(READ, ["admissionregistration.k8s.io"], ["validatingadmissionpolicies"]),
            rule(["get", "patch", "update"], ["admissionregistration.k8s.io"], ["validatingadmissionpolicies/status"]),
            events],
    }


def _controller_objects(controllers: dict[str, list[dict]]) -> list[dict]:
    roles = [cluster_role(f"system:controller:{name}", rules) for name, rules in controllers.items()]
    bindings = [_binding("ClusterRoleBinding", f"system:controller:{name}", "ClusterRole",
                         f"system:controller:{name}", [_service_account(name)]) for name in controllers]
    return roles + bindings


# ---- Roles in kube-system and kube-public ----------------------------------------------------------------

def _namespaced_objects() -> list[dict]:
    def role(name: str, namespace: str, rules: list[dict]) -> dict:
        return {"apiVersion": _API_VERSION, "kind": "Role", "metadata": _meta(name, namespace), "rules": rules}

    leader_locking = [rule(["create", "get", "list", "update", "watch"], ["coordination.k8s.io"], ["leases"])]
    bootstrap_signer = "system:controller:bootstrap-signer"
    return [
        role(bootstrap_signer, "kube-public", [
            rule(READ, [""], ["configmaps"]),
            rule(["update"], [""], ["configmaps"], ["cluster-info"]),
            _events_rule()]),
        role("extension-apiserver-authentication-reader", "kube-system", [
            rule(READ, [""], ["configmaps"], ["extension-apiserver-authentication"])]),
        role("system::leader-locking-kube-controller-manager", "kube-system", leader_locking),
        role("system::leader-locking-kube-scheduler", "kube-system", leader_locking),
        role(bootstrap_signer, "kube-system", [rule(READ, [""], ["secrets"])]),
        role("system:controller:cloud-provider", "kube-system", [
            rule(["create", "get", "list", "watch"], [""], ["configmaps"])]),
        role("system:controller:token-cleaner", "kube-system", [
            rule(["delete", "get", "list", "watch"], [""], ["secrets"]),
            _events_rule()]),
        _binding("RoleBinding", bootstrap_signer, "Role", bootstrap_signer,
                 [_service_account("bootstrap-signer")], "kube-public"),
        _binding("RoleBinding", "system::extension-apiserver-authentication-reader", "Role",
                 "extension-apiserver-authentication-reader",
                 [_user("system:kube-controller-manager"), _user("system:kube-scheduler")], "kube-system"),
        _binding("RoleBinding", "system::leader-locking-kube-controller-manager", "Role",
                 "system::leader-locking-kube-controller-manager",
                 [_user("system:kube-controller-manager"), _service_account("kube-controller-manager"),
                  _service_account("leader-election-controller")], "kube-system"),
        _binding("RoleBinding", "system::leader-locking-kube-scheduler", "Role",
                 "system::leader-locking-kube-scheduler",
                 [_user("system:kube-scheduler"), _service_account("kube-scheduler")], "kube-system"),
        _binding("RoleBinding", bootstrap_signer, "Role", bootstrap_signer,
                 [_service_account("bootstrap-signer")], "kube-system"),
        _binding("RoleBinding", "system:controller:cloud-provider", "Role", "system:controller:cloud-provider",
                 [_service_account("cloud-provider")], "kube-system"),
        _binding("RoleBinding", "system:controller:token-cleaner", "Role", "system:controller:token-cleaner",
                 [_service_account("token-cleaner")], "kube-system"),
    ]


def bootstrap_objects() -> list[dict]:
    """Every bootstrap RBAC object, in the order the twin creates them.

    The aggregation controller's own role and binding come first: it fills
    ``admin``, ``edit`` and ``view`` as soon as they appear, and RBAC must
    already let it (``escalate`` on clusterroles). Those three come after the
    roles they gather, view before edit before admin, so each is written once.
    """
    controllers = _controller_rules()
    first = {AGGREGATION_CONTROLLER: controllers.pop(AGGREGATION_CONTROLLER)}
    roles = _cluster_roles()
    aggregating = {role["metadata"]["name"]: role for role in roles if "aggregationRule" in role}
    ordered = [role for role in roles if role["metadata"]["name"] not in aggregating]
    ordered += [aggregating[name] for name in ("view", "edit", "admin")]
    return (_controller_objects(first) + ordered + _cluster_role_bindings()
            + _controller_objects(controllers) + _namespaced_objects())
