"""Resources served in two versions from one storage: HPA autoscaling/v1 <-> v2, Event v1 <-> events.k8s.io/v1."""

from pytest_itbench.twin.apiserver import conversion


def hpa_v1(name="web", cpu=70):
    return {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                     "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": cpu}}


def test_hpa_created_as_v1_reads_as_v2(raw):
    status, created = raw.json("POST", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", hpa_v1())
    assert status == 201 and created["spec"]["targetCPUUtilizationPercentage"] == 70
    status, v2 = raw.json("GET", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web")
    assert v2["apiVersion"] == "autoscaling/v2"
    assert v2["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]
    assert "targetCPUUtilizationPercentage" not in v2["spec"]
    assert v2["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_hpa_v2_metrics_that_v1_cannot_express_travel_in_annotations():
    v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "m"},
          "spec": {"maxReplicas": 3, "metrics": [
              {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                          "averageUtilization": 50}}},
              {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                                             "averageValue": "200Mi"}}}]},
          "status": {"currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {
              "averageUtilization": 35}}}], "conditions": [{"type": "AbleToScale", "status": "True"}]}}
    v1 = conversion.convert(v2, "autoscaling/v1")
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 50
    assert v1["status"]["currentCPUUtilizationPercentage"] == 35
    assert "memory" in v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]
    assert conversion.convert(v1, "autoscaling/v2")["spec"]["metrics"] == v2["spec"]["metrics"]
    assert conversion.convert(v1, "autoscaling/v2")["status"]["conditions"] == v2["status"]["conditions"]


def test_hpa_lists_in_both_versions_with_the_python_client(client):
    from kubernetes import client as k8s
    k8s.AutoscalingV1Api(client).create_namespaced_horizontal_pod_autoscaler("default", hpa_v1("a", 60))
    v2 = k8s.AutoscalingV2Api(client).list_namespaced_horizontal_pod_autoscaler("default").items
    assert [h.spec.metrics[0].resource.target.average_utilization for h in v2] == [60]


def test_events_are_one_store_seen_through_two_apis(raw):
    event = {"apiVersion": "v1", "kind": "Event",
             "metadata": {"name": "web.1", "namespace": "default"},
             "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default", "apiVersion": "v1"},
             "reason": "BackOff", "message": "Back-off restarting failed container", "type": "Warning",
             "source": {"component": "kubelet", "host": "node-1"}, "count": 4,
             "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:05:00Z"}
    status, _ = raw.json("POST", "/api/v1/namespaces/default/events", event)
    assert status == 201
    status, new = raw.json("GET", "/apis/events.k8s.io/v1/namespaces/default/events/web.1")
    assert status == 200 and new["apiVersion"] == "events.k8s.io/v1"
    assert new["regarding"]["name"] == "web" and new["note"] == "Back-off restarting failed container"
    assert new["deprecatedCount"] == 4 and new["deprecatedSource"] == {"component": "kubelet", "host": "node-1"}
    status, listed = raw.json("GET", "/apis/events.k8s.io/v1/namespaces/default/events"
                                     "?fieldSelector=regarding.name%3Dweb")
    assert [e["metadata"]["name"] for e in listed["items"]] == ["web.1"]
