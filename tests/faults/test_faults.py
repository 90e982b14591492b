"""Each fault injects through the API, is idempotent, shows its effect, and its removal restores the state."""

import json

import pytest
from kubernetes import client as k8s

from pytest_itbench.faults import FaultRecord, check_scenario, get
from pytest_itbench.scenario import ScenarioError, loads
from pytest_itbench.scenario.schema import ObjectRef

DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{
                       "name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 8080}],
                       "env": [{"name": "CART_ADDR", "value": "cart:8080"}]}]}}}}


@pytest.fixture
def web(client):
    apps = k8s.AppsV1Api(client)
    apps.create_namespaced_deployment("default", DEPLOY)
    return apps


def record(name, target, **args):
    fault = get(name)
    return fault, FaultRecord(name, target, fault.check(target, args))


def spec_of(apps):
    return apps.read_namespaced_deployment("web", "default").to_dict()["spec"]


TARGET = ObjectRef(kind="Deployment", namespace="default", name="web")


def test_scaled_to_zero(client, web):
    fault, rec = record("scaled-to-zero-kubernetes-workload", TARGET)
    fault.inject(client, rec)
    fault.inject(client, rec)  # idempotent: the saved count stays the original
    assert spec_of(web)["replicas"] == 0 and rec.saved == {"replicas": 2}
    fault.remove(client, rec)
    assert spec_of(web)["replicas"] == 2


def test_nonexistent_image(client, web):
    fault, rec = record("nonexistent-kubernetes-workload-container-image", TARGET, container="web")
    fault.inject(client, rec)
    fault.inject(client, rec)
    assert spec_of(web)["template"]["spec"]["containers"][0]["image"] == "nginx:0.0.0-does-not-exist"
    fault.remove(client, rec)
    assert spec_of(web)["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"


def test_failing_readiness_probe_added_and_removed(client, web):
    fault, rec = record("misconfigured-kubernetes-workload-container-readiness-probe", TARGET)
    fault.inject(client, rec)
    probe = spec_of(web)["template"]["spec"]["containers"][0]["readiness_probe"]
    assert probe["http_get"]["path"] == "/healthz-unreachable" and probe["http_get"]["port"] == 8080
    fault.remove(client, rec)
    assert spec_of(web)["template"]["spec"]["containers"][0]["readiness_probe"] is None


def test_modified_environment_variable(client, web):
    fault, rec = record("modified-kubernetes-workload-container-environment-variable", TARGET,
                        container="web", env={"name": "CART_ADDR", "value": "cart:7071"})
    fault.inject(client, rec)
    fault.inject(client, rec)
    env = spec_of(web)["template"]["spec"]["containers"][0]["env"]
    assert [(e["name"], e["value"]) for e in env] == [("CART_ADDR", "cart:7071")]
    fault.remove(client, rec)
    env = spec_of(web)["template"]["spec"]["containers"][0]["env"]
    assert [(e["name"], e["value"]) for e in env] == [("CART_ADDR", "cart:8080")]


def test_modified_target_port(client):
    core = k8s.CoreV1Api(client)
    core.create_namespaced_service("default", {"metadata": {"name": "cart"}, "spec": {
        "selector": {"app": "cart"}, "ports": [{"name": "grpc", "port": 8080, "targetPort": 8080}]}})
    target = ObjectRef(kind="Service", namespace="default", name="cart")
    fault, rec = record("modified-target-port-kubernetes-service", target, targetPort=9999)
    fault.inject(client, rec)
    assert core.read_namespaced_service("cart", "default").spec.ports[0].target_port == 9999
    fault.remove(client, rec)
    assert core.read_namespaced_service("cart", "default").spec.ports[0].target_port == 8080


def test_feature_flag(client):
    flags = {"flags": {"adFailure": {"state": "ENABLED", "variants": {"on": True, "off": False},
                                     "defaultVariant": "off"}}}
    core = k8s.CoreV1Api(client)
    core.create_namespaced_config_map("default", {"metadata": {"name": "flagd-config"},
                                                  "data": {"demo.flagd.json": json.dumps(flags)}})
    apps = k8s.AppsV1Api(client)
    apps.create_namespaced_deployment("default", {
        "metadata": {"name": "flagd"}, "spec": {
            "selector": {"matchLabels": {"app": "flagd"}},
            "template": {"metadata": {"labels": {"app": "flagd"}},
                         "spec": {"containers": [{"name": "flagd", "image": "ghcr.io/open-feature/flagd:v0.12.8"}]}}}})
    restarted = lambda: (apps.read_namespaced_deployment("flagd", "default").spec.template.metadata.annotations  # noqa
                         or {}).get("kubectl.kubernetes.io/restartedAt")
    target = ObjectRef(kind="ConfigMap", namespace="default", name="flagd-config")
    fault, rec = record("opentelemetry-demo-feature-flag", target, flag={"name": "adFailure"})
    fault.inject(client, rec)
    read = lambda: json.loads(core.read_namespaced_config_map("flagd-config", "default").data["demo.flagd.json"])  # noqa
    assert read()["flags"]["adFailure"]["defaultVariant"] == "on"
    assert restarted() is not None  # flagd reads its flags at start: it is restarted to take the change
    apps.patch_namespaced_deployment("flagd", "default", {"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": None}}}}})
    fault.remove(client, rec)
    assert read()["flags"]["adFailure"]["defaultVariant"] == "off"
    assert restarted() is not None
    _, unrestarted = record("opentelemetry-demo-feature-flag", target, flag={"name": "adFailure"}, restart=None)
    apps.patch_namespaced_deployment("flagd", "default", {"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": None}}}}})
    fault.inject(client, unrestarted)
    assert read()["flags"]["adFailure"]["defaultVariant"] == "on" and restarted() is None
    fault.remove(client, unrestarted)
    _, bad = record("opentelemetry-demo-feature-flag", target, flag={"name": "adFailure", "state": "50%"})
    with pytest.raises(Exception, match="has no variant '50%'"):
        fault.inject(client, bad)


SCENARIO = """\
id: s
title: t
domain: sre
application: astronomy-shop
complexity_inputs: {chain_length: 1, resolution_steps: 1, technologies: 1}
faults:
  - fault: nonexistent-kubernetes-workload-container-image
    target: {kind: Deployment, namespace: shop, name: ad}
    args: {container: ad, colour: blue}
  - fault: no-such-fault
task: t
ground_truth: {groups: [{id: ad, kind: Deployment, filter: ["^ad$"], root_cause: true}]}
"""


def test_scenario_fault_arguments_are_checked_against_the_fault_schema():
    with pytest.raises(ScenarioError) as exc:
        loads(SCENARIO, "s.yaml", check_faults=check_scenario)
    text = str(exc.value)
    assert "s.yaml:9: faults[0].args.colour: Extra inputs are not permitted" in text
    assert "s.yaml:10: faults[1].fault: unknown fault 'no-such-fault'" in text
