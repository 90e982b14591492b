"""The kubelet's node half, per node: the node Lease and the node's status conditions.

As a v1.31 kubelet does:

* the Lease ``kube-node-lease/<node>`` (holder the node, 40 s duration) is
  renewed every 10 s (a quarter of its duration), and re-created if deleted;
* the conditions MemoryPressure, DiskPressure, PIDPressure and Ready are
  computed every 10 s and posted when one changes, otherwise every 5 minutes
  (nodeStatusReportFrequency), every condition's ``lastHeartbeatTime`` then
  being the time of the post and ``lastTransitionTime`` the time its status
  last changed; each transition is a ``Node <name> status is now: <event>``
  event (NodeHasSufficientMemory, NodeReady, ...);
* MemoryPressure is True while the node's memory working set (from the
  Metrics model) leaves less than the hard eviction threshold of 100Mi
  available; disk and PID pressure are not modelled.

``status.images`` is left to whoever models the images a node holds (the
pod kubelet); posts here change the conditions only.

**A stopped kubelet** is cluster state: the annotation
``twin.itbench.io/kubelet: stopped`` on the Node. While it is there the
kubelet neither renews the Lease nor posts status, so the node lifecycle
controller sees the Lease expire and marks the node ``Unknown``, as when a
real node's kubelet stops or the machine goes away. Removing the annotation
restarts the kubelet: it posts its status at once (``Starting kubelet.``).
Other node agents should honour the same annotation (see :func:`kubelet_stopped`).
"""

from __future__ import annotations

from typing import Hashable, Iterable

from .. import quantity
from ..apiserver.access.authn import user_for
from ..apiserver.registry import Ctx
from ..apiserver.resources import Resource
from ..clock import parse_time
from ..store import Change, clone
from .events import EventSource
from .manager import Controller

KUBELET_ANNOTATION = "twin.itbench.io/kubelet"
STOPPED = "stopped"
LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION_SECONDS = 40
RENEW_INTERVAL = 10.0  # a quarter of the lease duration
STATUS_UPDATE_FREQUENCY = 10.0
STATUS_REPORT_FREQUENCY = 300.0
MEMORY_AVAILABLE_THRESHOLD = 100 * 2 ** 20  # the kubelet's default hard eviction threshold, memory.available<100Mi

# (condition type, status) -> (reason, message, event)
_CONDITIONS = {
    ("MemoryPressure", "False"): ("KubeletHasSufficientMemory", "kubelet has sufficient memory available",
                                  "NodeHasSufficientMemory"),
    ("MemoryPressure", "True"): ("KubeletHasInsufficientMemory", "kubelet has insufficient memory available",
                                 "NodeHasInsufficientMemory"),
    ("DiskPressure", "False"): ("KubeletHasNoDiskPressure", "kubelet has no disk pressure", "NodeHasNoDiskPressure"),
    ("PIDPressure", "False"): ("KubeletHasSufficientPID", "kubelet has sufficient PID available",
                               "NodeHasSufficientPID"),
    ("Ready", "True"): ("KubeletReady", "kubelet is posting ready status", "NodeReady"),
}
CONDITION_ORDER = ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")


def kubelet_stopped(node: dict | None) -> bool:
    """Whether the node's kubelet is stopped (see the module docstring)."""
    return ((node or {}).get("metadata", {}).get("annotations") or {}).get(KUBELET_ANNOTATION) == STOPPED


