"""The benchmark's faults, made the way an injector makes them (ordinary API changes through kubectl), on
the twenty-service shop with every controller running: each shows the symptoms a real cluster shows, and a
correct repair heals it (ARCHITECTURE.md, rules 1 and 2)."""

import json
import os
import re

import pytest
import yaml

from pytest_itbench.twin import Twin

from ..conftest import KUBECTL, Kubectl

SHOP = os.path.join(os.path.dirname(__file__), "manifests", "shop.yaml")


@pytest.fixture(scope="module")
def shop_docs():
    with open(SHOP) as fh:
        return [d for d in yaml.safe_load_all(fh) if d]


@pytest.fixture
def shop(tmp_path, shop_docs):
    """The shop, applied and settled, and kubectl as its admin."""
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH; these tests drive the real kubectl binary")
    with Twin(seed=3, nodes=3, start_time=1_800_000_000) as twin:
        for doc in shop_docs:
            res = twin.api.catalog.for_api_version(doc["apiVersion"], doc["kind"])
            twin.api.create(res, doc["metadata"].get("namespace"), doc, twin.admin_ctx)
        twin.warp(120)
        yield twin, Kubectl(twin, tmp_path / "admin")


def pods(kubectl, selector: str) -> list[dict]:
    return kubectl.run("get", "pods", "-n", "shop", "-l", selector, "-o", "json").json()["items"]


def statuses(kubectl, app: str) -> list[str]:
    """The STATUS column of `kubectl get pods` for one app."""
    out = kubectl("get", "pods", "-n", "shop", "-l", f"app.kubernetes.io/name={app}", "--no-headers")
    return sorted(line.split()[2] for line in out.splitlines())


def ready_addresses(kubectl, service: str) -> int:
    ep = kubectl.run("get", "endpoints", service, "-n", "shop", "-o", "json").json()
    return sum(len(s.get("addresses") or ()) for s in ep.get("subsets") or ())


def fully_available(kubectl, deployment: str) -> bool:
    d = kubectl.run("get", "deploy", deployment, "-n", "shop", "-o", "json").json()
    status = d.get("status") or {}
    want = d["spec"]["replicas"]
    return status.get("availableReplicas", 0) == want == status.get("updatedReplicas", 0) == \
        status.get("replicas", 0)


def events_of(kubectl, name_prefix: str) -> str:
    return kubectl("get", "events", "-n", "shop", "--field-selector", "involvedObject.kind=Pod",
                   "-o", "custom-columns=OBJ:.involvedObject.name,REASON:.reason,MSG:.message", "--no-headers")


