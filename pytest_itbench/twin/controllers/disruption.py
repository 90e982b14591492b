"""The disruption controller: each PodDisruptionBudget's status, which the eviction subresource obeys.

As kube-controller-manager's disruption controller does (policy/v1):

* the budget's pods are those its selector picks in its namespace (an empty
  selector picks them all, a missing one none); ``currentHealthy`` counts
  the Ready ones that are neither being deleted nor recently evicted
  (``disruptedPods``, for two minutes);
* with an integer ``minAvailable``, ``desiredHealthy`` is that number and
  ``expectedPods`` the number of pods; with a percentage or with
  ``maxUnavailable``, ``expectedPods`` is the sum of the scales of the pods'
  controllers (a Deployment, ReplicaSet, StatefulSet or
  ReplicationController) and ``desiredHealthy`` follows from it, rounding up;
* ``disruptionsAllowed`` is ``currentHealthy - desiredHealthy`` (never below
  zero, and zero while no pod is expected), with the ``DisruptionAllowed``
  condition True/SufficientPods or False/InsufficientPods and
  ``observedGeneration``;
* upstream's events: ``NoPods`` "No matching pods found", ``UnmanagedPods``,
  ``CalculateExpectedPodCountFailed`` (then the status fails safe:
  ``SyncFailed``, no disruption allowed) and ``NotDeleted``.

``kubectl drain`` evicts through the eviction subresource, which refuses
while ``disruptionsAllowed`` is 0 and charges one disruption per eviction;
this controller recounts after each.
"""

from __future__ import annotations

import math
from typing import Hashable, Iterable

from ..clock import parse_time
from ..selectors import LabelSelector
from ..store import Change, clone
from .events import EventSource
from .manager import Controller
from .pod_conditions import controller_ref, is_ready
from .pod_selection import SelectorIndex

DELETION_TIMEOUT = 120.0  # an evicted pod not deleted within this is counted again
SOURCE = EventSource("controllermanager")
SCALE_BUCKETS = ("deployments.apps", "replicasets.apps", "statefulsets.apps", "replicationcontrollers")
# controller kind -> bucket, for the finders of a pod's controller
_CONTROLLERS = {("apps", "ReplicaSet"): "replicasets.apps", ("apps", "StatefulSet"): "statefulsets.apps",
                ("", "ReplicationController"): "replicationcontrollers"}

Key = tuple[str, str]


class SyncError(Exception):
    pass


def budget_selector(pdb: dict) -> LabelSelector | None:
    return LabelSelector.from_object((pdb.get("spec") or {}).get("selector"))


