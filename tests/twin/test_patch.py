"""Patches as kube-apiserver applies them: strategic merge, JSON merge (RFC 7386) and JSON patch (RFC 6902)."""

from __future__ import annotations

import json

import pytest

from pytest_itbench.twin.apiserver.patching.patch import JSON_PATCH, MERGE, STRATEGIC, apply_patch
from pytest_itbench.twin.errors import StatusError
from pytest_itbench.twin.schema import SchemaRegistry

SCHEMAS = SchemaRegistry()
DEPLOYMENT = SCHEMAS.for_kind("apps", "v1", "Deployment")
SERVICE = SCHEMAS.for_kind("", "v1", "Service")
PDB = SCHEMAS.for_kind("policy", "v1", "PodDisruptionBudget")


def deployment(**spec) -> dict:
    pod = {"containers": [{"name": "web", "image": "nginx:1.25",
                           "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                           "ports": [{"containerPort": 80, "protocol": "TCP"}],
                           "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
                          {"name": "log", "image": "busybox"}],
           "volumes": [{"name": "data", "emptyDir": {}}]}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a", "b"]},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod}, **spec}}


def smp(obj: dict, patch, node=DEPLOYMENT) -> dict:
    return apply_patch(obj, json.dumps(patch).encode(), STRATEGIC, node, custom=False, kind="Deployment")


def containers(obj: dict) -> list[dict]:
    return obj["spec"]["template"]["spec"]["containers"]


def refused(obj: dict, patch, content_type=STRATEGIC, node=DEPLOYMENT, custom=False) -> StatusError:
    body = patch if isinstance(patch, bytes) else json.dumps(patch).encode()
    with pytest.raises(StatusError) as info:
        apply_patch(obj, body, content_type, node, custom=custom, kind="Deployment")
    return info.value


# ---- strategic merge patch ----------------------------------------------------------------------------

def test_keyed_lists_merge_by_their_merge_key_at_every_level():
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.26", "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}],
         "ports": [{"containerPort": 443}], "volumeMounts": [{"mountPath": "/cache", "name": "cache"}]}]}}}}
    out = smp(deployment(), patch)
    web, log = containers(out)
    assert (web["image"], log["image"]) == ("nginx:1.26", "busybox")
    assert web["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}]
    # An item the live list lacks goes before the items the patch does not name, as upstream merges.
    assert [p["containerPort"] for p in web["ports"]] == [443, 80]
    assert [m["mountPath"] for m in web["volumeMounts"]] == ["/cache", "/data"]


def test_service_ports_merge_by_port():
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
               "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080},
                                  {"name": "https", "port": 443, "targetPort": 8443}]}}
    out = smp(service, {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}, SERVICE)
    assert out["spec"]["ports"] == [{"name": "http", "port": 80, "targetPort": 9090},
                                    {"name": "https", "port": 443, "targetPort": 8443}]


def test_null_deletes_a_field_and_lists_without_merge_strategy_are_replaced():
    out = smp(deployment(), {"spec": {"strategy": {"rollingUpdate": None},
                                      "template": {"spec": {"containers": [{"name": "log", "args": ["-v"]}]}}}})
    assert out["spec"]["strategy"] == {"type": "RollingUpdate"}
    out = smp(out, {"spec": {"template": {"spec": {"containers": [{"name": "log", "args": ["-q"]}]}}}})
    assert containers(out)[1]["args"] == ["-q"]


