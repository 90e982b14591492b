"""The kubelet's cAdvisor endpoint (``/metrics/cadvisor``), one target per node, from the kubelet's state.

Which containers exist comes from the pods' statuses (a running container has a cgroup; a waiting
one has none, and a restart makes a new container with new ``id`` and ``name`` labels); how much
they use comes from the usage model the kubelet feeds (``twin.metrics``), integrated between scrapes
into cumulative counters (:mod:`.cpu_accounting`). Labels are the kubelet's
(``container``, ``id``, ``image``, ``name``, ``namespace``, ``pod``; ``cpu="total"`` on CPU usage)
plus the target's, with honor_labels as kube-prometheus-stack scrapes the kubelet. Besides each
container, the pod's own cgroup is reported (``container`` and ``image`` empty): the sum of its
containers, as ``sum by (pod)`` without ``container!=""`` double-counts on a real cluster.

Exposed are the families kube-prometheus-stack keeps after its metric relabelling and that the
usage model can feed: CPU usage, CFS periods and throttled periods (containers with a CPU limit),
working set, usage and RSS memory, start time. The model has no page cache, so usage and RSS equal
the working set. A node whose kubelet is not running (node not Ready) answers no scrape: ``up`` 0.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from ... import quantity
from ...clock import parse_time
from ...metrics import Metrics, Usage
from ...store import Store
from ..labels import Labels
from . import targets
from .base import METRIC_NAME, MetricFamily, SeriesGroup, TargetScrape, target_series_labels
from .cgroups import container_cgroup, pod_cgroup
from .cpu_accounting import CpuAccount, memory_at

CPU_USAGE = MetricFamily("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed in seconds.")
CFS_PERIODS = MetricFamily("container_cpu_cfs_periods_total", "counter", "Number of elapsed enforcement period intervals.")
CFS_THROTTLED = MetricFamily("container_cpu_cfs_throttled_periods_total", "counter",
                             "Number of throttled period intervals.")
WORKING_SET = MetricFamily("container_memory_working_set_bytes", "gauge", "Current working set in bytes.")
MEMORY_USAGE = MetricFamily("container_memory_usage_bytes", "gauge",
                            "Current memory usage in bytes, including all memory regardless of when it was accessed")
MEMORY_RSS = MetricFamily("container_memory_rss", "gauge", "Size of RSS in bytes.")
START_TIME = MetricFamily("container_start_time_seconds", "gauge",
                          "Start time of the container since unix epoch in seconds.")
FAMILIES = (CPU_USAGE, CFS_PERIODS, CFS_THROTTLED, WORKING_SET, MEMORY_USAGE, MEMORY_RSS, START_TIME)

_History = Mapping[tuple[str, str, str], Sequence[tuple[float, Usage | None]]]


class _Cgroup:
    """One cgroup's counters and the series group showing them (rebuilt once CPU time appears)."""

    __slots__ = ("account", "exposed", "limit", "started", "group", "has_cpu", "memory")

    def __init__(self, since: float, exposed: dict[str, str], limit: int | None, started: float):
        self.account = CpuAccount(since)
        self.exposed = exposed  # the kubelet's labels for this cgroup
        self.limit = limit  # CPU limit in nanocores (a CFS quota), or None
        self.started = started
        self.group: SeriesGroup | None = None
        self.has_cpu = False
        self.memory = 0

    def refresh(self, target: Labels) -> SeriesGroup:
        # cAdvisor leaves CPU usage out until the cgroup has used some.
        has_cpu = self.account.cpu_seconds > 0
        if self.group is None or has_cpu != self.has_cpu:
            self.has_cpu = has_cpu
            self.group = SeriesGroup([self._labels(target, family) for family in self._families()],
                                     [0.0] * len(self._families()))
        self.group.values[:] = [self._value(family) for family in self._families()]
        return self.group

    def _families(self) -> list[MetricFamily]:
        out = [CPU_USAGE] if self.has_cpu else []
        if self.limit is not None:
            out += [CFS_PERIODS, CFS_THROTTLED]
        return out + [WORKING_SET, MEMORY_USAGE, MEMORY_RSS, START_TIME]

    def _labels(self, target: Labels, family: MetricFamily) -> Labels:
        exposed = dict(self.exposed, **{METRIC_NAME: family.name})
        if family is CPU_USAGE:
            exposed["cpu"] = "total"
        return target_series_labels(target, exposed, honor_labels=True)

    def _value(self, family: MetricFamily) -> float:
        if family is CPU_USAGE:
            return self.account.cpu_seconds
        if family is CFS_PERIODS:
            return float(self.account.periods)
        if family is CFS_THROTTLED:
            return float(self.account.throttled_periods)
        if family is START_TIME:
            return self.started
        return float(self.memory)  # working set, usage and RSS alike: the model has no page cache


