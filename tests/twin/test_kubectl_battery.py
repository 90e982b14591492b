"""The everyday kubectl commands an SRE runs, against the twin, with real kubectl.

(Commands with a module of their own are tested there: tables in test_tables, patch/apply/diff in test_patch
and test_apply, logs/exec/top in test_logs/test_exec/test_metrics_api, auth in test_rbac/test_reviews,
explain and CRDs in test_openapi/test_crds.)
"""

import json
import re
import threading
import time

import pytest

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: frontend}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{containerPort: 80, name: http}]
        env: [{name: MODE, value: fast}]
"""


def field(text: str, key: str, value: str) -> bool:
    """Whether a ``describe`` output has the line ``key:   value`` (at any indentation and padding)."""
    return re.search(rf"^\s*{re.escape(key)}:\s+{re.escape(value)}\s*$", text, re.MULTILINE) is not None


@pytest.fixture
def web(kubectl):
    kubectl("create", "-f", "-", input=DEPLOYMENT)
    return kubectl


def test_output_formats(web):
    assert web("get", "deployment", "web", "-o", "name").strip() == "deployment.apps/web"
    assert web("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}") == "nginx:1.27"
    as_json = json.loads(web("get", "deployment", "web", "-o", "json"))
    assert as_json["kind"] == "Deployment" and as_json["metadata"]["labels"]["tier"] == "frontend"
    as_yaml = web("get", "deployment", "web", "-o", "yaml")
    assert "kind: Deployment" in as_yaml and "managedFields" not in as_yaml
    columns = web("get", "deployments", "-o", "custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas")
    assert columns.split() == ["NAME", "REPLICAS", "web", "2"]


def test_selectors_sorting_and_all_namespaces(kubectl):
    for name, tier in (("b-cm", "db"), ("a-cm", "web"), ("c-cm", "web")):
        kubectl("create", "configmap", name, f"--from-literal=tier={tier}")
        kubectl("label", "configmap", name, f"tier={tier}")
    assert kubectl("get", "cm", "-l", "tier=web", "-o", "name").split() == ["configmap/a-cm", "configmap/c-cm"]
    assert kubectl("get", "cm", "--field-selector", "metadata.name=b-cm", "-o", "name").split() == ["configmap/b-cm"]
    sorted_names = kubectl("get", "cm", "-l", "tier", "--sort-by=.metadata.labels.tier", "-o", "name").split()
    assert sorted_names[0] == "configmap/b-cm"
    everywhere = kubectl("get", "configmaps", "-A", "--field-selector", "metadata.name=kube-root-ca.crt")
    namespaces = [line.split()[0] for line in everywhere.splitlines()[1:]]
    assert namespaces == ["default", "kube-node-lease", "kube-public", "kube-system"]
    bad = kubectl.fails("get", "cm", "--field-selector", "data.tier=web")
    assert 'field label not supported: data.tier' in bad.stderr


def test_describe_deployment_service_and_node(web):
    web("expose", "deployment", "web", "--port=80", "--target-port=http")
    deploy = web("describe", "deployment", "web")
    assert field(deploy, "Selector", "app=web")
    assert field(deploy, "RollingUpdateStrategy", "25% max unavailable, 25% max surge")
    assert field(deploy, "MODE", "fast") and field(deploy, "Port", "80/TCP")
    svc = web("describe", "service", "web")
    assert field(svc, "TargetPort", "http/TCP") and field(svc, "Type", "ClusterIP")
    node = web("describe", "node", "itbench-worker")
    assert field(node, "Kubelet Version", "v1.31.4")
    assert field(node, "HolderIdentity", "itbench-worker")  # the node's lease
    assert field(node, "Non-terminated Pods", "(0 in total)")


def test_describe_pod_shows_its_events(kubectl, twin):
    kubectl("run", "probe", "--image=busybox:1.36", "--restart=Never", "--", "sleep", "3600")
    uid = kubectl("get", "pod", "probe", "-o", "jsonpath={.metadata.uid}")
    kubectl("create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "probe.1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "probe", "namespace": "default", "uid": uid, "apiVersion": "v1"},
        "reason": "Scheduled", "message": "Successfully assigned default/probe to itbench-worker", "type": "Normal",
        "source": {"component": "default-scheduler"}, "count": 1,
        "firstTimestamp": twin.clock.timestamp(), "lastTimestamp": twin.clock.timestamp()}))
    described = kubectl("describe", "pod", "probe")
    assert field(described, "Image", "busybox:1.36") and field(described, "QoS Class", "BestEffort")
    assert "Normal  Scheduled" in described and "Successfully assigned default/probe to itbench-worker" in described


def test_create_replace_and_scale(web):
    replaced = DEPLOYMENT.replace("replicas: 2", "replicas: 4").replace("tier: frontend", "tier: edge")
    assert web("replace", "-f", "-", input=replaced).strip() == "deployment.apps/web replaced"
    assert web("get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.metadata.labels.tier}") == "4 edge"
    assert web("scale", "deployment", "web", "--replicas=1").strip() == "deployment.apps/web scaled"
    assert web("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}") == "1"
    refused = web.fails("scale", "deployment", "web", "--replicas=3", "--current-replicas=2")
    assert "Expected replicas to be 2, was 1" in refused.stderr
    again = web.fails("create", "-f", "-", input=DEPLOYMENT)
    assert 'Error from server (AlreadyExists): error when creating "STDIN": deployments.apps "web" already exists' \
        in again.stderr


def test_set_image_env_and_resources(web):
    web("set", "image", "deployment/web", "nginx=nginx:1.28")
    web("set", "env", "deployment/web", "MODE=slow", "EXTRA=1")
    web("set", "resources", "deployment/web", "--limits=cpu=500m,memory=256Mi", "--requests=cpu=100m")
    container = json.loads(web("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0]}"))
    assert container["image"] == "nginx:1.28"
    assert {e["name"]: e["value"] for e in container["env"]} == {"MODE": "slow", "EXTRA": "1"}
    assert container["resources"] == {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m"}}
    assert web("get", "deploy", "web", "-o", "jsonpath={.metadata.generation}") == "4"
    web("set", "env", "deployment/web", "EXTRA-")
    assert "EXTRA" not in web("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].env}")


def test_label_and_annotate(web):
    web("label", "deployment", "web", "team=sre")
    web("annotate", "deployment", "web", "owner=ops@example.com")
    meta = json.loads(web("get", "deploy", "web", "-o", "jsonpath={.metadata}"))
    assert meta["labels"]["team"] == "sre" and meta["annotations"]["owner"] == "ops@example.com"
    clash = web.fails("label", "deployment", "web", "team=dev")
    assert "'team' already has a value (sre), and --overwrite is false" in clash.stderr
    web("label", "deployment", "web", "team-")
    assert "team" not in web("get", "deploy", "web", "-o", "jsonpath={.metadata.labels}")


def test_cordon_and_uncordon(kubectl):
    assert kubectl("cordon", "itbench-worker2").strip() == "node/itbench-worker2 cordoned"
    assert kubectl("get", "node", "itbench-worker2", "-o", "jsonpath={.spec.unschedulable}") == "true"
    status = kubectl("get", "node", "itbench-worker2", "--no-headers").split()[1]
    assert status == "Ready,SchedulingDisabled"
    assert kubectl("cordon", "itbench-worker2").strip() == "node/itbench-worker2 already cordoned"
    assert kubectl("uncordon", "itbench-worker2").strip() == "node/itbench-worker2 uncordoned"
    assert kubectl("get", "node", "itbench-worker2", "--no-headers").split()[1] == "Ready"


def test_delete_with_and_without_waiting(kubectl):
    kubectl("create", "configmap", "plain")
    assert kubectl("delete", "configmap", "plain").strip() == 'configmap "plain" deleted'
    kubectl("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "held", "finalizers": ["example.com/hold"]}}))
    out = kubectl("delete", "configmap", "held", "--wait=false")
    assert out.strip() == 'configmap "held" deleted'
    assert kubectl("get", "cm", "held", "-o", "jsonpath={.metadata.deletionTimestamp}")
    slow = kubectl.run("delete", "configmap", "held", "--timeout=1s", check=False)
    assert slow.returncode != 0 and "timed out waiting" in slow.stderr
    kubectl("patch", "configmap", "held", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    assert "NotFound" in kubectl.fails("get", "configmap", "held").stderr
    missing = kubectl.fails("delete", "configmap", "ghost")
    assert 'Error from server (NotFound): configmaps "ghost" not found' in missing.stderr
    assert kubectl("delete", "configmap", "ghost", "--ignore-not-found").strip() == ""


def test_api_resources_and_versions(kubectl):
    resources = kubectl("api-resources", "--api-group=apps", "-o", "wide")
    line = next(l for l in resources.splitlines() if l.startswith("deployments"))
    assert line.split()[:5] == ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    assert line.split()[5] == "create,delete,deletecollection,get,list,patch,update,watch"
    names = kubectl("api-resources", "--namespaced=false", "-o", "name").split()
    assert "nodes" in names and "namespaces" in names and "pods" not in names
    versions = kubectl("api-versions").split()
    assert {"v1", "apps/v1", "autoscaling/v1", "autoscaling/v2", "metrics.k8s.io/v1beta1"} <= set(versions)


def _set_ready_later(twin, name: str, delay: float) -> threading.Thread:
    def later():
        time.sleep(delay)
        pods = twin.api.catalog.lookup("", "v1", "pods")
        pod = twin.api.get(pods, "default", name)
        pod["status"]["conditions"] = [{"type": "Ready", "status": "True",
                                        "lastTransitionTime": twin.clock.timestamp()}]
        twin.api.update(pods, "default", name, pod, twin.admin_ctx, subresource="status")

    thread = threading.Thread(target=later)
    thread.start()
    return thread


def test_wait_for_a_condition(kubectl, twin):
    kubectl("run", "waiter", "--image=busybox:1.36", "--", "sleep", "3600")
    timed_out = kubectl.run("wait", "--for=condition=Ready", "pod/waiter", "--timeout=1s", check=False)
    assert timed_out.returncode == 1 and "timed out waiting for the condition on pods/waiter" in timed_out.stderr
    thread = _set_ready_later(twin, "waiter", 0.5)
    out = kubectl("wait", "--for=condition=Ready", "pod/waiter", "--timeout=10s")
    thread.join()
    assert out.strip() == "pod/waiter condition met"
    phase = kubectl("wait", "--for=jsonpath={.status.phase}=Active", "namespace/default", "--timeout=5s")
    assert phase.strip() == "namespace/default condition met"


def test_get_watch_streams_changes(kubectl, twin):
    def later():
        time.sleep(0.7)
        kubectl("create", "configmap", "appears")

    thread = threading.Thread(target=later)
    thread.start()
    out = kubectl.run("get", "configmaps", "-w", "--request-timeout=2s", check=False).stdout
    thread.join()
    rows = [line.split()[0] for line in out.splitlines()]
    assert rows[0] == "NAME" and "kube-root-ca.crt" in rows and rows[-1] == "appears"
