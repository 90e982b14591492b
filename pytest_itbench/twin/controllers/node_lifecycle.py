"""Node lifecycle: node health from the kubelet's heartbeats, the node taints, and taint-based eviction.

As kube-controller-manager's node-lifecycle and taint-eviction controllers do (v1.31 defaults):

* **health**: a node is heard from when its Lease is renewed or its Ready
  condition's heartbeat advances. Checked every 5 s, a node not heard from
  for more than 40 s (nodeMonitorGracePeriod) gets Ready, MemoryPressure,
  DiskPressure and PIDPressure ``Unknown`` ("Kubelet stopped posting node
  status."), a ``NodeNotReady`` event, and its pods' Ready condition set to
  False, each with a ``NodeNotReady`` event;
* **taints**: Ready False or Unknown gives ``node.kubernetes.io/not-ready`` or
  ``node.kubernetes.io/unreachable`` with both NoSchedule and NoExecute
  effects, the pressure conditions their NoSchedule taints, and
  ``spec.unschedulable`` (``kubectl cordon``) the
  ``node.kubernetes.io/unschedulable:NoSchedule`` taint; each goes away when
  its cause does;
* **eviction**: a pod on a node with NoExecute taints it does not tolerate is
  deleted at once; one that tolerates them for a while (the 300 s the
  DefaultTolerationSeconds admission gives every pod) is deleted when the
  shortest tolerationSeconds has passed, unless the taints go first. The
  deletion is announced by a ``TaintManagerEviction`` event "Marking for
  deletion Pod <ns>/<name>" and a ``DisruptionTarget`` pod condition.
"""

from __future__ import annotations

import math
from typing import Hashable, Iterable

from ..clock import parse_time
from ..store import Change, clone
from .events import EventSource
from .manager import Controller
from .pod_conditions import condition
from .tolerations import matching_tolerations, min_toleration_seconds, no_execute_taints

GRACE_PERIOD = 40.0  # nodeMonitorGracePeriod
MONITOR_PERIOD = 5.0  # nodeMonitorPeriod
LEASE_NAMESPACE = "kube-node-lease"
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
# (condition, status) -> the NoSchedule taint it brings
CONDITION_TAINTS = {
    ("Ready", "False"): NOT_READY,
    ("Ready", "Unknown"): UNREACHABLE,
    ("MemoryPressure", "True"): "node.kubernetes.io/memory-pressure",
    ("DiskPressure", "True"): "node.kubernetes.io/disk-pressure",
    ("PIDPressure", "True"): "node.kubernetes.io/pid-pressure",
    ("NetworkUnavailable", "True"): "node.kubernetes.io/network-unavailable",
}
_MANAGED = {(key, "NoSchedule") for key in CONDITION_TAINTS.values()} | {(UNSCHEDULABLE, "NoSchedule"),
                                                                          (NOT_READY, "NoExecute"),
                                                                          (UNREACHABLE, "NoExecute")}
_UNKNOWN_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure")
NODE_CONTROLLER = EventSource("node-controller")
TAINT_EVICTION = EventSource("taint-eviction-controller")

NodeKey = tuple[str, str]  # ("node", name)
PodKey = tuple[str, str, str]  # ("pod", namespace, name)


