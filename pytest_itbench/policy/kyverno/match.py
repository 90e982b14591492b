"""``match`` and ``exclude``: which requests a rule applies to."""

from __future__ import annotations

from .errors import PolicyError
from .values import wildcard_match

_FILTER_KEYS = {"resources", "subjects", "roles", "clusterRoles"}


def split_api_version(api_version: str) -> tuple[str, str]:
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        return group, version
    return "", api_version


def parse_kind(selector: str) -> tuple[str, str, str, str]:
    """(group, version, kind, subresource) of ``Pod``, ``v1/Pod``, ``apps/v1/Deployment``, ``Pod/exec``."""
    parts = selector.split("/")
    sub = ""
    if len(parts) >= 2 and parts[-1][:1].islower() and parts[-1] != "*":
        sub = parts.pop()
    if len(parts) == 1:
        return "*", "*", parts[0], sub
    if len(parts) == 2:
        return "*", parts[0], parts[1], sub
    if len(parts) == 3:
        return parts[0], parts[1], parts[2], sub
    raise PolicyError(f"invalid kind {selector!r}")


def kind_matches(selectors: list, resource: dict) -> bool:
    group, version = split_api_version(resource.get("apiVersion", ""))
    kind = resource.get("kind", "")
    for sel in selectors:
        g, v, k, sub = parse_kind(str(sel))
        if sub:
            continue
        if wildcard_match(g, group) and wildcard_match(v, version) and wildcard_match(k, kind):
            return True
    return False


def _selector_matches(selector: dict, labels: dict) -> bool:
    labels = labels or {}
    for k, v in (selector.get("matchLabels") or {}).items():
        if not any(wildcard_match(k, lk) and wildcard_match(str(v), str(lv)) for lk, lv in labels.items()):
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In":
            if key not in labels or labels[key] not in values:
                return False
        elif op == "NotIn":
            if key in labels and labels[key] in values:
                return False
        elif op == "Exists":
            if key not in labels:
                return False
        elif op == "DoesNotExist":
            if key in labels:
                return False
        else:
            raise PolicyError(f"selector: unknown operator {op!r}")
    return True


def _resources_match(desc: dict, resource: dict, operation: str, namespace_labels: dict) -> bool:
    meta = resource.get("metadata") or {}
    name = meta.get("name", "") or meta.get("generateName", "")
    namespace = meta.get("namespace", "") or ""
    if desc.get("kinds") and not kind_matches(desc["kinds"], resource):
        return False
    if desc.get("operations") and operation not in desc["operations"]:
        return False
    if desc.get("name") and not wildcard_match(desc["name"], name):
        return False
    if desc.get("names") and not any(wildcard_match(n, name) for n in desc["names"]):
        return False
    if desc.get("namespaces"):
        ns = name if resource.get("kind") == "Namespace" else namespace
        if not any(wildcard_match(n, ns) for n in desc["namespaces"]):
            return False
    if desc.get("annotations"):
        annotations = meta.get("annotations") or {}
        for k, v in desc["annotations"].items():
            if not any(wildcard_match(k, ak) and wildcard_match(str(v), str(av)) for ak, av in annotations.items()):
                return False
    if desc.get("selector") is not None and not _selector_matches(desc["selector"], meta.get("labels") or {}):
        return False
    if desc.get("namespaceSelector") is not None:
        if resource.get("kind") == "Namespace":
            labels = meta.get("labels") or {}
        elif not namespace:
            return False
        else:
            labels = namespace_labels or {}
        if not _selector_matches(desc["namespaceSelector"], labels):
            return False
    return True


def _user_keys(flt: dict) -> bool:
    return bool(flt.get("subjects") or flt.get("roles") or flt.get("clusterRoles"))


def _user_matches(flt: dict, user_info: dict | None) -> bool:
    if not (flt.get("subjects") or flt.get("roles") or flt.get("clusterRoles")):
        return True
    if not user_info:
        return False
    username = user_info.get("username", "")
    groups = user_info.get("groups") or []
    ok = False
    for s in flt.get("subjects") or []:
        kind, sname = s.get("kind"), s.get("name", "")
        if kind == "User" and wildcard_match(sname, username):
            ok = True
        elif kind == "Group" and any(wildcard_match(sname, g) for g in groups):
            ok = True
        elif kind == "ServiceAccount":
            if wildcard_match(f"system:serviceaccount:{s.get('namespace', '')}:{sname}", username):
                ok = True
    roles = user_info.get("roles") or []
    if any(r in roles for r in flt.get("roles") or []):
        ok = True
    cluster_roles = user_info.get("clusterRoles") or []
    if any(r in cluster_roles for r in flt.get("clusterRoles") or []):
        ok = True
    return ok


def _filter_matches(flt: dict, resource: dict, operation: str, namespace_labels, user_info) -> bool:
    desc = flt.get("resources") or {}
    if not any(desc.values()) and not _user_keys(flt):
        return False  # an empty filter selects nothing
    return _resources_match(desc, resource, operation, namespace_labels) and _user_matches(flt, user_info)


def matches(block: dict | None, resource: dict, operation: str, namespace_labels, user_info, *, exclude=False) -> bool:
    """Whether ``match`` (or, with exclude=True, ``exclude``) selects this request."""
    if not block:
        return False
    if block.get("any"):
        return any(_filter_matches(f, resource, operation, namespace_labels, user_info) for f in block["any"])
    if block.get("all"):
        return all(_filter_matches(f, resource, operation, namespace_labels, user_info) for f in block["all"])
    if not (set(block) & _FILTER_KEYS):
        return False
    return _filter_matches(block, resource, operation, namespace_labels, user_info)
