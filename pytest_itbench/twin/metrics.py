"""Resource usage of pods and nodes, as metrics-server reports it (fed by whoever models usage).

Whoever models usage (the kubelet, the workload simulation) sets the current
CPU rate and memory working set of each pod container and each node. What
the metrics API serves follows metrics-server: it scrapes every
``resolution`` seconds (15 s by default), reports the scrape time as
``timestamp`` and the interval between its last two scrapes as ``window``,
reports CPU as the average rate over that window and memory as the working
set at the last scrape, and shows a container only once it has been seen at
two scrapes in a row, or, for a container started less than one resolution
and at least 10 s before the last scrape, from its start (metrics-server
counts the start as a point with no CPU used). So usage set now appears within one or two scrapes,
and a pod that stopped using CPU fades out the way it does on a cluster.

Scrapes happen on a fixed grid of the twin's clock (multiples of
``resolution``), which keeps the numbers deterministic.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from fractions import Fraction

from . import quantity
from .clock import SimClock
from .store import Change, Store

DEFAULT_RESOLUTION = 15.0  # metrics-server's --metric-resolution
FRESH_CONTAINER_MIN_AGE = 10.0  # metrics-server's freshContainerMinMetricsResolution


@dataclass(frozen=True)
class Usage:
    cpu_nanocores: int
    memory_bytes: int

    def resources(self) -> dict[str, str]:
        """The ``usage`` map in the units metrics-server writes: nanocores and BinarySI bytes."""
        return {"cpu": quantity.format_decimal(Fraction(self.cpu_nanocores, 10 ** 9)),
                "memory": quantity.format_binary(self.memory_bytes)}


@dataclass(frozen=True)
class Sample:
    """What metrics-server reports for one pod or node at its last scrape."""

    timestamp: float
    window: float
    usage: dict[str, Usage]  # by container name; a node's usage is under ""


_Point = tuple[float, "Usage | None"]  # (time set, usage from then on; None once cleared)


class _Series:
    """The usage of one container or node over the last two scrapes."""

    def __init__(self) -> None:
        self.points: list[_Point] = []
        self.started: float | None = None  # when the container (re)started: usage set after none

    def set(self, t: float, usage: Usage | None) -> None:
        while self.points and self.points[-1][0] >= t:
            self.points.pop()
        if usage is None:
            self.started = None
        elif self.started is None or not self.points or self.points[-1][1] is None:
            self.started = t
        self.points.append((t, usage))

    def before(self, t: float) -> Usage | None:
        """The usage in effect just before ``t`` (a scrape at ``t`` does not see a value set at ``t``)."""
        found = None
        for when, usage in self.points:
            if when >= t:
                break
            found = usage
        return found

    def mean_cpu(self, start: float, end: float) -> int:
        """Average CPU rate over [start, end], as metrics-server derives it from cumulative CPU time."""
        total = 0.0
        for i, (when, usage) in enumerate(self.points):
            until = self.points[i + 1][0] if i + 1 < len(self.points) else end
            lo, hi = max(when, start), min(until, end)
            if hi > lo and usage is not None:
                total += usage.cpu_nanocores * (hi - lo)
        return int(total / (end - start))

    def forget_before(self, t: float) -> None:
        """Drop points superseded before ``t``, keeping the one in effect just before ``t``."""
        while len(self.points) > 1 and self.points[1][0] < t:
            self.points.pop(0)


class Metrics:
    """Usage per pod container and per node, read back as metrics-server would serve it."""

    def __init__(self, clock: SimClock, store: Store, resolution: float = DEFAULT_RESOLUTION):
        self.clock = clock
        self.resolution = resolution
        self._lock = threading.Lock()
        self._pods: dict[tuple[str, str], dict[str, _Series]] = {}
        self._nodes: dict[str, _Series] = {}
        store.on_write(self._forget_deleted)

    # ---- writing (the kubelet's side) --------------------------------------------------------------
    def set_pod_usage(self, namespace: str, pod: str, container: str, *, cpu: str | float,
                      memory: str | int) -> None:
        """A container's current CPU rate (cores, or a quantity like ``250m``) and memory (bytes or ``64Mi``)."""
        with self._lock:
            series = self._pods.setdefault((namespace, pod), {}).setdefault(container, _Series())
            self._record(series, _usage(cpu, memory))

    def clear_pod_usage(self, namespace: str, pod: str, container: str | None = None) -> None:
        """The container (or every container of the pod) stopped; its usage is no longer scraped."""
        with self._lock:
            containers = self._pods.get((namespace, pod), {})
            for name, series in containers.items():
                if container is None or name == container:
                    self._record(series, None)

    def set_node_usage(self, node: str, *, cpu: str | float, memory: str | int) -> None:
        with self._lock:
            self._record(self._nodes.setdefault(node, _Series()), _usage(cpu, memory))

    def clear_node_usage(self, node: str) -> None:
        with self._lock:
            series = self._nodes.get(node)
            if series is not None:
                self._record(series, None)

    def _record(self, series: _Series, usage: Usage | None) -> None:
        now = self.clock.now()
        series.set(now, usage)
        series.forget_before(self.last_scrape(now) - self.resolution)

    def _forget_deleted(self, change: Change) -> None:
        if change.type != "DELETED" or change.bucket not in ("pods", "nodes"):
            return
        meta = change.obj["metadata"]
        with self._lock:
            if change.bucket == "pods":
                self._pods.pop((meta.get("namespace", ""), meta["name"]), None)
            else:
                self._nodes.pop(meta["name"], None)

    # ---- reading (the metrics API's side) ------------------------------------------------------------
    def last_scrape(self, now: float | None = None) -> float:
        now = self.clock.now() if now is None else now
        return math.floor(now / self.resolution) * self.resolution

    def pod_sample(self, namespace: str, pod: str) -> Sample | None:
        """The pod's containers as of the last scrape, or ``None`` if metrics-server has none yet."""
        with self._lock:
            containers = self._pods.get((namespace, pod))
            if not containers:
                return None
            return self._sample(containers, containers_start_fresh=True)

    def node_sample(self, node: str) -> Sample | None:
        with self._lock:
            series = self._nodes.get(node)
            return self._sample({"": series}, containers_start_fresh=False) if series is not None else None

    def pod_usage_history(self, start: float) -> dict[tuple[str, str, str], list[tuple[float, Usage | None]]]:
        """Every pod container's usage from ``start`` on, as (time set, usage from then on) points, the first
        one in effect at ``start`` (its time may be earlier); keyed by (namespace, pod, container).

        What cAdvisor integrates into cumulative counters. History is kept back to one resolution before
        the last metrics-server scrape, so ``start`` should be no earlier than that.
        """
        with self._lock:
            out: dict[tuple[str, str, str], list[tuple[float, Usage | None]]] = {}
            for (namespace, pod), containers in self._pods.items():
                for name, series in containers.items():
                    points = series.points
                    first = 0
                    while first + 1 < len(points) and points[first + 1][0] <= start:
                        first += 1
                    out[(namespace, pod, name)] = points[first:]
            return out

    def _sample(self, series_by_name: dict[str, _Series], containers_start_fresh: bool) -> Sample | None:
        scrape = self.last_scrape()
        start = scrape - self.resolution
        usage: dict[str, Usage] = {}
        window = self.resolution
        for name, series in series_by_name.items():
            last = series.before(scrape)
            if last is None:
                continue
            since = start
            age = scrape - series.started if series.started is not None else math.inf
            if containers_start_fresh and FRESH_CONTAINER_MIN_AGE <= age < self.resolution:
                # A container started since the scrape before: metrics-server takes its start, with no CPU
                # used yet, as the earlier point (pkg/storage/pod.go), if it started at least 10 s ago.
                since = series.started
            elif series.before(start) is None:
                # Seen at one scrape only: metrics-server needs two points for a rate and skips the pod.
                return None
            if not usage:
                window = scrape - since  # the pod's window is its first container's
            usage[name] = Usage(series.mean_cpu(since, scrape), last.memory_bytes)
        if not usage:
            return None
        return Sample(scrape, window, usage)


def _usage(cpu: str | float, memory: str | int) -> Usage:
    nanocores = math.ceil(quantity.value(cpu) * 10 ** 9)
    memory_bytes = math.ceil(quantity.value(memory))
    if nanocores < 0 or memory_bytes < 0:
        raise ValueError(f"usage cannot be negative (cpu={cpu!r}, memory={memory!r})")
    return Usage(nanocores, memory_bytes)
