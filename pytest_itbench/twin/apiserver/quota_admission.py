"""The ResourceQuota admission plugin of kube-apiserver (plugin/pkg/admission/resourcequota).

On a create (and on an update of a Service or a claim, for what it adds),
every quota of the namespace that tracks one of the object's resources and
whose scopes select it must have room for the object's cost, else the
request is forbidden with upstream's message::

    pods "web-5d8f7c6b9-x2x7q" is forbidden: exceeded quota: compute-quota,
    requested: requests.cpu=500m, used: requests.cpu=1800m, limited: requests.cpu=2

A quota that limits cpu or memory requests or limits also requires every
container to state them (``failed quota: compute-quota: must specify
limits.cpu for: app; ...``).

What is admitted is charged to the quotas' ``status.used`` at once, as the
real plugin does, so a burst of creates cannot overrun a quota before the
resourcequota controller recounts. The charge is made once the object is
stored, so a request that fails validation costs nothing. A quota whose
status does not yet reflect its spec (just created or changed) is counted
first, as the resourcequota controller does within milliseconds of such a
change on a real cluster.
"""

from __future__ import annotations

from ..errors import Forbidden
from ..store import clone
from . import quota_usage as qu
from .access.authn import user_for
from .registry import Ctx, ResourceAPI
from .resources import Resource

_IGNORED = {"events", "events.events.k8s.io"}
_UPDATES_CHARGED = {"services", "persistentvolumeclaims"}
# Resources every container must state when a quota limits them (a backward-compatibility rule upstream keeps).
_MUST_SPECIFY = {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}


class ResourceQuotaAdmission:
    def __init__(self, api: ResourceAPI):
        self.api = api
        self.quotas = api.catalog.lookup("", "v1", "resourcequotas")
        self.ctx = Ctx(user=user_for("system:apiserver", ("system:masters",)), field_manager="kube-apiserver",
                       trusted=True)

    # ---- admission ------------------------------------------------------------------------------------
    def admit(self, op: str, res: Resource, obj: dict, old: dict | None, ctx: Ctx) -> None:
        if not self._handles(op, res):
            return
        quotas = self._quotas(obj["metadata"].get("namespace", ""))
        if not quotas:
            return
        interesting = []
        for quota in quotas:
            if not qu.matches(quota, res.bucket, obj):
                continue
            if res.bucket == "pods":
                missing = missing_resources(qu.tracked("pods", quota["status"]["hard"]), obj)
                if missing:
                    raise _forbidden(res, obj, f"failed quota: {quota['metadata']['name']}: {missing}")
            interesting.append(quota)
        if not interesting:
            return
        delta = self._delta(op, res, obj, old)
        for quota in interesting:
            hard = qu.parse_list(quota["status"]["hard"])
            used = qu.parse_list(quota["status"].get("used"))
            requested = qu.mask(delta, hard)
            over = qu.exceeded(qu.mask(qu.add(used, requested), requested), hard)
            if over:
                raise _forbidden(res, obj, f"exceeded quota: {quota['metadata']['name']}, "
                                           f"requested: {qu.pretty(qu.mask(requested, over))}, "
                                           f"used: {qu.pretty(qu.mask(used, over))}, "
                                           f"limited: {qu.pretty(qu.mask(hard, over))}")

    # ---- charging -------------------------------------------------------------------------------------------
    def charge(self, op: str, res: Resource, obj: dict, old: dict | None) -> None:
        """After a write was stored: add what it costs to the quotas that count it."""
        if not self._handles(op, res):
            return
        namespace = obj["metadata"].get("namespace", "")
        quotas = self.api.store.list(self.quotas.bucket, namespace)[0]
        if not quotas:
            return
        delta = self._delta(op, res, obj, old)
        if not delta:
            return
        for quota in quotas:
            if not qu.matches(quota, res.bucket, obj):
                continue
            hard = qu.parse_list(quota["status"]["hard"])
            requested = qu.mask(delta, hard)
            if not requested:
                continue
            updated = clone(quota)
            updated["status"]["used"] = qu.to_json(qu.add(qu.parse_list(quota["status"].get("used")), requested))
            self.api.update(self.quotas, namespace, quota["metadata"]["name"], updated, self.ctx,
                            subresource="status")

    # ---- helpers -----------------------------------------------------------------------------------------------
    def _handles(self, op: str, res: Resource) -> bool:
        if not res.namespaced or res.bucket in _IGNORED:
            return False
        return op == "create" or (op == "update" and res.bucket in _UPDATES_CHARGED)

    def _delta(self, op: str, res: Resource, obj: dict, old: dict | None) -> qu.ResourceList:
        now = self.api.clock.now()
        delta = qu.usage(res.bucket, obj, now)
        if op == "update" and old is not None:
            delta = qu.subtract_non_negative(delta, qu.usage(res.bucket, old, now))
        return qu.remove_zeros(delta)

    def _quotas(self, namespace: str) -> list[dict]:
        """The namespace's quotas by name, each counted first if its status does not yet reflect its spec."""
        out = []
        for quota in self.api.store.list(self.quotas.bucket, namespace)[0]:
            out.append(quota if qu.in_sync(quota) else self._recount(quota))
        return out

    def _recount(self, quota: dict) -> dict:
        updated = clone(quota)
        updated["status"] = qu.recount(self.api.store, quota, self.api.clock.now())
        meta = quota["metadata"]
        self.api.update(self.quotas, meta["namespace"], meta["name"], updated, self.ctx, subresource="status")
        return self.api.store.get(self.quotas.bucket, meta["namespace"], meta["name"]) or quota


def missing_resources(tracked: list[str], pod: dict) -> str:
    """``must specify ...`` for the tracked cpu/memory resources some container does not state, or ""."""
    required = set(tracked) & _MUST_SPECIFY
    if not required:
        return ""
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for container in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        stated = set(qu.compute_usage(qu.container_list(container, "requests"), qu.container_list(container, "limits")))
        for name in required - stated:
            missing.setdefault(name, set()).add(container.get("name", ""))
    if not missing:
        return ""
    return "must specify " + "; ".join(f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing))


def _forbidden(res: Resource, obj: dict, reason: str) -> Forbidden:
    # A validating plugin: a generated name has been generated by now, and the message shows it.
    name = obj["metadata"].get("name", "")
    return Forbidden(f'{res.group_resource} "{name}" is forbidden: {reason}', resource=res.group_resource, name=name)


def register(api: ResourceAPI) -> ResourceQuotaAdmission:
    """Install the plugin: admission checks, and the charge after each stored write."""
    plugin = ResourceQuotaAdmission(api)
    api.admission.append(plugin.admit)
    api.after_write.append(plugin.charge)
    return plugin

