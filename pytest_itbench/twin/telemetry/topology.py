"""The cluster's topology: Kubernetes entities and typed edges, as ITBench's kubernetes-topology-monitor
builds them, plus the service call graph.

    graph = build_topology(listings, calls)       # listings: every listed object, per kind
    graph.find("Deployment", "cart", "shop").id
    graph.distance(a, b), graph.degree(n)         # what topology-aware scoring (NTAM) reads

Nodes are the cluster (id ``cluster``), every listed object (id: the first 16 hex digits of the
SHA-256 of ``group:version:kind:namespace:name``) and Port nodes. Edges, each with a ``type``
and a ``verbose_type`` (the monitor's ``GraphBuilder``):

- OWNS ``<OWNER>_OWNS_<KIND>`` from ownerReferences; an object without an owner is owned by the
  cluster (``CLUSTER_OWN_RESOURCE``, cluster-scoped kinds) or its namespace
  (``NAMESPACE_OWNS_<KIND>``; not Endpoints and EndpointSlices);
- OWNS ``NODE_RUNS_POD``; ``PV_BOUND_TO_PVC``; ``SERVICE_HAS_ENDPOINTS``; ``ENDPOINTS_TARGET_POD``;
  ``SERVICE_OWNS_PORT``, ``POD_OWNS_PORT``, ``SERVICE_TARGETS_PORT`` (Port nodes named
  ``<owner>-<port>-<protocol>``);
- SELECTS ``SERVICE_SELECTS_POD`` (the selector's labels all on a pod of the namespace);
- MOUNTS ``POD_MOUNTS_CONFIGMAP``, ``POD_MOUNTS_SECRET``, ``POD_MOUNTS_PVC`` from pod volumes;
- CALLS ``SERVICE_CALLS_SERVICE``, from a ``CallGraphSource`` (the twin's traffic engine).

An edge is drawn only when both ends exist. As in the monitor's directed graph there is one edge
per ordered pair (a later relation replaces an earlier one), and edges are listed by source in
node order. Two departures from the monitor's code, which it means but does not do: Endpoints
subsets are read where Kubernetes keeps them (the monitor looks under ``spec`` and so draws no
ENDPOINTS_TARGET_POD edge), and every edge joins graph node ids (the monitor hashes
``kind:namespace:name`` for its nodes but draws PV_BOUND_TO_PVC from the other id form).
"""

from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass
from typing import Iterable, Mapping, Protocol, Sequence