class NodeLifecycle(Controller):
    name = "node-lifecycle"
    watches = ("nodes", "pods")

    def __init__(self, manager):
        super().__init__(manager)
        self.nodes = self.resource("", "v1", "nodes")
        self.pods = self.resource("", "v1", "pods")
        self.leases = self.resource("coordination.k8s.io", "v1", "leases")
        self._no_execute: dict[str, list[dict]] = {}  # node -> its NoExecute taints, as last seen
        self._registered: set[str] = set()
        self._evicting_for: dict[str, list[dict]] = {}  # node -> NoExecute taints its pods were last checked for
        self._scheduled: dict[tuple[str, str], tuple[float, float]] = {}  # pod -> (first seen, deletion due)

    def keys_for(self, change: Change) -> Iterable[Hashable]:
        obj = change.obj
        if change.bucket == "nodes":
            name = obj["metadata"]["name"]
            taints = [] if change.type == "DELETED" else no_execute_taints(obj)
            if taints:
                self._no_execute[name] = taints
            else:
                self._no_execute.pop(name, None)
            if change.type == "MODIFIED" and _node_view(change.old) == _node_view(obj):
                return ()
            return [("node", name)]
        node = (obj.get("spec") or {}).get("nodeName")
        was_on = ((change.old or {}).get("spec") or {}).get("nodeName")
        meta = obj["metadata"]
        if (node in self._no_execute or was_on in self._no_execute or (meta["namespace"], meta["name"])
                in self._scheduled) and (change.type != "MODIFIED" or _toleration_view(change.old) !=
                                         _toleration_view(obj)):
            return [("pod", meta["namespace"], meta["name"])]
        return ()

    def reconcile(self, key: NodeKey | PodKey, now: float) -> float | None:
        if key[0] == "node":
            return self._reconcile_node(key[1], now)
        return self._reconcile_pod(key[1], key[2], now)

    # ---- nodes ------------------------------------------------------------------------------------------
    def _reconcile_node(self, name: str, now: float) -> float | None:
        node = self.store.get(self.nodes.bucket, "", name)
        if node is None:
            self._registered.discard(name)
            self._evicting_for.pop(name, None)
            return None
        if name not in self._registered:
            self._registered.add(name)
            self.events.record(node, "Normal", "RegisteredNode",
                               f"Node {name} event: Registered Node {name} in Controller", NODE_CONTROLLER)
        heard = self._last_heard(node)
        ready = condition(node, "Ready") or {}
        if ready and ready.get("status") != "Unknown" and now > heard + GRACE_PERIOD:
            node = self._mark_unknown(node, now)
            ready = condition(node, "Ready") or {}
        node = self._update_taints(node, now)
        taints = no_execute_taints(node)
        if taints != self._evicting_for.get(name, []):
            for pod in self._pods_on(name):
                self.enqueue(("pod", pod["metadata"]["namespace"], pod["metadata"]["name"]))
            if taints:
                self._evicting_for[name] = taints
            else:
                self._evicting_for.pop(name, None)
        if ready.get("status") in (None, "Unknown"):
            return None  # until the kubelet posts (again), which is a change to the node
        # The next health check that could find the node silent: on the monitor's 5 s grid, strictly after.
        due = (math.floor((heard + GRACE_PERIOD) / MONITOR_PERIOD) + 1) * MONITOR_PERIOD
        return due - now

    def _last_heard(self, node: dict) -> float:
        name = node["metadata"]["name"]
        times = [parse_time(node["metadata"]["creationTimestamp"])]
        lease = self.store.get(self.leases.bucket, LEASE_NAMESPACE, name)
        renew = ((lease or {}).get("spec") or {}).get("renewTime")
        if renew:
            times.append(parse_time(renew))
        heartbeat = (condition(node, "Ready") or {}).get("lastHeartbeatTime")
        if heartbeat:
            times.append(parse_time(heartbeat))
        return max(times)

    def _mark_unknown(self, node: dict, now: float) -> dict:
        stamp = self.clock.timestamp(now)
        updated = clone(node)
        conditions = updated.setdefault("status", {}).setdefault("conditions", [])
        for type_ in ("Ready",) + _UNKNOWN_CONDITIONS:
            current = next((c for c in conditions if c.get("type") == type_), None)
            if current is None:
                conditions.append({"type": type_, "status": "Unknown",
                                   "lastHeartbeatTime": node["metadata"]["creationTimestamp"],
                                   "lastTransitionTime": stamp, "reason": "NodeStatusNeverUpdated",
                                   "message": "Kubelet never posted node status."})
            elif current.get("status") != "Unknown":
                current.update(status="Unknown", reason="NodeStatusUnknown",
                               message="Kubelet stopped posting node status.", lastTransitionTime=stamp)
        written = self.update_status(self.nodes, updated)
        name = node["metadata"]["name"]
        self.events.record(written, "Normal", "NodeNotReady", f"Node {name} status is now: NodeNotReady",
                           NODE_CONTROLLER)
        self._mark_pods_not_ready(name, stamp)
        return written

    def _mark_pods_not_ready(self, node: str, stamp: str) -> None:
        for pod in self._pods_on(node):
            ready = condition(pod, "Ready")
            if ready is None or ready.get("status") == "False":
                continue
            updated = clone(pod)
            for cond in updated["status"]["conditions"]:
                if cond.get("type") == "Ready":
                    cond.update(status="False", lastTransitionTime=stamp)
            written = self.update_status(self.pods, updated)
            self.events.record(written, "Warning", "NodeNotReady", "Node is not ready", NODE_CONTROLLER)

    def _update_taints(self, node: dict, now: float) -> dict:
        wanted = desired_taints(node)
        current = (node.get("spec") or {}).get("taints") or []
        kept = [t for t in current if (t.get("key"), t.get("effect")) not in _MANAGED
                or (t.get("key"), t.get("effect")) in wanted]
        have = {(t.get("key"), t.get("effect")) for t in kept}
        added = [{"key": key, "effect": effect, "timeAdded": self.clock.timestamp(now)}
                 for key, effect in wanted if (key, effect) not in have]
        if kept == current and not added:
            return node
        updated = clone(node)
        taints = kept + added
        if taints:
            updated["spec"]["taints"] = taints
        else:
            updated["spec"].pop("taints", None)
        return self.update(self.nodes, updated)

    def _pods_on(self, node: str) -> list[dict]:
        return [p for p in self.store.list(self.pods.bucket)[0] if (p.get("spec") or {}).get("nodeName") == node]

    # ---- taint-based eviction ------------------------------------------------------------------------------
    def _reconcile_pod(self, namespace: str, name: str, now: float) -> float | None:
        pod = self.store.get(self.pods.bucket, namespace, name)
        node = ((pod or {}).get("spec") or {}).get("nodeName")
        taints = self._no_execute.get(node or "")
        if pod is None or not taints:
            self._cancel(namespace, name, pod is not None)
            return None
        tolerated, used = matching_tolerations(taints, (pod.get("spec") or {}).get("tolerations") or [])
        if not tolerated:
            self._evict(pod)
            return None
        seconds = min_toleration_seconds(used)
        if seconds is None:
            self._cancel(namespace, name, True)
            return None
        start = self._scheduled.get((namespace, name), (now, 0.0))[0]
        due = start + seconds
        self._scheduled[(namespace, name)] = (start, due)
        if now >= due - 1e-6:
            self._evict(pod)
            return None
        return due - now

    def _cancel(self, namespace: str, name: str, announce: bool) -> None:
        if self._scheduled.pop((namespace, name), None) is not None and announce:
            pod = self.store.get(self.pods.bucket, namespace, name)
            if pod is not None:
                self.events.record(pod, "Normal", "TaintManagerEviction",
                                   f"Cancelling deletion of Pod {namespace}/{name}", TAINT_EVICTION)

    def _evict(self, pod: dict) -> None:
        meta = pod["metadata"]
        self._scheduled.pop((meta["namespace"], meta["name"]), None)
        self.events.record(pod, "Normal", "TaintManagerEviction",
                           f"Marking for deletion Pod {meta['namespace']}/{meta['name']}", TAINT_EVICTION)
        if not meta.get("deletionTimestamp"):
            updated = clone(pod)
            conditions = [c for c in updated.setdefault("status", {}).get("conditions") or ()
                          if c.get("type") != "DisruptionTarget"]
            conditions.append({"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
                               "message": "Taint manager: deleting due to NoExecute taint",
                               "lastTransitionTime": self.clock.timestamp()})
            updated["status"]["conditions"] = conditions
            self.update_status(self.pods, updated)
        self.delete(self.pods, meta["namespace"], meta["name"], uid=meta["uid"])


