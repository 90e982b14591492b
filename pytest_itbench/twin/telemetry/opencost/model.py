"""OpenCost's Allocation: what one container (or an aggregate) used and cost over a window, and its JSON.

Cumulative figures (core-hours, byte-hours, costs) add up when allocations are combined; averages
(requests, usage) are turned into cumulative ones by their minutes, added, and turned back; the window and the
start/end stretch to cover both; properties keep what both share (OpenCost's ``Allocation.add`` and
``AllocationProperties.Intersection``). Derived figures are computed when read, as OpenCost's methods do:
``cpuCores = cpuCoreHours / hours``, efficiency = usage / request (1 when nothing was requested but something
was used and paid for), ``totalEfficiency`` = the two efficiencies weighted by CPU and RAM cost.

The JSON is OpenCost's ``AllocationJSON``: the same fields in the same order, times in RFC 3339, every figure
rounded to five decimals as ``formatFloat64ForResponse`` rounds it (NaN and infinities as ``null``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .window import format_rfc3339

IDLE = "__idle__"
UNALLOCATED = "__unallocated__"
UNMOUNTED = "__unmounted__"


@dataclass
class Properties:
    cluster: str = ""
    node: str = ""
    container: str = ""
    controller: str = ""
    controller_kind: str = ""
    namespace: str = ""
    pod: str = ""
    services: list[str] = field(default_factory=list)
    provider_id: str = ""
    labels: dict[str, str] | None = None
    namespace_labels: dict[str, str] | None = None
    aggregated_metadata: bool = False  # includeAggregatedMetadata: keep the labels all aggregated ones share

    def copy(self) -> "Properties":
        return Properties(self.cluster, self.node, self.container, self.controller, self.controller_kind,
                          self.namespace, self.pod, list(self.services), self.provider_id,
                          None if self.labels is None else dict(self.labels),
                          None if self.namespace_labels is None else dict(self.namespace_labels),
                          self.aggregated_metadata)

    def intersection(self, other: "Properties") -> "Properties":
        """What both share (OpenCost's ``Intersection``): labels only with aggregated metadata, services never."""
        same = Properties()
        for name in ("cluster", "node", "container", "controller", "controller_kind", "namespace"):
            if getattr(self, name) == getattr(other, name):
                setattr(same, name, getattr(self, name))
        if self.namespace == other.namespace:
            # Unmounted volumes carry no namespace labels: take the other side's, as OpenCost does.
            source = other if self.container == UNMOUNTED else self
            same.namespace_labels = None if source.namespace_labels is None else dict(source.namespace_labels)
            if self.aggregated_metadata or other.aggregated_metadata:
                same.aggregated_metadata = True
                if self.container == UNMOUNTED:  # special allocations never have labels: ignore them
                    same.labels = None if other.labels is None else dict(other.labels)
                elif other.container == UNMOUNTED:
                    same.labels = None if self.labels is None else dict(self.labels)
                else:
                    same.labels = {k: v for k, v in (self.labels or {}).items() if (other.labels or {}).get(k) == v}
        if self.pod == other.pod:
            same.pod = self.pod
        if self.provider_id == other.provider_id:
            same.provider_id = self.provider_id
        return same

    def to_json(self) -> dict:
        out: dict = {}
        for key, value in (("cluster", self.cluster), ("node", self.node), ("container", self.container),
                           ("controller", self.controller), ("controllerKind", self.controller_kind),
                           ("namespace", self.namespace), ("pod", self.pod), ("services", self.services),
                           ("providerID", self.provider_id), ("labels", self.labels),
                           ("namespaceLabels", self.namespace_labels)):
            if value:  # omitempty
                out[key] = dict(value) if isinstance(value, dict) else list(value) if isinstance(value, list) \
                    else value
        return out


@dataclass
class PVAllocation:
    byte_hours: float = 0.0
    cost: float = 0.0
    provider_id: str = ""


@dataclass
class Allocation:
    name: str
    properties: Properties
    window: tuple[float, float]
    start: float
    end: float
    cpu_core_hours: float = 0.0
    cpu_core_request_average: float = 0.0
    cpu_core_usage_average: float = 0.0
    cpu_cost: float = 0.0
    gpu_hours: float = 0.0
    gpu_request_average: float = 0.0
    gpu_cost: float = 0.0
    ram_byte_hours: float = 0.0
    ram_bytes_request_average: float = 0.0
    ram_bytes_usage_average: float = 0.0
    ram_cost: float = 0.0
    load_balancer_cost: float = 0.0
    shared_cost: float = 0.0
    external_cost: float = 0.0
    pvs: dict[str, PVAllocation] = field(default_factory=dict)  # by OpenCost's PV key "cluster=<c>:name=<pv>"

    # ---- derived figures (OpenCost's methods) -----------------------------------------------------------------
    @property
    def minutes(self) -> float:
        return (self.end - self.start) / 60.0

    def _per_hour(self, cumulative: float) -> float:
        return cumulative / (self.minutes / 60.0) if self.minutes > 0 else 0.0

    @property
    def pv_cost(self) -> float:
        return sum(pv.cost for pv in self.pvs.values())

    @property
    def pv_byte_hours(self) -> float:
        return sum(pv.byte_hours for pv in self.pvs.values())

    @property
    def cpu_efficiency(self) -> float:
        return _efficiency(self.cpu_core_usage_average, self.cpu_core_request_average, self.cpu_cost)

    @property
    def ram_efficiency(self) -> float:
        return _efficiency(self.ram_bytes_usage_average, self.ram_bytes_request_average, self.ram_cost)

    @property
    def total_cost(self) -> float:
        return (self.cpu_cost + self.gpu_cost + self.ram_cost + self.pv_cost + self.load_balancer_cost
                + self.shared_cost + self.external_cost)

    @property
    def total_efficiency(self) -> float:
        spent = self.cpu_cost + self.ram_cost
        if spent <= 0:
            return 0.0
        return (self.cpu_efficiency * self.cpu_cost + self.ram_efficiency * self.ram_cost) / spent

    @property
    def is_idle(self) -> bool:
        return IDLE in self.name

    # ---- combining ----------------------------------------------------------------------------------------------
    def clone(self) -> "Allocation":
        copy = Allocation(**{name: getattr(self, name) for name in self.__dataclass_fields__})
        copy.properties = self.properties.copy()
        copy.pvs = {k: PVAllocation(v.byte_hours, v.cost, v.provider_id) for k, v in self.pvs.items()}
        return copy

    def add(self, other: "Allocation") -> None:
        """Fold ``other`` into this allocation (OpenCost's ``Allocation.add``)."""
        same_container = self._container_key() == other._container_key()
        left_controller, right_controller = self.properties.controller, other.properties.controller
        self.properties = self.properties.intersection(other.properties)
        if same_container and left_controller != right_controller:
            self.properties.controller = (left_controller or right_controller if not (left_controller and
                                          right_controller) else min(left_controller, right_controller))
        self.window = (min(self.window[0], other.window[0]), max(self.window[1], other.window[1]))
        averages = [(a * self.minutes + b * other.minutes) for a, b in (
            (self.cpu_core_request_average, other.cpu_core_request_average),
            (self.cpu_core_usage_average, other.cpu_core_usage_average),
            (self.ram_bytes_request_average, other.ram_bytes_request_average),
            (self.ram_bytes_usage_average, other.ram_bytes_usage_average),
            (self.gpu_request_average, other.gpu_request_average))]
        self.start, self.end = min(self.start, other.start), max(self.end, other.end)
        minutes = self.minutes
        (self.cpu_core_request_average, self.cpu_core_usage_average, self.ram_bytes_request_average,
         self.ram_bytes_usage_average, self.gpu_request_average) = (
            [total / minutes for total in averages] if minutes > 0 else [0.0] * 5)
        for name in ("cpu_core_hours", "gpu_hours", "ram_byte_hours", "cpu_cost", "gpu_cost", "ram_cost",
                     "load_balancer_cost", "shared_cost", "external_cost"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for key, pv in other.pvs.items():
            mine = self.pvs.setdefault(key, PVAllocation(provider_id=pv.provider_id))
            mine.byte_hours += pv.byte_hours
            mine.cost += pv.cost

    def _container_key(self) -> tuple:
        p = self.properties
        return p.cluster, p.node, p.namespace, p.pod, p.container

    # ---- JSON ---------------------------------------------------------------------------------------------------
    def to_json(self) -> dict:
        r = _rounded
        hours_cpu = self._per_hour(self.cpu_core_hours)
        return {
            "name": self.name,
            "properties": self.properties.to_json(),
            "window": {"start": format_rfc3339(self.window[0]), "end": format_rfc3339(self.window[1])},
            "start": format_rfc3339(self.start),
            "end": format_rfc3339(self.end),
            "minutes": r(self.minutes),
            "cpuCores": r(hours_cpu),
            "cpuCoreRequestAverage": r(self.cpu_core_request_average),
            "cpuCoreUsageAverage": r(self.cpu_core_usage_average),
            "cpuCoreHours": r(self.cpu_core_hours),
            "cpuCost": r(self.cpu_cost),
            "cpuCostAdjustment": 0,
            "cpuCostIdle": 0,
            "cpuEfficiency": r(self.cpu_efficiency),
            "gpuCount": r(self._per_hour(self.gpu_hours)),
            "gpuRequestAverage": r(self.gpu_request_average),
            "gpuUsageAverage": 0,
            "gpuHours": r(self.gpu_hours),
            "gpuCost": r(self.gpu_cost),
            "gpuCostAdjustment": 0,
            "gpuCostIdle": 0,
            "gpuEfficiency": 0,
            "networkTransferBytes": 0,
            "networkReceiveBytes": 0,
            "networkCost": 0,
            "networkCrossZoneCost": 0,
            "networkCrossRegionCost": 0,
            "networkInternetCost": 0,
            "networkCostAdjustment": 0,
            "loadBalancerCost": r(self.load_balancer_cost),
            "loadBalancerCostAdjustment": 0,
            "pvBytes": r(self._per_hour(self.pv_byte_hours)),
            "pvByteHours": r(self.pv_byte_hours),
            "pvCost": r(self.pv_cost),
            "pvs": {key: {"byteHours": _plain(pv.byte_hours), "cost": _plain(pv.cost), "providerID": pv.provider_id,
                          "adjustment": 0} for key, pv in sorted(self.pvs.items())} or None,
            "pvCostAdjustment": 0,
            "ramBytes": r(self._per_hour(self.ram_byte_hours)),
            "ramByteRequestAverage": r(self.ram_bytes_request_average),
            "ramByteUsageAverage": r(self.ram_bytes_usage_average),
            "ramByteHours": r(self.ram_byte_hours),
            "ramCost": r(self.ram_cost),
            "ramCostAdjustment": 0,
            "ramCostIdle": 0,
            "ramEfficiency": r(self.ram_efficiency),
            "externalCost": r(self.external_cost),
            "sharedCost": r(self.shared_cost),
            "totalCost": r(self.total_cost),
            "totalEfficiency": r(self.total_efficiency),
            "proportionalAssetResourceCosts": {},
            "lbAllocations": None,
            "sharedCostBreakdown": {},
        }


def pv_key(cluster: str, volume: str) -> str:
    return f"cluster={cluster}:name={volume}"


def _efficiency(usage: float, request: float, cost: float) -> float:
    if request > 0:
        return usage / request
    if usage == 0 or cost == 0:
        return 0.0
    return 1.0


def _rounded(value: float) -> float | int | None:
    """``formatFloat64ForResponse``: five decimals; NaN and infinities become null."""
    if math.isnan(value) or math.isinf(value):
        return None
    scaled = value * 100000
    whole = math.trunc(scaled)
    if abs(scaled - whole) >= 0.5:  # Go's math.Round: halves away from zero (Python's round goes to even)
        whole += 1 if scaled > 0 else -1
    return _plain(whole / 100000.0)


def _plain(value: float) -> float | int:
    """A whole float as an integer, so the JSON reads ``60`` where Go writes ``60`` (not ``60.0``)."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return int(value)
    return value