CLUSTER_ID = "cluster"
# Kinds the monitor treats as cluster-scoped when it resolves an owner or picks an owning node.
CLUSTER_SCOPED = frozenset({
    "Node", "Namespace", "PersistentVolume", "ClusterRole", "ClusterRoleBinding", "StorageClass", "CSIDriver",
    "CSINode", "PriorityClass", "RuntimeClass", "VolumeAttachment", "PodSecurityPolicy", "CustomResourceDefinition",
    "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "PodPreset", "InitializerConfiguration"})


def node_id(group: str, version: str, kind: str, namespace: str, name: str) -> str:
    # The graph ITBench's monitor serves at /nodes hashes kind:namespace:name (its event log adds group
    # and version); agents written for that monitor keep the ids it gives.
    return hashlib.sha256(f"{kind}:{namespace}:{name}".encode()).hexdigest()[:16]


def split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


@dataclass(frozen=True)
class Node:
    id: str
    kind: str
    name: str
    namespace: str = ""
    group: str = ""
    version: str = "v1"
    labels: Mapping[str, str] | None = None  # Kubernetes objects only
    uid: str | None = None  # Kubernetes objects and the cluster
    port: str | None = None  # Port nodes only
    protocol: str | None = None

    @property
    def cache_key(self) -> str:
        """The ``group:version:kind:namespace:name`` text the id hashes."""
        return f"{self.group}:{self.version}:{self.kind}:{self.namespace}:{self.name}"


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    type: str  # OWNS, SELECTS, MOUNTS, CALLS
    verbose_type: str


@dataclass(frozen=True)
class ServiceRef:
    namespace: str
    name: str  # a Kubernetes Service


@dataclass(frozen=True)
class ServiceCall:
    caller: ServiceRef
    callee: ServiceRef


class CallGraphSource(Protocol):
    def service_calls(self) -> Iterable[ServiceCall]:
        """Which Service calls which, as the application's behaviour describes it."""


@dataclass(frozen=True)
class Listing:
    """The objects of one kind, as a client lists them in one group version."""

    group: str
    version: str
    kind: str
    objects: Sequence[dict]


class TopologyGraph:
    """An immutable directed graph with hop distances over its undirected form."""

    def __init__(self, nodes: Iterable[Node], edges: Iterable[Edge]):
        self.nodes: dict[str, Node] = {n.id: n for n in nodes}
        self.edges: list[Edge] = list(edges)
        self._neighbours: dict[str, set[str]] = {n: set() for n in self.nodes}
        self._degree: dict[str, int] = dict.fromkeys(self.nodes, 0)
        self._by_name: dict[tuple[str, str, str], Node] = {(n.kind, n.namespace, n.name): n
                                                           for n in self.nodes.values()}
        for edge in self.edges:
            self._neighbours[edge.source].add(edge.target)
            self._neighbours[edge.target].add(edge.source)
            self._degree[edge.source] += 1
            self._degree[edge.target] += 1
        self._hops: dict[str, dict[str, int]] = {}

    def node(self, node_id: str) -> Node:
        return self.nodes[node_id]

    def find(self, kind: str, name: str, namespace: str = "") -> Node | None:
        return self._by_name.get((kind, namespace, name))

    def degree(self, node_id: str) -> int:
        """Edges in and out of a node (networkx's ``DiGraph.degree``)."""
        return self._degree[node_id]

    def neighbours(self, node_id: str) -> frozenset[str]:
        """Nodes one edge away, in either direction."""
        return frozenset(self._neighbours[node_id])

    def distance(self, a: str, b: str) -> int | None:
        """Fewest edges between two nodes, ignoring direction; ``None`` when they are not connected."""
        if a not in self.nodes or b not in self.nodes:
            raise KeyError(a if a not in self.nodes else b)
        hops = self._hops.get(a)
        if hops is None:
            hops = self._hops[a] = self._breadth_first(a)
        return hops.get(b)

    def _breadth_first(self, start: str) -> dict[str, int]:
        hops = {start: 0}
        queue = deque([start])
        while queue:
            here = queue.popleft()
            for there in self._neighbours[here]:
                if there not in hops:
                    hops[there] = hops[here] + 1
                    queue.append(there)
        return hops


def build_topology(listings: Iterable[Listing], calls: Iterable[ServiceCall] = ()) -> TopologyGraph:
    return _Builder(listings).build(calls)


class _Builder:
    def __init__(self, listings: Iterable[Listing]):
        self.nodes: dict[str, Node] = {}
        self.out: dict[str, dict[str, Edge]] = {}
        self.objects: list[tuple[Node, dict]] = []
        self._add(Node(CLUSTER_ID, "K8Cluster", "cluster", uid=CLUSTER_ID))
        for listing in listings:
            for obj in listing.objects:
                meta = obj["metadata"]
                namespace = meta.get("namespace") or ""
                node = Node(node_id(listing.group, listing.version, listing.kind, namespace, meta["name"]),
                            listing.kind, meta["name"], namespace, listing.group, listing.version,
                            labels=dict(meta.get("labels") or {}), uid=meta.get("uid", ""))
                self._add(node)
                self.objects.append((node, obj))

    def build(self, calls: Iterable[ServiceCall]) -> TopologyGraph:
        self._ownership()
        self._runtime()
        self._services()
        self._endpoints()
        self._volumes()
        self._mounts()
        for call in calls:
            self._edge(self._core("Service", call.caller.namespace, call.caller.name),
                       self._core("Service", call.callee.namespace, call.callee.name), "CALLS", "SERVICE_CALLS_SERVICE")
        edges = [edge for source in self.nodes for edge in self.out.get(source, {}).values()]
        return TopologyGraph(self.nodes.values(), edges)

    # ---- helpers ------------------------------------------------------------------------------------------
    def _add(self, node: Node) -> None:
        self.nodes.setdefault(node.id, node)

    def _edge(self, source: str, target: str, type_: str, verbose_type: str) -> None:
        if source in self.nodes and target in self.nodes:
            self.out.setdefault(source, {})[target] = Edge(source, target, type_, verbose_type)

    @staticmethod
    def _core(kind: str, namespace: str, name: str) -> str:
        return node_id("", "v1", kind, namespace, name)

    def _port(self, namespace: str, owner: str, port: dict) -> str:
        protocol = port.get("protocol") or "TCP"
        name = f"{owner}-{port.get('port')}-{protocol}"
        node = Node(self._core("Port", namespace, name), "Port", name, namespace, port=str(port.get("port")),
                    protocol=protocol)
        self._add(node)
        return node.id

    def _of_kind(self, kind: str) -> Iterable[tuple[Node, dict]]:
        return ((node, obj) for node, obj in self.objects if node.kind == kind)

    # ---- edges ----------------------------------------------------------------------------------------------
    def _ownership(self) -> None:
        for node, obj in self.objects:
            owned = False
            for ref in obj["metadata"].get("ownerReferences") or ():
                group, version = split_api_version(ref["apiVersion"])
                namespace = "" if ref["kind"] in CLUSTER_SCOPED else node.namespace
                owner = node_id(group, version, ref["kind"], namespace, ref["name"])
                if owner in self.nodes:
                    self._edge(owner, node.id, "OWNS", f"{ref['kind'].upper()}_OWNS_{node.kind.upper()}")
                    owned = True
            if owned:
                continue
            if node.kind in CLUSTER_SCOPED or not node.namespace:
                self._edge(CLUSTER_ID, node.id, "OWNS", "CLUSTER_OWN_RESOURCE")
            elif node.kind not in ("Endpoints", "EndpointSlice"):
                self._edge(self._core("Namespace", "", node.namespace), node.id, "OWNS",
                           f"NAMESPACE_OWNS_{node.kind.upper()}")

    def _runtime(self) -> None:
        for pod, obj in self._of_kind("Pod"):
            host = (obj.get("spec") or {}).get("nodeName")
            if host:
                self._edge(self._core("Node", "", host), pod.id, "OWNS", "NODE_RUNS_POD")

    def _services(self) -> None:
        pods = list(self._of_kind("Pod"))
        for service, obj in self._of_kind("Service"):
            spec = obj.get("spec") or {}
            selector = spec.get("selector") or {}
            if selector:
                for pod, _ in pods:
                    if pod.namespace == service.namespace and all(pod.labels.get(k) == v for k, v in selector.items()):
                        self._edge(service.id, pod.id, "SELECTS", "SERVICE_SELECTS_POD")
            for port in spec.get("ports") or ():
                self._edge(service.id, self._port(service.namespace, service.name, port), "OWNS", "SERVICE_OWNS_PORT")

    def _endpoints(self) -> None:
        for endpoints, obj in self._of_kind("Endpoints"):
            service = self._core("Service", endpoints.namespace, endpoints.name)  # Endpoints share their Service's name
            self._edge(service, endpoints.id, "OWNS", "SERVICE_HAS_ENDPOINTS")
            for subset in obj.get("subsets") or ():
                for address in subset.get("addresses") or ():
                    target = address.get("targetRef") or {}
                    if target.get("kind") != "Pod":
                        continue
                    pod = self._core("Pod", endpoints.namespace, target["name"])
                    if pod not in self.nodes:
                        continue
                    self._edge(endpoints.id, pod, "OWNS", "ENDPOINTS_TARGET_POD")
                    for port in subset.get("ports") or ():
                        pod_port = self._port(endpoints.namespace, target["name"], port)
                        service_port = self._port(endpoints.namespace, endpoints.name, port)
                        self._edge(pod, pod_port, "OWNS", "POD_OWNS_PORT")
                        self._edge(service, service_port, "OWNS", "SERVICE_OWNS_PORT")
                        self._edge(service_port, pod_port, "OWNS", "SERVICE_TARGETS_PORT")

    def _volumes(self) -> None:
        for volume, obj in self._of_kind("PersistentVolume"):
            claim = (obj.get("spec") or {}).get("claimRef")
            if claim:
                pvc = self._core("PersistentVolumeClaim", claim.get("namespace", ""), claim.get("name", ""))
                self._edge(volume.id, pvc, "OWNS", "PV_BOUND_TO_PVC")

    def _mounts(self) -> None:
        for pod, obj in self._of_kind("Pod"):
            for volume in (obj.get("spec") or {}).get("volumes") or ():
                for source, field, kind, verbose in (("configMap", "name", "ConfigMap", "POD_MOUNTS_CONFIGMAP"),
                                                     ("secret", "secretName", "Secret", "POD_MOUNTS_SECRET"),
                                                     ("persistentVolumeClaim", "claimName", "PersistentVolumeClaim",
                                                      "POD_MOUNTS_PVC")):
                    target = (volume.get(source) or {}).get(field)
                    if target:
                        self._edge(pod.id, self._core(kind, pod.namespace, target), "MOUNTS", verbose)
