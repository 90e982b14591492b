"""What the agent may touch: a ServiceAccount with full rights in the application's namespaces and read
access to the cluster-scoped objects an operator looks at, nothing else (ARCHITECTURE.md, rule 4).

Granted through RBAC objects the harness creates with its admin credentials, so the same grant holds on
the twin and on a real cluster: every namespaced resource and subresource the server serves at grant
time (not the Namespace itself); ``without_logs`` (the paper's ablation, ``--itbench-without=logs``)
leaves out ``pods/log``.
"""

from __future__ import annotations

from kubernetes import client as k8s, dynamic
from kubernetes.client import ApiClient

ACCOUNT = "itbench-agent"
# Cluster-scoped objects an operator reads while diagnosing; of them it may change only nodes (cordon and
# uncordon, labels and taints: an on-call engineer's rights), never delete or create them.
CLUSTER_READS = [
    {"apiGroups": [""], "resources": ["namespaces", "persistentvolumes"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "patch", "update"]},
    {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["metrics.k8s.io"], "resources": ["nodes", "pods"], "verbs": ["get", "list"]},
]


def grant(api: ApiClient, namespaces: tuple[str, ...], suffix: str, *, without_logs: bool = False) -> tuple[str, str]:
    """Create the agent's ServiceAccount (in the first namespace) and its bindings; return (account, namespace)."""
    core, rbac = k8s.CoreV1Api(api), k8s.RbacAuthorizationV1Api(api)
    home = namespaces[0]
    core.create_namespaced_service_account(home, {"metadata": {"name": ACCOUNT}})
    subject = [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": home}]
    rules = _namespaced_rules(api, without_logs)
    for namespace in namespaces:
        rbac.create_namespaced_role(namespace, {"metadata": {"name": ACCOUNT}, "rules": rules})
        rbac.create_namespaced_role_binding(namespace, {
            "metadata": {"name": ACCOUNT}, "subjects": subject,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ACCOUNT}})
    name = f"{ACCOUNT}-{suffix}"
    rbac.create_cluster_role({"metadata": {"name": name}, "rules": CLUSTER_READS})
    rbac.create_cluster_role_binding({
        "metadata": {"name": name}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}})
    return ACCOUNT, home


def _namespaced_rules(api: ApiClient, without_logs: bool) -> list[dict]:
    # Not `resources: ["*"]`: in a Role that also grants the namespace object itself (kube-apiserver takes
    # DELETE /api/v1/namespaces/X as a request in namespace X), and the agent could delete its application.
    # So list what the server serves in a namespace, subresources included (RBAC cannot deny), minus
    # pods/log under --itbench-without=logs.
    by_group: dict[str, set[str]] = {}
    client = dynamic.DynamicClient(api)
    for group, version in _group_versions(api):
        path = f"/api/{version}" if not group else f"/apis/{group}/{version}"
        listing = client.request("get", path).to_dict()
        for resource in listing.get("resources", []):
            if resource.get("namespaced") and not (without_logs and resource["name"] == "pods/log"):
                by_group.setdefault(group, set()).add(resource["name"])
    return [{"apiGroups": [group], "resources": sorted(names), "verbs": ["*"]} for group, names in sorted(by_group.items())]


def _group_versions(api: ApiClient) -> list[tuple[str, str]]:
    found = [("", "v1")]
    groups = k8s.ApisApi(api).get_api_versions()
    for group in groups.groups:
        found.append((group.name, group.preferred_version.version))
    return found
