"""The ReplicaSet controller: keeps ``spec.replicas`` pods, as kube-controller-manager's replicaset controller.

Each sync claims the namespace's active pods (adopting matching orphans,
releasing owned pods that stopped matching), creates missing pods from the
template in slow-start batches (1, 2, 4 ... at most 500 a sync; a refused
create ends the sync after its batch), deletes surplus pods in
``pod_deletion_order``, and writes the status: replicas, fully labeled,
ready and available counts, ``observedGeneration`` and the
``ReplicaFailure`` condition while creates or deletes fail. A failing sync
is retried with the per-key exponential back-off of client-go's rate
limiter; a pod that becomes ready is looked at again once ``minReadySeconds``
have passed, so it turns available on time.

ReplicationControllers are kept by the same code, as kube-controller-manager
runs its replication manager: the ReplicaSet controller over an adapter
(``Workload``) that names the kind, its storage, its event source and reads
the RC's plain label map as a selector.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable

from ..errors import StatusError
from ..selectors import LabelSelector
from ..store import Change
from .controller_ref import claim, controller_of, controller_ref, selector_of, with_owner, without_owner
from .events import EventSource
from .item_backoff import ItemBackoff
from .manager import Controller
from .owner_index import OwnerIndex
from .pod_deletion_order import pods_to_delete
from .pod_readiness import is_active, is_available, is_ready, ready_since

log = logging.getLogger(__name__)

BURST_REPLICAS = 500  # creates or deletes in one sync
SLOW_START_INITIAL_BATCH = 1
SOURCE = EventSource("replicaset-controller")
NAMESPACE_TERMINATING = "NamespaceTerminating"


def _map_selector(obj: dict) -> LabelSelector | None:
    """An RC's ``spec.selector``, a label map; an empty one selects nothing (validation never lets it be)."""
    selector = obj["spec"].get("selector")
    if not isinstance(selector, dict) or not selector:
        return None
    return LabelSelector.from_object({"matchLabels": selector})


