"""HorizontalPodAutoscaler printer (autoscaling/v2 and v1): REFERENCE, TARGETS, MINPODS, MAXPODS, REPLICAS."""

from __future__ import annotations

from .. import conversion
from .core import Column, age, age_column, api_doc, name_column, register
from ...quantity import printable as canonical

SHOWN_METRICS = 2


def _quantity(value: str | None) -> str:
    """A Quantity pointer's String(): ``<nil>`` when it is not set."""
    return "<nil>" if value is None else canonical(str(value))


def _current(status: dict | None) -> dict | None:
    """A metric status's current values; None when the status has no entry for this kind of metric."""
    return None if status is None else status.get("current") or {}


def _value_target(source: dict, status: dict | None) -> str:
    """External and Object metrics: an average value ``1/2 (avg)``, otherwise a plain value ``1/2``."""
    target = source.get("target") or {}
    current = _current(status)
    if target.get("averageValue") is not None:
        value = None if current is None else current.get("averageValue")
        shown = "<unknown>" if value is None else canonical(str(value))
        return f"{shown}/{_quantity(target['averageValue'])} (avg)"
    shown = "<unknown>" if current is None else _quantity(current.get("value"))
    return f"{shown}/{_quantity(target.get('value'))}"


def _resource_target(source: dict, status: dict | None) -> str:
    """Resource and ContainerResource metrics: ``cpu: 45%/80%`` or ``memory: 100Mi/200Mi``."""
    target = source.get("target") or {}
    current = _current(status)
    name = source.get("name", "")
    if target.get("averageValue") is not None:
        shown = "<unknown>" if current is None else _quantity(current.get("averageValue"))
        return f"{name}: {shown}/{_quantity(target['averageValue'])}"
    utilization = None if current is None else current.get("averageUtilization")
    shown = "<unknown>" if utilization is None else f"{utilization}%"
    wanted = "<auto>" if target.get("averageUtilization") is None else f"{target['averageUtilization']}%"
    return f"{name}: {shown}/{wanted}"


def _pods_target(source: dict, status: dict | None) -> str:
    current = _current(status)
    shown = "<unknown>" if current is None else _quantity(current.get("averageValue"))
    return f"{shown}/{_quantity((source.get('target') or {}).get('averageValue'))}"


def format_metrics(specs: list[dict], statuses: list[dict]) -> str:
    """The TARGETS cell: each metric as current/target, statuses matched to specs by position."""
    if not specs:
        return "<none>"
    cells = []
    for i, spec in enumerate(specs):
        status = statuses[i] if i < len(statuses) else {}
        kind = spec.get("type")
        if kind == "External":
            cells.append(_value_target(spec.get("external") or {}, status.get("external")))
        elif kind == "Pods":
            cells.append(_pods_target(spec.get("pods") or {}, status.get("pods")))
        elif kind == "Object":
            cells.append(_value_target(spec.get("object") or {}, status.get("object")))
        elif kind == "Resource":
            cells.append(_resource_target(spec.get("resource") or {}, status.get("resource")))
        elif kind == "ContainerResource":
            cells.append(_resource_target(spec.get("containerResource") or {}, status.get("containerResource")))
        else:
            cells.append("<unknown type>")
    if len(cells) > SHOWN_METRICS:
        return f"{', '.join(cells[:SHOWN_METRICS])} + {len(cells) - SHOWN_METRICS} more..."
    return ", ".join(cells)


def hpa_row(obj: dict, now: float) -> list:
    # The server prints every version from the same internal form, which v2 mirrors.
    hpa = conversion.convert(obj, "autoscaling/v2")
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    min_replicas = spec.get("minReplicas")
    return [obj["metadata"].get("name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}",
            format_metrics(spec.get("metrics") or [], status.get("currentMetrics") or []),
            "<unset>" if min_replicas is None else str(min_replicas), spec.get("maxReplicas", 0),
            status.get("currentReplicas", 0), age(obj, now)]


register("autoscaling", "HorizontalPodAutoscaler", [
    name_column(),
    Column("Reference", description=api_doc("autoscaling.v2.HorizontalPodAutoscalerSpec", "scaleTargetRef")),
    Column("Targets", description=api_doc("autoscaling.v2.HorizontalPodAutoscalerSpec", "metrics")),
    Column("MinPods", description=api_doc("autoscaling.v2.HorizontalPodAutoscalerSpec", "minReplicas")),
    Column("MaxPods", description=api_doc("autoscaling.v2.HorizontalPodAutoscalerSpec", "maxReplicas")),
    Column("Replicas", description=api_doc("autoscaling.v2.HorizontalPodAutoscalerStatus", "currentReplicas")),
    age_column(),
], hpa_row)
