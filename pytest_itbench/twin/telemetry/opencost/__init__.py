"""OpenCost in the twin: its custom pricing, its Prometheus metrics and its allocation API.

    opencost = OpenCost(store, engine, clock.now, seed=1)
    scrape_loop.add(opencost.exporter)             # job "opencost": node, container, volume cost series
    app = opencost.app()                            # /allocation/compute, /allocation, /healthz
    opencost.pricing.on_problem = record_event      # a malformed pricing ConfigMap, made visible

What ITBench's FinOps scenarios install on a real cluster (OpenCost's Helm chart in namespace ``opencost``,
custom pricing, scraped by the cluster's Prometheus), played from cluster state: prices from the chart's
ConfigMap (:mod:`.pricing`), node and volume prices from the objects (:mod:`.assets`), the emitter's series
(:mod:`.cost_metrics`, :mod:`.kube_metrics`, :mod:`.exporter`), and allocations computed from the twin's
Prometheus as OpenCost computes them from its own (:mod:`.allocation` and the modules it uses).
"""

from __future__ import annotations

import random
from typing import Callable

from aiohttp import web

from ...store import Store
from ..promql import Engine
from .api import create_opencost_app
from .exporter import OpenCostExporter, target
from .pricing import CONFIGMAP, DEFAULTS, KEY, NAMESPACE, CustomPricing, PricingSource

__all__ = ["CONFIGMAP", "DEFAULTS", "KEY", "NAMESPACE", "CustomPricing", "OpenCost", "PricingSource"]


class OpenCost:
    def __init__(self, store: Store, engine: Engine, now: Callable[[], float], *, seed: int):
        self.engine = engine
        self.now = now
        self.pricing = PricingSource(store)
        # The pod's address comes from a generator of its own, leaving the monitoring stack's draws unchanged.
        self.exporter = OpenCostExporter(store, engine, self.pricing, target(random.Random(f"opencost:{seed}")))

    def app(self) -> web.Application:
        return create_opencost_app(self.engine, self.pricing, self.now)
