"""The topology graph built from listed objects: node ids, every edge type, hop distances and degrees."""

from __future__ import annotations

import hashlib

import pytest

from pytest_itbench.twin.telemetry.topology import (CLUSTER_ID, Edge, Listing, Node, ServiceCall, ServiceRef,
                                                    TopologyGraph, build_topology, node_id)


def meta(name: str, namespace: str = "", labels: dict | None = None, owners: tuple = ()) -> dict:
    out: dict = {"name": name, "uid": f"uid-{name}"}
    if namespace:
        out["namespace"] = namespace
    if labels:
        out["labels"] = labels
    if owners:
        out["ownerReferences"] = [{"apiVersion": api, "kind": kind, "name": owner, "uid": f"uid-{owner}"}
                                  for api, kind, owner in owners]
    return out


POD_SPEC = {"nodeName": "node-1", "volumes": [
    {"name": "config", "configMap": {"name": "flags"}}, {"name": "creds", "secret": {"secretName": "db-password"}},
    {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
    {"name": "missing", "configMap": {"name": "not-there"}},
    {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}]}

LISTINGS = [
    Listing("", "v1", "Pod", [
        {"metadata": meta("cart-1", "shop", {"app": "cart", "tier": "backend"},
                          (("apps/v1", "ReplicaSet", "cart-5d8f"),)), "spec": POD_SPEC},
        {"metadata": meta("other", "shop", {"app": "other"}), "spec": {"nodeName": "node-9"}},
        {"metadata": meta("etcd-node-1", "kube-system", {"component": "etcd"}, (("v1", "Node", "node-1"),)),
         "spec": {"nodeName": "node-1"}},
    ]),
    Listing("", "v1", "Service", [
        {"metadata": meta("cart", "shop"), "spec": {"selector": {"app": "cart"},
                                                    "ports": [{"port": 7070, "targetPort": "grpc"}]}},
        {"metadata": meta("frontend", "shop"), "spec": {"selector": {"app": "frontend"}}},
        {"metadata": meta("kubernetes", "default"), "spec": {"ports": [{"port": 443, "protocol": "TCP"}]}},
    ]),
    Listing("", "v1", "ConfigMap", [{"metadata": meta("flags", "shop")}]),
    Listing("", "v1", "Secret", [{"metadata": meta("db-password", "shop")}]),
    Listing("", "v1", "PersistentVolumeClaim", [{"metadata": meta("data", "shop")}]),
    Listing("", "v1", "PersistentVolume", [{"metadata": meta("pv-1"), "spec": {"claimRef": {"namespace": "shop",
                                                                                             "name": "data"}}}]),
    Listing("", "v1", "Node", [{"metadata": meta("node-1", labels={"kubernetes.io/hostname": "node-1"})}]),
    Listing("", "v1", "Namespace", [{"metadata": meta("shop")}, {"metadata": meta("kube-system")}]),
    Listing("", "v1", "Endpoints", [{"metadata": meta("cart", "shop"), "subsets": [{
        "addresses": [{"ip": "10.0.0.5", "targetRef": {"kind": "Pod", "name": "cart-1", "namespace": "shop"}},
                      {"ip": "10.0.0.6", "targetRef": {"kind": "Pod", "name": "gone", "namespace": "shop"}}],
        "ports": [{"name": "grpc", "port": 7070, "protocol": "TCP"}]}]}]),
    Listing("apps", "v1", "Deployment", [{"metadata": meta("cart", "shop")}]),
    Listing("apps", "v1", "ReplicaSet", [{"metadata": meta("cart-5d8f", "shop", owners=(("apps/v1", "Deployment",
                                                                                          "cart"),))}]),
    Listing("rbac.authorization.k8s.io", "v1", "ClusterRole", [{"metadata": meta("view")}]),
]


@pytest.fixture(scope="module")
def graph() -> TopologyGraph:
    calls = [ServiceCall(ServiceRef("shop", "frontend"), ServiceRef("shop", "cart")),
             ServiceCall(ServiceRef("shop", "cart"), ServiceRef("shop", "valkey"))]  # no such Service: no edge
    return build_topology(LISTINGS, calls)


def named(graph: TopologyGraph, node_id_: str) -> str:
    node = graph.node(node_id_)
    return f"{node.kind}:{node.namespace}/{node.name}" if node.namespace else f"{node.kind}:{node.name}"


def test_node_ids_hash_kind_namespace_name_as_the_monitors_graph_does(graph):
    digest = hashlib.sha256(b"Deployment:shop:cart").hexdigest()[:16]
    assert node_id("apps", "v1", "Deployment", "shop", "cart") == digest
    cart = graph.find("Deployment", "cart", "shop")
    assert cart == Node(digest, "Deployment", "cart", "shop", "apps", "v1", labels={}, uid="uid-cart")
    node = graph.find("Node", "node-1")
    assert node.id == hashlib.sha256(b"Node::node-1").hexdigest()[:16]
    assert node.labels == {"kubernetes.io/hostname": "node-1"}
    assert graph.node(CLUSTER_ID).kind == "K8Cluster"
    port = graph.find("Port", "cart-7070-TCP", "shop")
    assert (port.port, port.protocol, port.labels, port.uid) == ("7070", "TCP", None, None)


def test_every_edge(graph):
    edges = {(named(graph, e.source), named(graph, e.target), e.type, e.verbose_type) for e in graph.edges}
    own, sel, mount = "OWNS", "SELECTS", "MOUNTS"
    assert edges == {
        # ownership: references, else the namespace (not for Endpoints), else the cluster
        ("ReplicaSet:shop/cart-5d8f", "Pod:shop/cart-1", own, "REPLICASET_OWNS_POD"),
        ("Deployment:shop/cart", "ReplicaSet:shop/cart-5d8f", own, "DEPLOYMENT_OWNS_REPLICASET"),
        ("Namespace:shop", "Deployment:shop/cart", own, "NAMESPACE_OWNS_DEPLOYMENT"),
        ("Namespace:shop", "Pod:shop/other", own, "NAMESPACE_OWNS_POD"),
        ("Namespace:shop", "Service:shop/cart", own, "NAMESPACE_OWNS_SERVICE"),
        ("Namespace:shop", "Service:shop/frontend", own, "NAMESPACE_OWNS_SERVICE"),
        ("Namespace:shop", "ConfigMap:shop/flags", own, "NAMESPACE_OWNS_CONFIGMAP"),
        ("Namespace:shop", "Secret:shop/db-password", own, "NAMESPACE_OWNS_SECRET"),
        ("Namespace:shop", "PersistentVolumeClaim:shop/data", own, "NAMESPACE_OWNS_PERSISTENTVOLUMECLAIM"),
        ("K8Cluster:cluster", "PersistentVolume:pv-1", own, "CLUSTER_OWN_RESOURCE"),
        ("K8Cluster:cluster", "Node:node-1", own, "CLUSTER_OWN_RESOURCE"),
        ("K8Cluster:cluster", "Namespace:shop", own, "CLUSTER_OWN_RESOURCE"),
        ("K8Cluster:cluster", "Namespace:kube-system", own, "CLUSTER_OWN_RESOURCE"),
        ("K8Cluster:cluster", "ClusterRole:view", own, "CLUSTER_OWN_RESOURCE"),
        # the default namespace is not listed, so nothing owns its Service; a mirror pod's Node runs it
        ("Node:node-1", "Pod:kube-system/etcd-node-1", own, "NODE_RUNS_POD"),
        ("Node:node-1", "Pod:shop/cart-1", own, "NODE_RUNS_POD"),
        # networking
        ("Service:shop/cart", "Pod:shop/cart-1", sel, "SERVICE_SELECTS_POD"),
        ("Service:shop/cart", "Port:shop/cart-7070-TCP", own, "SERVICE_OWNS_PORT"),
        ("Service:default/kubernetes", "Port:default/kubernetes-443-TCP", own, "SERVICE_OWNS_PORT"),
        ("Service:shop/cart", "Endpoints:shop/cart", own, "SERVICE_HAS_ENDPOINTS"),
        ("Endpoints:shop/cart", "Pod:shop/cart-1", own, "ENDPOINTS_TARGET_POD"),
        ("Pod:shop/cart-1", "Port:shop/cart-1-7070-TCP", own, "POD_OWNS_PORT"),
        ("Port:shop/cart-7070-TCP", "Port:shop/cart-1-7070-TCP", own, "SERVICE_TARGETS_PORT"),
        # storage
        ("PersistentVolume:pv-1", "PersistentVolumeClaim:shop/data", own, "PV_BOUND_TO_PVC"),
        ("Pod:shop/cart-1", "ConfigMap:shop/flags", mount, "POD_MOUNTS_CONFIGMAP"),
        ("Pod:shop/cart-1", "Secret:shop/db-password", mount, "POD_MOUNTS_SECRET"),
        ("Pod:shop/cart-1", "PersistentVolumeClaim:shop/data", mount, "POD_MOUNTS_PVC"),
        # the call graph
        ("Service:shop/frontend", "Service:shop/cart", "CALLS", "SERVICE_CALLS_SERVICE"),
    }
    assert len(edges) == len(graph.edges)  # one edge per ordered pair: NODE_RUNS_POD replaced NODE_OWNS_POD


def test_edges_listed_by_source_in_node_order(graph):
    order = list(graph.nodes)
    positions = [order.index(e.source) for e in graph.edges]
    assert positions == sorted(positions)
    assert graph.edges[0].source == CLUSTER_ID


def test_distances_and_degrees(graph):
    def node(kind, name, namespace="shop"):
        return graph.find(kind, name, namespace).id

    pod, flags = node("Pod", "cart-1"), node("ConfigMap", "flags")
    assert graph.distance(pod, pod) == 0
    assert graph.distance(pod, flags) == 1 and graph.distance(flags, pod) == 1  # direction does not matter
    assert graph.distance(node("Service", "frontend"), pod) == 2                # frontend CALLS cart SELECTS pod
    assert graph.distance(flags, node("Secret", "db-password")) == 2
    assert graph.distance(node("PersistentVolume", "pv-1", ""), flags) == 3      # pv -> pvc -> pod -> flags
    assert graph.distance(node("Service", "kubernetes", "default"), pod) is None  # nothing joins it to the rest
    assert graph.degree(pod) == 8  # ReplicaSet, Node, Service, Endpoints in; Port, ConfigMap, Secret, PVC out
    assert graph.neighbours(pod) == {node("ReplicaSet", "cart-5d8f"), node("Node", "node-1", ""),
                                     node("Service", "cart"), node("Endpoints", "cart"),
                                     node("Port", "cart-1-7070-TCP"),
                                     flags, node("Secret", "db-password"), node("PersistentVolumeClaim", "data")}
    assert graph.degree(node("Namespace", "kube-system", "")) == 1
    with pytest.raises(KeyError):
        graph.distance(pod, "no-such-node")


def test_degree_counts_edges_in_and_out():
    a, b, c = (Node(x, "Pod", x) for x in "abc")
    graph = TopologyGraph([a, b, c], [Edge("a", "b", "OWNS", "X"), Edge("b", "a", "CALLS", "Y"),
                                      Edge("b", "c", "OWNS", "Z")])
    assert [graph.degree(n) for n in "abc"] == [2, 3, 1]
    assert graph.distance("a", "c") == 2 and graph.distance("c", "a") == 2
