"""The StatefulSet controller, as kube-controller-manager's statefulset controller (v1.31).

Each sync:

* claims the set's pods (named ``<set>-<ordinal>``) and ControllerRevisions;
* finds the update revision (the current template, stored as a
  ControllerRevision ``<set>-<hash>``; an older revision with the same
  template is reused with a new number, which is what a rollback looks like)
  and the current revision (``status.currentRevision``);
* walks the ordinals ``[start, start+replicas)`` in order: replaces failed or
  succeeded pods, creates missing ones (their PersistentVolumeClaims
  ``<template>-<set>-<ordinal>`` first) at the current revision below the
  partition and at the update revision above it. With ``OrderedReady`` it
  stops at the first pod it creates or that is not yet Running, Ready and
  available; with ``Parallel`` it does every ordinal at once;
* deletes pods above the range, highest ordinal first, one at a time with
  ``OrderedReady``; claims follow ``persistentVolumeClaimRetentionPolicy``
  through their ownerReferences (the garbage collector deletes them);
* with ``RollingUpdate``, deletes the highest-ordinal pod not at the update
  revision (down to the partition) once every pod is healthy; the pod comes
  back at the new revision on a later sync. ``OnDelete`` leaves that to users;
* writes the status counts and revisions, and keeps ``revisionHistoryLimit``
  revisions that no pod uses.

Events are the controller's own: ``SuccessfulCreate`` "create Pod web-0 in
StatefulSet web successful", "create Claim www-web-0 Pod web-0 in
StatefulSet web success", ``SuccessfulDelete`` "delete Pod web-1 in
StatefulSet web successful", and their ``Failed*`` counterparts.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Hashable, Iterable

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
from .workload_pods import claim_indexed, is_terminating, namespace_terminating, phase, pod_from_template

log = logging.getLogger(__name__)

SOURCE = EventSource("statefulset-controller")
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
_ORDINAL = re.compile(r"(.*)-([0-9]+)$")


class SyncFailed(Exception):
    """A create, update or delete the API refused; the sync ends and is retried with back-off."""


@dataclass
class Revisions:
    current: dict
    update: dict
    collision_count: int
    current_template: dict
    update_template: dict


class StatefulSetController(Controller):
    name = "statefulset"
    watches = ("statefulsets.apps", "pods", "controllerrevisions.apps")

    def __init__(self, manager):
        super().__init__(manager)
        self.sets = self.resource("apps", "v1", "statefulsets")
        self.pods = self.resource("", "v1", "pods")
        self.claims = self.resource("", "v1", "persistentvolumeclaims")
        self.revisions = self.resource("apps", "v1", "controllerrevisions")
        self.pod_index = OwnerIndex("StatefulSet")
        self.revision_index = OwnerIndex("StatefulSet")
        self.backoff = ItemBackoff()

    # ---- what to look at -------------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[Hashable]:
        if change.bucket == "statefulsets.apps":
            meta = change.obj["metadata"]
            yield meta["namespace"], meta["name"]
            return
        if change.bucket == "controllerrevisions.apps":
            self.revision_index.observe(change)
            return
        self.pod_index.observe(change)
        yield from self._owners_of_pod(change)

    def _owners_of_pod(self, change: Change) -> Iterable[tuple[str, str]]:
        pod, old = change.obj, change.old
        ns = pod["metadata"]["namespace"]
        refs = [controller_of(pod)] + ([controller_of(old)] if old is not None else [])
        owners = {ref["name"] for ref in refs if ref is not None and ref.get("kind") == "StatefulSet"}
        if refs[0] is None and change.type != "DELETED":
            owners |= {s["metadata"]["name"] for s in self.store.list("statefulsets.apps", ns)[0]
                       if _selects(s, pod)}
        for name in sorted(owners):
            yield ns, name

    # ---- sync ------------------------------------------------------------------------------------------
    def reconcile(self, key: Hashable, now: float) -> float | None:
        ns, name = key
        sts = self.store.get("statefulsets.apps", ns, name)
        if sts is None:
            self.backoff.forget(key)
            return None
        try:
            selector = LabelSelector.from_object(sts["spec"].get("selector"))
        except SelectorError:
            return None  # an invalid selector selects nothing; upstream logs it and waits for a change
        if selector is None or selector.empty:
            return None
        try:
            after = self._sync(sts, selector, now)
        except Conflict:
            raise
        except (SyncFailed, StatusError) as exc:
            log.debug("statefulset %s/%s: %s", ns, name, exc)
            return self.backoff.failure(key)
        self.backoff.forget(key)
        return after

    def _sync(self, sts: dict, selector: LabelSelector, now: float) -> float | None:
        set_name = sts["metadata"]["name"]
        pods = claim_indexed(self, sts, selector, self.pod_index, self.pods,
                             member=lambda pod: _ordinal(pod, set_name) >= 0)
        revisions = history.sort_revisions(claim_indexed(self, sts, selector, self.revision_index, self.revisions))
        revs = self._revisions(sts, revisions)
        status, failure = self._update_pods(sts, pods, revs, now)
        self._write_status(sts, status)
        self._truncate_history(sts, pods, revisions, revs)
        if failure is not None:
            raise failure
        return _until_available(sts, pods, now)

    # ---- revisions -----------------------------------------------------------------------------------
    def _revisions(self, sts: dict, revisions: list[dict]) -> Revisions:
        status = sts.get("status") or {}
        collision_count = status.get("collisionCount") or 0
        data = history.template_patch(sts["spec"]["template"])
        number = history.next_number(revisions)
        equal = [r for r in revisions if history.same_data(r, {"data": data})]
        if equal and history.same_data(revisions[-1], equal[-1]):
            update = revisions[-1]  # the template has not changed
        elif equal:
            update = self._renumber(equal[-1], number)  # back to an earlier template: a rollback
        else:
            update, collision_count = self._create_revision(sts, data, number, collision_count)
        current = next((r for r in revisions if r["metadata"]["name"] == status.get("currentRevision")), update)
        return Revisions(current, update, collision_count, history.template_of(current), history.template_of(update))

    def _renumber(self, revision: dict, number: int) -> dict:
        if revision.get("revision") == number:
            return revision
        return self.update(self.revisions, dict(revision, revision=number))

    def _create_revision(self, sts: dict, data: dict, number: int, collision_count: int) -> tuple[dict, int]:
        labels = dict((sts["spec"]["template"].get("metadata") or {}).get("labels") or {})
        labels[history.HASH_LABEL] = history.revision_hash(data, collision_count)
        while True:
            name = history.revision_name(sts["metadata"]["name"], history.revision_hash(data, collision_count))
            revision = history.new_revision(sts, controller_ref(sts), name, labels, data, number)
            try:
                return self.create(self.revisions, revision), collision_count
            except AlreadyExists:
                existing = self.store.get(self.revisions.bucket, sts["metadata"]["namespace"], name)
                if existing is not None and history.same_data(existing, revision):
                    return existing, collision_count
                collision_count += 1

    def _truncate_history(self, sts: dict, pods: list[dict], revisions: list[dict], revs: Revisions) -> None:
        live = {revs.current["metadata"]["name"], revs.update["metadata"]["name"]}
        live |= {(pod["metadata"].get("labels") or {}).get(REVISION_LABEL) for pod in pods}
        old = [r for r in revisions if r["metadata"]["name"] not in live]
        limit = sts["spec"].get("revisionHistoryLimit")
        limit = 10 if limit is None else limit
        for revision in old[:max(len(old) - limit, 0)]:
            self.delete(self.revisions, sts["metadata"]["namespace"], revision["metadata"]["name"])

    # ---- pods ----------------------------------------------------------------------------------------
    def _update_pods(self, sts: dict, pods: list[dict], revs: Revisions,
                     now: float) -> tuple[dict, SyncFailed | None]:
        """Create, replace and delete pods as the strategy allows; the status to write, and the failure
        that ended the pass early, if any."""
        spec = sts["spec"]
        name = sts["metadata"]["name"]
        start = (spec.get("ordinals") or {}).get("start", 0)
        count = spec.get("replicas", 1)
        min_ready = spec.get("minReadySeconds") or 0
        monotonic = spec.get("podManagementPolicy") != "Parallel"
        replicas: list[dict | None] = [None] * count
        condemned: list[dict] = []
        for pod in pods:
            ordinal = _ordinal(pod, name)
            if start <= ordinal < start + count:
                replicas[ordinal - start] = pod
            else:
                condemned.append(pod)
        condemned.sort(key=lambda p: _ordinal(p, name), reverse=True)
        pass_ = _Pass(self, sts, revs, monotonic, min_ready, now)
        try:
            if not sts["metadata"].get("deletionTimestamp"):
                pass_.run(replicas, condemned, start)
        except SyncFailed as exc:
            return pass_.status(replicas, condemned), exc
        return pass_.status(replicas, condemned), None

    # ---- status ---------------------------------------------------------------------------------------
    def _write_status(self, sts: dict, status: dict) -> None:
        spec = sts["spec"]
        replicas = spec.get("replicas", 1)
        rolling = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
        if rolling and status["updatedReplicas"] == replicas and status["readyReplicas"] == replicas and \
                status["replicas"] == replicas:
            # The rolling update is complete: the update revision becomes the current one.
            status["currentReplicas"] = status["updatedReplicas"]
            status["currentRevision"] = status["updateRevision"]
        written = _as_written(status)
        if written != sts.get("status"):
            self.update_status(self.sets, {**sts, "status": written})


class _Pass:
    """One sync's walk over the replicas and the condemned pods."""

    def __init__(self, ctl: StatefulSetController, sts: dict, revs: Revisions, monotonic: bool, min_ready: int,
                 now: float):
        self.ctl = ctl
        self.sts = sts
        self.revs = revs
        self.monotonic = monotonic
        self.min_ready = min_ready
        self.now = now
        self.deleted_current = 0  # pods the rolling update deleted this pass, no longer current

    def run(self, replicas: list[dict | None], condemned: list[dict], start: int) -> None:
        for i in range(len(replicas)):
            if self._replica(replicas, i, start + i) and self.monotonic:
                return
        for pod in condemned:
            self._fix_claims(pod, scaled_down=True)
        # Every replica exists by now (an ordered pass stops at each it creates).
        present = [p for p in replicas if p is not None]
        first_unhealthy = next((p for p in present + list(reversed(condemned)) if not _healthy(p)), None)
        for pod in condemned:
            if self._condemned(pod, first_unhealthy) and self.monotonic:
                return
        strategy = self.sts["spec"].get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        partition = (strategy.get("rollingUpdate") or {}).get("partition") or 0
        update_name = self.revs.update["metadata"]["name"]
        for target in range(len(replicas) - 1, partition - 1, -1):
            pod = replicas[target]
            if pod is None:
                return
            if _revision(pod) != update_name and not is_terminating(pod):
                self._delete(pod, "terminating for update")
                self.deleted_current += 1
                return
            if not _healthy(pod) or not is_available(pod, self.min_ready, self.now):
                return  # wait for the updated pod before touching the next one

    def _replica(self, replicas: list[dict | None], i: int, ordinal: int) -> bool:
        """Process one ordinal; True when an ordered sync must stop here."""
        pod = replicas[i]
        if pod is not None and phase(pod) in ("Failed", "Succeeded"):
            if not is_terminating(pod):
                self._delete(pod, "replacing a finished pod")
            return True
        if pod is None:
            planned = self._new_pod(ordinal)
            if self._claim_is_stale(planned):
                return True
            replicas[i] = self._create(planned)
            return self.monotonic
        if phase(pod) == "Pending":
            self._create_claims(pod, "create")
        if self.monotonic and (is_terminating(pod) or not _running_and_ready(pod) or
                               not is_available(pod, self.min_ready, self.now)):
            return True  # every pod before the next must be Running, Ready and available
        if (pod["metadata"].get("labels") or {}).get(POD_NAME_LABEL) != pod["metadata"]["name"]:
            replicas[i] = self._restore_identity(pod, ordinal)
        self._fix_claims(pod, scaled_down=False)
        return False

    def _condemned(self, pod: dict, first_unhealthy: dict | None) -> bool:
        """Delete one pod above the range; True when an ordered sync must stop here."""
        if is_terminating(pod):
            return True
        if pod is not first_unhealthy and (not _healthy(pod) or not is_available(pod, self.min_ready, self.now)):
            return True
        self._delete(pod, "scale down")
        return True

    # ---- writes ----------------------------------------------------------------------------------------
    def _new_pod(self, ordinal: int) -> dict:
        """newVersionedStatefulSetPod: at the current revision below the partition, else at the update one."""
        strategy = self.sts["spec"].get("updateStrategy") or {}
        rolling = strategy.get("rollingUpdate")
        start = (self.sts["spec"].get("ordinals") or {}).get("start", 0)
        at_current = (strategy.get("type", "RollingUpdate") == "RollingUpdate" and rolling is None and
                      ordinal < start + (self.sts.get("status") or {}).get("currentReplicas", 0)) or \
                     (rolling is not None and ordinal < start + (rolling.get("partition") or 0))
        revision = self.revs.current if at_current else self.revs.update
        template = self.revs.current_template if at_current else self.revs.update_template
        return _stateful_pod(self.sts, template, ordinal, revision["metadata"]["name"])

    def _create(self, pod: dict) -> dict:
        self._create_claims(pod, "create")
        try:
            created = self.ctl.create(self.ctl.pods, pod)
        except AlreadyExists as exc:
            raise SyncFailed(exc.message) from None  # a pod of that name that is not ours: upstream waits
        except StatusError as exc:
            if namespace_terminating(exc):
                raise SyncFailed(exc.message) from None
            self._pod_event("create", pod, exc.message)
            raise SyncFailed(exc.message) from None
        self._fix_claims(created, scaled_down=False)
        self._pod_event("create", created)
        return created

    def _delete(self, pod: dict, why: str) -> None:
        log.debug("statefulset %s: pod %s %s", self.sts["metadata"]["name"], pod["metadata"]["name"], why)
        try:
            self.ctl.delete(self.ctl.pods, pod["metadata"]["namespace"], pod["metadata"]["name"])
        except StatusError as exc:
            self._pod_event("delete", pod, exc.message)
            raise SyncFailed(exc.message) from None
        self._pod_event("delete", pod)

    def _restore_identity(self, pod: dict, ordinal: int) -> dict:
        updated = clone(pod)
        labels = updated["metadata"].setdefault("labels", {})
        labels[POD_NAME_LABEL] = pod["metadata"]["name"]
        labels[POD_INDEX_LABEL] = str(ordinal)
        try:
            result = self.ctl.update(self.ctl.pods, updated)
        except Conflict:
            raise
        except StatusError as exc:
            self._pod_event("update", pod, exc.message)
            raise SyncFailed(exc.message) from None
        self._pod_event("update", pod)
        return result

    def _create_claims(self, pod: dict, verb: str) -> None:
        """Create the pod's missing PersistentVolumeClaims (before the pod: it mounts them)."""
        problems = []
        for claim in _claims_for(self.sts, pod):
            claim_name = claim["metadata"]["name"]
            existing = self.ctl.store.get(self.ctl.claims.bucket, claim["metadata"]["namespace"], claim_name)
            if existing is not None:
                if existing["metadata"].get("deletionTimestamp"):
                    problems.append(f"pvc {claim_name} is being deleted")
                continue
            try:
                self.ctl.create(self.ctl.claims, claim)
            except AlreadyExists:
                continue
            except StatusError as exc:
                problems.append(f"failed to create PVC {claim_name}: {exc.message}")
                self._claim_event(claim_name, pod, exc.message)
                continue
            self._claim_event(claim_name, pod)
        if problems:
            message = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
            self._pod_event(verb, pod, message)
            raise SyncFailed(message)

    def _claim_is_stale(self, planned: dict) -> bool:
        """A claim still owned by a deleted pod of this name: wait for the garbage collector."""
        if _retention(self.sts)["whenScaled"] != "Delete":
            return False
        for claim in _claims_for(self.sts, planned):
            existing = self.ctl.store.get(self.ctl.claims.bucket, claim["metadata"]["namespace"],
                                          claim["metadata"]["name"])
            if existing is not None and any(
                    r.get("kind") == "Pod" and r.get("name") == planned["metadata"]["name"]
                    for r in existing["metadata"].get("ownerReferences") or ()):
                return True
        return False

    def _fix_claims(self, pod: dict, scaled_down: bool) -> None:
        """Point the pod's claims' ownerReferences where the retention policy wants them."""
        policy = _retention(self.sts)
        want_set = policy["whenDeleted"] == "Delete" and not (scaled_down and policy["whenScaled"] == "Delete")
        want_pod = policy["whenScaled"] == "Delete" and scaled_down
        owners = (("StatefulSet", self.sts, want_set, "apps/v1"), ("Pod", pod, want_pod, "v1"))
        for claim in _claims_for(self.sts, pod):
            existing = self.ctl.store.get(self.ctl.claims.bucket, claim["metadata"]["namespace"],
                                          claim["metadata"]["name"])
            if existing is None:
                continue
            refs = list(existing["metadata"].get("ownerReferences") or ())
            changed = False
            for kind, owner, wanted, api_version in owners:
                has = any(r.get("uid") == owner["metadata"]["uid"] for r in refs)
                if wanted and not has:
                    refs.append({"apiVersion": api_version, "kind": kind, "name": owner["metadata"]["name"],
                                 "uid": owner["metadata"]["uid"]})
                    changed = True
                elif not wanted and has:
                    refs = [r for r in refs if r.get("uid") != owner["metadata"]["uid"]]
                    changed = True
            if changed:
                updated = clone(existing)
                if refs:
                    updated["metadata"]["ownerReferences"] = refs
                else:
                    updated["metadata"].pop("ownerReferences", None)
                self.ctl.update(self.ctl.claims, updated)

    # ---- events and status ------------------------------------------------------------------------------
    def _pod_event(self, verb: str, pod: dict, error: str | None = None) -> None:
        set_name, pod_name = self.sts["metadata"]["name"], pod["metadata"]["name"]
        if error is None:
            self.ctl.events.record(self.sts, "Normal", f"Successful{verb.title()}",
                                   f"{verb} Pod {pod_name} in StatefulSet {set_name} successful", SOURCE)
        else:
            self.ctl.events.record(self.sts, "Warning", f"Failed{verb.title()}",
                                   f"{verb} Pod {pod_name} in StatefulSet {set_name} failed error: {error}", SOURCE)

    def _claim_event(self, claim_name: str, pod: dict, error: str | None = None) -> None:
        set_name, pod_name = self.sts["metadata"]["name"], pod["metadata"]["name"]
        if error is None:
            self.ctl.events.record(self.sts, "Normal", "SuccessfulCreate",
                                   f"create Claim {claim_name} Pod {pod_name} in StatefulSet {set_name} success",
                                   SOURCE)
        else:
            self.ctl.events.record(self.sts, "Warning", "FailedCreate",
                                   f"create Claim {claim_name} for Pod {pod_name} in StatefulSet {set_name} "
                                   f"failed error: {error}", SOURCE)

    def status(self, replicas: list[dict | None], condemned: list[dict]) -> dict:
        current_name = self.revs.current["metadata"]["name"]
        update_name = self.revs.update["metadata"]["name"]
        counts = {"replicas": 0, "readyReplicas": 0, "availableReplicas": 0, "currentReplicas": 0,
                  "updatedReplicas": 0}
        for pod in [p for p in replicas if p is not None] + condemned:
            if not phase(pod):
                continue
            counts["replicas"] += 1
            if _running_and_ready(pod):
                counts["readyReplicas"] += 1
                if is_available(pod, self.min_ready, self.now):
                    counts["availableReplicas"] += 1
            if not is_terminating(pod):
                counts["currentReplicas"] += _revision(pod) == current_name
                counts["updatedReplicas"] += _revision(pod) == update_name
        counts["currentReplicas"] -= self.deleted_current
        return {"observedGeneration": self.sts["metadata"].get("generation", 0), **counts,
                "currentRevision": current_name, "updateRevision": update_name,
                "collisionCount": self.revs.collision_count}


