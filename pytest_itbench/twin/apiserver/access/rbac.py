"""RBAC authorization over Role, ClusterRole, RoleBinding and ClusterRoleBinding.

The authorizer chain of a kubeadm cluster for the requests the twin serves:
members of ``system:masters`` may do anything (kube-apiserver decides that
before any authorizer runs), everyone else gets what RBAC grants. A request
is allowed by the first rule, of the ClusterRoleBindings and then the
RoleBindings of its namespace that name the user, that matches it.

Authorization runs on every request, so the rules a user holds in a
namespace are resolved once and cached; any write to an RBAC object drops
the cache, and the bindings are indexed by subject again on the next miss.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

from ...store import Change
from .authn import UserInfo
from .authz import Attributes
from .rbac_rules import Rule

RBAC_GROUP = "rbac.authorization.k8s.io"
MASTERS = "system:masters"
_SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"

SubjectKey = tuple[str, ...]  # ("User", name), ("Group", name) or ("ServiceAccount", namespace, name)


@dataclass(frozen=True)
class Grant:
    """The rules one binding gives a user, and the binding as "allowed by" reasons name it."""

    source: str
    rules: tuple[Rule, ...]


@dataclass(frozen=True)
class ResolvedRules:
    """What RBAC grants one user in one namespace, and the bindings whose role could not be found."""

    grants: tuple[Grant, ...]
    errors: tuple[str, ...]

    def policy_rules(self) -> list[dict]:
        return [rule.raw for grant in self.grants for rule in grant.rules]

    def error_text(self) -> str:
        """The errors as Kubernetes aggregates them: one alone, several as a bracketed list."""
        unique = list(dict.fromkeys(self.errors))
        return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


class _BindingIndex:
    """Bindings by the subjects they name: cluster-wide, and per namespace for RoleBindings."""

    def __init__(self, cluster_bindings: list[dict], role_bindings: list[dict]):
        self.cluster: dict[SubjectKey, list[dict]] = {}
        self.namespaced: dict[str, dict[SubjectKey, list[dict]]] = {}
        for binding in cluster_bindings:
            for key in _subject_keys(binding, ""):
                self.cluster.setdefault(key, []).append(binding)
        for binding in role_bindings:
            namespace = binding["metadata"]["namespace"]
            by_subject = self.namespaced.setdefault(namespace, {})
            for key in _subject_keys(binding, namespace):
                by_subject.setdefault(key, []).append(binding)

    @staticmethod
    def candidates(by_subject: dict[SubjectKey, list[dict]], keys: list[SubjectKey]) -> list[dict]:
        found: dict[tuple[str, str], dict] = {}
        for key in keys:
            for binding in by_subject.get(key, ()):
                meta = binding["metadata"]
                found.setdefault((meta.get("namespace", ""), meta["name"]), binding)
        return [found[k] for k in sorted(found)]


def _subject_keys(binding: dict, namespace: str) -> set[SubjectKey]:
    keys: set[SubjectKey] = set()
    for subject in binding.get("subjects") or ():
        kind, name = subject.get("kind"), subject.get("name", "")
        if kind in ("User", "Group"):
            keys.add((kind, name))
        elif kind == "ServiceAccount":
            sa_namespace = subject.get("namespace") or namespace
            if sa_namespace:
                keys.add((kind, sa_namespace, name))
    return keys


def _user_keys(user: UserInfo) -> list[SubjectKey]:
    keys: list[SubjectKey] = [("User", user.name)]
    keys += [("Group", group) for group in user.groups]
    if user.name.startswith(_SERVICE_ACCOUNT_PREFIX):
        namespace, _, name = user.name[len(_SERVICE_ACCOUNT_PREFIX):].partition(":")
        if namespace and name and ":" not in name:
            keys.append(("ServiceAccount", namespace, name))
    return keys


def _applies(subject: dict, user: UserInfo, namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        sa_namespace = subject.get("namespace") or namespace
        return bool(sa_namespace) and user.name == f"{_SERVICE_ACCOUNT_PREFIX}{sa_namespace}:{name}"
    return False


def _describe_subject(subject: dict, namespace: str) -> str:
    name = subject.get("name", "")
    if subject.get("kind") == "ServiceAccount":
        name = f"{name}/{subject.get('namespace') or namespace}"
    return f"{subject.get('kind')} {json.dumps(name)}"


class RBACAuthorizer:
    def __init__(self, api):
        self.store = api.store
        lookup = api.catalog.lookup
        self._roles = lookup(RBAC_GROUP, "v1", "roles").bucket
        self._cluster_roles = lookup(RBAC_GROUP, "v1", "clusterroles").bucket
        self._role_bindings = lookup(RBAC_GROUP, "v1", "rolebindings").bucket
        self._cluster_role_bindings = lookup(RBAC_GROUP, "v1", "clusterrolebindings").bucket
        self._rbac_buckets = {self._roles, self._cluster_roles, self._role_bindings, self._cluster_role_bindings}
        self._lock = threading.Lock()
        self._generation = 0
        self._index: _BindingIndex | None = None
        self._compiled: dict[tuple[str, str], tuple[Rule, ...]] = {}
        self._resolved: dict[tuple[str, tuple[str, ...], str], ResolvedRules] = {}
        self.store.on_write(self._on_write)

    def _on_write(self, change: Change) -> None:
        if change.bucket in self._rbac_buckets:
            with self._lock:
                self._generation += 1
                self._index = None
                self._compiled = {}
                self._resolved = {}

    # ---- decisions ----------------------------------------------------------------------------------
    def authorize(self, user: UserInfo, attrs: Attributes) -> tuple[bool, str]:
        """Allowed or not, and the reason a SubjectAccessReview reports (a 403 appends a non-empty one)."""
        if MASTERS in user.groups:
            return True, ""
        resolved = self.rules_for(user, attrs.namespace)
        for grant in resolved.grants:
            for rule in grant.rules:
                if rule.allows(attrs):
                    return True, f"RBAC: allowed by {grant.source}"
        if resolved.errors:
            return False, f"RBAC: {resolved.error_text()}"
        return False, ""

    def rules_for(self, user: UserInfo, namespace: str) -> ResolvedRules:
        """The rules RBAC grants ``user`` in ``namespace`` ("" for cluster-wide rules only)."""
        key = (user.name, tuple(user.groups), namespace)
        with self._lock:
            cached = self._resolved.get(key)
            generation, index, compiled = self._generation, self._index, self._compiled
        if cached is not None:
            return cached
        if index is None:
            index = _BindingIndex(self.store.list(self._cluster_role_bindings)[0],
                                  self.store.list(self._role_bindings)[0])
        resolved = self._resolve(user, namespace, index, compiled)
        # Whatever was read while an RBAC write landed is used once and never cached.
        with self._lock:
            if generation == self._generation:
                self._index = index
                self._resolved[key] = resolved
        return resolved

    def role_rules(self, kind: str, name: str, namespace: str) -> tuple[list[dict] | None, str]:
        """The rules of a binding's roleRef, or None and the error the authorizer reports."""
        if kind == "ClusterRole":
            role = self.store.get(self._cluster_roles, "", name)
        elif kind == "Role":
            role = self.store.get(self._roles, namespace, name) if namespace else None
        else:
            return None, f"unsupported role reference kind: {json.dumps(kind)}"
        if role is None:
            return None, f'{kind.lower()}.{RBAC_GROUP} {json.dumps(name)} not found'
        return list(role.get("rules") or ()), ""

    # ---- resolution ----------------------------------------------------------------------------------
    def _resolve(self, user: UserInfo, namespace: str, index: _BindingIndex,
                 compiled: dict[tuple[str, str], tuple[Rule, ...]]) -> ResolvedRules:
        keys = _user_keys(user)
        grants: list[Grant] = []
        errors: list[str] = []
        scopes = [("", index.cluster)]
        if namespace:
            scopes.append((namespace, index.namespaced.get(namespace, {})))
        for scope, by_subject in scopes:
            for binding in index.candidates(by_subject, keys):
                subject = next((s for s in binding.get("subjects") or () if _applies(s, user, scope)), None)
                if subject is None:
                    continue
                ref = binding.get("roleRef") or {}
                rules = self._compiled_rules(ref.get("kind", ""), ref.get("name", ""), scope, compiled)
                if isinstance(rules, str):
                    errors.append(rules)
                else:
                    grants.append(Grant(_describe_binding(binding, ref, subject, scope), rules))
        return ResolvedRules(tuple(grants), tuple(errors))

    def _compiled_rules(self, kind: str, name: str, namespace: str,
                        compiled: dict[tuple[str, str], tuple[Rule, ...]]) -> tuple[Rule, ...] | str:
        """A role's rules ready for matching, or the error naming the missing role."""
        cache_key = (namespace if kind == "Role" else "", f"{kind}/{name}")
        rules = compiled.get(cache_key)
        if rules is None:
            raw, error = self.role_rules(kind, name, namespace)
            if raw is None:
                return error
            rules = compiled[cache_key] = tuple(Rule.compile(rule) for rule in raw)
        return rules


def _describe_binding(binding: dict, ref: dict, subject: dict, namespace: str) -> str:
    name = binding["metadata"]["name"]
    kind = f"RoleBinding {json.dumps(name + '/' + namespace)}" if namespace else \
        f"ClusterRoleBinding {json.dumps(name)}"
    return f"{kind} of {ref.get('kind')} {json.dumps(ref.get('name', ''))} to {_describe_subject(subject, namespace)}"