class Cadvisor:
    job = "kubelet"
    families = FAMILIES

    def __init__(self, store: Store, metrics: Metrics):
        self.store = store
        self.metrics = metrics
        self._containers: dict[str, _Cgroup] = {}  # by container ID
        self._pods: dict[str, _Cgroup] = {}  # by pod UID
        self._last: float | None = None

    def scrape(self, now: float) -> Iterable[TargetScrape]:
        start = now if self._last is None else self._last
        history = self.metrics.pod_usage_history(start)
        by_node: dict[str, list[dict]] = {}
        for pod in self.store.list("pods")[0]:
            node = (pod.get("spec") or {}).get("nodeName")
            if node:
                by_node.setdefault(node, []).append(pod)
        seen_containers: set[str] = set()
        seen_pods: set[str] = set()
        scrapes = []
        for node in self.store.list("nodes")[0]:
            name = node["metadata"]["name"]
            target = targets.kubelet_cadvisor(name, _internal_ip(node))
            if not _kubelet_running(node):
                scrapes.append(TargetScrape((name, target), target, up=False))
                continue
            groups: list[SeriesGroup] = []
            for pod in by_node.get(name, ()):
                groups.extend(self._pod(pod, target, history, now, seen_containers, seen_pods))
            scrapes.append(TargetScrape((name, target), target, groups))
        self._containers = {k: v for k, v in self._containers.items() if k in seen_containers}
        self._pods = {k: v for k, v in self._pods.items() if k in seen_pods}
        self._last = now
        return scrapes

    def _pod(self, pod: dict, target: Labels, history: _History, now: float, seen_containers: set[str],
             seen_pods: set[str]) -> list[SeriesGroup]:
        meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
        namespace, name, uid = meta.get("namespace", ""), meta["name"], meta["uid"]
        qos = status.get("qosClass", "")
        specs = {c["name"]: c for c in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]}
        running = [s for s in [*(status.get("initContainerStatuses") or ()), *(status.get("containerStatuses") or ())]
                   if ((s.get("state") or {}).get("running") is not None and s.get("containerID"))]
        if not running:
            return []  # no container, no sandbox to account for
        pod_cgroup_state = self._pods.get(uid)
        if pod_cgroup_state is None:
            started = _time(status.get("startTime")) or now
            pod_cgroup_state = self._pods[uid] = _Cgroup(now, {"id": pod_cgroup(uid, qos), "namespace": namespace,
                                                               "pod": name}, None, started)
        seen_pods.add(uid)
        groups = []
        pod_memory = 0
        for cs in running:
            container_id = cs["containerID"].split("://", 1)[-1]
            seen_containers.add(container_id)
            cgroup = self._containers.get(container_id)
            if cgroup is None:
                started = _time(cs["state"]["running"].get("startedAt")) or now
                exposed = {"container": cs["name"], "id": container_cgroup(uid, qos, container_id),
                           "image": cs.get("image", ""), "name": container_id, "namespace": namespace, "pod": name}
                cgroup = self._containers[container_id] = _Cgroup(min(started, now), exposed,
                                                                  _cpu_limit(specs.get(cs["name"])), started)
            points = history.get((namespace, name, cs["name"]), ())
            added = cgroup.account.advance(points, now, cgroup.limit)
            pod_cgroup_state.account.cpu_seconds += added
            cgroup.memory = memory_at(points, now) or 0
            pod_memory += cgroup.memory
            groups.append(cgroup.refresh(target))
        pod_cgroup_state.memory = pod_memory
        groups.append(pod_cgroup_state.refresh(target))
        return groups


def _cpu_limit(container: dict | None) -> int | None:
    limit = (((container or {}).get("resources") or {}).get("limits") or {}).get("cpu")
    if limit is None:
        return None
    return int(quantity.value(limit) * 10 ** 9)


def _time(text: str | None) -> float | None:
    return parse_time(text) if text else None


def _internal_ip(node: dict) -> str:
    for address in (node.get("status") or {}).get("addresses") or ():
        if address.get("type") == "InternalIP":
            return address.get("address", "")
    return node["metadata"]["name"]


def _kubelet_running(node: dict) -> bool:
    for condition in (node.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False