# ---- pods and claims of a set ------------------------------------------------------------------------

def _stateful_pod(sts: dict, template: dict, ordinal: int, revision_name: str) -> dict:
    """newStatefulSetPod: the template's pod with the set's identity, storage and revision."""
    pod = pod_from_template(template, sts)
    meta = pod["metadata"]
    del meta["generateName"]
    meta["name"] = f"{sts['metadata']['name']}-{ordinal}"
    labels = meta.setdefault("labels", {})
    labels[POD_NAME_LABEL] = meta["name"]
    labels[POD_INDEX_LABEL] = str(ordinal)
    labels[REVISION_LABEL] = revision_name
    spec = pod["spec"]
    spec["hostname"] = meta["name"]
    if sts["spec"].get("serviceName"):
        spec["subdomain"] = sts["spec"]["serviceName"]
    claims = {t["metadata"]["name"]: c["metadata"]["name"]
              for t, c in zip(sts["spec"].get("volumeClaimTemplates") or (), _claims_for(sts, pod))}
    if claims:
        volumes = [{"name": volume, "persistentVolumeClaim": {"claimName": claim}} for volume, claim in claims.items()]
        spec["volumes"] = volumes + [v for v in spec.get("volumes") or () if v.get("name") not in claims]
    return pod


def _claims_for(sts: dict, pod: dict) -> list[dict]:
    """The PersistentVolumeClaims ``<template>-<set>-<ordinal>`` a member pod mounts."""
    ordinal = _ordinal(pod, sts["metadata"]["name"])
    match_labels = (sts["spec"].get("selector") or {}).get("matchLabels") or {}
    claims = []
    for template in sts["spec"].get("volumeClaimTemplates") or ():
        source = template.get("metadata") or {}
        meta: dict = {"name": f"{source.get('name', '')}-{sts['metadata']['name']}-{ordinal}",
                      "namespace": sts["metadata"]["namespace"],
                      "labels": {**(source.get("labels") or {}), **match_labels}}
        if source.get("annotations"):
            meta["annotations"] = dict(source["annotations"])
        claims.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                       "spec": clone(template.get("spec") or {})})
    return claims


