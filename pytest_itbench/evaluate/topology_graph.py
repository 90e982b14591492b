"""The topology graph topology-aware scoring (NTAM) measures distances on, read from the cluster at evaluation time.

    graph = read_topology(cluster.urls.get("topology"), cluster.api_client())
    graph.find("Deployment", "cart", "shop")      # node ids
    graph.distance(a, b), graph.degree(n), graph.edge_count

Two sources, one shape:

- **the topology monitor** (ITBench's kubernetes-topology-monitor, which the twin serves): ``/graph``
  (``{"nodes": [{"id", "attributes": {kind, namespace, name, ...}}], "edges": [{"source", "target", ...}]}``),
  or ``/nodes`` and ``/edges`` when ``/graph`` is not served;
- **the Kubernetes API**, on a cluster without a monitor (and when the monitor cannot be read): the same
  relations the monitor draws, listed with the harness's credentials: ownerReferences (else the object's
  Namespace, or the cluster for cluster-scoped kinds), a Pod's Node, a Service's selected Pods and its
  Endpoints, the Pods the Endpoints target, a PersistentVolume's claim, a Pod's ConfigMap, Secret and
  PersistentVolumeClaim volumes. It draws no Port nodes and no service-call edges (the API does not know
  who calls whom); a kind the credentials cannot list is left out.

Distances ignore direction. The degree of a node counts the edges listed at it, in and out, and
``edge_count`` is the number of edges listed (the ``deg p`` and ``|E|`` of NTAM's specificity).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable

TIMEOUT = 30.0
CLUSTER_ID = "cluster"
CLUSTER_SCOPED = frozenset({"Node", "Namespace", "PersistentVolume", "ClusterRole", "ClusterRoleBinding",
                            "StorageClass", "PriorityClass", "CustomResourceDefinition"})
# What the API fallback lists: (apiVersion, kind). Kinds a cluster does not serve or the credentials cannot
# list are skipped.
API_KINDS = (
    ("v1", "Namespace"), ("v1", "Node"), ("v1", "Pod"), ("v1", "Service"), ("v1", "Endpoints"),
    ("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "PersistentVolumeClaim"), ("v1", "PersistentVolume"),
    ("v1", "ServiceAccount"), ("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"), ("batch/v1", "Job"), ("batch/v1", "CronJob"),
    ("autoscaling/v2", "HorizontalPodAutoscaler"), ("networking.k8s.io/v1", "NetworkPolicy"),
    ("networking.k8s.io/v1", "Ingress"), ("policy/v1", "PodDisruptionBudget"),
)


class TopologyUnavailable(RuntimeError):
    """Neither the topology monitor nor the Kubernetes API gave a graph."""


@dataclass(frozen=True)
class GraphNode:
    id: str
    kind: str
    namespace: str
    name: str


class Graph:
    """Nodes with kind, namespace and name; undirected hop distances; degrees as listed."""

    def __init__(self, nodes: Iterable[GraphNode], edges: Iterable[tuple[str, str]], source: str = ""):
        self.source = source  # "topology monitor", "Kubernetes API", ...
        self.nodes: dict[str, GraphNode] = {n.id: n for n in nodes}
        self._neighbours: dict[str, set[str]] = {n: set() for n in self.nodes}
        self._degree: dict[str, int] = dict.fromkeys(self.nodes, 0)
        self.edge_count = 0
        for a, b in edges:
            if a not in self.nodes or b not in self.nodes:
                continue  # an edge needs both ends
            self.edge_count += 1
            self._degree[a] += 1
            self._degree[b] += 1
            if a != b:
                self._neighbours[a].add(b)
                self._neighbours[b].add(a)
        self._index: dict[tuple[str, str], list[str]] = {}
        for node in self.nodes.values():
            self._index.setdefault((node.kind.lower(), node.name), []).append(node.id)
        self._hops: dict[str, dict[str, int]] = {}

    def degree(self, node_id: str) -> int:
        return self._degree[node_id]

    def find(self, kind: str, name: str, namespace: str | None = None) -> list[str]:
        """Ids of the nodes of this kind (any case) and name; in this namespace unless it is None."""
        found = self._index.get((kind.lower(), name), [])
        if namespace is None:
            return list(found)
        return [i for i in found if self.nodes[i].namespace == namespace
                or (self.nodes[i].kind == "Namespace" and self.nodes[i].name == namespace)]

    def hops_from(self, node_id: str) -> dict[str, int]:
        """Fewest edges from a node to every node it reaches, ignoring direction."""
        hops = self._hops.get(node_id)
        if hops is None:
            hops = {node_id: 0}
            queue = deque([node_id])
            while queue:
                here = queue.popleft()
                for there in self._neighbours[here]:
                    if there not in hops:
                        hops[there] = hops[here] + 1
                        queue.append(there)
            self._hops[node_id] = hops
        return hops

    def distance(self, a: str, b: str) -> int | None:
        return self.hops_from(a).get(b)


# ---- the topology monitor -------------------------------------------------------------------------------------

def _get(url: str) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            return json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise TopologyUnavailable(f"GET {url} failed: {exc}") from None


def _node(node_id: str, attributes: dict) -> GraphNode:
    namespace = attributes.get("namespace") or ""
    if namespace == "None":  # /nodes prints every attribute as text
        namespace = ""
    return GraphNode(str(node_id), str(attributes.get("kind", "")), str(namespace), str(attributes.get("name", "")))


def from_monitor_json(graph: dict | None = None, nodes: list | None = None, edges: list | None = None) -> Graph:
    """A graph from the monitor's ``/graph`` body, or from its ``/nodes`` and ``/edges`` bodies."""
    if graph is not None:
        return Graph([_node(n["id"], n.get("attributes") or {}) for n in graph.get("nodes", [])],
                     [(e["source"], e["target"]) for e in graph.get("edges", [])], "topology monitor")
    return Graph([_node(n["id"], n) for n in nodes or []], [(e["source"], e["target"]) for e in edges or []],
                 "topology monitor")


