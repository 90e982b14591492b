"""ReplicationControllers (core v1) through the official client and kubectl: defaulting, validation, scale,
discovery, and the replication manager (the ReplicaSet controller over an adapter) keeping their pods."""

from __future__ import annotations

import json
import textwrap

import pytest
from kubernetes import client as k8s, config, utils
from kubernetes.client.exceptions import ApiException

from pytest_itbench.twin import Twin
from tests.conftest import KUBECTL, Kubectl

NS = "default"


def rc(name: str = "web", replicas: int | None = 2, labels: dict | None = None, selector: dict | None = None,
       **pod_spec) -> dict:
    labels = {"app": name} if labels is None else labels
    spec: dict = {"template": {"metadata": {"labels": labels},
                               "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}], **pod_spec}}}
    if replicas is not None:
        spec["replicas"] = replicas
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name}, "spec": spec}


def message(exc) -> str:
    return json.loads(exc.value.body)["message"]


def api_client(twin: Twin, path) -> k8s.ApiClient:
    configuration = k8s.Configuration()
    config.load_kube_config(config_file=twin.write_kubeconfig(path), client_configuration=configuration)
    return k8s.ApiClient(configuration)


@pytest.fixture
def core(client):
    """The API server alone (the ``twin`` fixture runs no controllers)."""
    return k8s.CoreV1Api(client)


@pytest.fixture
def whole(tmp_path):
    """A whole cluster (every controller, two nodes) and a client of it."""
    with Twin(seed=11, nodes=2) as twin:
        api = api_client(twin, tmp_path / "kubeconfig")
        yield twin, k8s.CoreV1Api(api), api
        api.close()


def pods_of(core: k8s.CoreV1Api, name: str, terminating: bool = False) -> list:
    pods = core.list_namespaced_pod(NS, label_selector=f"app={name}").items
    return sorted((p for p in pods if terminating or p.metadata.deletion_timestamp is None),
                  key=lambda p: p.metadata.name)


# ---- the API: defaults, validation, scale, discovery ---------------------------------------------------

def test_selector_labels_and_replicas_default_from_the_template(core):
    made = core.create_namespaced_replication_controller(NS, rc("web", replicas=None))
    assert made.spec.selector == {"app": "web"} and made.metadata.labels == {"app": "web"}
    assert made.spec.replicas == 1 and made.metadata.generation == 1
    assert made.status.replicas == 0 and made.status.observed_generation is None
    # Labels of its own and a selector it names are kept.
    given = rc("api", labels={"app": "api", "tier": "back"}, selector={"app": "api"})
    given["metadata"]["labels"] = {"team": "x"}
    made = core.create_namespaced_replication_controller(NS, given)
    assert made.spec.selector == {"app": "api"} and made.metadata.labels == {"team": "x"}
    assert made.spec.template.spec.restart_policy == "Always"  # the pod template is defaulted too


def test_validation_as_validate_replication_controller(core):
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_replication_controller(NS, rc("bad", selector={"app": "other"}, restartPolicy="Never",
                                                             activeDeadlineSeconds=5))
    assert exc.value.status == 422
    assert message(exc) == (
        'ReplicationController "bad" is invalid: [spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"bad"}: `selector` does not match template `labels`, '
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always", '
        'spec.template.spec.activeDeadlineSeconds: Invalid value: 5: must not be specified]')
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_replication_controller(NS, rc("nolabels", labels={}, replicas=-1))
    assert message(exc) == ('ReplicationController "nolabels" is invalid: [spec.selector: Required value, '
                            'spec.replicas: Invalid value: -1: must be greater than or equal to 0]')
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_replication_controller(
            NS, rc("disk", replicas=2, volumes=[{"name": "d", "gcePersistentDisk": {"pdName": "x"}}]))
    assert "spec.template.spec.volumes[0].gcePersistentDisk.readOnly: Invalid value: false: must be true for " \
           "replicated pods > 1" in message(exc)


def test_the_selector_may_change_unlike_a_replica_sets(core):
    core.create_namespaced_replication_controller(NS, rc("web", labels={"app": "web", "v": "1"},
                                                         selector={"app": "web"}))
    current = core.read_namespaced_replication_controller("web", NS)
    current.spec.selector = {"v": "1"}
    changed = core.replace_namespaced_replication_controller("web", NS, current)
    assert changed.spec.selector == {"v": "1"} and changed.metadata.generation == 2
    with pytest.raises(ApiException) as exc:  # a strategic merge patch merges the label map
        core.patch_namespaced_replication_controller("web", NS, {"spec": {"selector": {"v": "2"}}})
    assert "`selector` does not match template `labels`" in message(exc)


