"""kube-state-metrics from the twin's store: names, labels, values and target labels as v2.20.0 and
kube-prometheus-stack give them, for objects a test writes (no controller runs)."""

from __future__ import annotations

import pytest

from .monitoring_helpers import (NODE, create, delete, one, pod, pod_status, quiet_twin, running, set_status, vector,
                                 waiting)

KSM_TARGET = {"job": "kube-state-metrics", "service": "prometheus-kube-state-metrics", "endpoint": "http"}


@pytest.fixture
def twin():
    t = quiet_twin()
    yield t
    t.stop()


def web_pod(twin, status: dict, name: str = "web-5d8f7c-abcde", **spec):
    obj = pod(name, [{"name": "web", "image": "nginx:1.27",
                      "resources": {"requests": {"cpu": "250m", "memory": "64Mi"},
                                    "limits": {"cpu": "1", "memory": "128Mi"}}}], **spec)
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f7c",
                                           "uid": "0b9a5d2e-3f43-4a55-9e55-d3a1b7f0c001", "controller": True}]
    created = create(twin, obj)
    set_status(twin, created, status)
    return created


def test_a_running_pod(twin):
    web_pod(twin, pod_status("Running", [running("web", "c0ffee" * 10 + "abcd")], ready=True, qos="Burstable"))
    twin.warp(15)
    labels, value = one(twin, "kube_pod_info")
    assert value == 1
    assert labels == {**KSM_TARGET, "container": "kube-state-metrics", "instance": labels["instance"],
                      "namespace": "default", "pod": "web-5d8f7c-abcde", "uid": labels["uid"], "node": NODE,
                      "host_ip": "172.18.0.3", "pod_ip": "10.244.1.7", "created_by_kind": "ReplicaSet",
                      "created_by_name": "web-5d8f7c", "host_network": "false"}
    assert labels["instance"].endswith(":8080")
    phases = {dict(k)["phase"]: v for k, v in vector(twin, "kube_pod_status_phase").items()}
    assert phases == {"Pending": 0, "Running": 1, "Succeeded": 0, "Failed": 0, "Unknown": 0}
    ready = {dict(k)["condition"]: v for k, v in vector(twin, "kube_pod_status_ready").items()}
    assert ready == {"true": 1, "false": 0, "unknown": 0}
    assert one(twin, 'kube_pod_status_scheduled{condition="true"}')[1] == 1
    assert one(twin, 'kube_pod_status_qos_class{qos_class="Burstable"}')[1] == 1
    owner, _ = one(twin, "kube_pod_owner")
    assert (owner["owner_kind"], owner["owner_name"], owner["owner_is_controller"]) == ("ReplicaSet", "web-5d8f7c",
                                                                                        "true")
    assert one(twin, "kube_pod_container_status_running")[0]["container"] == "web"
    assert one(twin, "kube_pod_container_status_running")[1] == 1
    assert one(twin, "kube_pod_container_status_ready")[1] == 1
    assert vector(twin, "kube_pod_container_status_waiting_reason") == {}
    assert one(twin, "kube_pod_container_state_started")[1] == 1_800_000_000  # 2027-01-15T08:00:00Z
    info, _ = one(twin, "kube_pod_container_info")
    assert (info["image_spec"], info["image"], info["container_id"]) == (
        "nginx:1.27", "docker.io/library/nginx:1.27", "containerd://" + "c0ffee" * 10 + "abcd")


def test_requests_and_limits_in_cores_and_bytes(twin):
    web_pod(twin, pod_status("Running", [running("web", "a" * 64)], ready=True))
    twin.warp(15)
    requests = {(dict(k)["resource"], dict(k)["unit"]): v
                for k, v in vector(twin, "kube_pod_container_resource_requests").items()}
    limits = {(dict(k)["resource"], dict(k)["unit"]): v
              for k, v in vector(twin, "kube_pod_container_resource_limits").items()}
    assert requests == {("cpu", "core"): 0.25, ("memory", "byte"): 64 * 2 ** 20}
    assert limits == {("cpu", "core"): 1.0, ("memory", "byte"): 128 * 2 ** 20}
    assert one(twin, "kube_pod_container_resource_limits{resource='cpu'}")[0]["node"] == NODE