@dataclass(frozen=True)
class Workload:
    """What the controller keeps replicas of: the kind, where it is stored, who records its events, and how
    its selector reads (the adapter between ReplicaSets and ReplicationControllers)."""

    group: str
    version: str
    plural: str
    kind: str
    source: EventSource
    selector: Callable[[dict], LabelSelector | None]

    @property
    def bucket(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


REPLICA_SETS = Workload("apps", "v1", "replicasets", "ReplicaSet", SOURCE, selector_of)
REPLICATION_CONTROLLERS = Workload("", "v1", "replicationcontrollers", "ReplicationController",
                                   EventSource("replication-controller"), _map_selector)


class ReplicaSetController(Controller):
    name = "replicaset"
    workload = REPLICA_SETS
    watches = (REPLICA_SETS.bucket, "pods")

    def __init__(self, manager):
        super().__init__(manager)
        kind = self.workload
        self.bucket = kind.bucket
        self.selector_of = kind.selector
        self.source = kind.source
        self.replicasets = self.resource(kind.group, kind.version, kind.plural)
        self.pods = self.resource("", "v1", "pods")
        self.backoff = ItemBackoff()
        self.pod_index = OwnerIndex(kind.kind)  # fed by keys_for, which sees every pod change

    # ---- what to look at -------------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[Hashable]:
        if change.bucket == self.bucket:
            meta = change.obj["metadata"]
            return ((meta["namespace"], meta["name"]),)
        self.pod_index.observe(change)
        return self._keys_for_pod(change)

    def _keys_for_pod(self, change: Change) -> list[tuple[str, str]]:
        pod, old = change.obj, change.old
        keys: list[tuple[str, str]] = []
        ref = controller_of(pod)
        if change.type == "DELETED" or pod["metadata"].get("deletionTimestamp"):
            self._add_owner(keys, pod, ref)
            if old is not None and old["metadata"].get("labels") != pod["metadata"].get("labels"):
                self._add_owner(keys, old, controller_of(old))
            return keys
        old_ref = controller_of(old) if old is not None else None
        if old is not None and old_ref != ref:
            self._add_owner(keys, old, old_ref)
        if ref is not None:
            self._add_owner(keys, pod, ref)
            return keys
        if old is None or old_ref != ref or old["metadata"].get("labels") != pod["metadata"].get("labels"):
            keys.extend(self._replica_sets_selecting(pod))  # an orphan someone may adopt
        return keys

    def _add_owner(self, keys: list, pod: dict, ref: dict | None) -> None:
        if ref is None or ref.get("kind") != self.workload.kind:
            return
        ns = pod["metadata"]["namespace"]
        rs = self.store.get(self.bucket, ns, ref.get("name", ""))
        if rs is not None and rs["metadata"]["uid"] == ref.get("uid"):
            keys.append((ns, ref["name"]))

    def _replica_sets_selecting(self, pod: dict) -> list[tuple[str, str]]:
        ns = pod["metadata"]["namespace"]
        keys = []
        for rs in self.store.list(self.bucket, ns)[0]:
            selector = self.selector_of(rs)
            if selector is not None and not selector.empty and selector.matches(pod["metadata"].get("labels")):
                keys.append((ns, rs["metadata"]["name"]))
        return keys

    # ---- sync ----------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable, now: float) -> float | None:
        ns, name = key
        rs = self.store.get(self.bucket, ns, name)
        if rs is None:
            self.backoff.forget(key)
            return None
        selector = self.selector_of(rs)
        if selector is None:
            return None  # an invalid selector matches nothing; upstream logs it and waits for a change
        # Its own pods and the orphans it may adopt: all that claiming the namespace's pods would look at.
        with self.store.lock:  # the API server's thread feeds the index
            names = {name for _, name in self.pod_index.owned(rs["metadata"]["uid"])} | set(self.pod_index.orphans(ns))
        candidates = self._pods(ns, names)
        active = [p for p in candidates if is_active(p)]
        pods = claim(rs, selector, active, adopt=self._adopt(rs), release=self._release(rs))
        error = None
        if not rs["metadata"].get("deletionTimestamp"):
            error = self._manage_replicas(rs, pods, now)
        self._write_status(rs, pods, error, now)
        if error is not None:
            return self.backoff.failure(key)
        self.backoff.forget(key)
        return _until_next_available(rs, pods, now)

    def _adopt(self, rs: dict):
        ref = controller_ref(rs)

        def adopt(pod: dict) -> None:
            self.update(self.pods, with_owner(pod, ref))
        return adopt

    def _release(self, rs: dict):
        uid = rs["metadata"]["uid"]

        def release(pod: dict) -> None:
            self.update(self.pods, without_owner(pod, uid))
        return release

    # ---- creating and deleting pods ------------------------------------------------------------------
    def _manage_replicas(self, rs: dict, pods: list[dict], now: float) -> StatusError | None:
        diff = len(pods) - _replicas(rs)
        if diff < 0:
            return self._create_pods(rs, min(-diff, BURST_REPLICAS))
        if diff > 0:
            victims = pods_to_delete(pods, self._related_pods(rs), min(diff, BURST_REPLICAS), now)
            return self._delete_pods(rs, victims)
        return None

    def _create_pods(self, rs: dict, count: int) -> StatusError | None:
        """Slow start: batches of 1, 2, 4 ...; a batch with a refused create is the last."""
        batch = min(count, SLOW_START_INITIAL_BATCH)
        remaining = count
        while batch > 0:
            errors = [error for error in (self._create_pod(rs) for _ in range(batch)) if error is not None]
            if errors:
                return errors[0]
            remaining -= batch
            batch = min(2 * batch, remaining)
        return None

    def _create_pod(self, rs: dict) -> StatusError | None:
        try:
            pod = self.create(self.pods, pod_from_template(rs))
        except StatusError as exc:
            if not namespace_terminating(exc):
                self.events.record(rs, "Warning", "FailedCreate", f"Error creating: {exc.message}", self.source)
                return exc
            return None  # every create will fail; upstream does nothing about it
        self.events.record(rs, "Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}", self.source)
        return None

    def _delete_pods(self, rs: dict, pods: list[dict]) -> StatusError | None:
        first_error = None
        for pod in pods:
            name = pod["metadata"]["name"]
            try:
                gone = self.delete(self.pods, rs["metadata"]["namespace"], name)
            except StatusError as exc:
                self.events.record(rs, "Warning", "FailedDelete", f"Error deleting: {exc.message}", self.source)
                first_error = first_error or exc
                continue
            if gone is not None:
                self.events.record(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {name}", self.source)
        return first_error

    def _related_pods(self, rs: dict) -> list[dict]:
        """Pods of every ReplicaSet under the same controller: how crowded each node is."""
        ref = controller_of(rs)
        if ref is None:
            return []
        ns = rs["metadata"]["namespace"]
        siblings = [other for other in self.store.list(self.bucket, ns)[0]
                    if (controller_of(other) or {}).get("uid") == ref.get("uid")]
        selectors = [s for s in map(self.selector_of, siblings) if s is not None]
        with self.store.lock:
            orphan_names = set(self.pod_index.orphans(ns))
            owned = {name for other in siblings for _, name in self.pod_index.owned(other["metadata"]["uid"])}
        orphans = [p for p in self._pods(ns, orphan_names)
                   if any(s.matches(p["metadata"].get("labels")) for s in selectors)]
        return self._pods(ns, owned) + orphans

    def _pods(self, ns: str, names: set[str]) -> list[dict]:
        found = (self.store.get("pods", ns, name) for name in sorted(names))
        return [pod for pod in found if pod is not None]

    # ---- status --------------------------------------------------------------------------------------
    def _write_status(self, rs: dict, pods: list[dict], error: StatusError | None, now: float) -> None:
        status = replica_set_status(rs, pods, error, self.clock.timestamp(now), now)
        current = rs.get("status") or {}
        generation = rs["metadata"].get("generation", 0)
        if _counts(current) == _counts(status) and current.get("observedGeneration", 0) == generation and \
                current.get("conditions") == status.get("conditions"):
            return
        if generation:
            status["observedGeneration"] = generation
        self.update_status(self.replicasets, {**rs, "status": status})


def pod_from_template(rs: dict) -> dict:
    """A pod as the ReplicaSet creates it: the template's labels, annotations, finalizers and spec, owned by it."""
    template = rs["spec"]["template"]
    template_meta = template.get("metadata") or {}
    meta: dict = {"generateName": f"{rs['metadata']['name']}-", "namespace": rs["metadata"]["namespace"],
                  "labels": dict(template_meta.get("labels") or {})}
    for key in ("annotations", "finalizers"):
        if template_meta.get(key):
            meta[key] = template_meta[key]
    meta["ownerReferences"] = [controller_ref(rs)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template.get("spec") or {}}


def replica_set_status(rs: dict, pods: list[dict], error: StatusError | None, stamp: str, now: float) -> dict:
    """The status a sync computes: counts from the claimed pods, the ReplicaFailure condition from the sync's error."""
    template_labels = (rs["spec"]["template"].get("metadata") or {}).get("labels") or {}
    min_ready = rs["spec"].get("minReadySeconds") or 0
    labeled = ready = available = 0
    for pod in pods:
        labels = pod["metadata"].get("labels") or {}
        if all(labels.get(k) == v for k, v in template_labels.items()):
            labeled += 1
        if is_ready(pod):
            ready += 1
            if is_available(pod, min_ready, now):
                available += 1
    current = rs.get("status") or {}
    conditions = list(current.get("conditions") or ())
    failure = next((c for c in conditions if c.get("type") == "ReplicaFailure"), None)
    if error is not None and failure is None:
        diff = len(pods) - _replicas(rs)
        reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
        conditions.append({"type": "ReplicaFailure", "status": "True", "lastTransitionTime": stamp,
                           "reason": reason, "message": error.message})
    elif error is None and failure is not None:
        conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
    # Go leaves zero counters and empty lists out (omitempty); replicas it always writes.
    status: dict = {"replicas": len(pods)}
    for field, value in (("fullyLabeledReplicas", labeled), ("readyReplicas", ready),
                         ("availableReplicas", available)):
        if value:
            status[field] = value
    if current.get("observedGeneration"):
        status["observedGeneration"] = current["observedGeneration"]
    if conditions:
        status["conditions"] = conditions
    return status


def _counts(status: dict) -> tuple[int, int, int, int]:
    return (status.get("replicas", 0), status.get("fullyLabeledReplicas", 0), status.get("readyReplicas", 0),
            status.get("availableReplicas", 0))


def _until_next_available(rs: dict, pods: list[dict], now: float) -> float | None:
    """Seconds until the next ready pod turns available (upstream requeues minReadySeconds plus a second after
    a pod turns ready)."""
    min_ready = rs["spec"].get("minReadySeconds") or 0
    if not min_ready:
        return None
    due = [since + min_ready + 1 for since in (ready_since(p) for p in pods if not is_available(p, min_ready, now))
           if since is not None and since + min_ready + 1 > now]
    return min(due) - now if due else None


def _replicas(rs: dict) -> int:
    replicas = rs["spec"].get("replicas")
    return 1 if replicas is None else replicas


class ReplicationManager(ReplicaSetController):
    """kube-controller-manager's replicationcontroller controller: the ReplicaSet controller over RCs."""

    name = "replicationcontroller"
    workload = REPLICATION_CONTROLLERS
    watches = (REPLICATION_CONTROLLERS.bucket, "pods")


def namespace_terminating(exc: StatusError) -> bool:
    """The create was refused because the namespace is going away (a NamespaceTerminating cause)."""
    causes = (exc.details or {}).get("causes") or ()
    return any(c.get("reason") == NAMESPACE_TERMINATING for c in causes)
