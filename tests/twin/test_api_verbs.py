"""The generic verbs through the official client: create, update, list, watch, delete, and their edge cases."""

import json
import threading

import pytest
from kubernetes import client as k8s
from kubernetes import watch
from kubernetes.client.exceptions import ApiException


def message(exc) -> str:
    """The Status message of a failed call."""
    return json.loads(exc.value.body)["message"]


@pytest.fixture
def core(client):
    return k8s.CoreV1Api(client)


def configmap(name: str, labels: dict | None = None, **kw) -> dict:
    meta = {"name": name, "labels": labels or {}}
    meta.update(kw.pop("metadata", {}))
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": kw.get("data", {"k": "v"})}


# ---- create ----------------------------------------------------------------------------------

def test_generate_name_and_dry_run(core):
    made = core.create_namespaced_config_map("default", configmap("", metadata={"generateName": "job-"}))
    assert made.metadata.name.startswith("job-") and len(made.metadata.name) == len("job-") + 5
    dry = core.create_namespaced_config_map("default", configmap("ghost"), dry_run="All")
    assert dry.metadata.uid and dry.metadata.name == "ghost"
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_config_map("ghost", "default")
    assert exc.value.status == 404


def test_already_exists_and_missing_name(core):
    core.create_namespaced_config_map("default", configmap("dup"))
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map("default", configmap("dup"))
    assert exc.value.status == 409 and 'configmaps "dup" already exists' in message(exc)
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map("default", {"metadata": {}, "data": {}})
    assert exc.value.status == 422 and "name or generateName is required" in message(exc)


def test_error_bodies_are_written_as_kube_apiserver_writes_them(core, raw):
    # Clients that print or compare the body (the official client's FailToCreateError) see Go's encoding:
    # metav1.Status's field order, details before code, empty details sent, one line ended by a newline.
    core.create_namespaced_config_map("default", configmap("twice"))
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map("default", configmap("twice"))
    assert exc.value.body == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"configmaps \\"twice\\" already exists","reason":"AlreadyExists",'
        '"details":{"name":"twice","kind":"configmaps"},"code":409}\n')
    status, _, data = raw.request("GET", "/api/v1/nonesuch")
    assert status == 404 and data == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"the server could not find the requested resource","reason":"NotFound","details":{},'
        b'"code":404}\n')


