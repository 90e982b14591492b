"""A twin running a small application: its topology (objects, typed edges, call edges, distances), the
topology monitor's endpoints and the Jaeger query API, each served on a port of its own and closed with the twin."""

from __future__ import annotations

import json
import pprint
import urllib.error
import urllib.request

import pytest
import yaml

from pytest_itbench.twin import Twin
from pytest_itbench.twin.cluster import TwinError
from pytest_itbench.twin.telemetry.topology import ServiceCall, ServiceRef, TopologyGraph
from tests.telemetry.trace_fixtures import checkout_trace

APP = """
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cart-config, namespace: shop}
data: {flags.json: "{}"}
---
apiVersion: v1
kind: Secret
metadata: {name: cart-secret, namespace: shop}
stringData: {password: s3cret}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: cart-data, namespace: shop}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cart, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: cart}}
  template:
    metadata: {labels: {app: cart}}
    spec:
      containers:
      - name: cart
        image: nginx:1.25
        ports: [{containerPort: 7070, name: grpc}]
        volumeMounts: [{name: config, mountPath: /etc/cart}, {name: creds, mountPath: /creds},
                       {name: data, mountPath: /data}]
      volumes:
      - {name: config, configMap: {name: cart-config}}
      - {name: creds, secret: {secretName: cart-secret}}
      - {name: data, persistentVolumeClaim: {claimName: cart-data}}
---
apiVersion: v1
kind: Service
metadata: {name: cart, namespace: shop}
spec:
  selector: {app: cart}
  ports: [{name: grpc, port: 7070, targetPort: grpc}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: frontend, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: frontend}}
  template:
    metadata: {labels: {app: frontend, tier: web}}
    spec:
      containers:
      - {name: frontend, image: nginx:1.25, ports: [{containerPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: frontend, namespace: shop}
spec:
  selector: {app: frontend}
  ports: [{port: 80, targetPort: 8080}]
"""


class ShopCalls:
    """What the traffic engine will say: frontend calls cart, cart calls a Service that does not exist."""

    def service_calls(self):
        return [ServiceCall(ServiceRef("shop", "frontend"), ServiceRef("shop", "cart")),
                ServiceCall(ServiceRef("shop", "cart"), ServiceRef("shop", "valkey-cart"))]


@pytest.fixture(scope="module")
def shop():
    with Twin(seed=7, nodes=2) as twin:
        for doc in yaml.safe_load_all(APP):
            res = twin.api.catalog.for_api_version(doc["apiVersion"], doc["kind"])
            twin.api.create(res, doc["metadata"].get("namespace"), doc, twin.admin_ctx)
        twin.warp(120)
        twin.topology.call_graph = ShopCalls()
        yield twin


def get(url: str):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.status, resp.headers.get("Content-Type"), resp.read()


def pods(twin: Twin, app: str) -> list[str]:
    items = twin.store.list("pods", "shop")[0]
    return sorted(p["metadata"]["name"] for p in items if p["metadata"]["labels"].get("app") == app)


def edges_of(graph: TopologyGraph) -> set[tuple[str, str, str, str]]:
    def name(node_id):
        node = graph.node(node_id)
        return f"{node.kind}/{node.name}"

    return {(name(e.source), name(e.target), e.type, e.verbose_type) for e in graph.edges
            if graph.node(e.source).namespace == "shop" or graph.node(e.target).namespace == "shop"}


