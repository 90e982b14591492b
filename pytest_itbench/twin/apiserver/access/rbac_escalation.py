"""Privilege-escalation prevention on writes of Roles, ClusterRoles and their bindings.

As kube-apiserver's RBAC storage does, a user outside ``system:masters`` may
only write a role whose rules they already hold (or if they may ``escalate``
roles), and only bind a role whose rules they already hold (or if they may
``bind`` it). Setting or changing an ``aggregationRule`` needs every
permission. The check runs as an admission plugin, after namespace lifecycle
and before validation, where the RBAC storage runs it.
"""

from __future__ import annotations

import json

from ...errors import Forbidden, InternalError, NotFound
from .authn import UserInfo
from .authz import Attributes
from .rbac import MASTERS, RBAC_GROUP, RBACAuthorizer
from .rbac_rules import compact, compact_string, uncovered
from ..registry import Ctx, ResourceAPI
from ..resources import Resource

_FULL_AUTHORITY = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                   {"verbs": ["*"], "nonResourceURLs": ["*"]}]
# Fields the garbage collector may change on any object without further rights.
_GC_METADATA = ("ownerReferences", "finalizers", "deletionTimestamp", "deletionGracePeriodSeconds",
                "resourceVersion", "managedFields", "selfLink")


def register(api: ResourceAPI, authorizer: RBACAuthorizer) -> None:
    api.admission.append(EscalationCheck(authorizer))


class EscalationCheck:
    def __init__(self, authorizer: RBACAuthorizer):
        self.authorizer = authorizer
        self._checks = {f"roles.{RBAC_GROUP}": self._role, f"clusterroles.{RBAC_GROUP}": self._cluster_role,
                        f"rolebindings.{RBAC_GROUP}": self._role_binding,
                        f"clusterrolebindings.{RBAC_GROUP}": self._cluster_role_binding}

    def __call__(self, op: str, res: Resource, obj: dict, old: dict | None, ctx: Ctx) -> None:
        check = self._checks.get(res.bucket)
        if check is None or op not in ("create", "update") or MASTERS in ctx.user.groups:
            return
        if op == "update" and _only_gc_fields_change(obj, old):
            return
        check(ctx.user, res, obj, old if op == "update" else None)

    # ---- roles -------------------------------------------------------------------------------------------
    def _role(self, user: UserInfo, res: Resource, obj: dict, old: dict | None) -> None:
        if self._may_escalate(user, res, obj, old):
            return
        namespace = obj["metadata"].get("namespace", "")
        self._confirm_held(user, namespace, list(obj.get("rules") or ()), res, obj)

    def _cluster_role(self, user: UserInfo, res: Resource, obj: dict, old: dict | None) -> None:
        if self._may_escalate(user, res, obj, old):
            return
        self._confirm_held(user, "", list(obj.get("rules") or ()), res, obj)
        if _aggregates(obj) or _aggregates(old):
            if self._missing(user, "", _FULL_AUTHORITY)[0]:
                raise _forbidden(res, obj, "must have cluster-admin privileges to use the aggregationRule")

    def _may_escalate(self, user: UserInfo, res: Resource, obj: dict, old: dict | None) -> bool:
        # A create names no object in its URL; an update does.
        name = obj["metadata"]["name"] if old is not None else ""
        attrs = Attributes(verb="escalate", is_resource=True, api_group=res.group, api_version="*",
                           namespace=obj["metadata"].get("namespace", ""), resource=res.plural, name=name)
        return self.authorizer.authorize(user, attrs)[0]

    # ---- bindings --------------------------------------------------------------------------------------------
    def _role_binding(self, user: UserInfo, res: Resource, obj: dict, old: dict | None) -> None:
        self._check_binding(user, res, obj, obj["metadata"].get("namespace", ""))

    def _cluster_role_binding(self, user: UserInfo, res: Resource, obj: dict, old: dict | None) -> None:
        self._check_binding(user, res, obj, "")

    def _check_binding(self, user: UserInfo, res: Resource, obj: dict, namespace: str) -> None:
        ref = obj.get("roleRef") or {}
        kind, name = ref.get("kind", ""), ref.get("name", "")
        if kind in ("Role", "ClusterRole"):
            bind = Attributes(verb="bind", is_resource=True, api_group=ref.get("apiGroup", ""),
                              namespace=namespace, resource=kind.lower() + "s", name=name)
            if self.authorizer.authorize(user, bind)[0]:
                return
        rules, error = self.authorizer.role_rules(kind, name, namespace)
        if rules is None:
            if kind in ("Role", "ClusterRole"):
                raise NotFound(f"{kind.lower()}s.{RBAC_GROUP}", name)
            raise InternalError(error)
        self._confirm_held(user, namespace, rules, res, obj)

    # ---- the covering check ----------------------------------------------------------------------------------
    def _missing(self, user: UserInfo, namespace: str, rules: list[dict]) -> tuple[list[dict], str]:
        held = self.authorizer.rules_for(user, namespace)
        return uncovered(held.policy_rules(), rules), held.error_text() if held.errors else ""

    def _confirm_held(self, user: UserInfo, namespace: str, rules: list[dict], res: Resource, obj: dict) -> None:
        missing, resolution_errors = self._missing(user, namespace, rules)
        if not missing:
            return
        described = "\n".join(sorted({compact_string(rule) for rule in compact(missing)}))
        groups = " ".join(json.dumps(g) for g in user.groups)
        message = (f"user {json.dumps(user.name)} (groups=[{groups}]) is attempting to grant RBAC permissions "
                   f"not currently held:\n{described}")
        if resolution_errors:
            message += f"; resolution errors: [{resolution_errors}]"
        raise _forbidden(res, obj, message)


def _forbidden(res: Resource, obj: dict, reason: str) -> Forbidden:
    name = obj["metadata"].get("name", "")
    return Forbidden(f"{res.group_resource} {json.dumps(name)} is forbidden: {reason}", resource=res.group_resource,
                     name=name)


def _aggregates(role: dict | None) -> bool:
    return bool(role and ((role.get("aggregationRule") or {}).get("clusterRoleSelectors")))


def _only_gc_fields_change(obj: dict, old: dict | None) -> bool:
    if old is None:
        return False

    def without_gc_fields(o: dict) -> dict:
        meta = {k: v for k, v in o.get("metadata", {}).items() if k not in _GC_METADATA}
        return dict(o, metadata=meta)

    return without_gc_fields(obj) == without_gc_fields(old)
