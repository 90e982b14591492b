"""The bootstrap RBAC policy a v1.31 cluster starts with (ClusterRoles and their bindings)."""

from __future__ import annotations

_AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
_BOOTSTRAP = {"kubernetes.io/bootstrapping": "rbac-defaults"}


def bootstrap_objects() -> list[dict]:
    return [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": "cluster-admin", "labels": dict(_BOOTSTRAP), "annotations": dict(_AUTOUPDATE)},
         "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                   {"nonResourceURLs": ["*"], "verbs": ["*"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": "cluster-admin", "labels": dict(_BOOTSTRAP), "annotations": dict(_AUTOUPDATE)},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}]},
    ]
