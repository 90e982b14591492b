"""cluster-autoscaler as a controller of the twin, over the node groups of the kwok provider's ConfigMaps.

Idle (no reads beyond a ConfigMap lookup, no writes) until ``kube-system/kwok-provider-config`` exists. Then
it runs its loop every ``--scan-interval`` (10 s) on the twin's clock, and at once when a ``kube-system``
ConfigMap changes, as cluster-autoscaler's ``RunOnce``:

1. read the node groups (``config.py``); report configuration errors as Warning events on the ConfigMap
   at fault and in the status's ``message``;
2. advance the drains under way (``drain.py``);
3. keep each group within its sizes: a group's first sight launches up to ``desired-count`` (at least
   ``min-count``), a group below ``min-count`` is brought up to it, one above ``max-count`` first loses booting
   instances, then its least-used nodes (drained; upstream leaves this to the cloud, which refuses a max below
   the current size);
4. roll nodes whose instance type is no longer the template's (``rolling_update.py``, the managed node group's
   part);
5. scale up for unschedulable pods (``scale_up.py``): a ``TriggeredScaleUp`` event on each pod helped and
   ``ScaledUpGroup`` on the status ConfigMap, ``NotTriggerScaleUp`` on the pods no group helps; new nodes
   register ``cloud.PROVISIONING_TIME`` later;
6. if it did not scale up: find unneeded nodes (``scale_down.py``) and, outside the cool-downs
   (``scale-down-delay-after-add`` 10 min, ``scale-down-delay-after-failure`` 3 min), remove those unneeded
   for ``scale-down-unneeded-time`` (10 min; 20 min for a node not Ready) down to each group's ``min-count``:
   up to ten empty nodes at once (``ScaleDownEmpty``), otherwise one node drained at a time (``ScaleDown``);
7. write ``kube-system/cluster-autoscaler-status`` (``status.py``).

Nodes not in a node group (the twin's static nodes) are never added or removed, but they count as places
where pods fit. What the autoscaler remembers between loops (booting instances, since when a node has been
unneeded, drains under way, the last scale-up) is what cluster-autoscaler keeps in memory too.
"""

from __future__ import annotations

import math
from typing import Hashable, Iterable

from ...errors import NotFound
from ...store import Change
from ..manager import Controller
from ..scheduler import resources
from ..scheduler.podinfo import PodInfo
from . import config as node_groups
from . import pods as pod_rules
from . import scale_down, scale_up
from .cloud import PROVISIONING_TIME, Cloud, group_nodes, zone_of
from .drain import SCALE_DOWN, SOURCE, Drain, Drainer
from .node_template import next_zone, simulated_node
from .rolling_update import RollingUpdates
from .simulation import Snapshot
from .status import LAST_UPDATED, NAME as STATUS_NAME, Counts, GroupStatus, StatusWriter, go_time

SCAN_INTERVAL = 10.0
SCALE_DOWN_UNNEEDED_TIME = 600.0
SCALE_DOWN_UNREADY_TIME = 1200.0
SCALE_DOWN_DELAY_AFTER_ADD = 600.0
SCALE_DOWN_DELAY_AFTER_FAILURE = 180.0
MAX_EMPTY_BULK_DELETE = 10

LOOP = "loop"
REGISTER = "register"


