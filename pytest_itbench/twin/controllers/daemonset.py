"""The DaemonSet controller, as kube-controller-manager's daemonset controller (v1.31).

Each sync:

* records the template as a ControllerRevision ``<ds>-<hash>`` (an older one
  with the same template gets a new number: a rollback);
* decides per node whether a daemon pod should run there: the pod's
  ``nodeSelector`` and required node affinity must match the node, and every
  NoSchedule/NoExecute taint must be tolerated (daemon pods tolerate the
  node-condition and unschedulable taints, so a cordon does not evict them); a
  pod already running stays while it tolerates the NoExecute taints;
* creates the missing pods, one per node, pinned to it by node affinity on
  ``metadata.name``, and deletes the pods of nodes that should not run one,
  failed pods (after a per-node back-off) and duplicates;
* rolls out a new template with ``maxUnavailable`` (delete old pods, the
  next sync creates new ones) or ``maxSurge`` (create the new pod beside the
  old one, delete the old one when the new one is available); ``OnDelete``
  waits for users to delete pods;
* writes the status counts and keeps ``revisionHistoryLimit`` old revisions.
"""

from __future__ import annotations

import logging
import math
from typing import Hashable, Iterable

from ..apiserver.strategies import DAEMON_SET_TEMPLATE_GENERATION
from ..errors import AlreadyExists, Conflict, StatusError
from ..selectors import LabelSelector, SelectorError
from ..store import Change, clone
from . import history
from .controller_ref import controller_of, controller_ref
from .events import EventSource
from .item_backoff import ItemBackoff
from .manager import Controller
from .owner_index import OwnerIndex
from .pod_readiness import is_available, is_ready, ready_since
from .pod_template import template_hash
from .scheduler.node_selector import RequiredNodeAffinity, first_untolerated_taint
from .workload_pods import PodControl, claim_indexed, is_terminating, phase, pod_from_template

log = logging.getLogger(__name__)

SOURCE = EventSource("daemonset-controller")
HASH_LABEL = "controller-revision-hash"  # apps/v1 DefaultDaemonSetUniqueLabelKey
GENERATION_LABEL = "pod-template-generation"
BURST_REPLICAS = 250  # creates or deletes in one sync
FAILED_POD_BACKOFF = 1.0  # doubles per failed pod on a node, up to the cap
FAILED_POD_BACKOFF_CAP = 900.0
# Tolerations every daemon pod gets (util.AddOrUpdateDaemonPodTolerations), in upstream's order.
DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
HOST_NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")


class SyncFailed(Exception):
    """A create or delete the API refused; the sync is retried with back-off."""