def from_monitor(url: str) -> Graph:
    base = url.rstrip("/")
    try:
        return from_monitor_json(graph=_get(f"{base}/graph"))
    except TopologyUnavailable:
        return from_monitor_json(nodes=_get(f"{base}/nodes"), edges=_get(f"{base}/edges"))


# ---- the Kubernetes API -----------------------------------------------------------------------------------------

def _id(kind: str, namespace: str, name: str) -> str:
    return f"{kind}:{namespace}:{name}"


def from_objects(objects: Iterable[dict]) -> Graph:
    """A graph from Kubernetes objects (dicts as the API serves them, each with ``kind``)."""
    items = [o for o in objects if (o.get("metadata") or {}).get("name") and o.get("kind")]
    nodes = [GraphNode(CLUSTER_ID, "K8Cluster", "", "cluster")]
    for obj in items:
        meta = obj["metadata"]
        namespace = "" if obj["kind"] in CLUSTER_SCOPED else meta.get("namespace") or ""
        nodes.append(GraphNode(_id(obj["kind"], namespace, meta["name"]), obj["kind"], namespace, meta["name"]))
    ids = {n.id for n in nodes}
    by_uid = {(o["metadata"].get("uid")): o for o in items if o["metadata"].get("uid")}
    edges: list[tuple[str, str]] = []

    def key(obj: dict) -> str:
        namespace = "" if obj["kind"] in CLUSTER_SCOPED else obj["metadata"].get("namespace") or ""
        return _id(obj["kind"], namespace, obj["metadata"]["name"])

    pods = [o for o in items if o["kind"] == "Pod"]
    for obj in items:
        meta, kind, me = obj["metadata"], obj["kind"], key(obj)
        namespace = meta.get("namespace") or ""
        owners = []
        for ref in meta.get("ownerReferences") or ():
            owner = by_uid.get(ref.get("uid"))
            ref_namespace = "" if ref.get("kind") in CLUSTER_SCOPED else namespace
            owners.append(key(owner) if owner else _id(ref.get("kind", ""), ref_namespace, ref.get("name", "")))
        owners = [o for o in owners if o in ids]
        edges.extend((owner, me) for owner in owners)
        if not owners:
            if kind in CLUSTER_SCOPED or not namespace:
                edges.append((CLUSTER_ID, me))
            elif kind not in ("Endpoints", "EndpointSlice"):
                edges.append((_id("Namespace", "", namespace), me))
        spec = obj.get("spec") or {}
        if kind == "Pod":
            if spec.get("nodeName"):
                edges.append((_id("Node", "", spec["nodeName"]), me))
            for volume in spec.get("volumes") or ():
                for field, name_field, target_kind in (("configMap", "name", "ConfigMap"),
                                                       ("secret", "secretName", "Secret"),
                                                       ("persistentVolumeClaim", "claimName",
                                                        "PersistentVolumeClaim")):
                    target = (volume.get(field) or {}).get(name_field)
                    if target:
                        edges.append((me, _id(target_kind, namespace, target)))
        elif kind == "Service":
            selector = spec.get("selector") or {}
            if selector:
                for pod in pods:
                    labels = pod["metadata"].get("labels") or {}
                    if pod["metadata"].get("namespace") == namespace and all(labels.get(k) == v
                                                                           for k, v in selector.items()):
                        edges.append((me, key(pod)))
        elif kind == "Endpoints":
            edges.append((_id("Service", namespace, meta["name"]), me))
            for subset in obj.get("subsets") or ():
                for address in subset.get("addresses") or ():
                    target = address.get("targetRef") or {}
                    if target.get("kind") == "Pod":
                        edges.append((me, _id("Pod", namespace, target.get("name", ""))))
        elif kind == "PersistentVolume":
            claim = spec.get("claimRef") or {}
            if claim.get("name"):
                edges.append((me, _id("PersistentVolumeClaim", claim.get("namespace", ""), claim["name"])))
    # One edge per ordered pair, as the monitor's directed graph keeps them.
    return Graph(nodes, dict.fromkeys(edges), "Kubernetes API")


def list_objects(api_client) -> list[dict]:
    """Every object of :data:`API_KINDS` the credentials can list, as plain dicts."""
    from kubernetes import dynamic
    from kubernetes.client.exceptions import ApiException
    from kubernetes.dynamic.exceptions import DynamicApiError, ResourceNotFoundError

    client = dynamic.DynamicClient(api_client)
    out: list[dict] = []
    for api_version, kind in API_KINDS:
        try:
            resource = client.resources.get(api_version=api_version, kind=kind)
            listing = resource.get().to_dict()
        except (ResourceNotFoundError, DynamicApiError, ApiException):
            continue
        for item in listing.get("items") or ():
            item.setdefault("kind", kind)
            out.append(item)
    return out


def from_api(api_client) -> Graph:
    return from_objects(list_objects(api_client))


def read_topology(url: str | None, api_client=None) -> Graph:
    """The monitor's graph when there is a monitor to read; else (or when it fails) one built from the API."""
    problems = []
    if url:
        try:
            return from_monitor(url)
        except TopologyUnavailable as exc:
            problems.append(str(exc))
    if api_client is not None:
        try:
            return from_api(api_client)
        except Exception as exc:  # the API fallback is best effort: NTAM then scores without distances
            problems.append(f"listing the API failed: {type(exc).__name__}: {exc}")
    raise TopologyUnavailable("; ".join(problems) or "no topology URL and no API client")
