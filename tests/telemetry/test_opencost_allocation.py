"""OpenCost's allocation API on a served twin: an hour of known workloads priced by hand, aggregations, steps and
accumulation, idle, volumes (a Released one still billed), and OpenCost's refusals of bad parameters.

The cluster: two nodes of 8 vCPUs and 32863516Ki; custom pricing as the OpenCost chart's defaults ($1.25 per
vCPU-hour, $0.50 per GiB-hour, $0.25 per GiB-hour of storage); in ``default``: ``web`` (2 replicas, 250m CPU and
512Mi requested, label ``team=frontend``) and ``db`` (100m and 128Mi, ``team=data``, mounting claim ``data`` of
5Gi); in ``shop``: ``api`` (500m and 256Mi, no team); a 10Gi volume whose claim was deleted (Released, Retain).
Every pod runs through the hour looked at, 09:00 to 10:00 of the twin's clock (it starts at 08:00).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

import pytest

from pytest_itbench.twin import Twin

from .monitoring_helpers import START, create, delete
from .opencost_helpers import GIB, MIB, claim, deployment, namespace, pricing_configmap, volume

CPU, RAM, STORAGE = 1.25, 0.5, 0.25  # $ per vCPU-hour, GiB-hour, GiB-hour of storage
HOUR_START = int(START) + 3600
WINDOW = f"{HOUR_START},{HOUR_START + 3600}"
NODE_MEMORY_GIB = 32863516 * 1024 / GIB


@pytest.fixture(scope="module")
def twin():
    with Twin(seed=21, nodes=2, start_time=START, workload=False) as t:
        pricing_configmap(t, {"provider": "custom", "description": "Modified prices based on your internal pricing",
                              "CPU": str(CPU), "RAM": str(RAM), "storage": str(STORAGE), "GPU": "0.95"})
        namespace(t, "shop", {"cost-center": "retail"})
        create(t, deployment("web", replicas=2, requests={"cpu": "250m", "memory": "512Mi"},
                             labels={"team": "frontend"}))
        create(t, volume("data-pv", "5Gi"))
        create(t, claim("data", "5Gi", "data-pv"))
        create(t, deployment("db", requests={"cpu": "100m", "memory": "128Mi"}, labels={"team": "data"}, claim="data"))
        create(t, deployment("api", namespace="shop", requests={"cpu": "500m", "memory": "256Mi"}))
        create(t, volume("orphan", "10Gi"))
        old = create(t, claim("old", "10Gi", "orphan"))
        t.warp(60)
        delete(t, old)  # the volume is Released and kept (Retain)
        t.warp(2 * 3600)  # to 10:01
        yield t


def get(twin: Twin, path: str = "/allocation/compute", **params: str) -> dict:
    url = twin.opencost_url + path + ("?" + urllib.parse.urlencode(params) if params else "")
    with urllib.request.urlopen(url, timeout=60) as response:
        assert response.headers["Content-Type"].startswith("application/json")
        return json.load(response)


def refusal(twin: Twin, **params: str) -> tuple[int, str, str]:
    url = twin.opencost_url + "/allocation/compute?" + urllib.parse.urlencode(params)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(url, timeout=60)
    return refused.value.code, refused.value.headers["Content-Type"], refused.value.read().decode()


def one_set(twin: Twin, **params: str) -> dict:
    body = get(twin, window=WINDOW, **params)
    assert body["code"] == 200 and body["status"] == "success" and len(body["data"]) == 1
    return body["data"][0]


def promql(twin: Twin, query: str, at: float) -> dict[str, float]:
    """An instant query, as {pod: value}."""
    result = twin.monitoring.engine.instant_query(query, at).value.samples
    return {dict(s.labels).get("pod", ""): s.value for s in result}


def test_a_container_hour_is_priced_by_hand(twin):
    allocations = one_set(twin)
    web = {name: a for name, a in allocations.items() if a["properties"].get("container") == "web"}
    assert len(web) == 2
    end = HOUR_START + 3600
    cpu_used = promql(twin, 'rate(container_cpu_usage_seconds_total{container="web"}[1h])', end)
    ram_used = promql(twin, 'avg_over_time(container_memory_working_set_bytes{container="web"}[1h])', end)
    for name, a in web.items():
        pod = a["properties"]["pod"]
        assert name == f"default-cluster/{a['properties']['node']}/default/{pod}/web"
        assert a["window"] == {"start": "2027-01-15T09:00:00Z", "end": "2027-01-15T10:00:00Z"}
        assert (a["start"], a["end"], a["minutes"]) == ("2027-01-15T09:00:00Z", "2027-01-15T10:00:00Z", 60)
        # CPU: the request (250m) exceeds the usage, so a quarter core for one hour at $1.25
        assert a["cpuCoreRequestAverage"] == 0.25 and a["cpuCores"] == 0.25
        assert a["cpuCoreHours"] == 0.25
        assert a["cpuCost"] == pytest.approx(0.25 * 1 * CPU, abs=1e-5)  # 0.3125
        # RAM: 512 MiB = 0.5 GiB for one hour at $0.50
        assert a["ramBytes"] == 512 * MIB and a["ramByteHours"] == 512 * MIB
        assert a["ramCost"] == pytest.approx(0.5 * 1 * RAM, abs=1e-5)  # 0.25
        assert a["totalCost"] == pytest.approx(0.3125 + 0.25, abs=1e-5)
        # Efficiency: usage over request, usage as Prometheus has it over the hour
        assert a["cpuCoreUsageAverage"] == pytest.approx(cpu_used[pod], abs=1e-5)
        assert a["cpuEfficiency"] == pytest.approx(cpu_used[pod] / 0.25, abs=1e-5)
        assert a["ramByteUsageAverage"] == pytest.approx(ram_used[pod], abs=1e-5)
        assert a["ramEfficiency"] == pytest.approx(ram_used[pod] / (512 * MIB), abs=1e-5)
        assert a["totalEfficiency"] == pytest.approx(
            (cpu_used[pod] / 0.25 * 0.3125 + ram_used[pod] / (512 * MIB) * 0.25) / 0.5625, abs=1e-5)
        props = a["properties"]
        assert (props["controller"], props["controllerKind"], props["namespace"]) == ("web", "deployment", "default")
        assert props["labels"]["team"] == "frontend" and props["labels"]["app"] == "web"
        assert props["providerID"] == f"kind://docker/itbench/{props['node']}"


def test_the_costs_agree_with_promql_over_opencost_metrics(twin):
    """cpuCost is the hour's average allocation times the node's average price, as a PromQL query computes it."""
    end = HOUR_START + 3600
    by_pod = promql(twin, 'avg_over_time(container_cpu_allocation{container="web"}[1h]) * on(node) group_left() '
                          'avg_over_time(node_cpu_hourly_cost[1h])', end)
    allocations = one_set(twin)
    for a in allocations.values():
        if a["properties"].get("container") == "web":
            assert a["cpuCost"] == pytest.approx(by_pod[a["properties"]["pod"]], abs=1e-5)


def test_a_mounted_claim_and_a_released_volume_are_billed(twin):
    allocations = one_set(twin)
    db = next(a for a in allocations.values() if a["properties"].get("container") == "db")
    # 5 GiB claimed, one hour at $0.25 per GiB-hour
    assert db["pvCost"] == pytest.approx(5 * 1 * STORAGE, abs=1e-5)
    assert db["pvByteHours"] == 5 * GIB and db["pvBytes"] == 5 * GIB
    assert list(db["pvs"]) == ["cluster=default-cluster:name=data-pv"]
    # The Released volume belongs to no claim: it is charged to __unmounted__, 10 GiB for the hour.
    unmounted = allocations["default-cluster//__unmounted__/__unmounted__/__unmounted__"]
    assert unmounted["pvCost"] == pytest.approx(10 * 1 * STORAGE, abs=1e-5)  # 2.5
    assert unmounted["totalCost"] == pytest.approx(2.5, abs=1e-5)
    assert list(unmounted["pvs"]) == ["cluster=default-cluster:name=orphan"]


def test_aggregate_by_namespace(twin):
    allocations = one_set(twin, aggregate="namespace")
    assert set(allocations) == {"default", "shop", "__unmounted__"}
    default, shop = allocations["default"], allocations["shop"]
    # default: web x 2 (250m, 512Mi) and db (100m, 128Mi, 5Gi claimed)
    assert default["cpuCoreHours"] == pytest.approx(2 * 0.25 + 0.1)
    assert default["cpuCost"] == pytest.approx(0.6 * CPU, abs=1e-5)  # 0.75
    assert default["ramCost"] == pytest.approx((2 * 512 + 128) / 1024 * RAM, abs=1e-5)  # 0.5625
    assert default["totalCost"] == pytest.approx(0.75 + 0.5625 + 5 * STORAGE, abs=1e-5)  # 2.5625
    assert default["cpuCoreRequestAverage"] == pytest.approx(0.6)  # averages add up across containers
    # shop: api (500m, 256Mi)
    assert shop["totalCost"] == pytest.approx(0.5 * CPU + 0.25 * RAM, abs=1e-5)  # 0.75
    assert shop["properties"]["namespaceLabels"] == {"cost_center": "retail", "kubernetes_io_metadata_name": "shop"}
    assert "pod" not in default["properties"] and default["properties"]["namespace"] == "default"


def test_aggregate_by_controller_and_controller_kind(twin):
    allocations = one_set(twin, aggregate="controller")
    assert set(allocations) == {"deployment:web", "deployment:db", "deployment:api", "__unallocated__"}
    assert allocations["deployment:web"]["totalCost"] == pytest.approx(2 * (0.3125 + 0.25), abs=1e-5)  # 1.125
    assert allocations["deployment:db"]["totalCost"] == pytest.approx(0.1 * CPU + 0.125 * RAM + 5 * STORAGE,
                                                                       abs=1e-5)  # 1.4375
    assert allocations["__unallocated__"]["pvCost"] == pytest.approx(2.5, abs=1e-5)  # the unmounted volume
    kinds = one_set(twin, aggregate="controllerKind")
    assert set(kinds) == {"deployment", "__unallocated__"}
    assert kinds["deployment"]["totalCost"] == pytest.approx(1.125 + 1.4375 + 0.75, abs=1e-5)


def test_aggregate_by_label_and_by_several_properties(twin):
    allocations = one_set(twin, aggregate="label:team")
    assert set(allocations) == {"frontend", "data", "__unallocated__"}
    assert allocations["frontend"]["totalCost"] == pytest.approx(1.125, abs=1e-5)
    assert allocations["data"]["totalCost"] == pytest.approx(1.4375, abs=1e-5)
    assert allocations["__unallocated__"]["totalCost"] == pytest.approx(0.75 + 2.5, abs=1e-5)  # api, the volume
    pairs = one_set(twin, aggregate="namespace,label:app")
    assert set(pairs) == {"default/web", "default/db", "shop/api", "__unmounted__/__unallocated__"}
    assert one_set(twin, aggregate="label:cost-center")["retail"]["totalCost"] == pytest.approx(0.75, abs=1e-5)


def test_steps_give_one_set_each_and_accumulate_sums_them(twin):
    body = get(twin, window=WINDOW, aggregate="namespace", step="30m")
    assert len(body["data"]) == 2
    for half in body["data"]:
        assert half["shop"]["minutes"] == 30
        assert half["shop"]["cpuCoreHours"] == pytest.approx(0.25)
        assert half["shop"]["cpuCost"] == pytest.approx(0.25 * CPU, abs=1e-5)
    assert body["data"][1]["shop"]["window"]["start"] == "2027-01-15T09:30:00Z"
    total = get(twin, window=WINDOW, aggregate="namespace", step="30m", accumulate="true")["data"]
    assert len(total) == 1
    assert total[0]["shop"]["minutes"] == 60 and total[0]["shop"]["cpuCoreHours"] == pytest.approx(0.5)
    assert total[0]["shop"]["totalCost"] == pytest.approx(0.75, abs=1e-5)
    assert total[0]["shop"]["window"] == {"start": "2027-01-15T09:00:00Z", "end": "2027-01-15T10:00:00Z"}


def test_idle_is_what_the_nodes_cost_beyond_the_allocations(twin):
    allocations = one_set(twin, aggregate="namespace", includeIdle="true")
    idle = allocations["__idle__"]
    allocated_cpu = 0.75 + 0.625  # default and shop, per the hand computations above
    allocated_ram = 0.5625 + 0.125
    assert idle["cpuCost"] == pytest.approx(2 * 8 * CPU - allocated_cpu, abs=1e-5)  # 18.625
    assert idle["ramCost"] == pytest.approx(2 * NODE_MEMORY_GIB * RAM - allocated_ram, abs=1e-5)
    assert idle["cpuCoreHours"] == 0 and idle["properties"] == {"cluster": "default-cluster"}
    # The older parameter name works too; shareIdle spreads idle over the allocations by their share of cost.
    assert "__idle__" in one_set(twin, aggregate="namespace", idle="true")
    shared = one_set(twin, aggregate="namespace", includeIdle="true", shareIdle="true")
    assert "__idle__" not in shared
    assert shared["shop"]["cpuCost"] == pytest.approx(0.625 + idle["cpuCost"] * 0.625 / allocated_cpu, abs=1e-4)
    assert sum(a["totalCost"] for a in shared.values()) == pytest.approx(
        sum(a["totalCost"] for a in allocations.values()), abs=1e-4)


def test_relative_windows_and_the_alias(twin):
    # At 10:01, "1h" is OpenCost's current hour: 10:00 to 11:00, its end in the future.
    body = get(twin, "/allocation", window="1h", aggregate="cluster")
    (alloc,) = body["data"][0].values()
    assert alloc["name"] == "default-cluster"
    assert alloc["window"] == {"start": "2027-01-15T10:00:00Z", "end": "2027-01-15T11:00:00Z"}


def test_bad_parameters_are_refused_naming_the_parameter(twin):
    code, content_type, text = refusal(twin, window="yesterday-ish")
    assert (code, text) == (400, "Invalid 'window' parameter: illegal window: yesterday-ish\n")
    assert content_type.startswith("text/plain")
    code, _, text = refusal(twin, window=f"{HOUR_START + 3600},{HOUR_START}")
    assert code == 400 and text.startswith("Invalid 'window' parameter: illegal window: [")
    assert refusal(twin, aggregate="namespace")[2].startswith("Invalid 'window' parameter")  # window is required
    assert refusal(twin, window=WINDOW, aggregate="nmespace")[2].startswith("Invalid 'aggregate' parameter: ")
    assert refusal(twin, window=WINDOW, step="soon")[2].startswith("Invalid 'step' parameter: ")
    assert refusal(twin, window=WINDOW, accumulate="yes")[2] == (
        "Invalid 'accumulate' parameter: strconv.ParseBool: parsing \"yes\": invalid syntax\n")


def test_healthz(twin):
    with urllib.request.urlopen(twin.opencost_url + "/healthz", timeout=30) as response:
        assert response.status == 200 and response.read() == b""
