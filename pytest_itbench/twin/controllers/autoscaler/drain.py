"""Taking a node out of the cluster: mark it, evict its pods, wait for them to go, delete the Node.

Two callers, two ways of marking:

* **scale-down** (cluster-autoscaler): the ``ToBeDeletedByClusterAutoscaler=<unix time>:NoSchedule`` taint
  and a ``ScaleDown`` event "marked the node as toBeDeleted/unschedulable"; each evicted pod gets a
  ``ScaleDown`` event "deleting pod for node scale down". Evictions go through the eviction subresource, so
  PodDisruptionBudgets hold; one refused for longer than two minutes (``MaxPodEvictionTime``) aborts the
  scale-down: the taint is removed and the node gets ``ScaleDownFailed`` "failed to drain the node, aborting
  ScaleDown".
* **replace** (a managed node group's rolling update): the node is cordoned (``spec.unschedulable``) and
  drained; a refused eviction is retried until the budget allows it.

DaemonSet and mirror pods are neither evicted nor waited for. Each pod gets its own grace period, capped at
``--max-graceful-termination-sec`` (600 s); when its pods are gone, or their grace periods and 30 s more have
passed, the Node is deleted, as the cloud terminating the instance removes it. Pods still bound to the
deleted node (its DaemonSet pods) are deleted then, as the pod garbage collector does for pods whose node is
gone (the twin has no PodGC of its own).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ...apiserver.registry import DeleteOptions
from ...apiserver.subresources import Subresources
from ...errors import NotFound, StatusError, TooManyRequests
from ...store import clone
from ..events import EventSource
from . import pods as pod_rules

log = logging.getLogger(__name__)

TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
MAX_POD_EVICTION_TIME = 120.0
MAX_GRACEFUL_TERMINATION = 600
POD_EVICTION_HEADROOM = 30.0
DEFAULT_GRACE = 30
SOURCE = EventSource("cluster-autoscaler")

SCALE_DOWN = "scale-down"
REPLACE = "replace"


@dataclass
class Drain:
    node: str
    group: str
    purpose: str  # SCALE_DOWN or REPLACE
    started: float
    deadlines: dict[str, float] = field(default_factory=dict)  # evicted pod uid -> when it must be gone


class _ApiOnly:
    """The eviction subresource needs only the server's ResourceAPI: lend it that, as the API server would."""

    def __init__(self, api):
        self.api = api


class Drainer:
    def __init__(self, controller):
        self.c = controller
        self.evictor = Subresources(_ApiOnly(controller.api))

    # ---- marking -----------------------------------------------------------------------------------------
    def start(self, node_name: str, group: str, purpose: str, now: float) -> Drain | None:
        node = self.c.store.get("nodes", "", node_name)
        if node is None:
            return None
        marked = clone(node)
        spec = marked.setdefault("spec", {})
        if purpose == SCALE_DOWN:
            taints = [t for t in spec.get("taints") or () if t.get("key") != TO_BE_DELETED_TAINT]
            taints.append({"key": TO_BE_DELETED_TAINT, "value": str(int(now)), "effect": "NoSchedule"})
            spec["taints"] = taints
        else:
            spec["unschedulable"] = True
        stored = self.c.update(self.c.nodes, marked)
        if purpose == SCALE_DOWN:
            self.c.events.record(stored, "Normal", "ScaleDown", "marked the node as toBeDeleted/unschedulable", SOURCE)
        return Drain(node_name, group, purpose, now)

    def unmark(self, drain: Drain) -> None:
        node = self.c.store.get("nodes", "", drain.node)
        if node is None:
            return
        unmarked = clone(node)
        spec = unmarked.setdefault("spec", {})
        spec["taints"] = [t for t in spec.get("taints") or () if t.get("key") != TO_BE_DELETED_TAINT]
        if not spec["taints"]:
            del spec["taints"]
        stored = self.c.update(self.c.nodes, unmarked)
        self.c.events.record(stored, "Warning", "ScaleDownFailed", "failed to drain the node, aborting ScaleDown",
                             SOURCE)

    # ---- draining ----------------------------------------------------------------------------------------
    def step(self, drain: Drain, now: float) -> str:
        """Advance the drain: "done" (the node is gone), "waiting", or "failed" (aborted; the node stays)."""
        if self.c.store.get("nodes", "", drain.node) is None:
            self._collect_orphans(drain.node)
            return "done"
        remaining = [p for p in self._pods_on(drain.node) if not pod_rules.stays_with_node(p)]
        refused = False
        for pod in remaining:
            uid = pod["metadata"].get("uid", "")
            if uid in drain.deadlines or pod["metadata"].get("deletionTimestamp"):
                drain.deadlines.setdefault(uid, now + self._grace(pod) + POD_EVICTION_HEADROOM)
                continue
            if not self._evict(pod, drain):
                refused = True
                continue
            drain.deadlines[uid] = now + self._grace(pod) + POD_EVICTION_HEADROOM
        if refused:
            if drain.purpose == SCALE_DOWN and now - drain.started > MAX_POD_EVICTION_TIME:
                self.unmark(drain)
                return "failed"
            return "waiting"
        if remaining and now < max(drain.deadlines.get(p["metadata"].get("uid", ""), now) for p in remaining):
            return "waiting"
        self.c.delete(self.c.nodes, None, drain.node)
        self._collect_orphans(drain.node)
        return "done"

    def delete_empty(self, node_name: str, now: float) -> None:
        """An empty node goes at once: marked, then deleted (its DaemonSet pods with it)."""
        if self.start(node_name, "", SCALE_DOWN, now) is None:
            return
        self.c.delete(self.c.nodes, None, node_name)
        self._collect_orphans(node_name)

    def _evict(self, pod: dict, drain: Drain) -> bool:
        meta = pod["metadata"]
        if drain.purpose == SCALE_DOWN:
            self.c.events.record(pod, "Normal", "ScaleDown", "deleting pod for node scale down", SOURCE)
        options = {"gracePeriodSeconds": self._grace(pod), "preconditions": {"uid": meta.get("uid")}}
        try:
            self.evictor.evict(meta["namespace"], meta["name"], options, self.c.ctx)
        except NotFound:
            return True
        except TooManyRequests:
            return False
        except StatusError as exc:
            log.info("evicting %s/%s for %s: %s", meta["namespace"], meta["name"], drain.node, exc.message)
            return False
        return True

    @staticmethod
    def _grace(pod: dict) -> int:
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        return min(DEFAULT_GRACE if grace is None else grace, MAX_GRACEFUL_TERMINATION)

    def _pods_on(self, node_name: str) -> list[dict]:
        return [p for p in self.c.store.list("pods")[0] if (p.get("spec") or {}).get("nodeName") == node_name]

    def _collect_orphans(self, node_name: str) -> None:
        for pod in self._pods_on(node_name):
            meta = pod["metadata"]
            try:
                self.c.api.delete(self.c.pods, meta["namespace"], meta["name"],
                                  DeleteOptions(grace_period=0, uid=meta.get("uid")), self.c.ctx)
            except StatusError:
                pass  # gone already, or its uid changed: nothing of this node's left to collect