def test_body_kind_and_api_version_default_from_the_endpoint_but_must_not_contradict_it(raw):
    status, body = raw.json("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "bare"}})
    assert status == 201 and body["kind"] == "ConfigMap" and body["apiVersion"] == "v1"
    status, body = raw.json("POST", "/api/v1/namespaces/default/configmaps",
                            {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    assert status == 400
    assert body["message"] == "the API version in the data (apps/v1) does not match the expected API version (v1)"
    status, body = raw.json("POST", "/api/v1/namespaces/default/configmaps",
                            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y", "namespace": "kube-system"}})
    assert status == 400 and "does not match the namespace sent on the request" in body["message"]


# ---- update ------------------------------------------------------------------------------------

def test_stale_resource_version_is_a_conflict(core):
    first = core.create_namespaced_config_map("default", configmap("cfg"))
    first.data = {"k": "2"}
    core.replace_namespaced_config_map("cfg", "default", first)
    first.data = {"k": "3"}
    with pytest.raises(ApiException) as exc:
        core.replace_namespaced_config_map("cfg", "default", first)
    assert exc.value.status == 409
    assert ('Operation cannot be fulfilled on configmaps "cfg": the object has been modified; please apply your '
            'changes to the latest version and try again') in message(exc)
    unconditional = configmap("cfg", data={"k": "4"})
    assert core.replace_namespaced_config_map("cfg", "default", unconditional).data == {"k": "4"}


def test_update_of_a_missing_object_is_not_found_and_name_must_match_url(core, raw):
    with pytest.raises(ApiException) as exc:
        core.replace_namespaced_config_map("nope", "default", configmap("nope"))
    assert exc.value.status == 404
    core.create_namespaced_config_map("default", configmap("real"))
    status, body = raw.json("PUT", "/api/v1/namespaces/default/configmaps/real", configmap("other"))
    assert status == 400
    assert body["message"] == "the name of the object (other) does not match the name on the URL (real)"


# ---- list ----------------------------------------------------------------------------------------

def test_pagination_returns_every_item_once(core):
    for i in range(11):
        core.create_namespaced_config_map("default", configmap(f"page-{i:02d}", {"set": "paged"}))
    names, token, pages = [], None, 0
    while True:
        page = core.list_namespaced_config_map("default", label_selector="set=paged", limit=4, _continue=token)
        pages += 1
        names += [i.metadata.name for i in page.items]
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count == 11 - len(names)
    assert names == [f"page-{i:02d}" for i in range(11)] and pages == 3
    with pytest.raises(ApiException) as exc:
        core.list_namespaced_config_map("default", limit=2, _continue="not-a-token")
    assert exc.value.status == 400 and "continue key is not valid" in message(exc)


def test_label_and_field_selectors(core):
    core.create_namespaced_config_map("default", configmap("a", {"tier": "web", "env": "prod"}))
    core.create_namespaced_config_map("default", configmap("b", {"tier": "db", "env": "prod"}))
    core.create_namespaced_config_map("default", configmap("c", {"tier": "web"}))

    def names(**kw):
        return sorted(i.metadata.name for i in core.list_namespaced_config_map("default", **kw).items
                      if i.metadata.name != "kube-root-ca.crt")

    assert names(label_selector="tier=web") == ["a", "c"]
    assert names(label_selector="tier in (web,db),env") == ["a", "b"]
    assert names(label_selector="!env") == ["c"]
    assert names(field_selector="metadata.name=b") == ["b"]
    assert names(field_selector="metadata.name!=b", label_selector="tier") == ["a", "c"]
    with pytest.raises(ApiException) as exc:
        core.list_namespaced_config_map("default", field_selector="data.k=v")
    assert exc.value.status == 400 and "field label not supported: data.k" in message(exc)
    with pytest.raises(ApiException) as exc:
        core.list_namespaced_config_map("default", label_selector="tier in (web")
    assert exc.value.status == 400 and "unable to parse requirement" in message(exc)


def test_list_items_carry_no_type_meta_but_the_list_does(raw):
    raw.json("POST", "/api/v1/namespaces/default/configmaps", configmap("x"))
    status, body = raw.json("GET", "/api/v1/namespaces/default/configmaps")
    assert status == 200 and body["kind"] == "ConfigMapList" and body["apiVersion"] == "v1"
    assert body["metadata"]["resourceVersion"].isdigit()
    assert all("kind" not in item and "apiVersion" not in item for item in body["items"])


# ---- watch -----------------------------------------------------------------------------------------

def _collect(core, **kw):
    events = []
    for ev in watch.Watch().stream(core.list_namespaced_config_map, "default", timeout_seconds=1, **kw):
        events.append((ev["type"], ev["object"].metadata.name))
    return events


def test_watch_without_version_starts_with_current_state(core):
    core.create_namespaced_config_map("default", configmap("w1", {"w": "1"}))
    assert _collect(core, label_selector="w") == [("ADDED", "w1")]


def test_watch_from_list_version_streams_only_later_changes(core, twin):
    core.create_namespaced_config_map("default", configmap("before", {"w": "1"}))
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    events = []

    def writer():
        import time
        time.sleep(0.2)
        cm = core.create_namespaced_config_map("default", configmap("after", {"w": "1"}))
        cm.data = {"k": "changed"}
        core.replace_namespaced_config_map("after", "default", cm)
        core.delete_namespaced_config_map("after", "default")

    t = threading.Thread(target=writer)
    t.start()
    events = _collect(core, label_selector="w", resource_version=rv)
    t.join()
    assert events == [("ADDED", "after"), ("MODIFIED", "after"), ("DELETED", "after")]


def test_watch_from_a_compacted_version_is_gone(raw, twin):
    raw.json("POST", "/api/v1/namespaces/default/configmaps", configmap("old"))
    twin.store.compact()
    status, headers, data = raw.request("GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=2")
    assert status == 200
    import json
    event = json.loads(data.splitlines()[0])
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"


# ---- delete ---------------------------------------------------------------------------------------------

def test_delete_collection_by_label(core):
    for name, tier in (("d1", "web"), ("d2", "web"), ("d3", "db")):
        core.create_namespaced_config_map("default", configmap(name, {"tier": tier}))
    core.delete_collection_namespaced_config_map("default", label_selector="tier=web")
    left = {i.metadata.name for i in core.list_namespaced_config_map("default").items}
    assert "d3" in left and not {"d1", "d2"} & left


def _owned(name: str, owner, block: bool = False, finalizers=None) -> dict:
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner.metadata.name, "uid": owner.metadata.uid}
    if block:
        ref["blockOwnerDeletion"] = True
    meta = {"ownerReferences": [ref]}
    if finalizers:
        meta["finalizers"] = finalizers
    return configmap(name, metadata=meta)


def _exists(core, name):
    try:
        return core.read_namespaced_config_map(name, "default")
    except ApiException as exc:
        assert exc.status == 404
        return None


def test_background_deletion_cascades_to_dependents(core):
    owner = core.create_namespaced_config_map("default", configmap("owner"))
    core.create_namespaced_config_map("default", _owned("child", owner))
    core.delete_namespaced_config_map("owner", "default")
    assert _exists(core, "child") is None


def test_orphan_deletion_keeps_dependents_without_the_reference(core):
    owner = core.create_namespaced_config_map("default", configmap("owner"))
    core.create_namespaced_config_map("default", _owned("child", owner))
    core.delete_namespaced_config_map("owner", "default", propagation_policy="Orphan")
    child = _exists(core, "child")
    assert _exists(core, "owner") is None
    assert child is not None and not child.metadata.owner_references


def test_foreground_deletion_waits_for_blocking_dependents(core):
    owner = core.create_namespaced_config_map("default", configmap("owner"))
    core.create_namespaced_config_map("default", _owned("child", owner, block=True, finalizers=["example.com/hold"]))
    core.delete_namespaced_config_map("owner", "default", propagation_policy="Foreground")
    waiting = _exists(core, "owner")
    assert waiting is not None and waiting.metadata.deletion_timestamp is not None
    assert waiting.metadata.finalizers == ["foregroundDeletion"]
    child = _exists(core, "child")
    assert child.metadata.deletion_timestamp is not None
    core.patch_namespaced_config_map("child", "default", {"metadata": {"finalizers": None}})
    assert _exists(core, "child") is None and _exists(core, "owner") is None


def test_finalizers_hold_deletion_and_cannot_be_added_while_deleting(core, raw):
    core.create_namespaced_config_map("default", configmap("held", metadata={"finalizers": ["example.com/a"]}))
    status, body = raw.json("DELETE", "/api/v1/namespaces/default/configmaps/held")
    assert status == 200 and body["metadata"]["deletionTimestamp"]
    with pytest.raises(ApiException) as exc:
        core.patch_namespaced_config_map("held", "default",
                                         {"metadata": {"finalizers": ["example.com/a", "example.com/b"]}})
    assert exc.value.status == 422 and "no new finalizers can be added if the object is being deleted" in message(exc)
    core.patch_namespaced_config_map("held", "default", {"metadata": {"finalizers": None}})
    assert _exists(core, "held") is None


def test_delete_preconditions(core):
    cm = core.create_namespaced_config_map("default", configmap("pre"))
    with pytest.raises(ApiException) as exc:
        core.delete_namespaced_config_map("pre", "default", body=k8s.V1DeleteOptions(
            preconditions=k8s.V1Preconditions(uid="00000000-0000-0000-0000-000000000000")))
    assert exc.value.status == 409 and "Precondition failed: UID in precondition" in message(exc)
    core.delete_namespaced_config_map("pre", "default", body=k8s.V1DeleteOptions(
        preconditions=k8s.V1Preconditions(uid=cm.metadata.uid)))
    assert _exists(core, "pre") is None


# ---- namespaces ------------------------------------------------------------------------------------------

def test_namespace_deletion_empties_the_namespace(core):
    core.create_namespace({"metadata": {"name": "tmp"}})
    core.create_namespaced_config_map("tmp", configmap("inside"))
    core.delete_namespace("tmp")
    with pytest.raises(ApiException) as exc:
        core.read_namespace("tmp")
    assert exc.value.status == 404
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map("tmp", configmap("late"))
    assert exc.value.status == 404 and 'namespaces "tmp" not found' in message(exc)


def test_terminating_namespace_waits_for_finalizers_and_refuses_new_content(core):
    core.create_namespace({"metadata": {"name": "slow"}})
    core.create_namespaced_config_map("slow", configmap("stuck", metadata={"finalizers": ["example.com/hold"]}))
    core.delete_namespace("slow")
    ns = core.read_namespace("slow")
    assert ns.status.phase == "Terminating"
    remaining = {c.type: c for c in ns.status.conditions}
    assert remaining["NamespaceContentRemaining"].status == "True"
    assert "configmaps has 1 resource instances" in remaining["NamespaceContentRemaining"].message
    assert "example.com/hold in 1 resource instances" in remaining["NamespaceFinalizersRemaining"].message
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map("slow", configmap("new"))
    assert exc.value.status == 403
    assert "unable to create new content in namespace slow because it is being terminated" in message(exc)
    core.patch_namespaced_config_map("stuck", "slow", {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as exc:
        core.read_namespace("slow")
    assert exc.value.status == 404


def test_system_namespaces_cannot_be_deleted(core):
    for name in ("default", "kube-system", "kube-public"):
        with pytest.raises(ApiException) as exc:
            core.delete_namespace(name)
        assert exc.value.status == 403 and "this namespace may not be deleted" in message(exc)


# ---- discovery ------------------------------------------------------------------------------------------------

def test_discovery_has_one_group_entry_with_all_versions(raw):
    status, groups = raw.json("GET", "/apis")
    autoscaling = [g for g in groups["groups"] if g["name"] == "autoscaling"]
    assert len(autoscaling) == 1
    assert [v["version"] for v in autoscaling[0]["versions"]] == ["v2", "v1"]
    assert autoscaling[0]["preferredVersion"]["version"] == "v2"
    status, apps = raw.json("GET", "/apis/apps/v1")
    scale = next(r for r in apps["resources"] if r["name"] == "deployments/scale")
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
    deploy = next(r for r in apps["resources"] if r["name"] == "deployments")
    assert deploy["shortNames"] == ["deploy"] and deploy["categories"] == ["all"]


def test_aggregated_discovery_is_served_with_its_exact_content_type(raw):
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    status, headers, data = raw.request("GET", "/apis", headers={"Accept": accept})
    assert status == 200
    assert headers["Content-Type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    import json
    doc = json.loads(data)
    assert doc["kind"] == "APIGroupDiscoveryList"
    assert "apps" in [item["metadata"]["name"] for item in doc["items"]]


def test_dynamic_client_finds_kinds_in_any_served_version(client):
    from kubernetes.dynamic import DynamicClient
    dyn = DynamicClient(client)
    hpa = dyn.resources.get(api_version="autoscaling/v2", kind="HorizontalPodAutoscaler")
    assert hpa.namespaced and hpa.name == "horizontalpodautoscalers"
    assert dyn.resources.get(api_version="v1", kind="ConfigMap").get(namespace="default").items is not None


def test_watch_list_ends_its_initial_events_with_a_bookmark(raw):
    raw.json("POST", "/api/v1/namespaces/default/configmaps", configmap("seen"))
    status, _, data = raw.request(
        "GET", "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
               "&resourceVersionMatch=NotOlderThan&timeoutSeconds=1")
    events = [json.loads(line) for line in data.splitlines()]
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    assert events[-1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    status, _, data = raw.request("GET", "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true")
    assert status == 422


def test_deleting_a_persistent_volume_answers_with_the_volume_and_a_configmap_with_a_status(core):
    # kube-apiserver's PersistentVolume registry returns the deleted object (ReturnDeletedObject); most return a
    # Status. The official client is typed on the volume, and fails on a Status.
    core.create_persistent_volume({"metadata": {"name": "archive"}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}})
    deleted = core.delete_persistent_volume("archive")
    assert deleted.kind == "PersistentVolume" and deleted.metadata.name == "archive"
    core.create_namespaced_config_map("default", configmap("plain"))
    status = json.loads(core.delete_namespaced_config_map("plain", "default", _preload_content=False).data)
    assert status["kind"] == "Status" and status["status"] == "Success" and status["details"]["name"] == "plain"


POD = {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}


def test_deleting_pods_and_services_answers_with_the_objects_the_client_is_typed_on(core):
    # Their registries set ReturnDeletedObject; the generated client reads the body as a V1Pod / V1Service.
    core.create_namespaced_pod("default", POD)  # unscheduled: it goes at once
    deleted = core.delete_namespaced_pod("web", "default")
    assert isinstance(deleted, k8s.V1Pod) and deleted.metadata.name == "web"
    core.create_namespaced_service("default", {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}})
    service = core.delete_namespaced_service("web", "default")
    assert isinstance(service, k8s.V1Service) and service.spec.ports[0].port == 80
    core.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
    assert core.delete_namespaced_service_account("robot", "default").metadata.name == "robot"


def test_a_graceful_pod_deletion_answers_200_with_the_marked_pod(core, raw):
    bound = dict(POD, spec=dict(POD["spec"], nodeName="node-1"))
    core.create_namespaced_pod("default", bound)
    status, body = raw.json("DELETE", "/api/v1/namespaces/default/pods/web")
    assert status == 200 and body["kind"] == "Pod" and body["metadata"]["deletionGracePeriodSeconds"] == 30
    assert core.read_namespaced_pod("web", "default").metadata.deletion_timestamp is not None


def test_a_pending_deletion_asked_with_orphan_dependents_false_answers_202(raw, core):
    core.create_namespaced_config_map("default", configmap("held", metadata={"finalizers": ["example.com/a"]}))
    status, body = raw.json("DELETE", "/api/v1/namespaces/default/configmaps/held",
                            {"kind": "DeleteOptions", "apiVersion": "v1", "orphanDependents": False})
    assert status == 202 and body["metadata"]["deletionTimestamp"]
    core.create_namespaced_config_map("default", configmap("gone"))
    status, body = raw.json("DELETE", "/api/v1/namespaces/default/configmaps/gone",
                            {"kind": "DeleteOptions", "apiVersion": "v1", "orphanDependents": False})
    assert status == 200 and body["kind"] == "Status"


def test_a_dry_run_delete_answers_as_the_real_one_and_keeps_the_object(core):
    core.create_namespaced_config_map("default", configmap("kept"))
    answer = json.loads(core.delete_namespaced_config_map("kept", "default", dry_run="All",
                                                          _preload_content=False).data)
    assert answer["kind"] == "Status" and answer["details"]["name"] == "kept"
    assert core.read_namespaced_config_map("kept", "default").metadata.name == "kept"
    core.create_namespaced_pod("default", POD)
    assert isinstance(core.delete_namespaced_pod("web", "default", dry_run="All"), k8s.V1Pod)
    assert core.read_namespaced_pod("web", "default").metadata.deletion_timestamp is None