def test_primitive_merge_lists_are_sets_and_delete_from_primitive_list_removes():
    out = smp(deployment(), {"metadata": {"finalizers": ["b", "c"]}})
    assert out["metadata"]["finalizers"] == ["a", "b", "c"]
    out = smp(out, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a", "c"]}})
    assert out["metadata"]["finalizers"] == ["b"]


def test_patch_delete_directive_on_a_list_item_and_on_a_map():
    out = smp(deployment(), {"spec": {"template": {"spec": {"containers": [{"name": "log", "$patch": "delete"}]}},
                                      "strategy": {"$patch": "delete"}},
                             "metadata": {"labels": {"$patch": "delete"}}})
    assert [c["name"] for c in containers(out)] == ["web"]
    assert out["spec"]["strategy"] == {}  # a struct the Go type always has, emptied
    assert "labels" not in out["metadata"]  # an emptied map is gone


def test_patch_replace_directive_on_a_map_and_on_a_list():
    out = smp(deployment(), {"spec": {"template": {"metadata": {"$patch": "replace", "labels": {"v": "2"}}}}})
    assert out["spec"]["template"]["metadata"] == {"labels": {"v": "2"}}
    out = smp(deployment(), {"spec": {"template": {"spec": {"containers": [
        {"$patch": "replace"}, {"name": "only", "image": "alpine"}]}}}})
    assert containers(out) == [{"name": "only", "image": "alpine"}]


def test_replace_strategy_replaces_a_map():
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web", "tier": "x"}}}}
    out = smp(pdb, {"spec": {"selector": {"matchLabels": {"app": "api"}}}}, PDB)
    assert out["spec"]["selector"] == {"matchLabels": {"app": "api"}}


def test_retain_keys_drops_the_fields_it_does_not_list():
    out = smp(deployment(), {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}})
    assert out["spec"]["strategy"] == {"type": "Recreate"}
    # What kubectl apply sends when a volume changes its source.
    out = smp(deployment(), {"spec": {"template": {"spec": {"$setElementOrder/volumes": [{"name": "data"}],
                                                            "volumes": [{"$retainKeys": ["configMap", "name"],
                                                                         "configMap": {"name": "cfg"},
                                                                         "name": "data"}]}}}})
    assert out["spec"]["template"]["spec"]["volumes"] == [{"name": "data", "configMap": {"name": "cfg"}}]
    error = refused(deployment(), {"spec": {"strategy": {"$retainKeys": ["rollingUpdate"], "type": "Recreate"}}})
    assert (error.code, error.message) == (400, "invalid patch format of retainKeys")


def test_set_element_order_orders_the_merged_list():
    patch = {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "log"}, {"name": "sidecar"}, {"name": "web"}],
        "containers": [{"name": "sidecar", "image": "envoy"}]}}}}
    assert [c["name"] for c in containers(smp(deployment(), patch))] == ["log", "sidecar", "web"]
    patch = {"metadata": {"$setElementOrder/finalizers": ["c", "a", "b"], "finalizers": ["c"]}}
    assert smp(deployment(), patch)["metadata"]["finalizers"] == ["c", "a", "b"]


def test_new_keyed_items_come_first_without_their_nulls():
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "extra", "image": "x", "command": None}]}}}}
    assert containers(smp(deployment(), patch))[0] == {"name": "extra", "image": "x"}


def test_removing_the_last_label_leaves_no_empty_map():
    obj = deployment()
    obj["metadata"]["labels"] = {"only": "x"}
    assert "labels" not in smp(obj, {"metadata": {"labels": {"only": None}}})["metadata"]


@pytest.mark.parametrize("patch, code, message", [
    ({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}, 500,
     "map: map[image:x] does not contain declared merge key: name"),
    ({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "web"}],
                                     "containers": [{"name": "new", "image": "x"}]}}}}, 500,
     "The order in patch list:\n[map[image:x name:new]]\n doesn't match $setElementOrder list:\n[map[name:web]]\n"),
    ({"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}}, 400, "invalid patch format of primitive list"),
    ({"spec": {"template": {"spec": {"containers": [{"name": "web", "$patch": "merge"}]}}}}, 500,
     "merging lists cannot yet be specified in the patch"),
    ({"spec": {"strategy": {"$patch": "keep"}}}, 500, "unknown patch type: keep in map: map[$patch:keep]"),
    ({"metadata": {"finalizers": [1]}}, 500, "list element types are not identical: [[a b] [1]]"),
    ([1, 2], 400, "json: cannot unmarshal array into Go value of type map[string]interface {}"),
])
def test_malformed_strategic_patches_fail_as_a_real_server_fails_them(patch, code, message):
    error = refused(deployment(), patch)
    assert (error.code, error.message) == (code, message)


def test_lists_of_lists_are_unprocessable():
    obj = deployment()
    obj["metadata"]["finalizers"] = []
    error = refused(obj, {"metadata": {"finalizers": [["x"]]}})
    assert (error.code, error.message) == (422, "the server rejected our request due to an error in our request")


