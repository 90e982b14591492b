"""What kube-state-metrics' family generators share: headers, rows, conditions, owners, quantities, times.

The reference is kube-state-metrics v2.20.0, the version kube-prometheus-stack 88.5 (ITBench's)
deploys. A family's ``# HELP`` starts with ``[STABLE]`` when the family is stable, as its header
generator writes it.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

from .... import quantity
from ....clock import parse_time
from ..base import MetricFamily

# One series: its family, its labels beyond the object's own, its value.
Row = tuple[MetricFamily, Mapping[str, str], float]

CONDITION_STATUSES = ("true", "false", "unknown")


def family(name: str, help: str, type: str = "gauge", *, stable: bool = False) -> MetricFamily:
    return MetricFamily(name, type, f"[STABLE] {help}" if stable else help)


def flag(value: bool) -> float:
    return 1.0 if value else 0.0


def condition_rows(fam: MetricFamily, status: str, *, label: str = "condition",
                   extra: Mapping[str, str] | None = None) -> Iterable[Row]:
    """One series per condition status, 1 for the condition's own (``addConditionMetrics``)."""
    for candidate in CONDITION_STATUSES:
        yield fam, {**(extra or {}), label: candidate}, flag(status.lower() == candidate)


def conditions_by_type(fam: MetricFamily, conditions: Iterable[Mapping]) -> Iterable[Row]:
    """``condition`` and ``status`` labels for every condition of an object (nodes, namespaces, HPAs, claims)."""
    for condition in conditions:
        yield from condition_rows(fam, condition.get("status", ""), label="status",
                                  extra={"condition": condition.get("type", "")})


def owner_rows(fam: MetricFamily, meta: Mapping, *, controller_label: bool = True) -> Iterable[Row]:
    """Owners of an object; one series with empty owner labels when it has none."""
    owners = meta.get("ownerReferences") or ()
    if not owners:
        empty = {"owner_kind": "", "owner_name": ""}
        yield fam, ({**empty, "owner_is_controller": ""} if controller_label else empty), 1.0
        return
    for owner in owners:
        labels = {"owner_kind": owner.get("kind", ""), "owner_name": owner.get("name", "")}
        if controller_label:
            labels["owner_is_controller"] = "true" if owner.get("controller") else "false"
        yield fam, labels, 1.0


def unix(text: str | None) -> float | None:
    """A metav1.Time as ``.Unix()`` gives it: whole seconds."""
    return float(math.floor(parse_time(text))) if text else None


def timestamp_row(fam: MetricFamily, text: str | None, labels: Mapping[str, str] | None = None) -> Iterable[Row]:
    seconds = unix(text)
    if seconds is not None:
        yield fam, labels or {}, seconds


def quantity_value(text: str | int | float) -> float:
    """``Quantity.Value()``: rounded up to an integer."""
    return float(math.ceil(quantity.value(text)))


def quantity_milli(text: str | int | float) -> float:
    """``MilliValue() / 1000``: rounded up to the thousandth (how cores and node resources are reported)."""
    return math.ceil(quantity.value(text) * 1000) / 1000


def sanitize(name: str) -> str:
    """``SanitizeLabelName``: anything but letters, digits and ``_`` becomes ``_``."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch == "_") else "_" for ch in name)


def resource_rows(fam: MetricFamily, resources: Mapping[str, str], labels: Mapping[str, str],
                  *, milli_bytes: bool = False) -> Iterable[Row]:
    """Requests, limits, capacity or allocatable with ``resource`` and ``unit`` labels.

    CPU in cores; memory and storage in bytes (``milli_bytes``: nodes report them through
    ``MilliValue()/1000``, containers through ``Value()``); pods and extended resources as integers;
    hugepages in bytes.
    """
    for name, amount in resources.items():
        if name == "cpu":
            unit, value = "core", quantity_milli(amount)
        elif name in ("memory", "storage", "ephemeral-storage") or name.startswith("hugepages-") \
                or name.startswith("attachable-volumes-"):
            unit, value = "byte", quantity_milli(amount) if milli_bytes else quantity_value(amount)
        elif name == "pods" and milli_bytes:
            unit, value = "integer", quantity_milli(amount)
        elif "/" in name and "kubernetes.io/" not in name:  # an extended resource (domain-qualified)
            unit, value = "integer", quantity_milli(amount) if milli_bytes else quantity_value(amount)
        else:
            continue
        yield fam, {**labels, "resource": sanitize(name), "unit": unit}, value