class ClusterAutoscaler(Controller):
    name = "cluster-autoscaler"
    identity = "system:serviceaccount:kube-system:cluster-autoscaler"
    field_manager = "cluster-autoscaler"
    watches = ("configmaps",)

    def __init__(self, manager):
        super().__init__(manager)
        self.nodes = self.resource("", "v1", "nodes")
        self.pods = self.resource("", "v1", "pods")
        self.configmaps = self.resource("", "v1", "configmaps")
        self.cloud = Cloud(self)
        self.drainer = Drainer(self)
        self.rolling = RollingUpdates(self)
        self.drains: dict[str, Drain] = {}
        self.unneeded_since: dict[str, float] = {}
        self.seen_groups: set[str] = set()
        self.last_scale_up = -math.inf
        self.last_scale_down_failure = -math.inf
        self.reported_errors: set[node_groups.ConfigError] = set()
        self.status = StatusWriter(self.clock.timestamp)
        self._config: tuple[tuple, node_groups.Config] | None = None  # (versions read, configuration)

    # ---- what to do -------------------------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[Hashable]:
        meta = change.obj["metadata"]
        if meta.get("namespace") == node_groups.NAMESPACE and meta["name"] != STATUS_NAME:
            return (LOOP,)  # the node-group ConfigMaps may have changed: look now, not at the next scan
        return ()

    def reconcile(self, key: Hashable, now: float) -> float | None:
        if key == REGISTER:
            return self._register(now)
        with self.store.lock:
            return self._loop(now)

    def _register(self, now: float) -> float | None:
        with self.store.lock:
            self.cloud.register_due(now)
        due = self.cloud.next_due()
        return None if due is None else max(due - now, 0.0)

    # ---- the loop ---------------------------------------------------------------------------------------
    def _read_config(self) -> node_groups.Config | None:
        """The node groups, parsed again only when one of their ConfigMaps changed."""
        def get(namespace: str, name: str) -> dict | None:
            return self.store.get(self.configmaps.bucket, namespace, name)
        if self._config is not None and self._config[1].versions(get) == self._config[0]:
            return self._config[1]
        config = node_groups.load(get)
        self._config = None if config is None else (config.versions(get), config)
        return config

    def _loop(self, now: float) -> float | None:
        config = self._read_config()
        if config is None:
            self._stand_down()
            return None
        self._report(config)
        groups = config.groups
        names = {g.name for g in groups}
        self.cloud.forget(names)
        self.rolling.forget(names)
        self.seen_groups &= names
        self._advance_drains(now)
        for group in groups:
            self._keep_size(group, now)
        for group in groups:
            self.rolling.advance(group, self._members(group), now)
        scaled_up = self._scale_up(groups, now)
        candidates = self._scale_down(groups, now, act=not scaled_up)
        self._write_status(groups, candidates, config.errors, now)
        return SCAN_INTERVAL

    def _stand_down(self) -> None:
        """No configuration: booting instances are abandoned and the autoscaler forgets what it tracked (a node
        it was draining keeps its taint, as when cluster-autoscaler stops mid-way)."""
        self.cloud.forget(set())
        self.rolling.forget(set())
        self.drains.clear()
        self.unneeded_since.clear()
        self.seen_groups.clear()

    # ---- group sizes ------------------------------------------------------------------------------------
    def _members(self, group: node_groups.NodeGroup) -> list[dict]:
        return group_nodes(self.store.list(self.nodes.bucket)[0], group.name)

    def target(self, group: node_groups.NodeGroup) -> int:
        """The group's size as its cloud sees it: registered nodes not being removed, plus booting ones."""
        staying = [n for n in self._members(group) if n["metadata"]["name"] not in self.drains]
        return len(staying) + self.cloud.count(group.name)

    def launch(self, group: node_groups.NodeGroup, count: int, now: float, replaces: str | None = None) -> None:
        self.cloud.launch(group, count, now, [zone_of(n) for n in self._members(group)], replaces)
        self.enqueue(REGISTER, PROVISIONING_TIME)

    def _keep_size(self, group: node_groups.NodeGroup, now: float) -> None:
        size = self.target(group)
        wanted = group.min_size
        if group.name not in self.seen_groups:
            self.seen_groups.add(group.name)
            wanted = max(wanted, group.desired)
        if size < wanted:
            self.launch(group, wanted - size, now)
            return
        if size <= group.max_size or self.rolling.under_way(group.name):
            return
        excess = size - group.max_size
        excess -= self.cloud.cancel(group.name, excess)
        if excess <= 0:
            return
        pods_by_node = self._pods_by_node()
        staying = [n for n in self._members(group) if n["metadata"]["name"] not in self.drains]
        staying.sort(key=lambda n: (scale_down.utilization(n, pods_by_node.get(n["metadata"]["name"], [])),
                                    n["metadata"]["name"]))
        for node in staying[:excess]:
            self.start_drain(node["metadata"]["name"], group.name, SCALE_DOWN, now)

    # ---- drains -----------------------------------------------------------------------------------------
    def start_drain(self, node: str, group: str, purpose: str, now: float) -> None:
        drain = self.drainer.start(node, group, purpose, now)
        if drain is None:
            return
        self.drains[node] = drain
        self.unneeded_since.pop(node, None)
        self._finish(drain, self.drainer.step(drain, now), now)

    def _advance_drains(self, now: float) -> None:
        for name in sorted(self.drains):
            drain = self.drains[name]
            self._finish(drain, self.drainer.step(drain, now), now)

    def _finish(self, drain: Drain, outcome: str, now: float) -> None:
        if outcome == "waiting":
            return
        self.drains.pop(drain.node, None)
        if outcome == "failed":
            self.last_scale_down_failure = now
        elif drain.purpose == SCALE_DOWN:
            self._status_event("ScaleDown", f"Scale-down: node {drain.node} removed with drain")

    # ---- scale-up ---------------------------------------------------------------------------------------
    def _scale_up(self, groups: list[node_groups.NodeGroup], now: float) -> bool:
        pending = [PodInfo(p) for p in self.store.list(self.pods.bucket)[0] if pod_rules.unschedulable(p)]
        if not pending:
            return False
        snapshot = Snapshot(self.store, now)
        members = {g.name: self._members(g) for g in groups}
        for group in groups:  # booting instances will take pods: imagine them there
            for i, instance in enumerate(self.cloud.upcoming.get(group.name, ())):
                snapshot.add_node(simulated_node(instance.group, f"upcoming-{group.name}-{i}", instance.zone))

        def zone_for(group):
            return next_zone(group, [zone_of(n) for n in members[group.name]]
                             + [i.zone for i in self.cloud.upcoming.get(group.name, ())])

        sizes = {g.name: self.target(g) for g in groups}
        result = scale_up.plan(snapshot, pending, groups, sizes, zone_for)
        for key in sorted(result.reasons):
            self.events.record(result.pods[key].obj, "Normal", "NotTriggerScaleUp",
                               scale_up.not_triggered_message(result.reasons[key]), SOURCE)
        option = result.option
        if option is None:
            return False
        group, before = option.group, sizes[option.group.name]
        after = before + option.nodes
        self._status_event("ScaledUpGroup", f"Scale-up: setting group {group.name} size to {after} instead of "
                                            f"{before} (max: {group.max_size})")
        self.launch(group, option.nodes, now)
        self._status_event("ScaledUpGroup", f"Scale-up: group {group.name} size set to {after} instead of "
                                            f"{before} (max: {group.max_size})")
        for pod in sorted(option.pods, key=lambda p: p.key):
            self.events.record(pod.obj, "Normal", "TriggeredScaleUp", scale_up.triggered_message(group, before, after),
                               SOURCE)
        self.last_scale_up = now
        return True

    # ---- scale-down -------------------------------------------------------------------------------------
    def _scale_down(self, groups: list[node_groups.NodeGroup], now: float, act: bool) -> dict[str, int]:
        """Track unneeded nodes, remove those due; the number of unneeded nodes per group."""
        managed = [(node, g.name) for g in groups for node in self._members(g)
                   if node["metadata"]["name"] not in self.drains
                   and not self.rolling.node_in_replacement(node["metadata"]["name"])]
        pods_by_node = self._pods_by_node()
        unneeded = scale_down.find_unneeded(lambda: Snapshot(self.store, now), managed, pods_by_node,
                                            self._budgets_of())
        since = {c.node["metadata"]["name"]: self.unneeded_since.get(c.node["metadata"]["name"], now)
                 for c in unneeded}
        self.unneeded_since = since
        counts: dict[str, int] = {}
        for c in unneeded:
            counts[c.group] = counts.get(c.group, 0) + 1
        if act and now - self.last_scale_up >= SCALE_DOWN_DELAY_AFTER_ADD \
                and now - self.last_scale_down_failure >= SCALE_DOWN_DELAY_AFTER_FAILURE:
            self._remove_unneeded(groups, unneeded, pods_by_node, now)
        return counts

    def _remove_unneeded(self, groups: list[node_groups.NodeGroup], unneeded: list, pods_by_node, now: float) -> None:
        room = {g.name: self.target(g) - g.min_size for g in groups}
        due = [c for c in unneeded if now - self.unneeded_since[c.node["metadata"]["name"]] >=
               (SCALE_DOWN_UNNEEDED_TIME if c.ready else SCALE_DOWN_UNREADY_TIME) - 1e-6]
        emptied = 0
        for c in due:
            name = c.node["metadata"]["name"]
            if not c.empty or emptied >= MAX_EMPTY_BULK_DELETE or room.get(c.group, 0) <= 0:
                continue
            room[c.group] -= 1
            emptied += 1
            self.unneeded_since.pop(name, None)
            self._status_event("ScaleDownEmpty", f'Scale-down: removing empty node "{name}"')
            self.drainer.delete_empty(name, now)
        if any(d.purpose == SCALE_DOWN for d in self.drains.values()):
            return  # one node drained at a time
        for c in due:
            name = c.node["metadata"]["name"]
            if c.empty or room.get(c.group, 0) <= 0:
                continue
            pods = [p for p in pods_by_node.get(name, []) if not pod_rules.stays_with_node(p)]
            self._status_event("ScaleDown", f"Scale-down: removing node {name}, utilization: "
                                            f"{_util_info(c.node, pods_by_node.get(name, []))}, pods to reschedule: "
                                            + ",".join(f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                                                       for p in pods))
            self.start_drain(name, c.group, SCALE_DOWN, now)
            return

    # ---- reading ----------------------------------------------------------------------------------------
    def _pods_by_node(self) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = {}
        for pod in self.store.list(self.pods.bucket)[0]:
            node = (pod.get("spec") or {}).get("nodeName")
            if node:
                out.setdefault(node, []).append(pod)
        return out

    def _budgets_of(self):
        memo: dict[str, list[dict]] = {}

        def budgets(namespace: str) -> list[dict]:
            if namespace not in memo:
                memo[namespace] = self.store.list("poddisruptionbudgets.policy", namespace)[0]
            return memo[namespace]
        return budgets

    # ---- reporting --------------------------------------------------------------------------------------
    def _report(self, config: node_groups.Config) -> None:
        """A Warning event on the ConfigMap at fault for each configuration error not reported before."""
        current = set(config.errors)
        for error in config.errors:
            if error in self.reported_errors:
                continue
            source = config.sources.get(error.configmap)
            if source is not None:
                self.events.record(source, "Warning", "InvalidNodeGroupConfig", error.message, SOURCE)
        self.reported_errors = current

    def _status_configmap(self) -> dict:
        current = self.store.get(self.configmaps.bucket, node_groups.NAMESPACE, STATUS_NAME)
        if current is not None:
            return current
        return self.create(self.configmaps, {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": STATUS_NAME, "namespace": node_groups.NAMESPACE,
                         "annotations": {LAST_UPDATED: go_time(self.clock.now())}},
            "data": {"status": ""}})

    def _status_event(self, reason: str, message: str) -> None:
        self.events.record(self._status_configmap(), "Normal", reason, message, SOURCE)

    def _write_status(self, groups: list[node_groups.NodeGroup], candidates: dict[str, int],
                      errors: list[node_groups.ConfigError], now: float) -> None:
        statuses = []
        grouped: set[str] = set()
        for group in groups:
            counts = Counts(unregistered=self.cloud.count(group.name))
            for node in self._members(group):
                name = node["metadata"]["name"]
                grouped.add(name)
                counts.being_deleted += name in self.drains
                if scale_down.ready(node):
                    counts.ready += 1
                else:
                    counts.unready += 1
            statuses.append(GroupStatus(group.name, counts, self.target(group), group.min_size, group.max_size,
                                        self.cloud.count(group.name) > 0, candidates.get(group.name, 0)))
        cluster = Counts()
        for status in statuses:
            cluster.add(status.counts)
        for node in self.store.list(self.nodes.bucket)[0]:
            if node["metadata"]["name"] not in grouped:
                if scale_down.ready(node):
                    cluster.ready += 1
                else:
                    cluster.unready += 1
        text = self.status.render(now, statuses, cluster, [e.message for e in errors])
        current = self._status_configmap()
        updated = {**current, "metadata": dict(current["metadata"]), "data": {"status": text}}
        updated["metadata"]["annotations"] = {**(current["metadata"].get("annotations") or {}),
                                              LAST_UPDATED: go_time(now)}
        try:
            self.update(self.configmaps, updated)
        except NotFound:
            pass  # deleted in between: the next loop writes it again


def _util_info(node: dict, pods: list[dict]) -> str:
    """cluster-autoscaler's UtilInfo as Go prints it: {cpu memory gpu resource utilization}."""
    allocatable = resources.resource_list((node.get("status") or {}).get("allocatable"))
    requested: dict[str, int] = {}
    for pod in pods:
        if not pod_rules.finished(pod):
            resources.add(requested, resources.pod_requests(pod.get("spec") or {}))
    cpu = requested.get("cpu", 0) / allocatable["cpu"] if allocatable.get("cpu") else 0.0
    memory = requested.get("memory", 0) / allocatable["memory"] if allocatable.get("memory") else 0.0
    top, name = (cpu, "cpu") if cpu >= memory else (memory, "memory")
    return f"{{{_go_float(cpu)} {_go_float(memory)} 0 {name} {_go_float(top)}}}"


def _go_float(value: float) -> str:
    return repr(value) if value != int(value) else str(int(value))
