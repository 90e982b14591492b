"""The resourcequota controller: each ResourceQuota's ``status.hard`` and ``status.used``.

As kube-controller-manager's controller does, a quota is recounted when
its spec changes, when an object it counts appears or goes away (or a pod
finishes, a Service changes type, a claim grows), and every five minutes
in any case; ``status.hard`` mirrors ``spec.hard`` and ``status.used``
holds the namespace's usage of each limited resource (``quota_usage``).
The ResourceQuota admission plugin charges new objects to ``status.used``
as it admits them; this controller's recount gives back what objects that
went away held.
"""

from __future__ import annotations

from typing import Hashable, Iterable

from ..apiserver import quota_usage as qu
from ..store import Change, clone
from .manager import Controller

RESYNC_PERIOD = 300.0
# Kinds whose objects quotas commonly count; quotas on others are recounted on the periodic resync.
COUNTED_BUCKETS = ("pods", "services", "persistentvolumeclaims", "configmaps", "secrets", "replicationcontrollers",
                   "deployments.apps", "replicasets.apps", "statefulsets.apps", "daemonsets.apps", "jobs.batch",
                   "cronjobs.batch", "ingresses.networking.k8s.io")

Key = tuple[str, str]


class ResourceQuotaController(Controller):
    name = "resourcequota"
    watches = ("resourcequotas",) + COUNTED_BUCKETS

    def __init__(self, manager):
        super().__init__(manager)
        self.quotas = self.resource("", "v1", "resourcequotas")

    def keys_for(self, change: Change) -> Iterable[Hashable]:
        meta = change.obj["metadata"]
        namespace = meta.get("namespace", "")
        if change.bucket == self.quotas.bucket:
            if change.type == "MODIFIED" and (change.old or {}).get("spec") == change.obj.get("spec"):
                return ()  # a status write: ours, or the admission plugin's charge
            return [(namespace, meta["name"])] if change.type != "DELETED" else ()
        if not self._usage_may_change(change):
            return ()
        return [(namespace, q["metadata"]["name"]) for q in self.store.list(self.quotas.bucket, namespace)[0]
                if qu.tracked(change.bucket, (q.get("spec") or {}).get("hard") or {})]

    def _usage_may_change(self, change: Change) -> bool:
        if change.type != "MODIFIED":
            return True
        if change.bucket == "pods":
            now = self.clock.now()
            return qu.counts_compute(change.old, now) != qu.counts_compute(change.obj, now)
        old = change.old or {}
        if change.bucket == "services":
            return old.get("spec") != change.obj.get("spec")
        if change.bucket == "persistentvolumeclaims":  # a claim resized: spec, then allocatedResources
            return old.get("spec") != change.obj.get("spec") or old.get("status") != change.obj.get("status")
        return False

    def reconcile(self, key: Key, now: float) -> float | None:
        quota = self.store.get(self.quotas.bucket, *key)
        if quota is None:
            return None
        status = qu.recount(self.store, quota, now)
        current = quota.get("status") or {}
        if not (qu.same(qu.parse_list(status["hard"]), qu.parse_list(current.get("hard")))
                and qu.same(qu.parse_list(status["used"]), qu.parse_list(current.get("used")))
                and current.get("hard") is not None and current.get("used") is not None):
            updated = clone(quota)
            updated["status"] = status
            self.update_status(self.quotas, updated)
        return RESYNC_PERIOD