def test_a_crash_looping_container_and_its_growing_restart_count(twin):
    oom = {"exitCode": 137, "reason": "OOMKilled", "startedAt": "2027-01-15T08:00:00Z",
           "finishedAt": "2027-01-15T08:00:40Z"}
    created = web_pod(twin, pod_status("Running", [waiting("web", "CrashLoopBackOff", restarts=3, last=oom)],
                                       ready=False))
    twin.warp(15)
    labels, value = one(twin, "kube_pod_container_status_waiting_reason")
    assert (labels["reason"], labels["container"], value) == ("CrashLoopBackOff", "web", 1)
    assert one(twin, "kube_pod_container_status_restarts_total")[1] == 3
    assert one(twin, "kube_pod_container_status_last_terminated_reason")[0]["reason"] == "OOMKilled"
    assert one(twin, "kube_pod_container_status_last_terminated_exitcode")[1] == 137
    assert one(twin, "kube_pod_container_status_waiting")[1] == 1
    assert one(twin, 'kube_pod_status_ready{condition="false"}')[1] == 1
    set_status(twin, created, pod_status("Running", [waiting("web", "CrashLoopBackOff", restarts=4, last=oom)],
                                         ready=False))
    twin.warp(60)
    assert one(twin, "kube_pod_container_status_restarts_total")[1] == 4
    assert one(twin, "increase(kube_pod_container_status_restarts_total[2m])")[1] > 0


def test_a_reason_that_changes_leaves_a_stale_series_behind(twin):
    created = web_pod(twin, pod_status("Pending", [waiting("web", "ContainerCreating")], ready=False))
    twin.warp(15)
    assert one(twin, "kube_pod_container_status_waiting_reason")[0]["reason"] == "ContainerCreating"
    set_status(twin, created, pod_status("Pending", [waiting("web", "ImagePullBackOff")], ready=False))
    twin.warp(15)
    # The old reason is marked stale at once; the 5-minute lookback does not keep it alive.
    assert one(twin, "kube_pod_container_status_waiting_reason")[0]["reason"] == "ImagePullBackOff"
    delete(twin, created)
    twin.warp(15)
    assert vector(twin, "kube_pod_info") == {}
    assert vector(twin, "kube_pod_container_status_waiting_reason") == {}


def test_a_terminated_container(twin):
    done = {"exitCode": 1, "reason": "Error", "startedAt": "2027-01-15T08:00:00Z",
            "finishedAt": "2027-01-15T08:01:00Z"}
    status = pod_status("Failed", [{"name": "web", "state": {"terminated": done}, "ready": False, "restartCount": 0,
                                    "image": "docker.io/library/nginx:1.27", "imageID": "",
                                    "containerID": "containerd://" + "b" * 64}], ready=False)
    status["reason"] = "Evicted"
    web_pod(twin, status)
    twin.warp(15)
    assert one(twin, "kube_pod_container_status_terminated_reason")[0]["reason"] == "Error"
    assert one(twin, 'kube_pod_status_phase{phase="Failed"}')[1] == 1
    assert one(twin, "kube_pod_status_reason")[0]["reason"] == "Evicted"
    assert one(twin, "kube_pod_completion_time")[1] == one(twin, "kube_pod_container_state_started")[1] + 60


