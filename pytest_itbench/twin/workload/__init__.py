"""Applications in the twin: behaviour sheets, traffic, request outcomes, and the telemetry they produce.

    twin = Twin(seed=1, nodes=3)              # the engine is installed with the shipped sheets
    twin.workload.span_series()               # span metrics (a SpanMetricsSource)
    twin.workload.app_samples()               # Kafka consumer groups (an AppMetricsSource)
    twin.workload.send_traces(sink)           # sampled traces to a TraceSink
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Iterable

from .engine import Workload
from .sheet import Sheet, SheetError, load_sheet

APPS_DIR = Path(__file__).resolve().parents[2] / "apps"


def shipped_sheets() -> list[Sheet]:
    """The behaviour sheets of the applications pytest-itbench ships (``apps/*/behaviour.yaml``)."""
    return [load_sheet(path) for path in sorted(APPS_DIR.glob("*/behaviour.yaml"))]


def install(twin, sheets: Iterable[Sheet] | None = None) -> Workload:
    """The traffic engine for ``twin`` and, when its kubelet runs, Chaos Mesh's resources and controllers."""
    from .chaos import install as install_chaos

    kubelet = next((c for c in twin.controllers.controllers if c.name == "kubelet"), None)
    workload = Workload(twin.store, twin.clock, random.Random(f"{twin.seed}:workload"), twin.logs, kubelet,
                        shipped_sheets() if sheets is None else sheets)
    if kubelet is not None:  # Chaos Mesh acts on pods: a twin without a kubelet (the API server alone) has none
        install_chaos(twin, workload)
    # What consumes it: the trace store, the topology's call edges, the collector's span and app metrics.
    workload.send_traces(twin.traces)
    twin.topology.call_graph = workload
    if twin.monitoring is not None:
        twin.monitoring.collector.add_spans(workload)
        twin.monitoring.collector.add_app_metrics(workload)
    return workload


__all__ = ["Sheet", "SheetError", "Workload", "install", "load_sheet", "shipped_sheets"]