class DaemonSetController(Controller):
    name = "daemonset"
    watches = ("daemonsets.apps", "pods", "nodes", "controllerrevisions.apps")

    def __init__(self, manager):
        super().__init__(manager)
        self.daemonsets = self.resource("apps", "v1", "daemonsets")
        self.pods = self.resource("", "v1", "pods")
        self.revisions = self.resource("apps", "v1", "controllerrevisions")
        self.pod_index = OwnerIndex("DaemonSet")
        self.revision_index = OwnerIndex("DaemonSet")
        self.pod_control = PodControl(self, SOURCE)
        self.backoff = ItemBackoff()
        self.failed_pods = _FailedPodBackoff()

    # ---- what to look at -------------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[Hashable]:
        if change.bucket == "daemonsets.apps":
            meta = change.obj["metadata"]
            return ((meta["namespace"], meta["name"]),)
        if change.bucket == "controllerrevisions.apps":
            self.revision_index.observe(change)
            return ()
        if change.bucket == "nodes":
            return self._keys_for_node(change)
        self.pod_index.observe(change)
        return self._owners_of_pod(change)

    def _keys_for_node(self, change: Change) -> list[tuple[str, str]]:
        node, old = change.obj, change.old
        if change.type == "MODIFIED" and old is not None and \
                old["metadata"].get("labels") == node["metadata"].get("labels") and \
                (old.get("spec") or {}).get("taints") == (node.get("spec") or {}).get("taints"):
            return []  # heartbeats and status: nothing a daemon pod's placement depends on
        return [(d["metadata"]["namespace"], d["metadata"]["name"]) for d in self.store.list("daemonsets.apps")[0]]

    def _owners_of_pod(self, change: Change) -> list[tuple[str, str]]:
        pod, old = change.obj, change.old
        ns = pod["metadata"]["namespace"]
        refs = [controller_of(pod)] + ([controller_of(old)] if old is not None else [])
        owners = {ref["name"] for ref in refs if ref is not None and ref.get("kind") == "DaemonSet"}
        if refs[0] is None and change.type != "DELETED":
            owners |= {d["metadata"]["name"] for d in self.store.list("daemonsets.apps", ns)[0]
                       if _selects(d, pod)}
        return [(ns, name) for name in sorted(owners)]

    # ---- sync ------------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable, now: float) -> float | None:
        ns, name = key
        ds = self.store.get("daemonsets.apps", ns, name)
        if ds is None:
            self.backoff.forget(key)
            return None
        try:
            selector = LabelSelector.from_object(ds["spec"].get("selector"))
        except SelectorError:
            return None
        if selector is None or selector.empty:
            self.events.record(ds, "Warning", "SelectingAll",
                               "This daemon set is selecting all pods. A non-empty selector is required.", SOURCE)
            return None
        if ds["metadata"].get("deletionTimestamp"):
            return None  # its pods and revisions may be half gone: upstream leaves the status alone
        try:
            after = self._sync(ds, selector, now)
        except Conflict:
            raise
        except (SyncFailed, StatusError) as exc:
            log.debug("daemonset %s/%s: %s", ns, name, exc)
            return self.backoff.failure(key)
        self.backoff.forget(key)
        return after

    def _sync(self, ds: dict, selector: LabelSelector, now: float) -> float | None:
        nodes = self.store.list("nodes")[0]
        revisions = claim_indexed(self, ds, selector, self.revision_index, self.revisions)
        current, old = self._construct_history(ds, revisions)
        hash_ = (current["metadata"].get("labels") or {}).get(HASH_LABEL, "")
        sync = _Sync(self, ds, selector, nodes, hash_, now)
        failure = None
        try:
            sync.manage()
            if (ds["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate":
                sync.rolling_update()
        except SyncFailed as exc:
            failure = exc
        self._cleanup_history(ds, sync.pods_by_node(), old)
        self._write_status(ds, sync)
        if failure is not None:
            raise failure
        return sync.requeue_after()

    # ---- history ---------------------------------------------------------------------------------------
    def _construct_history(self, ds: dict, revisions: list[dict]) -> tuple[dict, list[dict]]:
        """The revision of the current template (created or renumbered as needed) and the older ones."""
        data = history.template_patch(ds["spec"]["template"])
        current = [r for r in revisions if history.same_data(r, {"data": data})]
        old = [r for r in revisions if not history.same_data(r, {"data": data})]
        number = max((r.get("revision", 0) for r in old), default=0) + 1
        if not current:
            return self._snapshot(ds, data, number), old
        keep = max(current, key=lambda r: (r.get("revision", 0), r["metadata"]["name"]))
        for duplicate in current:
            if duplicate is not keep:
                self.delete(self.revisions, ds["metadata"]["namespace"], duplicate["metadata"]["name"])
        if keep.get("revision", 0) < number:
            keep = self.update(self.revisions, dict(keep, revision=number))
        return keep, old

    def _snapshot(self, ds: dict, data: dict, number: int) -> dict:
        collision_count = (ds.get("status") or {}).get("collisionCount")
        hash_ = template_hash(ds["spec"]["template"], collision_count)
        labels = dict((ds["spec"]["template"].get("metadata") or {}).get("labels") or {})
        labels[HASH_LABEL] = hash_
        revision = history.new_revision(ds, controller_ref(ds), history.revision_name(ds["metadata"]["name"], hash_),
                                        labels, data, number)
        try:
            return self.create(self.revisions, revision)
        except AlreadyExists:
            existing = self.store.get(self.revisions.bucket, ds["metadata"]["namespace"],
                                      revision["metadata"]["name"])
            if existing is not None and history.same_data(existing, revision):
                return existing
            # A different template hashed to the same name: count the collision, the next sync tries another.
            status = dict(ds.get("status") or {}, collisionCount=(collision_count or 0) + 1)
            self.update_status(self.daemonsets, {**ds, "status": status})
            raise SyncFailed(f"hash collision on ControllerRevision {revision['metadata']['name']}") from None

    def _cleanup_history(self, ds: dict, pods_by_node: dict[str, list[dict]], old: list[dict]) -> None:
        limit = ds["spec"].get("revisionHistoryLimit")
        excess = len(old) - (10 if limit is None else limit)
        if excess <= 0:
            return
        live = {(p["metadata"].get("labels") or {}).get(HASH_LABEL) for pods in pods_by_node.values() for p in pods}
        for revision in sorted(old, key=lambda r: r.get("revision", 0)):
            if excess <= 0:
                break
            if (revision["metadata"].get("labels") or {}).get(HASH_LABEL) in live:
                continue
            self.delete(self.revisions, ds["metadata"]["namespace"], revision["metadata"]["name"])
            excess -= 1

    # ---- status ------------------------------------------------------------------------------------------
    def _write_status(self, ds: dict, sync: "_Sync") -> None:
        counts = sync.status_counts()
        status = dict(ds.get("status") or {})
        status["observedGeneration"] = ds["metadata"].get("generation", 0)
        for key, value in counts.items():
            if value or key in ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
                                "numberReady"):
                status[key] = value
            else:
                status.pop(key, None)  # omitempty
        if status != ds.get("status"):
            self.update_status(self.daemonsets, {**ds, "status": status})


class _Sync:
    """One sync of one DaemonSet: its nodes, its pods by node, and the creates and deletes they call for."""

    def __init__(self, ctl: DaemonSetController, ds: dict, selector: LabelSelector, nodes: list[dict], hash_: str,
                 now: float):
        self.ctl = ctl
        self.ds = ds
        self.selector = selector
        self.nodes = nodes
        self.hash = hash_
        self.now = now
        self.min_ready = ds["spec"].get("minReadySeconds") or 0
        self.generation = (ds["metadata"].get("annotations") or {}).get(DAEMON_SET_TEMPLATE_GENERATION)
        self.template = daemon_pod_template(ds["spec"]["template"], self.generation, hash_)
        self.placement = _Placement(self.template["spec"])
        self.retry_after: list[float] = []
        self._by_node: dict[str, list[dict]] | None = None  # until this sync creates or deletes pods

    def pods_by_node(self) -> dict[str, list[dict]]:
        """The DaemonSet's pods by the node they run on or are pinned to (finished pods being deleted left out)."""
        if self._by_node is None:
            self._by_node = self._claim_pods()
        return {node: list(pods) for node, pods in self._by_node.items()}

    def _claim_pods(self) -> dict[str, list[dict]]:
        pods = claim_indexed(self.ctl, self.ds, self.selector, self.ctl.pod_index, self.ctl.pods)
        by_node: dict[str, list[dict]] = {}
        for pod in pods:
            if phase(pod) in ("Succeeded", "Failed") and is_terminating(pod):
                continue
            node = target_node(pod)
            if node:
                by_node.setdefault(node, []).append(pod)
        for group in by_node.values():
            group.sort(key=_oldest_first)
        return by_node

    # ---- manage: one pod per node that should run one -------------------------------------------------
    def manage(self) -> None:
        by_node = self.pods_by_node()
        to_create: list[str] = []
        to_delete: list[str] = []
        for node in self.nodes:
            create, delete = self._on_node(node, by_node.get(node["metadata"]["name"], []))
            to_create += create
            to_delete += delete
        names = {n["metadata"]["name"] for n in self.nodes}
        # Pods pinned to a node that no longer exists never get scheduled, so nothing else would remove them.
        to_delete += [p["metadata"]["name"] for node, pods in sorted(by_node.items()) if node not in names
                      for p in pods if not p["spec"].get("nodeName") and not is_terminating(p)]
        self.sync_nodes(to_create, to_delete)

    def _on_node(self, node: dict, pods: list[dict]) -> tuple[list[str], list[str]]:
        name = node["metadata"]["name"]
        should_run, should_continue = self.placement.on(node)
        if should_run and not pods:
            return [name], []
        if not should_continue:
            return [], [p["metadata"]["name"] for p in pods if not is_terminating(p)]
        running, delete = [], []
        for pod in pods:
            if is_terminating(pod):
                continue
            if phase(pod) == "Failed":
                observed = (self.ds.get("status") or {}).get("observedGeneration", 0)
                key = f"{self.ds['metadata']['uid']}/{observed}/{name}"
                wait = self.ctl.failed_pods.remaining(key, self.now)
                if wait > 0:
                    self.retry_after.append(wait)
                    continue
                self.ctl.failed_pods.next(key, self.now)
                self.ctl.events.record(self.ds, "Warning", "FailedDaemonPod",
                                       f"Found failed daemon pod {pod['metadata']['namespace']}/"
                                       f"{pod['metadata']['name']} on node {name}, will try to kill it", SOURCE)
                delete.append(pod["metadata"]["name"])
            elif phase(pod) == "Succeeded":
                self.ctl.events.record(self.ds, "Normal", "SucceededDaemonPod",
                                       f"Found succeeded daemon pod {pod['metadata']['namespace']}/"
                                       f"{pod['metadata']['name']} on node {name}, will try to delete it", SOURCE)
                delete.append(pod["metadata"]["name"])
            else:
                running.append(pod)
        if self.max_surge(1) == 0:
            # Without surge one pod per node: the oldest stays.
            return [], delete + [p["metadata"]["name"] for p in running[1:]]
        if len(running) <= 1:
            return ([name] if not running and should_run else []), delete
        # With surge, two pods may share a node while the new one becomes available.
        newest, oldest = None, None
        for pod in running:
            if _labels(pod).get(HASH_LABEL) == self.hash:
                if newest is None:
                    newest = pod
                    continue
            elif oldest is None:
                oldest = pod
                continue
            delete.append(pod["metadata"]["name"])
        if newest is not None and oldest is not None and (
                not is_ready(oldest) or is_available(newest, self.min_ready, self.now)):
            delete.append(oldest["metadata"]["name"])
        return [], delete

    def sync_nodes(self, to_create: list[str], to_delete: list[str]) -> None:
        """Create pods on ``to_create`` in slow-start batches (1, 2, 4 ...) and delete ``to_delete``."""
        to_create, to_delete = to_create[:BURST_REPLICAS], to_delete[:BURST_REPLICAS]
        if to_create or to_delete:
            self._by_node = None
        failure = None
        batch, position = min(len(to_create), 1), 0
        while batch > 0:
            for node in to_create[position:position + batch]:
                try:
                    self.ctl.pod_control.create(self.ds, self._pod_for(node))
                except StatusError as exc:
                    failure = failure or SyncFailed(exc.message)
            position += batch
            if failure is not None:
                break  # a refused create stops the slow start; the rest wait for the retry
            batch = min(2 * batch, len(to_create) - position)
        for name in to_delete:
            try:
                self.ctl.pod_control.delete(self.ds, name)
            except StatusError as exc:
                failure = failure or SyncFailed(exc.message)
        if failure is not None:
            raise failure

    def _pod_for(self, node: str) -> dict:
        pod = pod_from_template(self.template, self.ds)
        spec = pod["spec"]
        affinity = spec.get("affinity") or {}
        node_affinity = affinity.get("nodeAffinity") or {}
        term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {**(required or {}),
                                                                           "nodeSelectorTerms": [term]}
        spec["affinity"] = {**affinity, "nodeAffinity": node_affinity}
        return pod

    # ---- rolling update -----------------------------------------------------------------------------------
    def max_surge(self, desired: int) -> int:
        rolling = (self.ds["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
        return _scaled(rolling.get("maxSurge"), desired)

    def rolling_update(self) -> None:
        by_node = self.pods_by_node()
        desired = 0
        for node in self.nodes:
            if self.placement.on(node)[0]:
                desired += 1
                by_node.setdefault(node["metadata"]["name"], [])
        rolling = (self.ds["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
        max_surge = _scaled(rolling.get("maxSurge"), desired)
        max_unavailable = _scaled(rolling.get("maxUnavailable"), desired)
        if desired > 0 and max_surge == 0 and max_unavailable == 0:
            max_unavailable = 1  # an impossible configuration: upstream accepts unavailability
        if max_surge == 0:
            self._replace_unavailably(by_node, max_unavailable)
        else:
            self._replace_with_surge(by_node, max_surge, desired)

    def _replace_unavailably(self, by_node: dict[str, list[dict]], max_unavailable: int) -> None:
        """Delete old pods while no more than ``maxUnavailable`` nodes lack an available pod."""
        unavailable = 0
        replacements: list[str] = []
        candidates: list[str] = []
        for node in sorted(by_node):
            found = _new_and_old(by_node[node], self.hash, self.generation)
            if found is None:
                unavailable += 1
                continue
            new, old = found
            if (old is None) == (new is None):
                unavailable += 1  # nothing, or both: the manage loop sorts it out
            elif new is not None:
                if not is_available(new, self.min_ready, self.now):
                    unavailable += 1
            elif not is_available(old, self.min_ready, self.now):
                replacements.append(old["metadata"]["name"])
                unavailable += 1
            elif unavailable < max_unavailable:
                candidates.append(old["metadata"]["name"])
        room = max(0, min(max_unavailable - unavailable, len(candidates)))
        self.sync_nodes([], replacements + candidates[:room])

    def _replace_with_surge(self, by_node: dict[str, list[dict]], max_surge: int, desired: int) -> None:
        """Start new pods beside old ones (at most ``maxSurge`` at once), delete old ones once replaced."""
        nodes = {n["metadata"]["name"]: n for n in self.nodes}
        to_delete: list[str] = []
        not_wanted_here: list[str] = []
        candidates: list[str] = []
        replacements: list[str] = []
        surging = available = 0
        for name in sorted(by_node):
            found = _new_and_old(by_node[name], self.hash, self.generation)
            if found is None:
                surging += 1
                continue
            new, old = found
            shown = old if old is not None else new
            if shown is not None and is_available(shown, self.min_ready, self.now):
                available += 1
            if old is None:
                continue
            node = nodes.get(name)
            wanted = node is not None and self.placement.on(node)[0]
            if new is None:
                if not is_available(old, self.min_ready, self.now):
                    if not wanted:
                        to_delete.append(old["metadata"]["name"])
                    else:
                        replacements.append(name)
                elif not wanted:
                    not_wanted_here.append(old["metadata"]["name"])
                elif surging < max_surge:
                    candidates.append(name)
            elif not is_available(new, self.min_ready, self.now):
                surging += 1
            else:
                to_delete.append(old["metadata"]["name"])
        # With surge the owner expects full availability: a pod on a node it moves away from goes only
        # once another is available.
        deletable = min(max(available - desired, 0), len(not_wanted_here))
        to_delete += not_wanted_here[:deletable]
        room = max(0, min(max_surge - surging, len(candidates)))
        self.sync_nodes(replacements + candidates[:room], to_delete)

    # ---- status -----------------------------------------------------------------------------------------
    def status_counts(self) -> dict[str, int]:
        by_node = self.pods_by_node()
        desired = current = misscheduled = ready = updated = available = 0
        for node in self.nodes:
            pods = by_node.get(node["metadata"]["name"], [])
            if not self.placement.on(node)[0]:
                misscheduled += bool(pods)
                continue
            desired += 1
            if not pods:
                continue
            current += 1
            pod = pods[0]
            if is_ready(pod):
                ready += 1
                if is_available(pod, self.min_ready, self.now):
                    available += 1
                elif (since := ready_since(pod)) is not None:
                    self.retry_after.append(since + self.min_ready + 1 - self.now)
            if _updated(pod, self.hash, self.generation):
                updated += 1
        return {"currentNumberScheduled": current, "numberMisscheduled": misscheduled,
                "desiredNumberScheduled": desired, "numberReady": ready, "updatedNumberScheduled": updated,
                "numberAvailable": available, "numberUnavailable": desired - available}

    def requeue_after(self) -> float | None:
        due = [t for t in self.retry_after if t > 0]
        return min(due) if due else None


class _Placement:
    """NodeShouldRunDaemonPod: (should run, should continue running) for a node."""

    def __init__(self, pod_spec: dict):
        self.node_name = pod_spec.get("nodeName") or ""
        self.affinity = RequiredNodeAffinity(pod_spec)
        self.tolerations = pod_spec.get("tolerations") or []
        self._seen: dict[str, tuple[bool, bool]] = {}  # nodes do not change within a sync

    def on(self, node: dict) -> tuple[bool, bool]:
        name = node["metadata"]["name"]
        if name not in self._seen:
            self._seen[name] = self._decide(node, name)
        return self._seen[name]

    def _decide(self, node: dict, name: str) -> tuple[bool, bool]:
        if self.node_name and self.node_name != name:
            return False, False
        if not self.affinity.matches(node["metadata"].get("labels") or {}, name):
            return False, False
        taints = (node.get("spec") or {}).get("taints") or []
        if first_untolerated_taint(taints, self.tolerations) is None:
            return True, True
        # A running pod stays unless it does not tolerate a NoExecute taint.
        return False, first_untolerated_taint(taints, self.tolerations, ("NoExecute",)) is None


class _FailedPodBackoff:
    """flowcontrol.Backoff for replacing failed daemon pods: 1 s, doubling per failure on a node, up to 15 min."""

    def __init__(self):
        self._entries: dict[str, tuple[float, float]] = {}  # key -> (backoff, last update)

    def remaining(self, key: str, now: float) -> float:
        entry = self._entries.get(key)
        if entry is None or now - entry[1] > 2 * FAILED_POD_BACKOFF_CAP:
            return 0.0
        return max(entry[0] - (now - entry[1]), 0.0)

    def next(self, key: str, now: float) -> None:
        entry = self._entries.get(key)
        if entry is None or now - entry[1] > 2 * FAILED_POD_BACKOFF_CAP:
            backoff = FAILED_POD_BACKOFF
        else:
            backoff = min(entry[0] * 2, FAILED_POD_BACKOFF_CAP)
        self._entries[key] = (backoff, now)


def daemon_pod_template(template: dict, generation: str | None, hash_: str) -> dict:
    """util.CreatePodTemplate: the daemon tolerations, and labels with the template generation and hash."""
    template = clone(template)
    meta = template.setdefault("metadata", {})
    labels = meta.get("labels") or {}
    if generation is not None:
        labels[GENERATION_LABEL] = generation
    if hash_:
        labels[HASH_LABEL] = hash_
    meta["labels"] = labels
    spec = template.setdefault("spec", {})
    wanted = list(DAEMON_TOLERATIONS) + ([HOST_NETWORK_TOLERATION] if spec.get("hostNetwork") else [])
    tolerations = list(spec.get("tolerations") or [])
    for key, effect in wanted:
        toleration = {"key": key, "operator": "Exists", "effect": effect}
        # A toleration for the same key, operator, value and effect is replaced (AddOrUpdateTolerationInPodSpec).
        same = [i for i, t in enumerate(tolerations) if t.get("key") == key and t.get("effect") == effect and
                t.get("operator") == "Exists" and not t.get("value")]
        if same:
            tolerations[same[0]] = toleration
        else:
            tolerations.append(toleration)
    spec["tolerations"] = tolerations
    return template


def target_node(pod: dict) -> str:
    """The node a daemon pod runs on, or is pinned to by its node affinity (util.GetTargetNodeName)."""
    if pod["spec"].get("nodeName"):
        return pod["spec"]["nodeName"]
    required = ((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in required.get("nodeSelectorTerms") or ():
        for field in term.get("matchFields") or ():
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and \
                    len(field.get("values") or ()) == 1:
                return field["values"][0]
    return ""


def _new_and_old(pods: list[dict], hash_: str, generation: str | None) -> tuple[dict | None, dict | None] | None:
    """findUpdatedPodsOnNode: the node's one new and one old pod (not being deleted); None if it has more."""
    new = old = None
    for pod in pods:
        if is_terminating(pod):
            continue
        if _updated(pod, hash_, generation):
            if new is not None:
                return None
            new = pod
        else:
            if old is not None:
                return None
            old = pod
    return new, old


def _updated(pod: dict, hash_: str, generation: str | None) -> bool:
    labels = _labels(pod)
    return (bool(hash_) and labels.get(HASH_LABEL) == hash_) or \
        (generation is not None and labels.get(GENERATION_LABEL) == generation)


def _scaled(value, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent, rounding percentages up."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    text = str(value)
    if text.endswith("%"):
        try:
            return math.ceil(int(text[:-1]) * total / 100)
        except ValueError:
            return 0
    try:
        return int(text)
    except ValueError:
        return 0


def _labels(pod: dict) -> dict:
    return pod["metadata"].get("labels") or {}


def _oldest_first(pod: dict) -> tuple:
    """podByCreationTimestampAndPhase: scheduled pods first, then by creation time and name."""
    return (not pod["spec"].get("nodeName"), pod["metadata"].get("creationTimestamp") or "", pod["metadata"]["name"])


def _selects(ds: dict, pod: dict) -> bool:
    try:
        selector = LabelSelector.from_object(ds["spec"].get("selector"))
    except SelectorError:
        return False
    return selector is not None and not selector.empty and selector.matches(pod["metadata"].get("labels"))
