"""The applications' manifests: the catalog's apply order, validity for a v1.31 cluster (kubernetes-validate, and
real kubectl against the twin with strict field validation), wiring that holds together (selectors, ports,
addresses in the environment), images the twin's registry holds, and each application settling on the twin."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import kubernetes_validate
import pytest
import yaml

from pytest_itbench.apps import APPLICATIONS, application
from pytest_itbench.apps.catalog import APPLY_ORDER
from pytest_itbench.twin import Twin
from pytest_itbench.twin import quantity
from pytest_itbench.twin.images import default_registry, parse_reference

from ..conftest import KUBECTL, Kubectl

APPS = sorted(APPLICATIONS)
WORKLOADS = ("Deployment", "StatefulSet")

SHOP_COMPONENTS = {"frontend-proxy", "frontend", "ad", "cart", "valkey-cart", "checkout", "currency", "email",
                   "payment", "product-catalog", "quote", "recommendation", "shipping", "fraud-detection",
                   "accounting", "kafka", "flagd", "image-provider", "postgresql", "load-generator"}
DEMO_FLAGS = {"adFailure", "adHighCpu", "adManualGc", "cartFailure", "paymentFailure", "paymentUnreachable",
              "productCatalogFailure", "recommendationCacheFailure", "imageSlowLoad", "kafkaQueueProblems",
              "loadGeneratorFloodHomepage"}
HOTEL_COMPONENTS = {"frontend", "search", "geo", "rate", "profile", "recommendation", "reservation", "user",
                    "memcached-profile", "memcached-rate", "memcached-reserve", "mongodb-geo", "mongodb-profile",
                    "mongodb-rate", "mongodb-recommendation", "mongodb-reservation", "mongodb-user", "consul",
                    "load-generator"}
# What the benchmark's observability stack serves (ARCHITECTURE.md, rule 5), not the application.
OBSERVABILITY_HOSTS = {"otel-collector", "$(OTEL_COLLECTOR_NAME)", "jaeger-query", "grafana"}


def docs_of(name: str, kind: str | None = None) -> list[dict]:
    return [d for d in application(name).documents() if kind is None or d["kind"] == kind]


def pod_specs(name: str):
    for doc in docs_of(name):
        if doc["kind"] in WORKLOADS:
            yield doc, doc["spec"]["template"]["spec"]


# ---- the catalog ------------------------------------------------------------------------------------------------

def test_the_catalog_holds_both_applications_in_their_namespaces():
    assert {n: a.namespace for n, a in APPLICATIONS.items()} == {"astronomy-shop": "astronomy-shop",
                                                                  "hotel-reservation": "hotel-reservation"}
    for app in APPLICATIONS.values():
        assert app.manifest_files() and all(p.suffix == ".yaml" for p in app.manifest_files())
        assert app.behaviour_path.name == "behaviour.yaml" and app.behaviour_path.parent == app.directory
    with pytest.raises(KeyError, match="known: astronomy-shop, hotel-reservation"):
        application("bookinfo")


@pytest.mark.parametrize("name", APPS)
def test_documents_come_in_apply_order_and_live_in_the_application_namespace(name):
    docs = application(name).documents()
    ranks = [APPLY_ORDER.index(d["kind"]) for d in docs]
    assert ranks == sorted(ranks) and docs[0] == {"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": application(name).namespace}}
    assert all(d["metadata"].get("namespace") == application(name).namespace for d in docs[1:])
    keys = [(d["kind"], d["metadata"]["name"]) for d in docs]
    assert len(keys) == len(set(keys))
    assert application(name).documents() == docs and application(name).documents() is not docs


def test_the_manifest_files_apply_in_name_order():
    """``kubectl apply -f <dir>`` goes by file name: the namespace and what pods mount come before the pods."""
    for app in APPLICATIONS.values():
        seen: set[tuple[str, str]] = set()
        for path in app.manifest_files():
            for doc in (d for d in yaml.safe_load_all(path.read_text()) if d):
                if doc["kind"] != "Namespace":
                    assert ("Namespace", app.namespace) in seen, path
                if doc["kind"] in WORKLOADS:
                    spec = doc["spec"]["template"]["spec"]
                    for volume in spec.get("volumes") or ():
                        for kind, key in (("ConfigMap", "configMap"), ("PersistentVolumeClaim",
                                                                       "persistentVolumeClaim")):
                            if key in volume:
                                ref = volume[key].get("name") or volume[key].get("claimName")
                                assert (kind, ref) in seen, f"{path.name}: {kind} {ref} comes later"
                    if spec.get("serviceAccountName"):
                        assert ("ServiceAccount", spec["serviceAccountName"]) in seen
                seen.add((doc["kind"], doc["metadata"]["name"]))


# ---- valid for a real cluster -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", APPS)
def test_every_document_validates_against_the_kubernetes_1_31_schemas(name):
    for doc in application(name).documents():
        assert kubernetes_validate.validate(doc, "1.31", strict=True) == "1.31"


@pytest.mark.parametrize("name", APPS)
def test_every_image_is_one_the_twin_registry_holds(name):
    registry = default_registry()
    for _, spec in pod_specs(name):
        for c in [*spec.get("initContainers", ()), *spec["containers"]]:
            image = registry.pull(parse_reference(c["image"]), "amd64")
            assert image.size > 0, c["image"]


# ---- wiring -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", APPS)
def test_workloads_select_their_own_pods_and_services_target_declared_ports(name):
    workloads = list(pod_specs(name))
    for doc, _ in workloads:
        template_labels = doc["spec"]["template"]["metadata"]["labels"]
        assert doc["spec"]["selector"]["matchLabels"].items() <= template_labels.items()
    for svc in docs_of(name, "Service"):
        selected = [(doc, spec) for doc, spec in workloads
                    if svc["spec"]["selector"].items() <= doc["spec"]["template"]["metadata"]["labels"].items()]
        assert len(selected) == 1, svc["metadata"]["name"]
        doc, spec = selected[0]
        assert doc["metadata"]["name"] == svc["metadata"]["name"]
        declared = {(p["containerPort"], p.get("protocol", "TCP")) for c in spec["containers"]
                    for p in c.get("ports") or ()}
        for port in svc["spec"]["ports"]:
            assert (port["targetPort"], port.get("protocol", "TCP")) in declared, (svc["metadata"]["name"], port)


def _service_ports(name: str) -> dict[str, set[int]]:
    return {s["metadata"]["name"]: {p["port"] for p in s["spec"]["ports"]} for s in docs_of(name, "Service")}


def _addresses(container: dict) -> list[tuple[str, str, str]]:
    """(variable, host, port) of every address the environment carries: ``*_ADDR`` values and URLs, and
    ``X_HOST`` with its ``X_PORT``."""
    env = {e["name"]: e.get("value") for e in container.get("env") or ()}
    out = []
    for var, value in env.items():
        if value is None:
            continue
        url = re.fullmatch(r"(?:https?://)?([^/:]*):(\d+)/?", value)
        if url and (var.endswith("_ADDR") or "://" in value):
            out.append((var, url.group(1), url.group(2)))
        if var.endswith("_HOST") and env.get(var[:-len("_HOST")] + "_PORT"):
            out.append((var, value, env[var[:-len("_HOST")] + "_PORT"]))
    return out


@pytest.mark.parametrize("name", APPS)
def test_addresses_in_the_environment_are_services_and_ports_of_the_application(name):
    services = _service_ports(name)
    seen = 0
    for doc, spec in pod_specs(name):
        own_ports = {p["containerPort"] for c in spec["containers"] for p in c.get("ports") or ()}
        for c in spec["containers"]:
            for var, host, port in _addresses(c):
                seen += 1
                if host in OBSERVABILITY_HOSTS:
                    continue
                if host in ("", "0.0.0.0"):  # where it listens itself
                    assert int(port) in own_ports, (doc["metadata"]["name"], var)
                    continue
                assert int(port) in services.get(host, ()), (doc["metadata"]["name"], var, host, port)
    assert seen >= (30 if name == "astronomy-shop" else 1)


def test_the_astronomy_shop_is_the_demo_with_its_labels_containers_and_flags():
    deployments = {d["metadata"]["name"]: d for d in docs_of("astronomy-shop", "Deployment")}
    assert set(deployments) == SHOP_COMPONENTS
    for name, dep in deployments.items():
        pod = dep["spec"]["template"]
        for key in ("app.kubernetes.io/component", "app.kubernetes.io/name", "opentelemetry.io/name"):
            assert pod["metadata"]["labels"][key] == dep["metadata"]["labels"][key] == name
        assert pod["metadata"]["labels"]["app.kubernetes.io/part-of"] == "opentelemetry-demo"
        assert pod["spec"]["serviceAccountName"] == "opentelemetry-demo"
        main = pod["spec"]["containers"][0]
        assert main["name"] == name
        assert main["image"] == {"flagd": "ghcr.io/open-feature/flagd:v0.12.8",
                                 "valkey-cart": "valkey/valkey:8.1.3-alpine"}.get(
            name, f"ghcr.io/open-telemetry/demo:2.1.3-{name}")
        assert main["env"][0] == {"name": "OTEL_SERVICE_NAME", "valueFrom": {"fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.labels['app.kubernetes.io/component']"}}}
        assert "memory" in main["resources"]["limits"]
    assert set(_service_ports("astronomy-shop")) == SHOP_COMPONENTS - {"accounting", "fraud-detection"}
    checkout = {e["name"]: e.get("value") for e in deployments["checkout"]["spec"]["template"]["spec"]
                ["containers"][0]["env"]}
    assert checkout["PRODUCT_CATALOG_ADDR"] == "product-catalog:8080" and checkout["KAFKA_ADDR"] == "kafka:9092"
    assert (checkout["FLAGD_HOST"], checkout["FLAGD_PORT"]) == ("flagd", "8013")
    flag_file = json.loads(docs_of("astronomy-shop", "ConfigMap")[0]["data"]["demo.flagd.json"])
    assert set(flag_file["flags"]) == DEMO_FLAGS
    for flag in flag_file["flags"].values():
        assert flag["state"] == "ENABLED" and flag["defaultVariant"] == "off" and "off" in flag["variants"]


def test_the_hotel_reservation_is_deathstarbench_with_its_containers():
    deployments = {d["metadata"]["name"]: d for d in docs_of("hotel-reservation", "Deployment")}
    assert set(deployments) == HOTEL_COMPONENTS
    for service in ("frontend", "search", "geo", "rate", "profile", "recommendation", "reservation", "user"):
        (c,) = deployments[service]["spec"]["template"]["spec"]["containers"]
        assert (c["name"], c["image"], c["command"]) == (f"hotel-reserv-{service}",
                                                        "deathstarbench/hotel-reservation:latest", [f"./{service}"])
    for svc in ("geo", "profile", "rate", "recommendation", "reservation", "user"):
        (c,) = deployments[f"mongodb-{svc}"]["spec"]["template"]["spec"]["containers"]
        assert c["image"] == "mongo:4.4.6" and c["volumeMounts"][0]["mountPath"] == "/data/db"
    ports = _service_ports("hotel-reservation")
    assert {s: ports[s] for s in ("frontend", "search", "geo", "rate", "profile", "recommendation", "reservation",
                                  "user", "consul")} == {
        "frontend": {5000}, "search": {8082}, "geo": {8083}, "rate": {8084}, "profile": {8081},
        "recommendation": {8085}, "reservation": {8087}, "user": {8086}, "consul": {8300, 8400, 8500, 8600}}
    (wrk,) = deployments["load-generator"]["spec"]["template"]["spec"]["containers"]
    settings = {e["name"]: e["value"] for e in wrk["env"]}
    assert settings["WRK2_TARGET"] == "http://frontend:5000" and int(settings["WRK2_RATE"]) > 0
    assert all(f'"${name}"' in wrk["command"][-1] for name in settings)


# ---- resources --------------------------------------------------------------------------------------------------

def pod_totals(spec: dict) -> dict[str, Fraction]:
    """The pod's effective requests and limits as the scheduler counts them: a request defaults to its limit,
    and init containers count by their largest request."""
    def of(c, kind):
        res = c.get("resources") or {}
        limits = res.get("limits") or {}
        values = {**limits, **(res.get("requests") or {})} if kind == "requests" else limits
        return {r: quantity.value(values[r]) for r in ("cpu", "memory") if r in values}

    out = {}
    for kind in ("requests", "limits"):
        for r in ("cpu", "memory"):
            regular = sum(of(c, kind).get(r, 0) for c in spec["containers"])
            init = max((of(c, kind).get(r, 0) for c in spec.get("initContainers") or ()), default=0)
            out[f"{kind}.{r}"] = max(regular, init)
    return out


def app_totals(name: str) -> dict[str, Fraction]:
    totals: dict[str, Fraction] = {}
    for doc, spec in pod_specs(name):
        for key, amount in pod_totals(spec).items():
            totals[key] = totals.get(key, 0) + amount * doc["spec"].get("replicas", 1)
    return totals


@pytest.mark.parametrize("name", APPS)
def test_each_application_fits_three_nodes_of_8_cpu_and_32_gib(name):
    totals = app_totals(name)
    assert totals["requests.cpu"] <= 3 * 8 and totals["requests.memory"] <= 3 * 32 * 2**30
    largest = max((pod_totals(spec) for _, spec in pod_specs(name)), key=lambda t: t["requests.memory"])
    assert largest["requests.memory"] <= 32 * 2**30 and largest["requests.cpu"] <= 8


def test_resource_totals_are_upstreams():
    shop, hotel = app_totals("astronomy-shop"), app_totals("hotel-reservation")
    assert shop["requests.cpu"] == shop["limits.cpu"] == 0  # the demo caps memory only
    assert shop["requests.memory"] == shop["limits.memory"] == 4630 * 2**20  # 4.52 GiB
    assert (hotel["requests.cpu"], hotel["limits.cpu"]) == (Fraction(19, 10), 19)
    assert hotel["requests.memory"] == hotel["limits.memory"] == 0


# ---- on the twin, through real kubectl -----------------------------------------------------------------------------

@pytest.fixture
def fresh_kubectl(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH; these tests drive the real kubectl binary")
    with Twin(seed=11, nodes=3) as twin:
        yield twin, Kubectl(twin, tmp_path / "admin")


@pytest.mark.kubectl
@pytest.mark.parametrize("name", APPS)
def test_kubectl_client_dry_run_accepts_the_manifest_directory(fresh_kubectl, name):
    _, kubectl = fresh_kubectl
    out = kubectl("apply", "--dry-run=client", "-f", str(application(name).manifests_dir))
    assert out.count("(dry run)") == len(application(name).documents())


@pytest.mark.kubectl
@pytest.mark.parametrize("name", APPS)
def test_applied_with_kubectl_the_application_settles_available(fresh_kubectl, name):
    twin, kubectl = fresh_kubectl
    app = application(name)
    out = kubectl("apply", "--validate=strict", "-f", str(app.manifests_dir))  # fieldValidation=Strict
    assert out.count(" created") == len(app.documents())
    twin.warp(120)
    ns = app.namespace
    deployments = kubectl.run("get", "deployments", "-n", ns, "-o", "json").json()["items"]
    assert len(deployments) == len(docs_of(name, "Deployment"))
    for dep in deployments:
        conditions = {c["type"]: c["status"] for c in dep["status"].get("conditions") or ()}
        assert conditions.get("Available") == "True", dep["metadata"]["name"]
        assert dep["status"].get("availableReplicas") == dep["spec"]["replicas"], dep["metadata"]["name"]
    for pod in kubectl.run("get", "pods", "-n", ns, "-o", "json").json()["items"]:
        assert pod["status"]["phase"] == "Running", pod["metadata"]["name"]
        for status in pod["status"]["containerStatuses"]:
            assert status["ready"], (pod["metadata"]["name"], status["name"])
            # The hotel's MongoDB clients start before their databases and restart once or twice (behaviour.yaml,
            # needs_at_start), as on a real cluster; nothing else restarts.
            restarts = 2 if pod["metadata"]["labels"].get("io.kompose.service") in (
                "geo", "rate", "profile", "recommendation", "reservation", "user") else 0
            assert status["restartCount"] <= restarts, (pod["metadata"]["name"], status["name"])
    for ep in kubectl.run("get", "endpoints", "-n", ns, "-o", "json").json()["items"]:
        assert any(s.get("addresses") for s in ep.get("subsets") or ()), ep["metadata"]["name"]
    for pvc in kubectl.run("get", "pvc", "-n", ns, "-o", "json").json()["items"]:
        assert pvc["status"]["phase"] == "Bound", pvc["metadata"]["name"]