def deployment(name: str, replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": name, "image": "nginx:1.27"}]}}}}


def test_deployment_replicas_and_conditions(twin):
    created = create(twin, deployment("cart", 4))
    set_status(twin, created, {"observedGeneration": 1, "replicas": 4, "updatedReplicas": 4, "readyReplicas": 3,
                               "availableReplicas": 3, "unavailableReplicas": 1, "conditions": [
                                   {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"},
                                   {"type": "Progressing", "status": "True", "reason": "SomethingElse"}]})
    twin.warp(15)
    values = {name: one(twin, f'kube_deployment_{name}{{deployment="cart"}}')[1] for name in (
        "spec_replicas", "status_replicas", "status_replicas_available", "status_replicas_unavailable",
        "status_replicas_updated", "status_replicas_ready", "status_observed_generation", "metadata_generation",
        "spec_strategy_rollingupdate_max_unavailable", "spec_strategy_rollingupdate_max_surge")}
    assert values == {"spec_replicas": 4, "status_replicas": 4, "status_replicas_available": 3,
                      "status_replicas_unavailable": 1, "status_replicas_updated": 4, "status_replicas_ready": 3,
                      "status_observed_generation": 1, "metadata_generation": 1,
                      "spec_strategy_rollingupdate_max_unavailable": 1,  # 25% of 4
                      "spec_strategy_rollingupdate_max_surge": 1}
    conditions = {(dict(k)["condition"], dict(k)["status"], dict(k)["reason"]): v
                  for k, v in vector(twin, "kube_deployment_status_condition").items()}
    assert conditions[("Available", "false", "MinimumReplicasUnavailable")] == 1
    assert conditions[("Available", "true", "MinimumReplicasUnavailable")] == 0
    assert conditions[("Progressing", "true", "unknown")] == 1  # reasons outside kube-state-metrics' list
    labels, _ = one(twin, "kube_deployment_spec_replicas")
    assert labels["namespace"] == "default" and labels["container"] == "kube-state-metrics"
    assert "pod" in labels  # the target's pod: kube-state-metrics' own, as honor_labels leaves it


def test_hpa_node_namespace_service_endpoints_job_and_others(twin):
    create(twin, deployment("api", 2))
    hpa = create(twin, {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                        "metadata": {"name": "api", "namespace": "default"},
                        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
                                 "minReplicas": 2, "maxReplicas": 5, "metrics": [
                                     {"type": "Resource", "resource": {"name": "cpu", "target": {
                                         "type": "Utilization", "averageUtilization": 60}}}]}})
    set_status(twin, hpa, {"currentReplicas": 5, "desiredReplicas": 5})
    create(twin, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": "default"},
                  "spec": {"selector": {"app": "api"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}})
    create(twin, {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "api", "namespace": "default"},
                  "subsets": [{"addresses": [{"ip": "10.244.1.9"}], "notReadyAddresses": [{"ip": "10.244.1.10"}],
                               "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]})
    create(twin, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate", "namespace": "default"},
                  "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                 "containers": [{"name": "m", "image": "busybox:1.36"}]}}}})
    create(twin, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                  "metadata": {"name": "data", "namespace": "default"},
                  "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    create(twin, {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"},
                  "spec": {"hard": {"pods": "10"}}})
    twin.warp(15)
    assert one(twin, "kube_horizontalpodautoscaler_spec_max_replicas")[1] == 5
    assert one(twin, "kube_horizontalpodautoscaler_spec_min_replicas")[1] == 2
    assert one(twin, "kube_horizontalpodautoscaler_status_current_replicas")[1] == 5
    assert one(twin, "kube_horizontalpodautoscaler_status_desired_replicas")[1] == 5
    target, value = one(twin, "kube_horizontalpodautoscaler_spec_target_metric")
    assert (target["metric_name"], target["metric_target_type"], value) == ("cpu", "utilization", 60)
    assert one(twin, "kube_horizontalpodautoscaler_info")[0]["scaletargetref_name"] == "api"
    node, _ = one(twin, "kube_node_info")
    assert node["node"] == NODE and node["namespace"] == "prometheus" and node["internal_ip"]
    assert one(twin, "kube_node_spec_unschedulable")[1] == 0
    assert one(twin, 'kube_node_status_condition{condition="Ready",status="true"}')[1] == 1
    assert one(twin, 'kube_node_status_allocatable{resource="cpu"}')[0]["unit"] == "core"
    assert one(twin, 'kube_node_status_capacity{resource="pods"}')[0]["unit"] == "integer"
    assert one(twin, 'kube_namespace_status_phase{namespace="default",phase="Active"}')[1] == 1
    service, _ = one(twin, 'kube_service_info{service="api"}')
    assert service["cluster_ip"] and service["uid"]
    addresses = {(dict(k)["ip"], dict(k)["ready"]) for k in vector(twin, 'kube_endpoint_address{endpoint="api"}')}
    assert addresses == {("10.244.1.9", "true"), ("10.244.1.10", "false")}
    job, _ = one(twin, "kube_job_info")
    assert job["job_name"] == "migrate" and job["job"] == "kube-state-metrics"
    assert one(twin, "kube_persistentvolumeclaim_resource_requests_storage_bytes")[1] == 2 ** 30
    assert one(twin, 'kube_persistentvolumeclaim_access_mode')[0]["access_mode"] == "ReadWriteOnce"
    assert vector(twin, "kube_resourcequota") == {}  # no status yet: the quota controller does not run


def test_a_cordoned_node(twin):
    node = twin.api.get(twin.api.catalog.lookup("", "v1", "nodes"), "", NODE)
    node["spec"]["unschedulable"] = True
    twin.api.update(twin.api.catalog.lookup("", "v1", "nodes"), None, NODE, node, twin.admin_ctx)
    twin.warp(15)
    assert one(twin, "kube_node_spec_unschedulable")[1] == 1


def test_metadata_carries_the_help_texts_with_stability(twin):
    families = twin.monitoring.metadata.families()
    assert [(m.type, m.help) for m in families["kube_pod_container_status_restarts_total"]] == [
        ("counter", "[STABLE] The number of container restarts per container.")]
    assert families["kube_pod_container_status_last_terminated_reason"][0].help == \
        "Describes the last reason the container was in terminated state."
    assert families["kube_endpoint_ports"][0].help == \
        "[STABLE] (Deprecated since v2.14.0) Information about the Endpoint ports."
