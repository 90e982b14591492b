"""Aggregating, sharing idle and accumulating allocations, as OpenCost's ``AllocationSet.AggregateBy`` and
``AllocationSetRange.Accumulate`` do for ``/allocation/compute``.

An allocation's key is its values of the ``aggregate`` properties joined with ``/``; a missing controller,
label or service gives ``__unallocated__``. Allocations with the same key are added up. Idle allocations
stay apart and end up merged as ``__idle__``; with ``shareIdle`` they are instead spread over the other
allocations of their cluster, each resource in proportion to what each allocation was charged for it (what
cannot be spread, because nothing was charged for that resource, stays as ``__idle__``).
"""

from __future__ import annotations

from typing import Iterable

from .kube_metrics import label_name
from .model import IDLE, UNALLOCATED, UNMOUNTED, Allocation

DEFAULT_AGGREGATION = ("cluster", "node", "namespace", "pod", "container")
PROPERTIES = {"cluster": "cluster", "node": "node", "container": "container", "controller": "controller",
              "controllerkind": "controllerKind", "namespace": "namespace", "pod": "pod", "providerid": "providerID",
              "service": "service", "label": "label", "annotation": "annotation", "deployment": "deployment",
              "statefulset": "statefulset", "daemonset": "daemonset", "job": "job", "department": "department",
              "environment": "environment", "owner": "owner", "product": "product", "team": "team"}
# OpenCost's default label configuration: which label each business property reads.
_BUSINESS_LABELS = {"department": "department", "environment": "env", "owner": "owner", "product": "app",
                    "team": "team"}


class AggregateError(ValueError):
    pass


def parse_aggregate(values: list[str] | None) -> list[str]:
    """OpenCost's ``ParseAggregationProperties``; the twin refuses a property OpenCost would silently drop."""
    if not values:
        return list(DEFAULT_AGGREGATION)
    if values == ["all"]:
        return []
    out: list[str] = []
    for value in values:
        text = value.strip()
        if not text:
            continue
        name = PROPERTIES.get(text.lower())
        if name is not None and name not in ("label", "annotation"):
            prop = name
        elif text.startswith("label:") or text.startswith("annotation:"):
            prop = text
        else:
            known = ", ".join(sorted(set(PROPERTIES.values()) - {"label", "annotation"}))
            raise AggregateError(f"unknown property {text!r}; expected one of {known}, label:<name>, "
                                 f"annotation:<name>")
        if prop not in out:
            out.append(prop)
    return out


def generate_key(alloc: Allocation, aggregate_by: list[str]) -> str:
    p = alloc.properties
    names = []
    for prop in aggregate_by:
        if prop in ("cluster", "node", "namespace", "pod", "container"):
            names.append(getattr(p, prop))
        elif prop == "controllerKind":
            names.append(p.controller_kind or UNALLOCATED)
        elif prop in ("deployment", "statefulset", "daemonset", "job"):
            names.append(p.controller if p.controller_kind == prop and p.controller else UNALLOCATED)
        elif prop == "controller":
            names.append(UNALLOCATED if not p.controller else
                         f"{p.controller_kind}:{p.controller}" if p.controller_kind else p.controller)
        elif prop == "service":
            if not p.services:
                names.append(UNALLOCATED)
            elif UNMOUNTED in (p.pod, p.namespace, p.container):
                names.append(UNMOUNTED)
            else:
                names.append(p.services[0])
        elif prop.startswith("label:"):
            names.append(_label(p.labels, prop[len("label:"):]))
        elif prop.startswith("annotation:"):
            names.append(UNALLOCATED)  # the twin's OpenCost exports no annotations (as OpenCost by default)
        elif prop in _BUSINESS_LABELS:
            names.append(_label(p.labels, _BUSINESS_LABELS[prop]))
        # providerID: OpenCost's key generator ignores it, so does the twin
    return "/".join(names)


def _label(labels: dict[str, str] | None, name: str) -> str:
    if labels is None:
        return UNALLOCATED
    return labels.get(label_name(name), UNALLOCATED)


def aggregate(allocations: Iterable[Allocation], aggregate_by: list[str], *, share_idle: bool = False,
              aggregated_metadata: bool = False) -> dict[str, Allocation]:
    allocations = list(allocations)
    if aggregated_metadata:
        for alloc in allocations:
            alloc.properties.aggregated_metadata = True
    idles = [a for a in allocations if a.is_idle]
    others = [a for a in allocations if not a.is_idle]
    out: dict[str, Allocation] = {}
    if not share_idle:
        for idle in idles:
            _insert(out, idle.name, idle)
    totals = {"cpu": sum(a.cpu_cost for a in others), "ram": sum(a.ram_cost for a in others),
              "gpu": sum(a.gpu_cost for a in others)}
    for alloc in others:
        if share_idle:
            for idle in idles:
                if idle.properties.cluster == alloc.properties.cluster:
                    alloc.cpu_cost += idle.cpu_cost * _share(alloc.cpu_cost, totals["cpu"])
                    alloc.ram_cost += idle.ram_cost * _share(alloc.ram_cost, totals["ram"])
                    alloc.gpu_cost += idle.gpu_cost * _share(alloc.gpu_cost, totals["gpu"])
        key = generate_key(alloc, aggregate_by)
        alloc.name = key
        _insert(out, key, alloc)
    if share_idle:
        for idle in idles:  # what could not be spread: idle cost of a resource nothing was charged for
            kept = False
            for resource, attribute in (("cpu", "cpu_cost"), ("ram", "ram_cost"), ("gpu", "gpu_cost")):
                if getattr(idle, attribute) > 0 and totals[resource] == 0:
                    kept = True
                else:
                    setattr(idle, attribute, 0.0)
            if kept:
                _insert(out, idle.name, idle)
    for key in [k for k in out if IDLE in k]:  # every idle allocation ends up as one "__idle__"
        idle = out.pop(key)
        idle.name = IDLE
        _insert(out, IDLE, idle)
    return out


def _share(part: float, total: float) -> float:
    return part / total if total > 0 else 0.0


def _insert(out: dict[str, Allocation], key: str, alloc: Allocation) -> None:
    if key in out:
        out[key].add(alloc)
    else:
        out[key] = alloc


def accumulate(sets: list[dict[str, Allocation]]) -> dict[str, Allocation]:
    """One set from many: allocations with the same name added up across the steps."""
    total: dict[str, Allocation] = {}
    for allocations in sets:
        for name, alloc in allocations.items():
            if name in total:
                total[name].add(alloc)
            else:
                total[name] = alloc.clone()
    return total
