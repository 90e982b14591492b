"""RBAC binding printers. Roles and cluster roles have none upstream: they get the default table."""

from __future__ import annotations

from .core import Column, age, age_column, api_doc, name_column, register


def subjects_by_kind(subjects: list[dict] | None) -> tuple[str, str, str]:
    """Users, groups and service accounts (``namespace/name``), each joined with ``, ``."""
    users, groups, accounts = [], [], []
    for subject in subjects or ():
        kind, name = subject.get("kind"), subject.get("name", "")
        if kind == "ServiceAccount":
            accounts.append(f"{subject.get('namespace', '')}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    return ", ".join(users), ", ".join(groups), ", ".join(accounts)


def binding_row(obj: dict, now: float) -> list:
    ref = obj.get("roleRef") or {}
    return [obj["metadata"].get("name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}", age(obj, now),
            *subjects_by_kind(obj.get("subjects"))]


def _binding_columns(kind: str, label: str) -> list[Column]:
    return [
        name_column(),
        Column("Role", description=api_doc(f"rbac.v1.{kind}", "roleRef")),
        age_column(),
        Column("Users", description=f"Users in the {label}", priority=1),
        Column("Groups", description=f"Groups in the {label}", priority=1),
        Column("ServiceAccounts", description=f"ServiceAccounts in the {label}", priority=1),
    ]


register("rbac.authorization.k8s.io", "RoleBinding", _binding_columns("RoleBinding", "roleBinding"), binding_row)
register("rbac.authorization.k8s.io", "ClusterRoleBinding",
         _binding_columns("ClusterRoleBinding", "clusterRoleBinding"), binding_row)
