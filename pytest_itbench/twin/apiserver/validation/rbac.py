"""Validation of Roles, ClusterRoles, RoleBindings and ClusterRoleBindings (pkg/apis/rbac/validation)."""

from __future__ import annotations

from ... import errors
from ...errors import FieldError
from .. import gosyntax
from . import name_rules, objectmeta

RBAC_GROUP = "rbac.authorization.k8s.io"


def role(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_path_segment)
    for i, rule in enumerate(obj.get("rules") or ()):
        problems += policy_rule(rule, True, f"rules[{i}]")
    return problems


def cluster_role(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], False, name_rules.name_is_path_segment)
    for i, rule in enumerate(obj.get("rules") or ()):
        problems += policy_rule(rule, False, f"rules[{i}]")
    aggregation = obj.get("aggregationRule")
    if aggregation is not None:
        selectors = aggregation.get("clusterRoleSelectors") or []
        if not selectors:
            problems.append(errors.required("aggregationRule.clusterRoleSelectors",
                                            "at least one clusterRoleSelector required if aggregationRule is "
                                            "non-nil"))
        for i, selector in enumerate(selectors):
            problems += objectmeta.label_selector(selector, f"aggregationRule.clusterRoleSelectors[{i}]")
    return problems


def policy_rule(rule: dict, namespaced: bool, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    if not rule.get("verbs"):
        problems.append(errors.required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        value = gosyntax.string_slice(urls)
        if namespaced:
            problems.append(errors.invalid(f"{path}.nonResourceURLs", value,
                                           "namespaced rules cannot apply to non-resource URLs"))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            problems.append(errors.invalid(f"{path}.nonResourceURLs", value,
                                           "rules cannot apply to both regular resources and non-resource URLs"))
        return problems
    if not rule.get("apiGroups"):
        problems.append(errors.required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.get("resources"):
        problems.append(errors.required(f"{path}.resources", "resource rules must supply at least one resource"))
    return problems


def role_binding(obj: dict) -> list[FieldError]:
    return _binding(obj, True)


def cluster_role_binding(obj: dict) -> list[FieldError]:
    return _binding(obj, False)


def _binding(obj: dict, namespaced: bool) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], namespaced, name_rules.name_is_path_segment)
    ref = obj.get("roleRef") or {}
    if ref.get("apiGroup") != RBAC_GROUP:
        problems.append(errors.not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", [RBAC_GROUP]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if ref.get("kind") not in kinds:
        problems.append(errors.not_supported("roleRef.kind", ref.get("kind") or "", kinds))
    name = ref.get("name") or ""
    if not name:
        problems.append(errors.required("roleRef.name"))
    else:
        problems += [errors.invalid("roleRef.name", name, m) for m in name_rules.name_is_path_segment(name, False)]
    for i, subject in enumerate(obj.get("subjects") or ()):
        problems += _subject(subject, namespaced, f"subjects[{i}]")
    return problems


def _subject(subject: dict, namespaced: bool, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    name, kind, group = subject.get("name") or "", subject.get("kind") or "", subject.get("apiGroup") or ""
    if not name:
        problems.append(errors.required(f"{path}.name"))
    if kind == "ServiceAccount":
        if name:
            problems += [errors.invalid(f"{path}.name", name, m) for m in name_rules.name_is_dns_subdomain(name, False)]
        if group:
            problems.append(errors.not_supported(f"{path}.apiGroup", group, [""]))
        if not namespaced and not subject.get("namespace"):
            problems.append(errors.required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if group != RBAC_GROUP:
            problems.append(errors.not_supported(f"{path}.apiGroup", group, [RBAC_GROUP]))
    else:
        problems.append(errors.not_supported(f"{path}.kind", kind, ["ServiceAccount", "User", "Group"]))
    return problems


def role_binding_update(obj: dict, old: dict) -> list[FieldError]:
    return role_binding(obj) + _binding_update(obj, old)


def cluster_role_binding_update(obj: dict, old: dict) -> list[FieldError]:
    return cluster_role_binding(obj) + _binding_update(obj, old)


def _binding_update(obj: dict, old: dict) -> list[FieldError]:
    """The role a binding grants cannot change: make a new binding instead."""
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    ref = obj.get("roleRef") or {}
    if ref != (old.get("roleRef") or {}):
        problems.append(errors.invalid("roleRef", gosyntax.struct("rbac.RoleRef", [
            ("APIGroup", gosyntax.quote(ref.get("apiGroup") or "")), ("Kind", gosyntax.quote(ref.get("kind") or "")),
            ("Name", gosyntax.quote(ref.get("name") or ""))]), "cannot change roleRef"))
    return problems