def test_application_topology(shop):
    graph = shop.topology.refresh()
    (cart,), frontends = pods(shop, "cart"), pods(shop, "frontend")
    assert len(frontends) == 2
    cart_rs, frontend_rs = (next(n.name for n in graph.nodes.values()
                                 if n.kind == "ReplicaSet" and n.name.startswith(app + "-")) for app in ("cart", "frontend"))
    pvc = shop.store.get("persistentvolumeclaims", "shop", "cart-data")
    volume = pvc["spec"]["volumeName"]
    cart_node = shop.store.get("pods", "shop", cart)["spec"]["nodeName"]
    edges = edges_of(graph)
    expected = {
        ("Deployment/cart", f"ReplicaSet/{cart_rs}", "OWNS", "DEPLOYMENT_OWNS_REPLICASET"),
        (f"ReplicaSet/{cart_rs}", f"Pod/{cart}", "OWNS", "REPLICASET_OWNS_POD"),
        ("Deployment/frontend", f"ReplicaSet/{frontend_rs}", "OWNS", "DEPLOYMENT_OWNS_REPLICASET"),
        (f"Node/{cart_node}", f"Pod/{cart}", "OWNS", "NODE_RUNS_POD"),
        ("Service/cart", f"Pod/{cart}", "SELECTS", "SERVICE_SELECTS_POD"),
        ("Service/cart", "Endpoints/cart", "OWNS", "SERVICE_HAS_ENDPOINTS"),
        ("Endpoints/cart", f"Pod/{cart}", "OWNS", "ENDPOINTS_TARGET_POD"),
        ("Service/cart", "Port/cart-7070-TCP", "OWNS", "SERVICE_OWNS_PORT"),
        (f"Pod/{cart}", "ConfigMap/cart-config", "MOUNTS", "POD_MOUNTS_CONFIGMAP"),
        (f"Pod/{cart}", "Secret/cart-secret", "MOUNTS", "POD_MOUNTS_SECRET"),
        (f"Pod/{cart}", "PersistentVolumeClaim/cart-data", "MOUNTS", "POD_MOUNTS_PVC"),
        (f"PersistentVolume/{volume}", "PersistentVolumeClaim/cart-data", "OWNS", "PV_BOUND_TO_PVC"),
        ("Namespace/shop", "ConfigMap/cart-config", "OWNS", "NAMESPACE_OWNS_CONFIGMAP"),
        ("Namespace/shop", "Deployment/cart", "OWNS", "NAMESPACE_OWNS_DEPLOYMENT"),
        ("Service/frontend", "Service/cart", "CALLS", "SERVICE_CALLS_SERVICE"),
        *{(f"ReplicaSet/{frontend_rs}", f"Pod/{p}", "OWNS", "REPLICASET_OWNS_POD") for p in frontends},
        *{("Service/frontend", f"Pod/{p}", "SELECTS", "SERVICE_SELECTS_POD") for p in frontends},
        *{("Endpoints/frontend", f"Pod/{p}", "OWNS", "ENDPOINTS_TARGET_POD") for p in frontends},
    }
    assert expected <= edges, expected - edges
    assert not any("valkey-cart" in target for _, target, _, _ in edges)  # a call to no Service draws no edge
    kinds = {n.kind for n in graph.nodes.values() if n.namespace == "shop"}
    assert kinds == {"Pod", "Service", "ConfigMap", "Secret", "PersistentVolumeClaim", "ServiceAccount", "Endpoints",
                     "EndpointSlice", "Deployment", "ReplicaSet", "Port"}
    assert graph.find("Pod", frontends[0], "shop").labels["tier"] == "web"


def test_distances_for_topology_aware_scoring(shop):
    graph = shop.topology.refresh()
    (cart,) = pods(shop, "cart")

    def node(kind, name, namespace="shop"):
        return graph.find(kind, name, namespace).id

    assert graph.distance(node("Pod", cart), node("ConfigMap", "cart-config")) == 1
    assert graph.distance(node("Service", "frontend"), node("Service", "cart")) == 1
    assert graph.distance(node("Service", "frontend"), node("Pod", cart)) == 2
    # The namespace owns every unowned object of it, so two of them are never more than two edges apart.
    assert graph.distance(node("Deployment", "cart"), node("Secret", "cart-secret")) == 2
    assert graph.degree(node("ConfigMap", "cart-config")) == 2  # its namespace, its pod