def test_status_writes_are_checked(core):
    core.create_namespaced_replication_controller(NS, rc("web"))
    with pytest.raises(ApiException) as exc:
        core.patch_namespaced_replication_controller_status(
            "web", NS, {"status": {"replicas": 1, "readyReplicas": 2, "availableReplicas": 3}})
    assert message(exc) == (
        'ReplicationController "web" is invalid: [status.readyReplicas: Invalid value: 2: cannot be greater than '
        'status.replicas, status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas, '
        'status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas]')
    written = core.patch_namespaced_replication_controller_status(
        "web", NS, {"spec": {"replicas": 9}, "status": {"replicas": 2, "readyReplicas": 1}})
    assert written.status.ready_replicas == 1 and written.spec.replicas == 2  # status writes leave spec alone


def test_scale_subresource_reports_the_selector_as_a_string(core):
    core.create_namespaced_replication_controller(NS, rc("web", labels={"app": "web", "tier": "front"}))
    scale = core.read_namespaced_replication_controller_scale("web", NS)
    assert (scale.api_version, scale.kind) == ("autoscaling/v1", "Scale")
    assert scale.spec.replicas == 2 and scale.status.selector == "app=web,tier=front"
    scaled = core.patch_namespaced_replication_controller_scale("web", NS, {"spec": {"replicas": 5}})
    assert scaled.spec.replicas == 5
    assert core.read_namespaced_replication_controller("web", NS).spec.replicas == 5


def test_field_selector_on_status_replicas_and_discovery(core):
    core.create_namespaced_replication_controller(NS, rc("web"))
    core.patch_namespaced_replication_controller_status("web", NS, {"status": {"replicas": 2}})
    core.create_namespaced_replication_controller(NS, rc("idle"))
    names = lambda selector: [i.metadata.name for i in core.list_namespaced_replication_controller(  # noqa: E731
        NS, field_selector=selector).items]
    assert names("status.replicas=2") == ["web"] and names("status.replicas=0") == ["idle"]
    resources = {r.name: r for r in core.get_api_resources().resources}
    entry = resources["replicationcontrollers"]
    assert (entry.kind, entry.namespaced, entry.short_names, entry.categories) == (
        "ReplicationController", True, ["rc"], ["all"])
    assert resources["replicationcontrollers/scale"].group == "autoscaling"
    assert resources["replicationcontrollers/status"].kind == "ReplicationController"


# ---- the replication manager ----------------------------------------------------------------------------

def test_keeps_its_replicas_owned_and_reports_status(whole):
    twin, core, _ = whole
    made = core.create_namespaced_replication_controller(NS, rc("web", replicas=3))
    twin.warp(20)
    pods = pods_of(core, "web")
    assert len(pods) == 3 and all(p.metadata.name.startswith("web-") for p in pods)
    for pod in pods:
        (ref,) = pod.metadata.owner_references
        assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
            "v1", "ReplicationController", "web", made.metadata.uid, True, True)
        assert pod.status.phase == "Running"
    status = core.read_namespaced_replication_controller_status("web", NS).status
    assert (status.replicas, status.fully_labeled_replicas, status.ready_replicas, status.available_replicas,
            status.observed_generation) == (3, 3, 3, 3, 1)
    events = core.list_namespaced_event(NS, field_selector="involvedObject.name=web").items
    assert {(e.reason, e.source.component) for e in events} == {("SuccessfulCreate", "replication-controller")}
    # A deleted pod is replaced; scaling down deletes the surplus.
    core.delete_namespaced_pod(pods[0].metadata.name, NS)
    twin.warp(20)
    assert len(pods_of(core, "web")) == 3 and pods[0].metadata.name not in {p.metadata.name for p in
                                                                            pods_of(core, "web", True)}
    core.patch_namespaced_replication_controller_scale("web", NS, {"spec": {"replicas": 1}})
    twin.warp(40)
    assert len(pods_of(core, "web", terminating=True)) == 1
    assert core.read_namespaced_replication_controller("web", NS).status.replicas == 1


