"""OpenCost's ``/metrics`` as the twin's Prometheus scrapes it: job ``opencost``.

OpenCost's install guide adds a scrape job to Prometheus (``job_name: opencost``, ``honor_labels: true``, the
Service ``opencost.opencost`` resolved to the pod's address, port 9003): the series keep OpenCost's own labels
(``instance`` is a node name on node and container series) and get ``job="opencost"`` and the pod's address as
``instance`` where they have none.

OpenCost recomputes its series once a minute (its emitter loop) and Prometheus scrapes whatever it last
computed; so does the twin: every scrape at least a minute after the last computation recomputes from the
store, the pricing and Prometheus, the others re-expose the same values. Series are grouped per object, and a
group whose label sets did not change keeps its store references.
"""

from __future__ import annotations

import logging
import random
from typing import Callable, Iterable

from ...store import Store
from .. import labels as lbl
from ..exporters.base import METRIC_NAME, SeriesGroup, TargetScrape, target_series_labels
from ..labels import Labels
from ..promql import Engine
from . import cost_metrics, kube_metrics
from .pricing import PricingSource

log = logging.getLogger(__name__)

JOB = "opencost"
PORT = 9003
EMIT_INTERVAL = 60.0  # seconds between recomputations, OpenCost's emitter loop


def target(rng: random.Random) -> Labels:
    """The scrape target: the OpenCost pod's address (drawn once; the pod is not an object of the twin)."""
    return lbl.from_mapping({"instance": f"10.244.{rng.randint(1, 3)}.{rng.randint(2, 254)}:{PORT}", "job": JOB})


class OpenCostExporter:
    job = JOB
    families = cost_metrics.FAMILIES + kube_metrics.FAMILIES

    def __init__(self, store: Store, engine: Engine, pricing: PricingSource, target_labels: Labels, *,
                 interval: float = EMIT_INTERVAL):
        self.store = store
        self.engine = engine
        self.pricing = pricing
        self.target = target_labels
        self.interval = interval
        self._groups: dict[tuple, SeriesGroup] = {}
        self._last: float | None = None

    def scrape(self, now: float) -> Iterable[TargetScrape]:
        if self._last is None or now - self._last >= self.interval - 1e-6:
            self._last = now
            try:
                self._emit(now)
            except Exception:  # OpenCost failing to compute leaves its last series, and Prometheus scraping
                log.exception("opencost: computing the cost metrics at %s failed", now)
        return [TargetScrape((JOB,), self.target, list(self._groups.values()))]

    # ---- one computation -----------------------------------------------------------------------------------
    def _emit(self, now: float) -> None:
        pricing = self.pricing.current(report=True)
        cpu_usage, ram_usage = cost_metrics.container_usage(self.engine, now)
        store = self.store
        pods = store.list("pods")[0]
        by_object: dict[tuple, list[cost_metrics.Row]] = {("cluster",): list(cost_metrics.cluster_rows(pricing))}

        def add(key: tuple, rows: Iterable[cost_metrics.Row]) -> None:
            by_object.setdefault(key, []).extend(rows)

        for node in store.list("nodes")[0]:
            add(("node", node["metadata"]["name"]),
                [*cost_metrics.node_rows(node, pricing), *kube_metrics.node_rows(node)])
        for pod in pods:
            meta = pod["metadata"]
            key = ("pod", meta.get("namespace", ""), meta["name"])
            add(key, kube_metrics.pod_rows(pod))
            if (pod.get("status") or {}).get("phase") == "Running" and (pod.get("spec") or {}).get("nodeName"):
                add(key, cost_metrics.container_rows(pod, cpu_usage, ram_usage))
        for row in cost_metrics.pvc_rows(pods, cost_metrics.claims_by_key(store)):
            add(("pod", row[1]["namespace"], row[1]["pod"]), [row])
        for volume in store.list("persistentvolumes")[0]:
            add(("pv", volume["metadata"]["name"]),
                [*cost_metrics.pv_rows(volume, pricing), *kube_metrics.pv_rows(volume)])
        for service in store.list("services")[0]:
            add(_key("service", service), [*cost_metrics.load_balancer_rows(service, pricing),
                                           *kube_metrics.service_rows(service)])
        self._objects(by_object, "deployments.apps", kube_metrics.deployment_rows)
        self._objects(by_object, "statefulsets.apps", kube_metrics.statefulset_rows)
        self._objects(by_object, "namespaces", kube_metrics.namespace_rows)
        self._groups = {key: self._group(key, rows) for key, rows in sorted(by_object.items()) if rows}

    def _objects(self, by_object: dict, bucket: str, rows: Callable[[dict], Iterable[cost_metrics.Row]]) -> None:
        for obj in self.store.list(bucket)[0]:
            found = list(rows(obj))
            if found:
                by_object.setdefault(_key(bucket, obj), []).extend(found)

    def _group(self, key: tuple, rows: list[cost_metrics.Row]) -> SeriesGroup:
        series: dict[Labels, float] = {}  # one value per label set (a claim mounted twice is one series)
        for name, exposed, value in rows:
            series[target_series_labels(self.target, {**exposed, METRIC_NAME: name}, honor_labels=True)] = value
        label_sets, values = list(series), [float(v) for v in series.values()]
        group = self._groups.get(key)
        if group is not None and list(group.labels) == label_sets:
            group.values[:] = values  # same series: the store references stay valid
            return group
        return SeriesGroup(label_sets, values)


def _key(kind: str, obj: dict) -> tuple:
    meta = obj["metadata"]
    return kind, meta.get("namespace", ""), meta["name"]