def desired_taints(node: dict) -> list[tuple[str, str]]:
    """The (key, effect) taints the node's conditions and cordon call for, in the order they are added."""
    wanted = []
    for cond in (node.get("status") or {}).get("conditions") or ():
        key = CONDITION_TAINTS.get((cond.get("type"), cond.get("status")))
        if key is not None:
            wanted.append((key, "NoSchedule"))
    if (node.get("spec") or {}).get("unschedulable"):
        wanted.append((UNSCHEDULABLE, "NoSchedule"))
    ready = (condition(node, "Ready") or {}).get("status")
    if ready == "False":
        wanted.append((NOT_READY, "NoExecute"))
    elif ready == "Unknown":
        wanted.append((UNREACHABLE, "NoExecute"))
    return wanted


def _node_view(node: dict | None) -> tuple:
    """What of a node this controller acts on (a heartbeat alone changes none of it)."""
    node = node or {}
    conditions = tuple((c.get("type"), c.get("status")) for c in (node.get("status") or {}).get("conditions") or ())
    spec = node.get("spec") or {}
    return spec.get("unschedulable"), spec.get("taints"), conditions


def _toleration_view(pod: dict | None) -> tuple:
    spec = (pod or {}).get("spec") or {}
    return spec.get("nodeName"), spec.get("tolerations"), (pod or {}).get("metadata", {}).get("deletionTimestamp")
