"""The live topology: the cluster's objects, listed as the topology monitor lists them, built into a graph.

    monitor = TopologyMonitor(ClusterObjects(twin.api))
    monitor.call_graph = engine                        # a CallGraphSource, once the traffic engine runs
    graph = monitor.refresh()                          # what /nodes, /edges and /graph serve

The monitor lists the core kinds it names (Pod, Service, ConfigMap, Secret, PersistentVolumeClaim,
PersistentVolume, Node, Namespace, ServiceAccount, Endpoints), then every listable kind of every
other group in its preferred version, skipping events, bindings, reviews and subresources. Like the
monitor's HTTP endpoints, each refresh lists the cluster anew.
"""

from __future__ import annotations

import threading
from typing import Iterable, Protocol

from ..apiserver.registry import ResourceAPI
from ..apiserver.resources import Resource
from .topology import CallGraphSource, Listing, TopologyGraph, build_topology

CORE_KINDS = ("Pod", "Service", "ConfigMap", "Secret", "PersistentVolumeClaim", "PersistentVolume", "Node",
              "Namespace", "ServiceAccount", "Endpoints")
SKIPPED = frozenset({"events", "bindings", "tokenreviews", "selfsubjectreviews", "selfsubjectaccessreviews",
                     "selfsubjectrulesreviews", "subjectaccessreviews", "localsubjectaccessreviews",
                     "componentstatuses"})


class ObjectSource(Protocol):
    def listings(self) -> Iterable[Listing]:
        """Every object the monitor collects, kind by kind, in collection order."""


def watched_resources(api: ResourceAPI) -> list[Resource]:
    """The kinds the monitor collects and watches, in its order."""
    catalog = api.catalog
    core = [catalog.for_kind("", "v1", kind) for kind in CORE_KINDS]
    out = [res for res in core if res is not None]
    for group, versions in catalog.group_versions().items():
        if group == "":
            continue
        for res in catalog.in_group_version(group, versions[0]):
            # Virtual resources (reviews, metrics.k8s.io) hold nothing to list in the twin.
            if not res.virtual and res.plural not in SKIPPED and {"get", "list"} & set(res.verbs):
                out.append(res)
    return out


class ClusterObjects:
    """The twin's objects, read through its API logic as the monitor's client reads them."""

    def __init__(self, api: ResourceAPI):
        self.api = api

    def listings(self) -> Iterable[Listing]:
        for res in watched_resources(self.api):
            items = self.api.list(res, None)[0]
            yield Listing(res.group, res.version, res.kind, items)


class TopologyMonitor:
    def __init__(self, objects: ObjectSource, call_graph: CallGraphSource | None = None):
        self.objects = objects
        self.call_graph = call_graph
        self._lock = threading.Lock()
        self._graph: TopologyGraph | None = None

    def refresh(self) -> TopologyGraph:
        """List the cluster and rebuild the graph (one refresh at a time)."""
        with self._lock:
            calls = self.call_graph.service_calls() if self.call_graph is not None else ()
            self._graph = build_topology(self.objects.listings(), calls)
            return self._graph

    @property
    def graph(self) -> TopologyGraph:
        """The last graph built, building one if there is none yet."""
        return self._graph if self._graph is not None else self.refresh()