def test_topology_endpoints(shop):
    base = shop.topology_url
    assert get(base + "/healthz") == (200, "application/json", b'{"status":"ok"}\n')
    assert json.loads(get(base + "/refresh")[2]) == {"status": "success"}

    nodes = json.loads(get(base + "/nodes")[2])
    (frontend,) = [n for n in nodes if n["kind"] == "Service" and n["name"] == "frontend"]
    graph = shop.topology.graph
    assert frontend == {"id": graph.find("Service", "frontend", "shop").id, "kind": "Service", "group": "",
                        "version": "v1", "namespace": "shop", "name": "frontend", "labels": "{}",
                        "uid": shop.store.get("services", "shop", "frontend")["metadata"]["uid"]}
    pod = next(n for n in nodes if n["kind"] == "Pod" and n["name"].startswith("frontend-"))
    assert pod["labels"] == pprint.pformat(shop.store.get("pods", "shop", pod["name"])["metadata"]["labels"])
    assert {"id": "cluster", "kind": "K8Cluster", "group": "", "version": "v1", "namespace": "", "name": "cluster",
            "uid": "cluster"} in nodes

    edges = json.loads(get(base + "/edges")[2])
    calls = [e for e in edges if e["type"] == "CALLS"]
    assert calls == [{"source": frontend["id"], "target": graph.find("Service", "cart", "shop").id, "type": "CALLS",
                      "verbose_type": "SERVICE_CALLS_SERVICE"}]

    status, _, body = get(base + "/graph")
    served = json.loads(body)
    assert set(served) == {"nodes", "edges", "node_cache", "metadata"}
    assert served["metadata"] == {"timestamp": shop.clock.now(), "version": "1.1"}
    assert len(served["nodes"]) == len(nodes) and len(served["edges"]) == len(edges)
    assert served["node_cache"]["apps:v1:Deployment:shop:cart"] == graph.find("Deployment", "cart", "shop").id
    assert {"source": frontend["id"], "target": calls[0]["target"],
            "attributes": {"type": "CALLS", "verbose_type": "SERVICE_CALLS_SERVICE"}} in served["edges"]


def test_topology_events(shop):
    records = json.loads(get(shop.topology_url + "/events")[2])
    deployment = next(r for r in records if "  Kind: Deployment\n" in r and "  Name: cart\n" in r)
    graph = shop.topology.graph
    uid = shop.store.get("deployments.apps", "shop", "cart")["metadata"]["uid"]
    assert deployment.split("\n", 1)[1] == (
        "Event Type: ADDED\nResource:\n  Kind: Deployment\n  Group: apps\n  Version: v1\n  Namespace: shop\n"
        f"  Name: cart\n  ID: {graph.find('Deployment', 'cart', 'shop').id}\n  UID: {uid}")
    (cart,) = pods(shop, "cart")
    pod = next(r for r in records if f"  Name: {cart}\n" in r and "Event Type: ADDED" in r)
    owner = shop.store.get("pods", "shop", cart)["metadata"]["ownerReferences"][0]
    assert pod.endswith(f"Owners:\n  - Owner #1:\n      Kind: ReplicaSet\n      Name: {owner['name']}\n"
                        f"      UID: {owner['uid']}\nOwner (Primary):\n  Kind: ReplicaSet\n  Name: {owner['name']}")
    assert not any("Kind: Lease" in r and "Event Type: MODIFIED" in r for r in records)
    assert not any("Kind: Event\n" in r for r in records)


def test_jaeger_api_served_from_the_twin_and_closed_with_it():
    twin = Twin(seed=3, nodes=1, controllers=())
    with pytest.raises(TwinError):
        twin.jaeger_url
    with twin:
        twin.traces.add([checkout_trace(1, twin.clock.now() - 60, payment_fails=True)])
        jaeger, topology = twin.jaeger_url, twin.topology_url
        assert jaeger != topology and jaeger != twin.url
        status, content_type, body = get(jaeger + "/api/services")
        assert (status, content_type) == (200, "application/json")
        assert json.loads(body)["data"] == ["checkout", "frontend", "payment"]
        found = json.loads(get(jaeger + "/api/traces?service=payment&tag=error:true")[2])["data"]
        assert len(found) == 1
        with pytest.raises(urllib.error.HTTPError) as missing:
            get(jaeger + "/api/traces/" + "f" * 32)
        assert missing.value.code == 404
    with pytest.raises(TwinError):
        twin.topology_url
    for url in (jaeger, topology):
        with pytest.raises(urllib.error.URLError):
            get(url + "/api/services")
