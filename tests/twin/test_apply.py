"""Client-side and server-side apply, and the managed fields a real API server keeps."""

from __future__ import annotations

import json

import pytest
import yaml

from pytest_itbench.twin.apiserver.patching.fieldpath import FieldSet, path_string

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
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
        image: nginx:1.25
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
"""

WEB_APPLIED_FIELDS = {
    "f:metadata": {"f:labels": {"f:app": {}}},
    "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {"f:containers": {'k:{"name":"nginx"}': {
            ".": {}, "f:env": {'k:{"name":"A"}': {".": {}, "f:name": {}, "f:value": {}},
                               'k:{"name":"B"}': {".": {}, "f:name": {}, "f:value": {}}},
            "f:image": {}, "f:name": {}}}}}},
}


def write(kubectl, name: str, text: str) -> str:
    (kubectl.workdir / name).write_text(text)
    return name


def variant(replicas: int = 2, drop_b: bool = False) -> str:
    text = WEB.replace("replicas: 2", f"replicas: {replicas}")
    return text.replace('        - {name: B, value: "2"}\n', "") if drop_b else text


def get(kubectl, *args) -> dict:
    return kubectl.run("get", *args, "-o", "json", "--show-managed-fields").json()


def entries(obj: dict) -> dict[str, dict]:
    return {e["manager"]: e for e in obj["metadata"].get("managedFields", [])}


# ---- FieldsV1 ---------------------------------------------------------------------------------------

def test_fields_v1_round_trips_and_prints_paths_as_conflicts_name_them():
    raw = {"f:metadata": {"f:finalizers": {".": {}, 'v:"example.com/guard"': {}}},
           "f:spec": {"f:containers": {'k:{"name":"web"}': {".": {}, "f:image": {}}},
                      "f:ports": {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}}},
                      "f:args": {"i:0": {}}}}
    fields = FieldSet.from_fields_v1(raw)
    assert fields.to_fields_v1() == raw
    assert [path_string(p) for p in fields.paths()] == [
        ".metadata.finalizers", '.metadata.finalizers[="example.com/guard"]', ".spec.args[0]",
        '.spec.containers[name="web"]', '.spec.containers[name="web"].image',
        '.spec.ports[port=80,protocol="TCP"]', '.spec.ports[port=80,protocol="TCP"].port']


# ---- client-side apply --------------------------------------------------------------------------------

def test_client_side_apply_creates_leaves_unchanged_configures_and_removes_what_the_file_drops(kubectl):
    assert kubectl("apply", "-f", write(kubectl, "web.yaml", WEB)).strip() == "deployment.apps/web created"
    assert kubectl("apply", "-f", "web.yaml").strip() == "deployment.apps/web unchanged"
    out = kubectl("apply", "-f", write(kubectl, "web2.yaml", variant(replicas=3, drop_b=True)))
    assert out.strip() == "deployment.apps/web configured"
    dep = get(kubectl, "deployment", "web")
    assert dep["spec"]["replicas"] == 3
    assert dep["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]
    entry = entries(dep)["kubectl-client-side-apply"]
    assert (entry["operation"], entry["apiVersion"]) == ("Update", "apps/v1")
    container = entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert list(container["f:env"]) == [".", 'k:{"name":"A"}']  # B went with the field


def test_kubectl_diff_exits_1_with_a_diff_and_0_without(kubectl):
    kubectl("apply", "-f", write(kubectl, "web.yaml", WEB))
    assert kubectl.run("diff", "-f", "web.yaml", check=False).returncode == 0
    changed = kubectl.run("diff", "-f", write(kubectl, "web3.yaml", variant(replicas=3)), check=False)
    assert changed.returncode == 1
    assert "-  replicas: 2" in changed.stdout and "+  replicas: 3" in changed.stdout
    assert get(kubectl, "deployment", "web")["spec"]["replicas"] == 2  # a dry run


# ---- server-side apply -----------------------------------------------------------------------------

def test_server_side_apply_creates_and_owns_exactly_what_it_applied(kubectl):
    out = kubectl("apply", "--server-side", "-f", write(kubectl, "web.yaml", WEB))
    assert out.strip() == "deployment.apps/web serverside-applied"
    assert kubectl("apply", "--server-side", "-f", "web.yaml").strip() == "deployment.apps/web serverside-applied"
    entry = entries(get(kubectl, "deployment", "web"))["kubectl"]
    assert (entry["operation"], entry["apiVersion"], entry["fieldsType"]) == ("Apply", "apps/v1", "FieldsV1")
    assert entry["fieldsV1"] == WEB_APPLIED_FIELDS  # nothing the server defaulted


def test_server_side_apply_conflicts_with_another_manager_unless_forced(kubectl):
    kubectl("apply", "-f", write(kubectl, "web.yaml", WEB))
    write(kubectl, "web5.yaml", variant(replicas=5))
    refused = kubectl.fails("apply", "--server-side", "--field-manager=ci", "-f", "web5.yaml")
    assert refused.stderr.splitlines()[0] == ('error: Apply failed with 1 conflict: conflict with '
                                              '"kubectl-client-side-apply" using apps/v1: .spec.replicas')
    kubectl("apply", "--server-side", "--field-manager=ci", "--force-conflicts", "-f", "web5.yaml")
    dep = get(kubectl, "deployment", "web")
    assert dep["spec"]["replicas"] == 5
    owners = {name for name, e in entries(dep).items() if "f:replicas" in e["fieldsV1"].get("f:spec", {})}
    assert owners == {"ci"}


def test_kubectl_moves_from_client_side_to_server_side_apply_without_conflicts(kubectl):
    kubectl("apply", "-f", write(kubectl, "web.yaml", WEB))
    kubectl("apply", "--server-side", "-f", write(kubectl, "web4.yaml", variant(replicas=4)))
    dep = get(kubectl, "deployment", "web")
    assert dep["spec"]["replicas"] == 4
    last_applied = json.loads(dep["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last_applied["spec"]["replicas"] == 4
    assert entries(dep)["kubectl"]["operation"] == "Apply"


def test_show_managed_fields_after_kubectl_create_look_like_a_real_clusters(kubectl):
    kubectl("create", "deployment", "web", "--image=nginx:1.25")
    shown = yaml.safe_load(kubectl("get", "deployment", "web", "-o", "yaml", "--show-managed-fields"))
    [entry] = shown["metadata"]["managedFields"]
    assert {k: entry[k] for k in ("manager", "operation", "apiVersion", "fieldsType")} == {
        "manager": "kubectl-create", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1"}
    assert entry["time"] == shown["metadata"]["creationTimestamp"]
    fields = entry["fieldsV1"]
    assert fields["f:metadata"]["f:labels"] == {".": {}, "f:app": {}}  # a new map is owned itself
    assert "." not in fields["f:spec"] and "." not in fields["f:spec"]["f:template"]  # Go structs always exist
    containers = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert "." not in containers  # a list without omitempty always exists too
    assert {".", "f:image", "f:name"} <= set(containers['k:{"name":"nginx"}'])
    assert "managedFields" not in kubectl.run("get", "deployment", "web", "-o", "json").json()["metadata"]


# ---- the Python client ----------------------------------------------------------------------------------

def manifest(**spec_changes) -> dict:
    body = yaml.safe_load(WEB)
    body["spec"].update(spec_changes)
    return body


@pytest.fixture
def deployments(client):
    from kubernetes.dynamic import DynamicClient

    return DynamicClient(client).resources.get(api_version="apps/v1", kind="Deployment")


def test_dynamic_client_server_side_apply(deployments):
    from kubernetes.client.exceptions import ApiException

    created = deployments.server_side_apply(body=manifest(), field_manager="pytest").to_dict()
    assert created["metadata"]["managedFields"][0]["manager"] == "pytest"
    with pytest.raises(ApiException) as conflict:
        deployments.server_side_apply(body=manifest(replicas=7), field_manager="other")
    status = json.loads(conflict.value.body)
    assert (conflict.value.status, status["reason"]) == (409, "Conflict")
    assert status["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with "pytest"',
                                            "field": ".spec.replicas"}]
    forced = deployments.server_side_apply(body=manifest(replicas=7), field_manager="other", force_conflicts=True)
    assert forced.spec.replicas == 7
    with pytest.raises(ApiException) as refused:
        body = manifest()
        body["metadata"]["managedFields"] = []
        deployments.server_side_apply(body=body, field_manager="pytest")
    assert (refused.value.status, json.loads(refused.value.body)["message"]) == (
        400, "metadata.managedFields must be nil")


def test_apply_merges_lists_by_their_type(deployments):
    """Containers are a map keyed by name, finalizers a set, args atomic; each manager keeps its own."""
    first = manifest()
    first["metadata"]["finalizers"] = ["example.com/a"]
    first["spec"]["template"]["spec"]["containers"][0]["args"] = ["-a"]
    deployments.server_side_apply(body=first, field_manager="first")
    second = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "web", "namespace": "default", "finalizers": ["example.com/b"]},
              "spec": {"template": {"spec": {"containers": [
                  {"name": "nginx", "args": ["-b"]}, {"name": "sidecar", "image": "envoy"}]}}}}
    dep = deployments.server_side_apply(body=second, field_manager="second", force_conflicts=True).to_dict()
    containers = dep["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["nginx", "sidecar"]
    assert containers[0]["args"] == ["-b"]
    assert dep["metadata"]["finalizers"] == ["example.com/a", "example.com/b"]
    owners = {e["manager"]: FieldSet.from_fields_v1(e["fieldsV1"]) for e in dep["metadata"]["managedFields"]}
    second_paths = {path_string(p) for p in owners["second"].paths()}
    assert '.metadata.finalizers[="example.com/b"]' in second_paths
    assert '.spec.template.spec.containers[name="nginx"].args' in second_paths
    assert '.spec.template.spec.containers[name="nginx"].args' not in {path_string(p) for p in owners["first"].paths()}

    # The first manager drops its finalizer and the args: its finalizer goes, the args stay (second owns them).
    first["metadata"]["finalizers"] = []
    del first["spec"]["template"]["spec"]["containers"][0]["args"]
    dep = deployments.server_side_apply(body=first, field_manager="first").to_dict()
    assert dep["metadata"]["finalizers"] == ["example.com/b"]
    assert dep["spec"]["template"]["spec"]["containers"][0]["args"] == ["-b"]


WIDGETS = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {"type": "object", "properties": {
                     "size": {"type": "integer"},
                     "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                     "notes": {"type": "array", "items": {"type": "string"}}}}}}}}]},
}


def test_custom_resources_apply_by_their_schema_and_take_merge_patches(client):
    from kubernetes import client as k8s
    from kubernetes.dynamic import DynamicClient

    k8s.ApiextensionsV1Api(client).create_custom_resource_definition(WIDGETS)
    widgets = DynamicClient(client).resources.get(api_version="example.com/v1", kind="Widget")

    def widget(**spec) -> dict:
        return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
                "spec": spec}

    widgets.server_side_apply(body=widget(size=1, tags=["a"], notes=["x"]), field_manager="one")
    applied = widgets.server_side_apply(body=widget(tags=["b"], notes=["y"]), field_manager="two",
                                        force_conflicts=True).to_dict()
    assert applied["spec"] == {"size": 1, "tags": ["a", "b"], "notes": ["y"]}  # a set merges, atomic is replaced
    owners = {e["manager"]: e["fieldsV1"]["f:spec"] for e in applied["metadata"]["managedFields"]}
    assert owners["two"] == {"f:notes": {}, "f:tags": {'v:"b"': {}}}
    patched = widgets.patch(body={"spec": {"size": 2}}, name="w", namespace="default",
                            content_type="application/merge-patch+json")
    assert patched.spec.size == 2


def test_status_writes_are_recorded_against_the_status_subresource(client):
    from kubernetes import client as k8s

    core = k8s.CoreV1Api(client)
    core.create_namespaced_service("default", {"metadata": {"name": "lb"}, "spec": {
        "type": "LoadBalancer", "ports": [{"port": 80}], "selector": {"app": "web"}}}, field_manager="setup")
    service = core.patch_namespaced_service_status(
        "lb", "default", {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}},
        field_manager="cloud-controller")
    [entry] = [e for e in service.metadata.managed_fields if e.manager == "cloud-controller"]
    assert (entry.operation, entry.subresource) == ("Update", "status")
    assert entry.fields_v1 == {"f:status": {"f:loadBalancer": {"f:ingress": {}}}}
    [setup] = [e for e in service.metadata.managed_fields if e.manager == "setup"]
    assert "f:status" not in setup.fields_v1


def test_more_than_ten_updaters_fold_the_oldest_into_ancient_changes(client):
    from kubernetes import client as k8s

    core = k8s.CoreV1Api(client)
    core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}, "data": {"m00": "0"}},
                                      field_manager="m00")
    for n in range(1, 11):
        cm = core.patch_namespaced_config_map("cm", "default", {"data": {f"m{n:02d}": str(n)}},
                                              field_manager=f"m{n:02d}")
    owners = {e.manager: set(e.fields_v1["f:data"]) for e in cm.metadata.managed_fields}
    assert len(owners) == 10
    assert owners["ancient-changes"] == {".", "f:m00", "f:m01"}  # m00 created the map
    assert owners["m10"] == {"f:m10"}


def test_an_object_first_applied_after_an_untracked_write_credits_the_placeholder_manager(twin, deployments):
    twin.server.api.store.create("deployments.apps", yaml.safe_load(WEB))
    dep = deployments.server_side_apply(body=manifest(replicas=2), field_manager="pytest").to_dict()
    managers = {(e["manager"], e["operation"]) for e in dep["metadata"]["managedFields"]}
    assert managers == {("before-first-apply", "Update"), ("pytest", "Apply")}
