"""kube-state-metrics over the twin's store: one target, a series group per object.

Like kube-state-metrics' informers, the exporter follows every write to the kinds it reports and
rebuilds an object's series only when the object changed (at the next scrape), so a scrape of an
unchanged cluster costs a walk over cached groups. Series carry the object's labels (``namespace``
and ``pod``, ``deployment``, ``node``...) and, where they lack one, the target's (kube-prometheus-stack
scrapes kube-state-metrics with honor_labels): so ``kube_node_info`` carries the monitoring
namespace and pod, and every pod-level family ``container="kube-state-metrics"``, as on a cluster.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Iterable

from ....store import Change, Store
from ...labels import Labels
from ..base import METRIC_NAME, MetricFamily, SeriesGroup, TargetScrape, target_series_labels
from . import batch, nodes, pods, services, storage, workloads
from .common import Row


@dataclass(frozen=True)
class _Kind:
    bucket: str
    families: tuple[MetricFamily, ...]
    object_labels: Callable[[dict], dict[str, str]]
    rows: Callable[[dict], Iterable[Row]]


KINDS = (
    _Kind("pods", pods.FAMILIES, pods.object_labels, pods.rows),
    _Kind("deployments.apps", workloads.DEPLOYMENT_FAMILIES, workloads.deployment_labels, workloads.deployment_rows),
    _Kind("replicasets.apps", workloads.REPLICASET_FAMILIES, workloads.replicaset_labels, workloads.replicaset_rows),
    _Kind("statefulsets.apps", workloads.STATEFULSET_FAMILIES, workloads.statefulset_labels,
          workloads.statefulset_rows),
    _Kind("daemonsets.apps", workloads.DAEMONSET_FAMILIES, workloads.daemonset_labels, workloads.daemonset_rows),
    _Kind("jobs.batch", batch.JOB_FAMILIES, batch.job_labels, batch.job_rows),
    _Kind("horizontalpodautoscalers.autoscaling", batch.HPA_FAMILIES, batch.hpa_labels, batch.hpa_rows),
    _Kind("nodes", nodes.NODE_FAMILIES, nodes.node_labels, nodes.node_rows),
    _Kind("namespaces", nodes.NAMESPACE_FAMILIES, nodes.namespace_labels, nodes.namespace_rows),
    _Kind("services", services.SERVICE_FAMILIES, services.service_labels, services.service_rows),
    _Kind("endpoints", services.ENDPOINT_FAMILIES, services.endpoint_labels, services.endpoint_rows),
    _Kind("persistentvolumeclaims", storage.PVC_FAMILIES, storage.pvc_labels, storage.pvc_rows),
    _Kind("resourcequotas", storage.QUOTA_FAMILIES, storage.quota_labels, storage.quota_rows),
)

_Key = tuple[str, str, str]  # bucket, namespace, name


class KubeStateMetrics:
    job = "kube-state-metrics"
    families = tuple(family for kind in KINDS for family in kind.families)

    def __init__(self, store: Store, target: Labels):
        self.store = store
        self.target = target
        self._kinds = {kind.bucket: kind for kind in KINDS}
        self._groups: dict[_Key, SeriesGroup] = {}
        self._lock = threading.Lock()  # writes mark objects dirty from any thread; scrapes take the marks
        with store.lock:
            self._dirty: set[_Key] = {(bucket, namespace, name) for bucket in self._kinds
                                      for namespace, name in store.keys(bucket)}
            store.on_write(self._on_write)

    def _on_write(self, change: Change) -> None:
        if change.bucket in self._kinds:
            meta = change.obj["metadata"]
            with self._lock:
                self._dirty.add((change.bucket, meta.get("namespace", ""), meta["name"]))

    def scrape(self, now: float) -> Iterable[TargetScrape]:
        with self._lock:
            dirty, self._dirty = self._dirty, set()
        for key in sorted(dirty):  # sorted: series are created in the same order on every run
            obj = self.store.get(*key)
            if obj is None:
                self._groups.pop(key, None)
            else:
                self._groups[key] = self._group(self._kinds[key[0]], obj)
        return [TargetScrape((), self.target, list(self._groups.values()))]

    def _group(self, kind: _Kind, obj: dict) -> SeriesGroup:
        own = kind.object_labels(obj)
        series: dict[Labels, float] = {}
        for family, labels, value in kind.rows(obj):
            exposed = {**own, **labels, METRIC_NAME: family.name}
            # A repeated series keeps its first value, as Prometheus keeps the first of duplicate samples.
            series.setdefault(target_series_labels(self.target, exposed, honor_labels=True), value)
        return SeriesGroup(list(series), list(series.values()))
