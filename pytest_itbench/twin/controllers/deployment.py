"""The Deployment controller: ReplicaSets per pod template, rollouts, revisions and status (kube-controller-manager).

A sync claims the namespace's ReplicaSets that the Deployment's selector
matches, then, in upstream's order of precedence: a Deployment being
deleted only has its status synced; a paused one, or one whose
``spec.replicas`` changed (a scaling event, told apart by the ReplicaSets'
``desired-replicas`` annotation), is scaled proportionally across its active
ReplicaSets; otherwise its strategy rolls it out. ``RollingUpdate`` creates
the ReplicaSet of the current template (named ``<deployment>-<pod-template-hash>``)
and scales it up and the old ones down within ``maxSurge`` and
``maxUnavailable``; ``Recreate`` scales the old ones to zero, waits until
their pods are gone, then scales the new one up. Old ReplicaSets beyond
``revisionHistoryLimit`` are deleted once a rollout completes.

The Progressing condition records what happened last (NewReplicaSetCreated,
FoundNewReplicaSet, ReplicaSetUpdated, NewReplicaSetAvailable,
DeploymentPaused/Resumed, ReplicaSetCreateError) and turns to
ProgressDeadlineExceeded when nothing moved for ``progressDeadlineSeconds``;
a stuck Deployment is looked at again when its deadline passes.
``kubectl rollout undo`` and ``restart`` are kubectl's work: they change the
template, and this controller rolls out whatever the template says.
"""

from __future__ import annotations

import logging
from typing import Hashable, Iterable

from ..errors import Conflict, StatusError
from ..store import Change, clone
from .controller_ref import controller_of, selector_of
from .deployment_sync import DeploymentSync
from .item_backoff import ItemBackoff
from .manager import Controller
from .owner_index import OwnerIndex

log = logging.getLogger(__name__)

MAX_RETRIES = 15  # failed syncs in a row before a Deployment waits for its next change


class DeploymentController(Controller):
    name = "deployment"
    watches = ("deployments.apps", "replicasets.apps", "pods")

    def __init__(self, manager):
        super().__init__(manager)
        self.deployments = self.resource("apps", "v1", "deployments")
        self.replicasets = self.resource("apps", "v1", "replicasets")
        self.backoff = ItemBackoff()
        self.pod_index = OwnerIndex("ReplicaSet")  # pods by ReplicaSet, for Recreate; fed by keys_for

    # ---- what to look at -------------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[Hashable]:
        if change.bucket == "deployments.apps":
            meta = change.obj["metadata"]
            return ((meta["namespace"], meta["name"]),)
        if change.bucket == "replicasets.apps":
            return self._keys_for_replica_set(change)
        self.pod_index.observe(change)
        if change.type == "DELETED":
            return self._keys_for_deleted_pod(change.obj)
        return ()

    def _keys_for_replica_set(self, change: Change) -> list[tuple[str, str]]:
        rs, old = change.obj, change.old
        ref = controller_of(rs)
        keys: list[tuple[str, str]] = []
        if change.type == "DELETED" or (old is None and rs["metadata"].get("deletionTimestamp")):
            self._add_owner(keys, rs, ref)
            return keys
        old_ref = controller_of(old) if old is not None else None
        if old is not None and old_ref is not None and old_ref != ref:
            self._add_owner(keys, old, old_ref)
        if ref is not None:
            self._add_owner(keys, rs, ref)
        elif old is None or old_ref != ref or old["metadata"].get("labels") != rs["metadata"].get("labels"):
            keys.extend(self._deployments_selecting(rs))  # an orphan someone may adopt
        return keys

    def _add_owner(self, keys: list, obj: dict, ref: dict | None) -> None:
        d = self._owner(obj, ref)
        if d is not None:
            keys.append((d["metadata"]["namespace"], d["metadata"]["name"]))

    def _owner(self, obj: dict, ref: dict | None) -> dict | None:
        if ref is None or ref.get("kind") != "Deployment":
            return None
        d = self.store.get("deployments.apps", obj["metadata"]["namespace"], ref.get("name", ""))
        return d if d is not None and d["metadata"]["uid"] == ref.get("uid") else None

    def _deployments_selecting(self, rs: dict) -> list[tuple[str, str]]:
        labels = rs["metadata"].get("labels")
        if not labels:
            return []
        ns = rs["metadata"]["namespace"]
        keys = []
        for d in self.store.list("deployments.apps", ns)[0]:
            selector = selector_of(d)
            if selector is not None and not selector.empty and selector.matches(labels):
                keys.append((ns, d["metadata"]["name"]))
        return keys

    def _keys_for_deleted_pod(self, pod: dict) -> list[tuple[str, str]]:
        """A Recreate rollout waits for the old pods to be gone."""
        ref = controller_of(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return []
        rs = self.store.get("replicasets.apps", pod["metadata"]["namespace"], ref.get("name", ""))
        if rs is None or rs["metadata"]["uid"] != ref.get("uid"):
            return []
        d = self._owner(rs, controller_of(rs))
        if d is None or (d["spec"].get("strategy") or {}).get("type") != "Recreate":
            return []
        return [(d["metadata"]["namespace"], d["metadata"]["name"])]

    # ---- sync -----------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable, now: float) -> float | None:
        ns, name = key
        stored = self.store.get("deployments.apps", ns, name)
        if stored is None:
            self.backoff.forget(key)
            return None
        try:
            after = DeploymentSync(self, clone(stored), now).run()
        except Conflict:
            raise  # the manager looks again with fresh state in the next round
        except StatusError as exc:
            if self.backoff.failures(key) >= MAX_RETRIES:
                log.info("dropping deployment %s/%s out of the queue: %s", ns, name, exc.message)
                self.backoff.forget(key)
                return None
            log.debug("error syncing deployment %s/%s: %s", ns, name, exc.message)
            return self.backoff.failure(key)
        self.backoff.forget(key)
        return after