class NodeHeartbeat(Controller):
    name = "node-heartbeat"
    field_manager = "kubelet"
    watches = ("nodes",)

    def __init__(self, manager):
        super().__init__(manager)
        self.nodes = self.resource("", "v1", "nodes")
        self.leases = self.resource("coordination.k8s.io", "v1", "leases")
        self._running: set[str] = set()  # nodes whose kubelet has started and not stopped since
        self._started_once: set[str] = set()
        self._contexts: dict[str, Ctx] = {}

    def keys_for(self, change: Change) -> Iterable[Hashable]:
        if change.type != "MODIFIED" or kubelet_stopped(change.old) != kubelet_stopped(change.obj):
            return [change.obj["metadata"]["name"]]
        return ()

    def reconcile(self, name: str, now: float) -> float | None:
        node = self.store.get(self.nodes.bucket, "", name)
        if node is None:
            self._running.discard(name)
            self._started_once.discard(name)
            return None
        if kubelet_stopped(node):
            self._running.discard(name)
            return None
        starting = name not in self._running
        if starting:
            self._running.add(name)
            self._record(name, "Starting", "Starting kubelet.")
            self._record(name, "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods")
        renewed = self._renew_lease(node, now, force=starting)
        self._post_status(node, now, fresh=name not in self._started_once)
        self._started_once.add(name)
        return renewed + RENEW_INTERVAL - now

    # ---- the Lease -----------------------------------------------------------------------------------
    def _renew_lease(self, node: dict, now: float, force: bool) -> float:
        """Renew the node's Lease if due; the time it was last renewed."""
        name = node["metadata"]["name"]
        lease = self.store.get(self.leases.bucket, LEASE_NAMESPACE, name)
        if lease is None:
            self._create(name, self.leases, {
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": LEASE_NAMESPACE, "ownerReferences": [{
                    "apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}]},
                "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                         "renewTime": self.clock.micro_timestamp(now)}})
            return now
        spec = lease.get("spec") or {}
        renewed = parse_time(spec["renewTime"]) if spec.get("renewTime") else float("-inf")
        if not force and now < renewed + RENEW_INTERVAL - 1e-6:
            return renewed
        updated = clone(lease)
        updated["spec"] = dict(spec, holderIdentity=name, leaseDurationSeconds=LEASE_DURATION_SECONDS,
                               renewTime=self.clock.micro_timestamp(now))
        self._update(name, self.leases, updated)
        return now

    # ---- node status ------------------------------------------------------------------------------------
    def _post_status(self, node: dict, now: float, fresh: bool) -> None:
        name = node["metadata"]["name"]
        conditions = {c.get("type"): c for c in (node.get("status") or {}).get("conditions") or ()}
        stamp = self.clock.timestamp(now)
        changed = False
        events = []
        updated: dict[str, dict] = {}
        for type_, status in self._desired(node):
            reason, message, event = _CONDITIONS[(type_, status)]
            current = conditions.get(type_) or {}
            condition = {"type": type_, "status": status, "lastHeartbeatTime": stamp,
                         "lastTransitionTime": current.get("lastTransitionTime") or stamp,
                         "reason": reason, "message": message}
            if current.get("status") != status:
                condition["lastTransitionTime"] = stamp
                changed = True
                events.append(event)
            elif fresh:
                events.append(event)  # a kubelet registering its node reports every condition once
            changed = changed or current.get("reason") != reason or current.get("message") != message
            updated[type_] = condition
        ready = conditions.get("Ready") or {}
        last_report = parse_time(ready["lastHeartbeatTime"]) if ready.get("lastHeartbeatTime") else float("-inf")
        if changed or now >= last_report + STATUS_REPORT_FREQUENCY - 1e-6:
            posted = clone(node)
            others = [c for c in posted["status"].get("conditions") or () if c.get("type") not in updated]
            posted["status"]["conditions"] = others + [updated[t] for t in CONDITION_ORDER]
            self._update(name, self.nodes, posted, subresource="status")
        for event in events:
            self._record(name, event, f"Node {name} status is now: {event}")

    def _desired(self, node: dict) -> list[tuple[str, str]]:
        return [("MemoryPressure", "True" if self._memory_pressure(node) else "False"),
                ("DiskPressure", "False"), ("PIDPressure", "False"), ("Ready", "True")]

    def _memory_pressure(self, node: dict) -> bool:
        metrics = self.manager.metrics
        sample = metrics.node_sample(node["metadata"]["name"]) if metrics is not None else None
        if sample is None or "" not in sample.usage:
            return False
        capacity = ((node.get("status") or {}).get("capacity") or {}).get("memory")
        if not capacity:
            return False
        available = quantity.value(capacity) - sample.usage[""].memory_bytes
        return available < MEMORY_AVAILABLE_THRESHOLD

    # ---- writing and events as the node ----------------------------------------------------------------
    def _ctx(self, name: str) -> Ctx:
        ctx = self._contexts.get(name)
        if ctx is None:
            ctx = self._contexts[name] = Ctx(user=user_for(f"system:node:{name}", ("system:nodes",)),
                                             field_manager=self.field_manager, trusted=True)
        return ctx

    def _create(self, node: str, res: Resource, obj: dict) -> dict:
        return self.api.create(res, obj["metadata"].get("namespace"), obj, self._ctx(node))

    def _update(self, node: str, res: Resource, obj: dict, subresource: str = "") -> dict:
        # ``obj`` is a copy of the stored object with a field changed: nothing to decode or prune, which saves
        # a good part of the cost of a renewal, the twin's most frequent write.
        meta = obj["metadata"]
        return self.api.update(res, meta.get("namespace"), meta["name"], obj, self._ctx(node),
                               subresource=subresource, decoded=True)

    def _record(self, name: str, reason: str, message: str) -> None:
        # The kubelet refers to its node by name, with the name as uid.
        ref = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "uid": name}}
        self.events.record(ref, "Normal", reason, message, EventSource("kubelet", name))
