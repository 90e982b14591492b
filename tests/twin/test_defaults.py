"""Defaults a v1.31 API server fills in, as `kubectl get -o yaml` shows them on a real cluster."""

import ipaddress

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.defaulting.pod import image_tag

CONTAINER_DEFAULTS = {"resources": {}, "terminationMessagePath": "/dev/termination-log",
                      "terminationMessagePolicy": "File"}
POD_SPEC_DEFAULTS = {"dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                     "securityContext": {}, "terminationGracePeriodSeconds": 30}


@pytest.fixture
def api():
    twin = Twin(seed=5, tls=False)
    return twin


def create(twin, obj: dict, namespace: str | None = "default") -> dict:
    res = twin.api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
    return twin.api.create(res, namespace if res.namespaced else None, obj, twin.admin_ctx)


def subset(actual: dict, expected: dict) -> bool:
    return all(actual.get(k) == v for k, v in expected.items())


def test_kubectl_create_deployment(kubectl):
    kubectl("create", "deployment", "web", "--image=nginx", "--port=80")
    deployment = kubectl.run("get", "deployment", "web", "-o", "json").json()
    spec = deployment["spec"]
    assert subset(spec, {"replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                         "strategy": {"type": "RollingUpdate",
                                      "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}})
    assert spec["template"]["metadata"] == {"creationTimestamp": None, "labels": {"app": "web"}}
    assert subset(spec["template"]["spec"], POD_SPEC_DEFAULTS)
    container = spec["template"]["spec"]["containers"][0]
    assert subset(container, dict(CONTAINER_DEFAULTS, imagePullPolicy="Always"))
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert "enableServiceLinks" not in spec["template"]["spec"]  # only pods get it


def test_kubectl_run_pod(kubectl):
    kubectl("run", "one", "--image=busybox:1.36", "--", "sleep", "3600")
    pod = kubectl.run("get", "pod", "one", "-o", "json").json()
    spec = pod["spec"]
    assert subset(spec, dict(POD_SPEC_DEFAULTS, enableServiceLinks=True, priority=0,
                             preemptionPolicy="PreemptLowerPriority", serviceAccount="default",
                             serviceAccountName="default"))
    assert subset(spec["containers"][0], dict(CONTAINER_DEFAULTS, imagePullPolicy="IfNotPresent"))
    assert pod["status"]["qosClass"] == "BestEffort"


def test_kubectl_expose_and_create_service(kubectl):
    kubectl("create", "deployment", "web", "--image=nginx")
    kubectl("expose", "deployment", "web", "--port=80", "--target-port=8080")
    service = kubectl.run("get", "service", "web", "-o", "json").json()["spec"]
    assert subset(service, {"type": "ClusterIP", "sessionAffinity": "None", "ipFamilies": ["IPv4"],
                            "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"})
    assert service["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 8080}]
    assert ipaddress.ip_address(service["clusterIP"]) in ipaddress.ip_network("10.96.0.0/12")
    assert service["clusterIPs"] == [service["clusterIP"]]
    kubectl("create", "service", "nodeport", "edge", "--tcp=80:8080")
    node_port = kubectl.run("get", "service", "edge", "-o", "json").json()["spec"]
    assert node_port["externalTrafficPolicy"] == "Cluster"
    assert 30000 <= node_port["ports"][0]["nodePort"] <= 32767


def test_kubectl_create_job_and_cronjob(kubectl):
    kubectl("create", "job", "pi", "--image=perl:5.34", "--", "perl", "-e", "print 1")
    job = kubectl.run("get", "job", "pi", "-o", "json").json()
    uid = job["metadata"]["uid"]
    generated = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
                 "controller-uid": uid, "job-name": "pi"}
    assert subset(job["spec"], {"backoffLimit": 6, "completions": 1, "parallelism": 1, "completionMode": "NonIndexed",
                                "suspend": False, "manualSelector": False,
                                "podReplacementPolicy": "TerminatingOrFailed",
                                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}})
    assert job["spec"]["template"]["metadata"]["labels"] == generated
    assert job["metadata"]["labels"] == generated
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    kubectl("create", "cronjob", "hello", "--image=busybox", "--schedule=*/1 * * * *")
    cron = kubectl.run("get", "cronjob", "hello", "-o", "json").json()["spec"]
    assert subset(cron, {"concurrencyPolicy": "Allow", "suspend": False, "successfulJobsHistoryLimit": 3,
                         "failedJobsHistoryLimit": 1})
    template = cron["jobTemplate"]
    assert template["metadata"]["creationTimestamp"] is None and "backoffLimit" not in template["spec"]
    assert subset(template["spec"]["template"]["spec"], dict(POD_SPEC_DEFAULTS, restartPolicy="OnFailure"))


@pytest.mark.parametrize("image,tag", [("nginx", "latest"), ("nginx:latest", "latest"), ("nginx:1.25", "1.25"),
                                       ("localhost:5000/app", "latest"), ("registry.k8s.io/pause:3.9", "3.9"),
                                       ("nginx@sha256:abc", ""), ("Nginx", "")])
def test_image_tags_decide_the_pull_policy(image, tag):
    assert image_tag(image) == tag


def test_pod_defaults_reach_probes_volumes_and_requests(api):
    pod = create(api, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "volumes": [{"name": "cfg", "configMap": {"name": "c"}}, {"name": "s", "secret": {"secretName": "s"}},
                    {"name": "host", "hostPath": {"path": "/data"}}, {"name": "scratch"}],
        "containers": [{"name": "app", "image": "app:1", "ports": [{"containerPort": 8080}],
                        "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                        "livenessProbe": {"httpGet": {"port": 8080}},
                        "readinessProbe": {"tcpSocket": {"port": "http"}, "periodSeconds": 5},
                        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}]}})
    spec = pod["spec"]
    container = spec["containers"][0]
    assert container["resources"]["requests"] == {"cpu": "500m", "memory": "128Mi"}
    assert pod["status"]["qosClass"] == "Guaranteed"
    assert container["livenessProbe"] == {"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                                          "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert container["readinessProbe"]["periodSeconds"] == 5
    assert container["env"][0]["valueFrom"]["fieldRef"] == {"apiVersion": "v1", "fieldPath": "spec.nodeName"}
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["cfg"]["configMap"]["defaultMode"] == 420 and volumes["s"]["secret"]["defaultMode"] == 420
    assert volumes["host"]["hostPath"] == {"path": "/data", "type": ""}
    assert volumes["scratch"] == {"name": "scratch", "emptyDir": {}}


def test_workload_defaults(api):
    template = {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db", "image": "pg:16"}]}}
    selector = {"matchLabels": {"app": "db"}}
    sts = create(api, {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"}, "spec": {
        "serviceName": "db", "selector": selector, "template": template,
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}})["spec"]
    assert subset(sts, {"replicas": 1, "podManagementPolicy": "OrderedReady", "revisionHistoryLimit": 10,
                        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"}})
    assert sts["volumeClaimTemplates"][0] == {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "creationTimestamp": None},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                 "volumeMode": "Filesystem"}, "status": {"phase": "Pending"}}
    ds = create(api, {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
                      "spec": {"selector": selector, "template": template}})["spec"]
    assert subset(ds, {"revisionHistoryLimit": 10, "updateStrategy": {
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}})
    rs = create(api, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
                      "spec": {"selector": selector, "template": template}})
    assert rs["spec"]["replicas"] == 1 and rs["status"] == {"replicas": 0}


