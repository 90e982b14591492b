"""Validation with the API server's field paths and messages: creates, and the updates it refuses."""

import ipaddress
import json

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.validation import cron_schedule, name_rules
from pytest_itbench.twin.errors import Invalid
from pytest_itbench.twin.store import clone

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
           "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
           "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


@pytest.fixture
def twin_api():
    return Twin(seed=9, tls=False)


def create(twin, obj: dict) -> dict:
    res = twin.api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
    return twin.api.create(res, "default" if res.namespaced else None, clone(obj), twin.admin_ctx)


def update(twin, obj: dict) -> dict:
    res = twin.api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
    return twin.api.update(res, "default" if res.namespaced else None, obj["metadata"]["name"], clone(obj),
                           twin.admin_ctx)


def problems(twin, obj: dict, old: dict | None = None) -> list[str]:
    """The error lines of the 422 a create (or, given ``old``, an update) gets."""
    with pytest.raises(Invalid) as caught:
        create(twin, obj) if old is None else update(twin, obj)
    return [str(e) for e in caught.value.errors]


def pod(name="web", **spec) -> dict:
    body = {"containers": [{"name": "app", "image": "nginx:1.25"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def deployment(name="web", labels=None, **spec) -> dict:
    labels = labels or {"app": "web"}
    body = {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": body}


# ---- names and metadata ---------------------------------------------------------------------------------------

def test_names_follow_each_kinds_rule(twin_api):
    assert problems(twin_api, deployment(name="Web_1")) == [f'metadata.name: Invalid value: "Web_1": {SUBDOMAIN}']
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1web"}, "spec": {"ports": [{"port": 80}]}}
    assert problems(twin_api, service) == [f'metadata.name: Invalid value: "1web": {DNS1035}']
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team.a"}}
    assert problems(twin_api, namespace) == ['metadata.name: Invalid value: "team.a": must not contain dots']
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "a/b"}}
    assert problems(twin_api, role) == ["metadata.name: Invalid value: \"a/b\": may not contain '/'"]
    create(twin_api, dict(role, metadata={"name": "system:reader"}))


def test_labels_and_annotations(twin_api):
    bad = pod()
    bad["metadata"]["labels"] = {"tier": "front end", "bad key!": "x"}
    bad["metadata"]["annotations"] = {"note": "x" * 262144}
    assert problems(twin_api, bad) == [
        'metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, \'-\', \'_\' '
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'metadata.labels: Invalid value: "front end": a valid label must be an empty string or consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
        "[A-Za-z0-9])?')",
        "metadata.annotations: Too long: may not be more than 262144 bytes"]


def test_the_422_names_kind_group_and_causes(twin_api):
    with pytest.raises(Invalid) as caught:
        create(twin_api, deployment(replicas=-1))
    status = caught.value.status()
    assert status["message"] == ('Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater '
                                 "than or equal to 0")
    assert status["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec.replicas",
                                            "message": "Invalid value: -1: must be greater than or equal to 0"}]


# ---- workloads -------------------------------------------------------------------------------------------------

def test_deployment_rules(twin_api):
    assert problems(twin_api, deployment(labels={"app": "api"})) == [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"api"}: `selector` does not match '
        "template `labels`"]
    assert problems(twin_api, deployment(selector=None)) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match '
        "template `labels`"]
    assert problems(twin_api, deployment(strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}})) == [
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: '
        "may not be 0 when `maxSurge` is 0"]
    assert problems(twin_api, deployment(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}})) == [
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"]
    assert problems(twin_api, deployment(strategy={"type": "Rolling"})) == [
        'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"Rolling", '
        'RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"']
    always_pod = deployment()
    always_pod["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert problems(twin_api, always_pod) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']


def test_job_and_cronjob_rules(twin_api):
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
           "spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}}}
    assert problems(twin_api, job) == [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 0 * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}}
    assert problems(twin_api, cron) == [
        'spec.schedule: Invalid value: "0 0 * *": expected exactly 5 fields, found 4: [0 0 * *]']


@pytest.mark.parametrize("schedule,error", [
    ("*/5 * * * *", None), ("@hourly", None), ("0 0 * jan-mar mon", None), ("@every 5m", None),
    ("60 * * * *", "end of range (60) above maximum (59): 60"), ("0 0 * * 7", "end of range (7) above maximum (6): 7"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("@weekdays", "unrecognized descriptor: @weekdays"),
])
def test_cron_schedules(schedule, error):
    assert cron_schedule.schedule_error(schedule) == error


def test_statefulset_and_daemonset_rules(twin_api):
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db.primary"},
           "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}},
                                 "spec": {"containers": [{"name": "db", "image": "pg"}]}}}}
    assert problems(twin_api, sts) == ['metadata.name: Invalid value: "db.primary": must not contain dots']
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
          "spec": {"selector": {"matchLabels": {"app": "agent"}},
                   "updateStrategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}},
                   "template": {"metadata": {"labels": {"app": "agent"}},
                                "spec": {"containers": [{"name": "a", "image": "agent"}]}}}}
    assert problems(twin_api, ds) == [
        "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}: "
        "may not be set when maxUnavailable is non-zero"]


