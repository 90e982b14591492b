"""The cluster's topology as ITBench's kubernetes-topology-monitor serves it: nodes, edges, the graph."""

from __future__ import annotations

from typing import Any

from .base import HttpTool


class TopologyTool(HttpTool):
    name = "topology"
    signal = "topology"

    def nodes(self, *, thought: str = "") -> list[dict[str, Any]]:
        """``[{"id", "kind", "name", "namespace", "labels", ...}]`` (every attribute as text)."""
        return list(self.get("/nodes", thought=thought))

    def edges(self, *, thought: str = "") -> list[dict[str, Any]]:
        """``[{"source", "target", "type", "verbose_type"}]``: OWNS, SELECTS, MOUNTS, CALLS (service calls)."""
        return list(self.get("/edges", thought=thought))

    def graph(self, *, thought: str = "") -> dict[str, Any]:
        """``{"nodes": [{"id", "attributes"}], "edges": [{"source", "target", "attributes"}], "node_cache",
        "metadata"}``."""
        return dict(self.get("/graph", thought=thought))

    def service_calls(self, namespace: str | None = None, *, thought: str = "") -> list[tuple[str, str]]:
        """``(caller, callee)`` Service names from the CALLS edges, sorted; only ``namespace``'s when given."""
        nodes = {n["id"]: n for n in self.nodes(thought=thought)}
        calls = set()
        for edge in self.edges(thought=thought):
            if edge.get("type") != "CALLS":
                continue
            source, target = nodes.get(edge["source"]), nodes.get(edge["target"])
            if source is None or target is None:
                continue
            if namespace and namespace not in (source.get("namespace"), target.get("namespace")):
                continue
            calls.add((source["name"], target["name"]))
        return sorted(calls)