class DisruptionController(Controller):
    name = "disruption"
    watches = ("poddisruptionbudgets.policy", "pods") + SCALE_BUCKETS

    def __init__(self, manager):
        super().__init__(manager)
        self.pdbs = self.resource("policy", "v1", "poddisruptionbudgets")
        self.pods = SelectorIndex(self.store, budget_selector)
        self._writing: Key | None = None  # the budget whose status this controller is writing now

    def keys_for(self, change: Change) -> Iterable[Hashable]:
        meta = change.obj["metadata"]
        namespace = meta.get("namespace", "")
        if change.bucket == self.pdbs.bucket:
            self.pods.selector_changed(change)
            key = (namespace, meta["name"])
            return () if change.type == "DELETED" or key == self._writing else [key]
        if change.bucket == "pods":
            if change.type == "MODIFIED" and _pod_view(change.old) == _pod_view(change.obj):
                return ()
            return self.pods.pod_changed(change)
        # A controller's scale is the denominator of percentage budgets.
        if change.type == "MODIFIED" and ((change.old or {}).get("spec") or {}).get("replicas") == \
                (change.obj.get("spec") or {}).get("replicas"):
            return ()
        return self.pods.in_namespace(namespace)

    def reconcile(self, key: Key, now: float) -> float | None:
        pdb = self.store.get(self.pdbs.bucket, *key)
        if pdb is None:
            return None
        pods = self.pods.members(*key)
        if not pods:
            self.events.record(pdb, "Normal", "NoPods", "No matching pods found", SOURCE)
        try:
            expected, desired, unmanaged = self._expected(pdb, pods)
        except SyncError as exc:
            self.events.record(pdb, "Warning", "CalculateExpectedPodCountFailed",
                               f"Failed to calculate the number of expected pods: {exc}", SOURCE)
            self._fail_safe(pdb, str(exc), now)
            return None
        if unmanaged:
            self.events.record(pdb, "Warning", "UnmanagedPods", (
                f"Pods selected by this PodDisruptionBudget (selector: {go_selector(pdb['spec'].get('selector'))}) "
                f"were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, "
                f"which may result in undefined behavior. To account for these pods please set "
                f"\".spec.minAvailable\" field of the PDB to an integer value."), SOURCE)
        disrupted, recheck = self._disrupted(pdb, pods, now)
        healthy = sum(1 for p in pods if not p["metadata"].get("deletionTimestamp")
                      and p["metadata"]["name"] not in disrupted and is_ready(p))
        self._update_status(pdb, healthy, desired, expected, disrupted, now)
        return None if recheck is None else max(recheck - now, 0.0)

    # ---- expected pods ---------------------------------------------------------------------------------
    def _expected(self, pdb: dict, pods: list[dict]) -> tuple[int, int, list[str]]:
        """expectedPods, desiredHealthy and the pods no controller owns."""
        spec = pdb.get("spec") or {}
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = self._expected_scale(pods)
            return expected, max(0, expected - _scaled(spec["maxUnavailable"], expected)), unmanaged
        min_available = spec.get("minAvailable")
        if isinstance(min_available, int):
            return len(pods), min_available, []
        if min_available is not None:
            expected, unmanaged = self._expected_scale(pods)
            return expected, _scaled(min_available, expected), unmanaged
        return 0, 0, []

    def _expected_scale(self, pods: list[dict]) -> tuple[int, list[str]]:
        """The sum of the scales of the pods' controllers (once each), and the pods without one."""
        scales: dict[str, int] = {}  # controller uid -> replicas
        looked_up: set[str] = set()  # controllerRef uids already resolved
        unmanaged = []
        for pod in pods:
            ref = controller_ref(pod)
            if ref is None:
                unmanaged.append(pod["metadata"]["name"])
                continue
            if ref.get("uid") in looked_up:
                continue
            found = self._controller_scale(ref, pod["metadata"]["namespace"])
            if found is None:
                raise SyncError(f'found no controllers for pod "{pod["metadata"]["name"]}"')
            looked_up.add(ref.get("uid"))
            scales[found[0]] = found[1]
        return sum(scales.values()), unmanaged

    def _controller_scale(self, ref: dict, namespace: str) -> tuple[str, int] | None:
        """(uid, replicas) of the controller that owns a pod: a ReplicaSet's Deployment when it has one."""
        group = (ref.get("apiVersion") or "").rpartition("/")[0]
        bucket = _CONTROLLERS.get((group, ref.get("kind")))
        if bucket is None:
            return None
        owner = self.store.get(bucket, namespace, ref.get("name") or "")
        if owner is None or owner["metadata"]["uid"] != ref.get("uid"):
            return None
        parent = controller_ref(owner)
        if bucket == "replicasets.apps" and parent is not None and parent.get("kind") == "Deployment":
            deployment = self.store.get("deployments.apps", namespace, parent.get("name") or "")
            if deployment is None or deployment["metadata"]["uid"] != parent.get("uid"):
                return None
            owner = deployment
        return owner["metadata"]["uid"], (owner.get("spec") or {}).get("replicas", 1)

    # ---- disrupted pods -----------------------------------------------------------------------------------
    def _disrupted(self, pdb: dict, pods: list[dict], now: float) -> tuple[dict[str, str], float | None]:
        """Pods evicted recently enough to still count as going away, and when to look again."""
        recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
        out: dict[str, str] = {}
        recheck = None
        for pod in pods:
            name = pod["metadata"]["name"]
            if pod["metadata"].get("deletionTimestamp") or name not in recorded:
                continue
            due = parse_time(recorded[name]) + DELETION_TIMEOUT
            if due < now:
                meta = pdb["metadata"]
                # Upstream names the budget by its namespace twice.
                self.events.record(pod, "Warning", "NotDeleted", f"Pod was expected by PDB {meta['namespace']}/"
                                   f"{meta['namespace']} to be deleted but it wasn't", SOURCE)
            else:
                out[name] = recorded[name]
                recheck = due if recheck is None else min(recheck, due)
        return out, recheck

    # ---- status -------------------------------------------------------------------------------------------
    def _update_status(self, pdb: dict, healthy: int, desired: int, expected: int, disrupted: dict[str, str],
                       now: float) -> None:
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        status = pdb.get("status") or {}
        generation = pdb["metadata"].get("generation", 1)
        wanted = {"currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected,
                  "disruptionsAllowed": allowed, "observedGeneration": generation}
        if all(status.get(k) == v for k, v in wanted.items()) and (status.get("disruptedPods") or {}) == disrupted \
                and _condition_up_to_date(status, generation):
            return
        new_status = dict(wanted)
        if disrupted:
            new_status["disruptedPods"] = disrupted
        sufficient = allowed > 0
        new_status["conditions"] = _set_condition(status.get("conditions"), "True" if sufficient else "False",
                                                  "SufficientPods" if sufficient else "InsufficientPods", "",
                                                  generation, self.clock.timestamp(now))
        self._write(pdb, new_status)

    def _fail_safe(self, pdb: dict, error: str, now: float) -> None:
        status = dict(pdb.get("status") or {})
        status["disruptionsAllowed"] = 0
        status["conditions"] = _set_condition(status.get("conditions"), "False", "SyncFailed", error,
                                              status.get("observedGeneration", 0), self.clock.timestamp(now))
        if status != (pdb.get("status") or {}):
            self._write(pdb, status)

    def _write(self, pdb: dict, status: dict) -> None:
        updated = clone(pdb)
        updated["status"] = status
        meta = pdb["metadata"]
        self._writing = (meta["namespace"], meta["name"])  # keys_for runs inside the write: not our cue
        try:
            self.update_status(self.pdbs, updated)
        finally:
            self._writing = None


