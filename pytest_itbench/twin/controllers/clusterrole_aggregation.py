"""The ClusterRole aggregation controller: rules of labelled ClusterRoles gathered into aggregating ones.

A ClusterRole with ``aggregationRule.clusterRoleSelectors`` holds the rules of
every other ClusterRole its selectors match, each rule once, taken role by
role in name order and selector by selector, as kube-controller-manager's
controller builds them. It is rewritten whenever it or a role it selects
(before or after the change) is written, with the controller's field
manager, as its service account: RBAC must let that account ``escalate``
clusterroles, as the bootstrap policy does. (Upstream writes by server-side
apply of the rules alone; an update of that one field has the same effect
without a YAML round trip on every ClusterRole change.)
"""

from __future__ import annotations

from ..apiserver.access.authn import user_for
from ..apiserver.access.rbac_policy import AGGREGATION_CONTROLLER
from ..apiserver.access.rbac_rules import normalized
from ..apiserver.registry import Ctx, ResourceAPI
from ..apiserver.resources import Resource
from ..selectors import LabelSelector, SelectorError
from ..store import clone
from .reactor import Reactor

FIELD_MANAGER = "clusterrole-aggregation-controller"


class ClusterRoleAggregation:
    def __init__(self, api: ResourceAPI, reactor: Reactor, ctx: Ctx):
        self.api = api
        self.clusterroles = api.catalog.lookup("rbac.authorization.k8s.io", "v1", "clusterroles")
        # kube-controller-manager runs each controller with its own service account's rights.
        self.ctx = Ctx(user=user_for(f"system:serviceaccount:kube-system:{AGGREGATION_CONTROLLER}"),
                       field_manager=FIELD_MANAGER, user_agent=ctx.user_agent, trusted=True)
        reactor.register("clusterrole-aggregation", self.react)

    def react(self, op: str, res: Resource, obj: dict, old: dict | None) -> None:
        if res.bucket != self.clusterroles.bucket:
            return
        changed_labels = [o["metadata"].get("labels") or {} for o in (obj, old) if o is not None]
        name = obj["metadata"]["name"]
        to_sync = {name} if op != "delete" and _selectors(obj) else set()
        for role in self.api.store.list(self.clusterroles.bucket)[0]:
            selectors = _selectors(role)
            if role["metadata"]["name"] != name and any(s.matches(labels) for s in selectors
                                                        for labels in changed_labels):
                to_sync.add(role["metadata"]["name"])
        for target in sorted(to_sync):
            self.sync(target)

    def sync(self, name: str) -> None:
        role = self.api.store.get(self.clusterroles.bucket, "", name)
        if role is None:
            return
        selectors = _selectors(role)
        if not selectors:
            return
        roles = self.api.store.list(self.clusterroles.bucket)[0]  # in name order
        rules: list[dict] = []
        for selector in selectors:
            for other in roles:
                if other["metadata"]["name"] == name or not selector.matches(other["metadata"].get("labels")):
                    continue
                for rule in other.get("rules") or ():
                    rule = normalized(rule)
                    if rule not in rules:
                        rules.append(rule)
        if rules == [normalized(r) for r in role.get("rules") or ()]:
            return
        updated = clone(role)
        updated.pop("rules", None)
        if rules:
            updated["rules"] = rules
        self.api.update(self.clusterroles, None, name, updated, self.ctx, decoded=True)


def _selectors(role: dict) -> list[LabelSelector]:
    """The role's aggregation selectors; none if one is malformed, as the controller then gives up on the role."""
    out = []
    for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ():
        try:
            parsed = LabelSelector.from_object(selector)
        except SelectorError:
            return []
        if parsed is not None:
            out.append(parsed)
    return out
