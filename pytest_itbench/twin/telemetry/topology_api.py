"""The topology monitor's HTTP API (ITBench's kubernetes-topology-monitor, a Flask app on :8080).

    app = create_topology_app(monitor, events, now=clock.now)

``/healthz``; ``/nodes`` (``[{"id", "kind", "name", ...}]``, every attribute as text, labels as
Python prints a dict); ``/edges`` (``[{"source", "target", "type", "verbose_type"}]``); ``/graph``
(``{"nodes": [{"id", "attributes"}], "edges": [{"source", "target", "attributes"}],
"node_cache": {"group:version:kind:namespace:name": id}, "metadata": {"timestamp", "version"}}``);
``/events`` (the day's event records); ``/refresh``. ``/nodes``, ``/edges``, ``/graph`` and
``/refresh`` rebuild the graph from the cluster first, as the monitor does. Bodies are written as
Flask's ``jsonify`` writes them: keys sorted, compact, ASCII, a trailing newline.
"""

from __future__ import annotations

import asyncio
import json
import pprint
from typing import Any, Callable

from aiohttp import web

from .topology import Node, TopologyGraph
from .topology_events import TopologyEvents
from .topology_monitor import TopologyMonitor

GRAPH_FORMAT_VERSION = "1.1"


def _jsonify(value: Any) -> web.Response:
    body = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n"
    return web.Response(body=body.encode(), content_type="application/json")


def node_attributes(node: Node) -> dict[str, Any]:
    """A node's attributes as the monitor's graph holds them: labels as Python prints a dict (the monitor
    stringifies the client's label object, whose repr is ``pprint.pformat`` of its fields)."""
    attributes: dict[str, Any] = {"kind": node.kind, "group": node.group, "version": node.version,
                                  "namespace": node.namespace, "name": node.name}
    if node.labels is not None:
        attributes["labels"] = pprint.pformat(dict(node.labels))
    if node.uid is not None:
        attributes["uid"] = node.uid
    if node.port is not None:
        attributes.update(port=node.port, protocol=node.protocol)
    return attributes


def graph_json(graph: TopologyGraph, timestamp: float) -> dict:
    entities = [n for n in graph.nodes.values() if n.labels is not None]
    return {
        "nodes": [{"id": n.id, "attributes": node_attributes(n)} for n in graph.nodes.values()],
        "edges": [{"source": e.source, "target": e.target,
                   "attributes": {"type": e.type, "verbose_type": e.verbose_type}} for e in graph.edges],
        "node_cache": {n.cache_key: n.id for n in entities},
        "metadata": {"timestamp": timestamp, "version": GRAPH_FORMAT_VERSION},
    }


class TopologyAPI:
    def __init__(self, monitor: TopologyMonitor, events: TopologyEvents, now: Callable[[], float]):
        self.monitor = monitor
        self.events = events
        self.now = now

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/healthz", self.healthz), web.get("/nodes", self.nodes), web.get("/edges", self.edges),
                web.get("/graph", self.graph), web.get("/events", self.event_log), web.get("/refresh", self.refresh)]

    async def _refreshed(self) -> TopologyGraph:
        # Listing and building run on a worker thread: the loop also serves the Kubernetes API.
        return await asyncio.get_running_loop().run_in_executor(None, self.monitor.refresh)

    async def healthz(self, request: web.Request) -> web.Response:
        return _jsonify({"status": "ok"})

    async def nodes(self, request: web.Request) -> web.Response:
        graph = await self._refreshed()
        return _jsonify([{"id": n.id, **{k: str(v) for k, v in node_attributes(n).items()}}
                         for n in graph.nodes.values()])

    async def edges(self, request: web.Request) -> web.Response:
        graph = await self._refreshed()
        return _jsonify([{"source": e.source, "target": e.target, "type": e.type, "verbose_type": e.verbose_type}
                         for e in graph.edges])

    async def graph(self, request: web.Request) -> web.Response:
        graph = await self._refreshed()
        return _jsonify(graph_json(graph, self.now()))

    async def event_log(self, request: web.Request) -> web.Response:
        return _jsonify(self.events.today())

    async def refresh(self, request: web.Request) -> web.Response:
        await self._refreshed()
        return _jsonify({"status": "success"})


def create_topology_app(monitor: TopologyMonitor, events: TopologyEvents, now: Callable[[], float]) -> web.Application:
    app = web.Application()
    app.add_routes(TopologyAPI(monitor, events, now).routes())
    return app
