"""The metrics.k8s.io/v1beta1 API (PodMetrics, NodeMetrics), answered as metrics-server answers it.

metrics-server lists the pods (or nodes) that exist, filtered by the
request's label and field selectors, and reports those it has usage for;
a get of an object without usage is a 404 on the metrics resource, a get
of an object that does not exist is the lister's 404 on the object.
"""

from __future__ import annotations

from fractions import Fraction

from aiohttp import web

from .. import quantity
from ..clock import format_go_duration, format_time
from ..errors import NotFound
from ..metrics import Metrics, Sample
from ..selectors import FieldSelector, LabelSelector, path_getter
from .negotiation import Accept, respond
from .registry import Ctx
from .requestinfo import RequestInfo
from .resources import Resource

GROUP_VERSION = "metrics.k8s.io/v1beta1"
_FIELDS = {"metadata.name": path_getter("metadata.name"), "metadata.namespace": path_getter("metadata.namespace")}


def register(server, metrics: Metrics) -> None:
    """Register the metrics handlers with the server's virtual resources."""
    api = MetricsAPI(server, metrics)
    server.virtual.register("pods.metrics.k8s.io", api.pods)
    server.virtual.register("nodes.metrics.k8s.io", api.nodes)


class MetricsAPI:
    def __init__(self, server, metrics: Metrics):
        self.server = server
        self.metrics = metrics

    async def pods(self, request: web.Request, info: RequestInfo, res: Resource, ctx: Ctx,
                   accept: Accept) -> web.Response:
        store = self.server.store
        if info.verb == "get":
            pod = store.get("pods", info.namespace, info.name)
            if pod is None:
                raise NotFound("pods", info.name)
            item = self._pod_metrics(pod)
            if item is None:
                raise NotFound("podmetrics.metrics.k8s.io", f"{info.namespace}/{info.name}")
            return self._one(dict(kind="PodMetrics", apiVersion=GROUP_VERSION, **item), accept)
        pods = _select(store.list("pods", info.namespace or None)[0], request)
        items = [m for m in (self._pod_metrics(p) for p in pods) if m is not None]
        return self._many("PodMetricsList", items, accept)

    async def nodes(self, request: web.Request, info: RequestInfo, res: Resource, ctx: Ctx,
                    accept: Accept) -> web.Response:
        store = self.server.store
        if info.verb == "get":
            node = store.get("nodes", "", info.name)
            if node is None:
                raise NotFound("node", info.name)
            item = self._node_metrics(node)
            if item is None:
                raise NotFound("nodemetrics.metrics.k8s.io", info.name)
            return self._one(dict(kind="NodeMetrics", apiVersion=GROUP_VERSION, **item), accept)
        nodes = _select(store.list("nodes")[0], request)
        items = [m for m in (self._node_metrics(n) for n in nodes) if m is not None]
        return self._many("NodeMetricsList", items, accept)

    # ---- objects ---------------------------------------------------------------------------------
    def _pod_metrics(self, pod: dict) -> dict | None:
        meta = pod["metadata"]
        sample = self.metrics.pod_sample(meta["namespace"], meta["name"])
        if sample is None:
            return None
        order = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        names = sorted(sample.usage, key=lambda n: (order.index(n) if n in order else len(order), n))
        return {"metadata": self._meta(meta, namespaced=True), **_when(sample),
                "containers": [{"name": n, "usage": sample.usage[n].resources()} for n in names]}

    def _node_metrics(self, node: dict) -> dict | None:
        sample = self.metrics.node_sample(node["metadata"]["name"])
        if sample is None:
            return None
        return {"metadata": self._meta(node["metadata"], namespaced=False), **_when(sample),
                "usage": sample.usage[""].resources()}

    def _meta(self, source: dict, namespaced: bool) -> dict:
        # metrics-server stamps each answer as created now and copies the object's labels.
        meta = {"name": source["name"]}
        if namespaced:
            meta["namespace"] = source.get("namespace", "")
        meta["creationTimestamp"] = self.server.clock.timestamp()
        if source.get("labels"):
            meta["labels"] = source["labels"]
        return meta

    # ---- responses --------------------------------------------------------------------------------
    def _one(self, item: dict, accept: Accept) -> web.Response:
        if accept.table:
            return respond(_table([item]), accept)
        return respond(item, accept)

    def _many(self, kind: str, items: list[dict], accept: Accept) -> web.Response:
        if accept.table:
            return respond(_table(items), accept)
        return respond({"kind": kind, "apiVersion": GROUP_VERSION, "metadata": {}, "items": items}, accept)


def _select(objects: list[dict], request: web.Request) -> list[dict]:
    labels = LabelSelector.parse(request.query.get("labelSelector"))
    fields = FieldSelector.parse(request.query.get("fieldSelector"))
    # metrics-server matches field selectors against name and namespace only; other fields read as empty.
    getters = {**{r.field: _EMPTY for r in fields.requirements}, **_FIELDS}
    return [o for o in objects if labels.matches(o["metadata"].get("labels")) and fields.matches(o, getters)]


def _EMPTY(obj: dict) -> str:
    return ""


def _when(sample: Sample) -> dict:
    return {"timestamp": format_time(sample.timestamp), "window": format_go_duration(sample.window)}


def _table(items: list[dict]) -> dict:
    """metrics-server's Table: Name, one column per resource (summed over containers), Window."""
    table: dict = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {}, "columnDefinitions": [],
                   "rows": []}
    if not items:
        return table
    table["columnDefinitions"] = [
        {"name": "Name", "type": "string", "format": "name", "description": "Name of the resource", "priority": 0},
        {"name": "cpu", "type": "string", "format": "quantity", "description": "", "priority": 0},
        {"name": "memory", "type": "string", "format": "quantity", "description": "", "priority": 0},
        {"name": "Window", "type": "string", "format": "duration", "description": "", "priority": 0},
    ]
    for item in items:
        usages = [c["usage"] for c in item["containers"]] if "containers" in item else [item["usage"]]
        cpu = sum((quantity.value(u["cpu"]) for u in usages), Fraction(0))
        memory = sum((quantity.value(u["memory"]) for u in usages), Fraction(0))
        table["rows"].append({
            "cells": [item["metadata"]["name"], quantity.format_decimal(cpu), quantity.format_binary(memory),
                      item["window"]],
            "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                       "metadata": item["metadata"]},
        })
    return table