def _retention(sts: dict) -> dict:
    policy = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
    return {"whenDeleted": policy.get("whenDeleted") or "Retain", "whenScaled": policy.get("whenScaled") or "Retain"}


def _ordinal(pod: dict, set_name: str) -> int:
    """The pod's ordinal if it is named as a member of the set, else -1."""
    match = _ORDINAL.match(pod["metadata"]["name"])
    if match is None or match.group(1) != set_name:
        return -1
    return int(match.group(2))


def _revision(pod: dict) -> str:
    return (pod["metadata"].get("labels") or {}).get(REVISION_LABEL, "")


def _running_and_ready(pod: dict) -> bool:
    return phase(pod) == "Running" and is_ready(pod)


def _healthy(pod: dict) -> bool:
    return _running_and_ready(pod) and not is_terminating(pod)


def _until_available(sts: dict, pods: list[dict], now: float) -> float | None:
    """Seconds until the next ready pod turns available, when ``minReadySeconds`` delays it."""
    min_ready = sts["spec"].get("minReadySeconds") or 0
    if not min_ready:
        return None
    due = [since + min_ready + 1 - now for since in (ready_since(p) for p in pods) if since is not None
           and since + min_ready + 1 > now]
    return min(due) if due else None


def _as_written(status: dict) -> dict:
    """The status as Go writes it: zero counters with ``omitempty`` left out."""
    out = {}
    for key, value in status.items():
        if value or key in ("replicas", "availableReplicas", "collisionCount"):
            out[key] = value
    return out


def _selects(sts: dict, pod: dict) -> bool:
    try:
        selector = LabelSelector.from_object(sts["spec"].get("selector"))
    except SelectorError:
        return False
    return selector is not None and not selector.empty and selector.matches(pod["metadata"].get("labels"))