def _scaled(value: int | str, total: int) -> int:
    """GetScaledValueFromIntOrPercent, rounding up."""
    if isinstance(value, int):
        return value
    return math.ceil(int(str(value).rstrip("%")) * total / 100)


def _condition_up_to_date(status: dict, generation: int) -> bool:
    cond = next((c for c in status.get("conditions") or () if c.get("type") == "DisruptionAllowed"), None)
    if cond is None or status.get("observedGeneration") != generation:
        return False
    if status.get("disruptionsAllowed", 0) > 0:
        return cond.get("status") == "True" and cond.get("reason") == "SufficientPods"
    return cond.get("status") == "False" and cond.get("reason") == "InsufficientPods"


def _set_condition(conditions: list[dict] | None, status: str, reason: str, message: str, generation: int,
                   stamp: str) -> list[dict]:
    """meta.SetStatusCondition for DisruptionAllowed: a new status moves lastTransitionTime."""
    out = [dict(c) for c in conditions or ()]
    for cond in out:
        if cond.get("type") == "DisruptionAllowed":
            if cond.get("status") != status:
                cond["lastTransitionTime"] = stamp
            cond.update(status=status, reason=reason, message=message, observedGeneration=generation)
            return out
    out.append({"type": "DisruptionAllowed", "status": status, "observedGeneration": generation,
                "lastTransitionTime": stamp, "reason": reason, "message": message})
    return out


def go_selector(selector: dict | None) -> str:
    """A *metav1.LabelSelector as Go's %v prints it."""
    if selector is None:
        return "nil"
    labels = "".join(f"{k}: {v}," for k, v in sorted((selector.get("matchLabels") or {}).items()))
    expressions = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or ())
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}")


def _pod_view(pod: dict | None) -> tuple:
    pod = pod or {}
    meta = pod.get("metadata") or {}
    ready = next((c.get("status") for c in (pod.get("status") or {}).get("conditions") or ()
                  if c.get("type") == "Ready"), None)
    return meta.get("labels"), meta.get("deletionTimestamp"), meta.get("ownerReferences"), ready