# ---- pods --------------------------------------------------------------------------------------------------------

def test_pod_spec_rules(twin_api):
    assert problems(twin_api, pod(containers=[])) == ["spec.containers: Required value"]
    containers = [{"name": "app", "image": "nginx", "ports": [{"containerPort": 80, "name": "http"},
                                                              {"containerPort": 70000, "name": "http"}],
                   "env": [{"name": "1PORT", "value": "80"}],
                   "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                   "resources": {"requests": {"cpu": "2", "mem": "1Gi"}, "limits": {"cpu": "1"}},
                   "livenessProbe": {"successThreshold": 2}},
                  {"name": "app", "image": ""}]
    assert problems(twin_api, pod(containers=containers, restartPolicy="Sometimes")) == [
        'spec.containers[0].ports[1].name: Duplicate value: "http"',
        "spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        'spec.containers[0].env[0].name: Invalid value: "1PORT": a valid environment variable name must consist of '
        "alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or "
        "'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
        'spec.containers[0].volumeMounts[0].name: Not found: "data"',
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
        'spec.containers[0].resources.requests[mem]: Invalid value: "mem": must be a standard resource type or fully '
        "qualified",
        'spec.containers[0].resources.requests[mem]: Invalid value: "mem": must be a standard resource for containers',
        "spec.containers[0].livenessProbe: Required value: must specify a handler type",
        "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
        "spec.containers[1].image: Required value",
        'spec.containers[1].name: Duplicate value: "app"',
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']


def test_pod_volumes_and_tolerations(twin_api):
    spec = {"volumes": [{"name": "cfg", "configMap": {}}, {"name": "Data", "emptyDir": {}}],
            "tolerations": [{"operator": "Equal", "value": "x"}]}
    assert problems(twin_api, pod(**spec)) == [
        "spec.volumes[0].configMap.name: Required value",
        'spec.volumes[1].name: Invalid value: "Data": a lowercase RFC 1123 label must consist of lower case '
        "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
        "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which '
        'means "match all values and all keys"']


def test_pod_updates_may_change_images_only(twin_api):
    created = create(twin_api, pod())
    changed = clone(created)
    changed["spec"]["containers"][0]["image"] = "nginx:1.27"
    assert update(twin_api, changed)["spec"]["containers"][0]["image"] == "nginx:1.27"
    moved = clone(changed)
    moved["metadata"]["resourceVersion"] = None
    moved["spec"]["containers"][0]["ports"] = [{"containerPort": 8080}]
    [message] = problems(twin_api, moved, old=changed)
    assert message.startswith(
        "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
        "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"
        "  core.PodSpec{")
    assert '+ \tContainers: [{"image":"nginx:1.27"' in message


# ---- services ------------------------------------------------------------------------------------------------

def service(name="web", **spec) -> dict:
    body = {"selector": {"app": name}, "ports": [{"port": 80}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": body}


def test_service_rules(twin_api):
    assert problems(twin_api, service(ports=[])) == ["spec.ports: Required value"]
    clashing = [{"port": 80, "name": "http"}, {"port": 81, "name": "http", "protocol": "HTTP"}]
    assert problems(twin_api, service(ports=clashing, type="Cluster")) == [
        'spec.ports[1].name: Duplicate value: "http"',
        'spec.ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        'spec.type: Unsupported value: "Cluster": supported values: "ClusterIP", "ExternalName", "LoadBalancer", '
        '"NodePort"']
    assert problems(twin_api, service(ports=[{"port": 80}, {"port": 443}])) == ["spec.ports[0].name: Required value",
                                                                                "spec.ports[1].name: Required value"]
    create(twin_api, service("headless", ports=[], clusterIP="None"))


def test_cluster_ips_are_unique_in_range_and_freed_on_delete(twin_api):
    ips = [create(twin_api, service(f"s{i}"))["spec"]["clusterIP"] for i in range(20)]
    assert len(set(ips)) == 20
    assert all(ipaddress.ip_address(ip) in ipaddress.ip_network("10.96.0.0/12") for ip in ips)
    assert problems(twin_api, service("copy", clusterIP=ips[0])) == [
        f'spec.clusterIPs: Invalid value: []string{{"{ips[0]}"}}: failed to allocate IP {ips[0]}: provided IP is '
        "already allocated"]
    assert problems(twin_api, service("outside", clusterIP="192.168.0.10")) == [
        'spec.clusterIPs: Invalid value: []string{"192.168.0.10"}: failed to allocate IP 192.168.0.10: the provided '
        "IP (192.168.0.10) is not in the valid range. The range of valid IPs is 10.96.0.0/12"]
    services = twin_api.api.catalog.lookup("", "v1", "services")
    from pytest_itbench.twin.apiserver.registry import DeleteOptions
    twin_api.api.delete(services, "default", "s0", DeleteOptions(), twin_api.admin_ctx)
    assert create(twin_api, service("copy", clusterIP=ips[0]))["spec"]["clusterIPs"] == [ips[0]]


def test_node_ports_and_dry_runs(twin_api):
    first = create(twin_api, service("a", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    assert first["spec"]["ports"][0]["nodePort"] == 30080
    assert problems(twin_api, service("b", type="NodePort", ports=[{"port": 80, "nodePort": 30080}])) == [
        "spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"]
    assert problems(twin_api, service("c", type="NodePort", ports=[{"port": 80, "nodePort": 80}])) == [
        "spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid "
        "ports is 30000-32767"]
    services = twin_api.api.catalog.lookup("", "v1", "services")
    ctx = type(twin_api.admin_ctx)(user=twin_api.admin_ctx.user, dry_run=True)
    dry = twin_api.api.create(services, "default", service("d", clusterIP="10.96.5.5"), ctx)
    assert dry["spec"]["clusterIP"] == "10.96.5.5"
    assert create(twin_api, service("e", clusterIP="10.96.5.5"))["spec"]["clusterIP"] == "10.96.5.5"


# ---- immutable fields on update ---------------------------------------------------------------------------------

def test_updates_keep_immutable_fields(twin_api):
    created = create(twin_api, deployment())
    moved = clone(created)
    moved["spec"]["selector"] = {"matchLabels": {"app": "api"}}
    moved["spec"]["template"]["metadata"]["labels"] = {"app": "api"}
    assert problems(twin_api, moved, old=created) == [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"api"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"]
    svc = create(twin_api, service())
    readdressed = clone(svc)
    readdressed["spec"]["clusterIP"] = "10.96.7.7"
    assert problems(twin_api, readdressed, old=svc) == [
        'spec.clusterIPs[0]: Invalid value: []string{"10.96.7.7"}: may not change once set']
    unaddressed = clone(svc)
    del unaddressed["spec"]["clusterIP"], unaddressed["spec"]["clusterIPs"]
    assert update(twin_api, unaddressed)["spec"]["clusterIP"] == svc["spec"]["clusterIP"]
    config = create(twin_api, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                               "data": {"a": "1"}, "immutable": True})
    edited = dict(clone(config), data={"a": "2"})
    assert problems(twin_api, edited, old=config) == ["data: Forbidden: field is immutable when `immutable` is set"]
    binding = create(twin_api, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                                "metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "view"}})
    regranted = dict(clone(binding), roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                              "name": "edit"})
    assert problems(twin_api, regranted, old=binding) == [
        'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: '
        "cannot change roleRef"]


def test_statefulset_pvc_and_job_updates(twin_api):
    sts = create(twin_api, {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                            "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                                     "template": {"metadata": {"labels": {"app": "db"}},
                                                  "spec": {"containers": [{"name": "db", "image": "pg"}]}}}})
    scaled = clone(sts)
    scaled["spec"]["replicas"] = 3
    assert update(twin_api, scaled)["spec"]["replicas"] == 3
    renamed = clone(scaled)
    renamed["metadata"].pop("resourceVersion")
    renamed["spec"]["serviceName"] = "database"
    assert problems(twin_api, renamed, old=scaled) == [
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
        "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"]
    claim = create(twin_api, {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                              "spec": {"accessModes": ["ReadWriteOnce"],
                                       "resources": {"requests": {"storage": "1Gi"}}}})
    wider = clone(claim)
    wider["spec"]["accessModes"] = ["ReadWriteMany"]
    [message] = problems(twin_api, wider, old=claim)
    assert message.startswith("spec: Forbidden: spec is immutable after creation except resources.requests and "
                              "volumeAttributesClassName for bound claims\n  core.PersistentVolumeClaimSpec{")
    job = create(twin_api, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
                            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                           "containers": [{"name": "pi", "image": "perl"}]}}}})
    retargeted = clone(job)
    retargeted["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:5"
    [message] = problems(twin_api, retargeted, old=job)
    assert message.startswith("spec.template: Invalid value: core.PodTemplateSpec{") and \
        message.endswith(": field is immutable")


def test_other_kinds(twin_api):
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"my key": "v"}}
    assert problems(twin_api, config) == [
        "data[my key]: Invalid value: \"my key\": a valid config key must consist of alphanumeric characters, '-', '_' "
        "or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"]
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
           "spec": {"minReplicas": 5, "maxReplicas": 2, "scaleTargetRef": {"kind": "Deployment", "name": "web"}}}
    assert problems(twin_api, hpa) == ["spec.maxReplicas: Invalid value: 2: must be greater than or equal to "
                                       "`minReplicas`"]
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"}, "spec": {}}
    assert problems(twin_api, claim) == ["spec.accessModes: Required value: at least 1 access mode is required",
                                         "spec.resources[storage]: Required value"]
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"},
            "rules": [{"apiGroups": [""], "resources": ["pods"]}]}
    assert problems(twin_api, role) == ["rules[0].verbs: Required value: verbs must contain at least one value"]
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"},
               "spec": {"rules": [{"http": {"paths": [{"path": "/", "backend": backend}]}}]}}
    assert problems(twin_api, ingress) == ["spec.rules[0].http.paths[0].pathType: Required value: pathType must be "
                                           "specified"]
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "n"},
              "spec": {"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}]}}
    assert problems(twin_api, policy) == ['spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be '
                                          "a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]


def test_name_rules_mask_a_trailing_dash_of_generate_name():
    assert name_rules.name_is_dns_subdomain("web-", True) == []
    assert name_rules.name_is_dns_subdomain("web-", False) != []


# ---- through kubectl -----------------------------------------------------------------------------------------------

def test_kubectl_reports_invalid_objects_and_immutable_updates(kubectl):
    bad = deployment(labels={"app": "api"})
    refused = kubectl.fails("apply", "-f", "-", input=json.dumps(bad))
    assert ('The Deployment "web" is invalid: spec.template.metadata.labels: Invalid value: '
            'map[string]string{"app":"api"}: `selector` does not match template `labels`') in refused.stderr
    kubectl("apply", "-f", "-", input=json.dumps(deployment()))
    moved = deployment(labels={"app": "api"})
    moved["spec"]["selector"] = {"matchLabels": {"app": "api"}}
    refused = kubectl.fails("apply", "-f", "-", input=json.dumps(moved))
    assert ('The Deployment "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:'
            'map[string]string{"app":"api"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'
            ) in refused.stderr
    negative = kubectl.fails("patch", "deployment", "web", "-p", '{"spec":{"replicas":-1}}')
    assert ('The Deployment "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'
            ) in negative.stderr
    bad_name = kubectl.fails("create", "deployment", "Web_1", "--image=nginx")
    assert bad_name.stderr == ('error: failed to create deployment: Deployment.apps "Web_1" is invalid: metadata.name: '
                               f'Invalid value: "Web_1": {SUBDOMAIN}\n')