def test_service_variants(api):
    def service(name, **spec):
        body = {"ports": [{"port": 80}], "selector": {"app": name}}
        body.update(spec)
        return create(api, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": body})["spec"]

    headless = service("headless", clusterIP="None")
    assert subset(headless, {"clusterIP": "None", "clusterIPs": ["None"], "ipFamilies": ["IPv4"],
                             "ipFamilyPolicy": "SingleStack", "ports": [{"port": 80, "protocol": "TCP",
                                                                         "targetPort": 80}]})
    selectorless = create(api, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "external-db"},
                                "spec": {"clusterIP": "None", "ports": [{"port": 5432}]}})["spec"]
    assert subset(selectorless, {"ipFamilyPolicy": "RequireDualStack", "ipFamilies": ["IPv4", "IPv6"]})
    balancer = service("lb", type="LoadBalancer", externalTrafficPolicy="Local")
    assert subset(balancer, {"allocateLoadBalancerNodePorts": True, "externalTrafficPolicy": "Local"})
    assert 30000 <= balancer["healthCheckNodePort"] <= 32767 and balancer["ports"][0]["nodePort"]
    sticky = service("sticky", sessionAffinity="ClientIP")
    assert sticky["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    external = service("alias", type="ExternalName", externalName="db.example.com")
    assert not {"clusterIP", "ipFamilies", "ipFamilyPolicy", "internalTrafficPolicy"} & set(external)


def test_other_kinds(api):
    secret = create(api, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                          "data": {"user": "YWRtaW4="}, "stringData": {"password": "hunter2", "user": "root"}})
    assert secret["type"] == "Opaque" and secret["data"] == {"user": "cm9vdA==", "password": "aHVudGVyMg=="}
    assert "stringData" not in secret
    claim = create(api, {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
                         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    assert subset(claim["spec"], {"volumeMode": "Filesystem", "storageClassName": "standard"})
    policy = create(api, {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "np"},
                          "spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}})
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy["spec"]["egress"][0]["ports"] == [{"port": 53, "protocol": "TCP"}]
    hpa = create(api, {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
                       "spec": {"maxReplicas": 5, "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                                     "name": "web"},
                                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}})["spec"]
    assert hpa["minReplicas"] == 1
    assert hpa["metrics"] == [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80}}}]
    assert hpa["behavior"] == {
        "scaleUp": {"selectPolicy": "Max", "stabilizationWindowSeconds": 0, "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"selectPolicy": "Max", "stabilizationWindowSeconds": 60, "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]}}
    binding = create(api, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                           "metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
                           "subjects": [{"kind": "User", "name": "jane"}, {"kind": "ServiceAccount", "name": "ci"}]})
    assert binding["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert [s.get("apiGroup") for s in binding["subjects"]] == ["rbac.authorization.k8s.io", None]
    priority = create(api, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                            "metadata": {"name": "high"}, "value": 1000})
    assert priority["preemptionPolicy"] == "PreemptLowerPriority"
    namespace = create(api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}, None)
    assert namespace["metadata"]["labels"] == {"kubernetes.io/metadata.name": "shop"}