def test_the_shop_applied_with_kubectl_becomes_available_and_rollouts_complete(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH; these tests drive the real kubectl binary")
    with Twin(seed=4, nodes=3) as twin:
        kubectl = Kubectl(twin, tmp_path / "admin")
        applied = kubectl("apply", "-f", SHOP)
        assert "deployment.apps/storefront created" in applied and "statefulset.apps/orders-db created" in applied
        twin.warp(120)
        _check_available(kubectl)


def _check_available(kubectl):
    table = kubectl("get", "deployments", "-n", "shop", "--no-headers").splitlines()
    assert len(table) == 20
    for line in table:
        name, ready = line.split()[:2]
        have, want = ready.split("/")
        assert have == want, line
        out = kubectl("rollout", "status", f"deployment/{name}", "-n", "shop", "--timeout=5s")
        assert f'deployment "{name}" successfully rolled out' in out
    assert "partitioned roll out complete" in kubectl("rollout", "status", "sts/orders-db", "-n", "shop",
                                                      "--timeout=5s")
    pvc = kubectl.run("get", "pvc", "data-orders-db-0", "-n", "shop", "-o", "json").json()
    assert pvc["status"]["phase"] == "Bound"
    assert ready_addresses(kubectl, "catalog") == 2
    pdb = kubectl.run("get", "pdb", "catalog", "-n", "shop", "-o", "json").json()
    assert pdb["status"]["disruptionsAllowed"] == 1


def test_scaled_to_zero_and_back(shop):
    twin, kubectl = shop
    kubectl("scale", "deployment", "catalog", "-n", "shop", "--replicas=0")
    twin.warp(60)
    assert pods(kubectl, "app.kubernetes.io/name=catalog") == []
    assert ready_addresses(kubectl, "catalog") == 0
    assert "<none>" in kubectl("get", "endpoints", "catalog", "-n", "shop")
    kubectl("scale", "deployment", "catalog", "-n", "shop", "--replicas=2")
    twin.warp(60)
    assert ready_addresses(kubectl, "catalog") == 2 and fully_available(kubectl, "catalog")


def test_nonexistent_image_then_rollout_undo(shop):
    twin, kubectl = shop
    kubectl("set", "image", "deployment/ads", "ads=python:3.12-nonexistent-tag", "-n", "shop")
    twin.warp(90)
    assert "ImagePullBackOff" in statuses(kubectl, "ads") or "ErrImagePull" in statuses(kubectl, "ads")
    described = kubectl("describe", "pods", "-n", "shop", "-l", "app.kubernetes.io/name=ads")
    assert 'Failed to pull image "python:3.12-nonexistent-tag"' in described
    assert "Back-off pulling image" in described
    assert ready_addresses(kubectl, "ads") == 1  # the old pod keeps serving (maxUnavailable rounds to 0)
    kubectl("rollout", "undo", "deployment/ads", "-n", "shop")
    twin.warp(60)
    assert statuses(kubectl, "ads") == ["Running"] and fully_available(kubectl, "ads")


def test_invalid_command_crash_loops_then_repair(shop):
    twin, kubectl = shop
    kubectl("patch", "deployment", "quotes", "-n", "shop", "--type=json", "-p",
            '[{"op":"add","path":"/spec/template/spec/containers/0/command","value":["/usr/local/bin/quotes-srv"]}]')
    twin.warp(180)
    failing = [p for p in pods(kubectl, "app.kubernetes.io/name=quotes")
               if p["status"]["containerStatuses"][0]["restartCount"] > 0]
    assert failing
    status = failing[0]["status"]["containerStatuses"][0]
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert status["lastState"]["terminated"]["reason"] == "StartError"
    # An absolute path that does not exist: runc's stat fails (a bare name would be "not found in $PATH").
    assert 'exec: "/usr/local/bin/quotes-srv": stat /usr/local/bin/quotes-srv: no such file or directory' in \
        status["lastState"]["terminated"]["message"]
    kubectl("rollout", "undo", "deployment/quotes", "-n", "shop")
    twin.warp(60)
    assert statuses(kubectl, "quotes") == ["Running"] and fully_available(kubectl, "quotes")


def test_readiness_probe_that_cannot_pass(shop):
    twin, kubectl = shop
    kubectl("patch", "deployment", "currency", "-n", "shop", "--type=json", "-p",
            '[{"op":"replace","path":"/spec/template/spec/containers/0/readinessProbe/httpGet/path",'
            '"value":"/not-served"}]')
    twin.warp(120)
    new_pods = [p for p in pods(kubectl, "app.kubernetes.io/name=currency")
                if not any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"])]
    assert new_pods, "the new pod never becomes ready"
    assert "Readiness probe failed: HTTP probe failed with statuscode: 404" in \
        kubectl("describe", "pod", new_pods[0]["metadata"]["name"], "-n", "shop")
    kubectl("rollout", "undo", "deployment/currency", "-n", "shop")
    twin.warp(60)
    assert fully_available(kubectl, "currency") and ready_addresses(kubectl, "currency") == 1


def test_memory_limit_below_the_footprint_is_oomkilled(shop):
    twin, kubectl = shop
    kubectl("set", "resources", "deployment/recommender", "-n", "shop", "--limits=memory=8Mi",
            "--requests=memory=8Mi")
    twin.warp(180)
    container = [p["status"]["containerStatuses"][0] for p in pods(kubectl, "app.kubernetes.io/name=recommender")]
    assert any((c.get("lastState") or {}).get("terminated", {}).get("reason") == "OOMKilled" for c in container)
    kubectl("set", "resources", "deployment/recommender", "-n", "shop", "--limits=memory=128Mi",
            "--requests=memory=128Mi")
    twin.warp(120)
    assert fully_available(kubectl, "recommender")


def _pending_message(kubectl, app: str) -> str:
    for pod in pods(kubectl, f"app.kubernetes.io/name={app}"):
        for cond in pod["status"].get("conditions") or ():
            if cond["type"] == "PodScheduled" and cond["status"] == "False":
                return cond["message"]
    return ""


def test_all_nodes_cordoned_then_uncordoned(shop):
    twin, kubectl = shop
    for node in ("itbench-worker", "itbench-worker2", "itbench-worker3"):
        kubectl("cordon", node)
    kubectl("delete", "pod", "-n", "shop", "-l", "app.kubernetes.io/name=mailer", "--wait=false")
    twin.warp(60)
    message = _pending_message(kubectl, "mailer")
    assert message.startswith("0/3 nodes are available: 3 node(s) were unschedulable.")
    assert "FailedScheduling" in events_of(kubectl, "mailer")
    for node in ("itbench-worker", "itbench-worker2", "itbench-worker3"):
        kubectl("uncordon", node)
    twin.warp(60)
    assert fully_available(kubectl, "mailer")


def test_node_selector_no_node_has(shop):
    twin, kubectl = shop
    kubectl("patch", "deployment", "reviews", "-n", "shop", "-p",
            '{"spec":{"template":{"spec":{"nodeSelector":{"disktype":"nvme"}}}}}')
    twin.warp(60)
    assert re.match(r"0/3 nodes are available: 3 node\(s\) didn't match Pod's node affinity/selector\.",
                    _pending_message(kubectl, "reviews"))
    kubectl("patch", "deployment", "reviews", "-n", "shop", "--type=json", "-p",
            '[{"op":"remove","path":"/spec/template/spec/nodeSelector"}]')
    twin.warp(60)
    assert fully_available(kubectl, "reviews") and len(pods(kubectl, "app.kubernetes.io/name=reviews")) == 1


def test_missing_persistent_volume_claim(shop):
    twin, kubectl = shop
    patch = {"spec": {"template": {"spec": {
        "volumes": [{"name": "cache", "persistentVolumeClaim": {"claimName": "images-cache"}}],
        "containers": [{"name": "images", "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]}]}}}}
    kubectl("patch", "deployment", "images", "-n", "shop", "-p", json.dumps(patch))
    twin.warp(60)
    assert 'persistentvolumeclaim "images-cache" not found' in _pending_message(kubectl, "images")
    kubectl("create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "images-cache", "namespace": "shop"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}))
    twin.warp(90)
    assert fully_available(kubectl, "images")


def test_undersized_resource_quota(shop):
    twin, kubectl = shop
    kubectl("create", "quota", "tight", "-n", "shop", "--hard=requests.cpu=100m")
    kubectl("delete", "pod", "-n", "shop", "-l", "app.kubernetes.io/name=inventory", "--wait=false")
    twin.warp(60)
    assert pods(kubectl, "app.kubernetes.io/name=inventory") == []
    rs_events = kubectl("get", "events", "-n", "shop", "--field-selector", "reason=FailedCreate",
                        "-o", "jsonpath={.items[*].message}")
    assert "exceeded quota: tight, requested: requests.cpu=50m" in rs_events
    kubectl("delete", "quota", "tight", "-n", "shop")
    twin.warp(120)
    assert fully_available(kubectl, "inventory")


def test_anti_affinity_that_cannot_be_met(shop):
    twin, kubectl = shop
    kubectl("scale", "deployment", "search", "-n", "shop", "--replicas=4")
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "search"}},
        "topologyKey": "kubernetes.io/hostname"}]}}
    kubectl("patch", "deployment", "search", "-n", "shop", "-p",
            json.dumps({"spec": {"template": {"spec": {"affinity": affinity}}}}))
    twin.warp(120)
    assert "didn't match pod anti-affinity rules" in _pending_message(kubectl, "search")
    kubectl("patch", "deployment", "search", "-n", "shop", "--type=json", "-p",
            '[{"op":"remove","path":"/spec/template/spec/affinity"}]')
    twin.warp(120)
    assert fully_available(kubectl, "search")