def test_adopts_matching_orphans_and_releases_pods_that_stop_matching(whole):
    twin, core, _ = whole
    core.create_namespace({"metadata": {"name": "solo"}})
    orphan = {"metadata": {"name": "stray", "labels": {"app": "web"}},
              "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}
    core.create_namespaced_pod(NS, orphan)
    made = core.create_namespaced_replication_controller(NS, rc("web", replicas=2))
    twin.warp(20)
    pods = pods_of(core, "web")
    assert len(pods) == 2 and "stray" in {p.metadata.name for p in pods}
    stray = core.read_namespaced_pod("stray", NS)
    assert stray.metadata.owner_references[0].uid == made.metadata.uid
    core.patch_namespaced_pod("stray", NS, {"metadata": {"labels": {"app": "elsewhere"}}})
    twin.warp(20)
    assert core.read_namespaced_pod("stray", NS).metadata.owner_references is None
    assert len(pods_of(core, "web")) == 2  # a replacement for the released pod
    # A ReplicaSet selecting the same labels leaves the RC's pods alone.
    apps = k8s.AppsV1Api(whole[2])
    apps.create_namespaced_replica_set(NS, {
        "metadata": {"name": "rs"}, "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                                              "template": rc("web")["spec"]["template"]}})
    twin.warp(10)
    assert all(p.metadata.owner_references[0].kind == "ReplicationController" for p in pods_of(core, "web"))


def test_deleting_it_collects_its_pods_unless_they_are_orphaned(whole):
    twin, core, _ = whole
    core.create_namespaced_replication_controller(NS, rc("web", replicas=2))
    core.create_namespaced_replication_controller(NS, rc("keep", replicas=2))
    twin.warp(20)
    status = core.delete_namespaced_replication_controller("web", NS, propagation_policy="Background")
    # A Status once it is gone (the RC registry does not return the deleted object), typed "object" by the client.
    assert status["status"] == "Success" and status["details"]["kind"] == "replicationcontrollers"
    core.delete_namespaced_replication_controller("keep", NS, propagation_policy="Orphan")
    twin.warp(40)
    assert pods_of(core, "web", terminating=True) == []
    kept = pods_of(core, "keep")
    assert len(kept) == 2 and all(p.metadata.owner_references is None for p in kept)
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_replication_controller("keep", NS)
    assert exc.value.status == 404


# ---- create_from_yaml of a multi-document file --------------------------------------------------------------

MULTI = textwrap.dedent("""\
    apiVersion: v1
    kind: Service
    metadata:
      name: echo
      labels:
        app: echo
    spec:
      selector:
        app: echo
      ports:
      - port: 8080
        targetPort: 80
    ---
    apiVersion: v1
    kind: ReplicationController
    metadata:
      name: echo
    spec:
      replicas: 2
      template:
        metadata:
          labels:
            app: echo
        spec:
          containers:
          - name: echo
            image: nginx:1.25
            ports:
            - containerPort: 80
    ---
    apiVersion: apiregistration.k8s.io/v1
    kind: APIService
    metadata:
      name: v1beta1.echo.example.com
    spec:
      group: echo.example.com
      version: v1beta1
      groupPriorityMinimum: 500
      versionPriority: 10
      service:
        namespace: default
        name: echo
        port: 8080
    """)


def test_create_from_yaml_of_a_service_a_replication_controller_and_an_api_service(whole, tmp_path):
    twin, core, api = whole
    path = tmp_path / "echo.yaml"
    path.write_text(MULTI)
    created = utils.create_from_yaml(api, str(path))
    assert [type(group[0]).__name__ for group in created] == ["V1Service", "V1ReplicationController",
                                                               "V1APIService"]
    twin.warp(20)
    made = core.read_namespaced_replication_controller("echo", NS)
    assert made.spec.selector == {"app": "echo"} and made.status.ready_replicas == 2
    assert len(core.read_namespaced_endpoints("echo", NS).subsets[0].addresses) == 2
    service = k8s.ApiregistrationV1Api(api).read_api_service("v1beta1.echo.example.com")
    (available,) = service.status.conditions
    assert (available.type, available.status, available.reason) == ("Available", "False", "FailedDiscoveryCheck")
    with pytest.raises(utils.FailToCreateError) as exc:
        utils.create_from_yaml(api, str(path))
    assert str(exc.value).count("Error from server (Conflict)") == 3
    assert ('"message":"apiservices.apiregistration.k8s.io \\"v1beta1.echo.example.com\\" already exists",'
            '"reason":"AlreadyExists","details":{"name":"v1beta1.echo.example.com",'
            '"group":"apiregistration.k8s.io","kind":"apiservices"},"code":409}\n') in str(exc.value)


# ---- kubectl ------------------------------------------------------------------------------------------------

@pytest.fixture
def kubectl_whole(whole, tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH; these tests drive the real kubectl binary")
    return Kubectl(whole[0], tmp_path / "kubectl")


def test_kubectl_gets_scales_describes_and_deletes_replication_controllers(whole, kubectl_whole):
    twin, core, _ = whole
    kubectl = kubectl_whole
    kubectl("apply", "-f", "-", input=json.dumps(rc("web", replicas=2, labels={"app": "web", "tier": "front"})))
    twin.warp(20)
    lines = kubectl("get", "rc").splitlines()
    assert lines[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert lines[1].split()[:4] == ["web", "2", "2", "2"]
    wide = kubectl("get", "rc", "web", "-o", "wide").splitlines()
    assert wide[0].split()[-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1].split()[-3:] == ["app", "nginx:1.25", "app=web,tier=front"]
    assert kubectl("scale", "rc", "web", "--replicas=3") == "replicationcontroller/web scaled\n"
    twin.warp(20)
    assert kubectl("get", "rc", "web", "-o", "jsonpath={.status.readyReplicas}") == "3"
    described = kubectl("describe", "rc", "web")
    assert "Selector:     app=web,tier=front" in described
    assert "Replicas:     3 current / 3 desired" in described
    assert "Pods Status:  3 Running / 0 Waiting / 0 Succeeded / 0 Failed" in described
    assert "replication-controller  Created pod: web-" in described
    assert "replicationcontroller/web" in kubectl("get", "all")
    assert kubectl("delete", "rc", "web") == 'replicationcontroller "web" deleted\n'
    twin.warp(40)
    assert pods_of(core, "web", terminating=True) == []