def test_custom_resources_refuse_strategic_merge_patch():
    error = refused({"apiVersion": "example.com/v1", "kind": "Widget"}, {"spec": {}}, node=None, custom=True)
    assert error.code == 415
    assert error.message == ("the body of the request was in an unknown format - accepted media types include: "
                             "application/json-patch+json, application/merge-patch+json, "
                             "application/apply-patch+yaml")


# ---- JSON merge patch ----------------------------------------------------------------------------------

def test_merge_patch_merges_maps_replaces_lists_and_deletes_with_null():
    patch = {"metadata": {"labels": {"app": None, "tier": "web"}},
             "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "only"}]}}}}
    out = apply_patch(deployment(), json.dumps(patch).encode(), MERGE, DEPLOYMENT, custom=False, kind="Deployment")
    assert out["metadata"]["labels"] == {"tier": "web"}
    assert out["spec"]["replicas"] == 3
    assert containers(out) == [{"name": "only"}]


@pytest.mark.parametrize("body, message", [
    (b"null", "Invalid JSON Patch"),
    (b"[1]", "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"),
    (b'{"spec": ', "error decoding patch: unexpected end of JSON input"),
    (b"{spec: 1}", "error decoding patch: invalid character 's' looking for beginning of object key string"),
])
def test_malformed_merge_patches_are_bad_requests(body, message):
    error = refused(deployment(), body, MERGE)
    assert (error.code, error.message) == (400, message)


# ---- JSON patch ---------------------------------------------------------------------------------------------

def json_patch(obj: dict, ops: list) -> dict:
    return apply_patch(obj, json.dumps(ops).encode(), JSON_PATCH, DEPLOYMENT, custom=False, kind="Deployment")


def test_json_patch_operations():
    out = json_patch(deployment(), [
        {"op": "replace", "path": "/spec/replicas", "value": 4},
        {"op": "add", "path": "/metadata/labels/tier", "value": "web"},
        {"op": "remove", "path": "/spec/template/spec/containers/-1"},
        {"op": "add", "path": "/metadata/finalizers/-", "value": "z"},
        {"op": "copy", "from": "/metadata/labels/app", "path": "/metadata/labels/copy"},
        {"op": "move", "from": "/metadata/labels/tier", "path": "/metadata/labels/moved"},
        {"op": "test", "path": "/spec/replicas", "value": 4},
        {"op": "add", "path": "/metadata/labels/a~1b", "value": "escaped"},
    ])
    assert out["spec"]["replicas"] == 4
    assert out["metadata"]["labels"] == {"app": "web", "copy": "web", "moved": "web", "a/b": "escaped"}
    assert [c["name"] for c in containers(out)] == ["web"]
    assert out["metadata"]["finalizers"] == ["a", "b", "z"]


@pytest.mark.parametrize("ops", [
    [{"op": "test", "path": "/spec/replicas", "value": 7}],
    [{"op": "remove", "path": "/spec/paused"}],
    [{"op": "add", "path": "/spec/nothing/here", "value": 1}],
    [{"op": "replace", "path": "/metadata/finalizers/5", "value": "x"}],
    [{"op": "jump", "path": "/spec"}],
])
def test_json_patch_operations_that_do_not_apply_are_unprocessable(ops):
    error = refused(deployment(), ops, JSON_PATCH)
    assert (error.code, error.reason, error.message) == (
        422, "Invalid", "the server rejected our request due to an error in our request")


@pytest.mark.parametrize("body, message", [
    (b'{"op": "add"}', "error decoding patch: json: cannot unmarshal object into Go value of type "
                       "[]handlers.jsonPatchOp"),
    (b'[{"op": 1}]', "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of "
                     "type string"),
    (b"[{]", "error decoding patch: invalid character ']' looking for beginning of object key string"),
])
def test_malformed_json_patches_are_bad_requests(body, message):
    error = refused(deployment(), body, JSON_PATCH)
    assert (error.code, error.message) == (400, message)


# ---- through the API: kubectl and the Python client ---------------------------------------------------------

@pytest.fixture
def web(kubectl):
    kubectl("create", "deployment", "web", "--image=nginx:1.25", "--replicas=2")
    return kubectl


def get(kubectl, *args) -> dict:
    return kubectl.run("get", *args, "-o", "json", "--show-managed-fields").json()


def test_kubectl_patch_with_each_type(web):
    assert web("patch", "deployment", "web", "-p", '{"spec":{"replicas":4}}').strip() == \
        "deployment.apps/web patched"
    web("patch", "deployment", "web", "--type=merge", "-p", '{"metadata":{"labels":{"tier":"front"}}}')
    web("patch", "deployment", "web", "--type=json", "-p",
        '[{"op":"add","path":"/spec/template/spec/containers/-","value":{"name":"log","image":"busybox"}}]')
    dep = get(web, "deployment", "web")
    assert dep["spec"]["replicas"] == 4
    assert dep["metadata"]["labels"]["tier"] == "front"
    assert [c["name"] for c in containers(dep)] == ["nginx", "log"]


def test_kubectl_patch_without_changes_says_so_and_keeps_the_resource_version(web):
    before = get(web, "deployment", "web")["metadata"]["resourceVersion"]
    out = web("patch", "deployment", "web", "-p", '{"spec":{"replicas":2}}')
    assert out.strip() == "deployment.apps/web patched (no change)"
    assert get(web, "deployment", "web")["metadata"]["resourceVersion"] == before


def test_kubectl_patch_errors_read_as_a_real_servers(web):
    failed = web.fails("patch", "deployment", "web", "-p",
                       '{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}')
    assert failed.stderr.strip() == "Error from server: map: map[image:x] does not contain declared merge key: name"
    failed = web.fails("patch", "deployment", "web", "--type=json", "-p",
                       '[{"op":"test","path":"/spec/replicas","value":9}]')
    assert failed.stderr.strip() == \
        "The request is invalid: the server rejected our request due to an error in our request"


def test_kubectl_set_image_label_annotate_and_rollout(web):
    web("set", "image", "deployment/web", "nginx=nginx:1.26")
    web("label", "deployment", "web", "team=a")
    web("annotate", "deployment", "web", "note=hi")
    web("rollout", "pause", "deployment/web")
    dep = get(web, "deployment", "web")
    assert containers(dep)[0]["image"] == "nginx:1.26"
    assert dep["metadata"]["labels"]["team"] == "a"
    assert dep["metadata"]["annotations"]["note"] == "hi"
    assert dep["spec"]["paused"] is True
    managers = {e["manager"] for e in dep["metadata"]["managedFields"]}
    assert {"kubectl-create", "kubectl-set", "kubectl-label", "kubectl-annotate", "kubectl-rollout"} <= managers
    web("label", "deployment", "web", "team-")
    web("annotate", "deployment", "web", "note-")
    web("rollout", "resume", "deployment/web")
    dep = get(web, "deployment", "web")
    assert "team" not in dep["metadata"]["labels"]
    assert "annotations" not in dep["metadata"]
    assert "paused" not in dep["spec"]
    # Managers that owned only what they removed own nothing, and their entries are gone.
    managers = {e["manager"] for e in dep["metadata"]["managedFields"]}
    assert {"kubectl-create", "kubectl-set"} <= managers
    assert not managers & {"kubectl-label", "kubectl-annotate", "kubectl-rollout"}


def test_kubectl_scale_patches_the_scale_subresource(web):
    web("scale", "deployment", "web", "--replicas=5")
    dep = get(web, "deployment", "web")
    assert dep["spec"]["replicas"] == 5
    scale_entries = [e for e in dep["metadata"]["managedFields"] if e.get("subresource") == "scale"]
    assert [(e["operation"], e["fieldsV1"]) for e in scale_entries] == [("Update", {"f:spec": {"f:replicas": {}}})]


def test_python_client_patches_with_a_dict_and_with_a_list(web, client):
    from kubernetes import client as k8s

    apps = k8s.AppsV1Api(client)
    apps.patch_namespaced_deployment("web", "default", {"spec": {"template": {"spec": {
        "containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}})
    apps.patch_namespaced_deployment("web", "default", [{"op": "replace", "path": "/spec/replicas", "value": 3}])
    apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 6}})
    dep = apps.read_namespaced_deployment("web", "default")
    assert (dep.spec.template.spec.containers[0].image, dep.spec.replicas) == ("nginx:1.27", 6)
