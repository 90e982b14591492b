"""The scheduled-chaos-mesh-experiment fault, one experiment kind at a time, on settled twins.

Each case creates the Schedule through the official client, warps until the alert the kind raises fires (within
the bound a trial allows), removes the fault and warps until every alert has cleared: the Schedule and every
experiment it spawned are gone. The shop serves most kinds; the hotel reservation serves the two the shop cannot
show: CPU stress (its containers have a CPU limit to outgrow) and IO latency (its MongoDBs have a data volume).
One twin per application serves every case, as each removal leaves it healthy.
"""

from __future__ import annotations

import pytest
from kubernetes import client as k8s, config
from pydantic import ValidationError

from pytest_itbench.faults import FaultRecord, get
from pytest_itbench.faults.chaos import PLURALS
from pytest_itbench.scenario.schema import ObjectRef

from ..workload.hotel import NAMESPACE as HOTEL, hotel_twin
from ..workload.shop import NAMESPACE as SHOP, shop_twin

FAULT = "scheduled-chaos-mesh-experiment"
GROUP, VERSION = "chaos-mesh.org", "v1alpha1"
STEP, FIRE_WITHIN, CLEAR_WITHIN = 15, 900, 900  # simulated seconds


def shop_pods(app: str) -> dict:
    return {"labelSelectors": {"opentelemetry.io/name": app}}


def hotel_pods(app: str) -> dict:
    return {"labelSelectors": {"io.kompose.service": app}}


SHOP_CASES = {
    "network-delay": {"type": "NetworkChaos", "networkChaos": {
        "action": "delay", "selector": shop_pods("product-catalog"), "delay": {"latency": "2s"}}},
    "network-loss": {"type": "NetworkChaos", "networkChaos": {
        "action": "loss", "selector": shop_pods("currency"), "loss": {"loss": "100"}}},
    "network-partition": {"type": "NetworkChaos", "networkChaos": {
        "action": "partition", "selector": shop_pods("shipping"), "direction": "to",
        "target": {"selector": shop_pods("quote")}}},
    "pod-failure": {"type": "PodChaos", "podChaos": {"action": "pod-failure", "selector": shop_pods("payment")}},
    "http-abort": {"type": "HTTPChaos", "httpChaos": {
        "selector": shop_pods("quote"), "port": 8080, "method": "POST", "path": "/getquote", "abort": True}},
    "http-body-patch": {"type": "HTTPChaos", "httpChaos": {
        "selector": shop_pods("email"), "port": 8080, "method": "POST", "path": "*",
        "patch": {"body": {"type": "JSON", "value": '{"email": "12345", "order": "error body"}'}}}},
    "jvm-return": {"type": "JVMChaos", "jvmChaos": {
        "action": "return", "selector": shop_pods("ad"), "class": "oteldemo.AdService", "method": "getAds",
        "returnValue": "null"}},
    "jvm-heap": {"type": "JVMChaos", "jvmChaos": {"action": "stress", "selector": shop_pods("ad"), "memType": "heap"}},
    "stress-memory": {"type": "StressChaos", "stressChaos": {
        "selector": shop_pods("recommendation"), "duration": "55s",
        "stressors": {"memory": {"workers": 4, "size": "100%"}}}},
}
HOTEL_CASES = {
    "stress-cpu": {"type": "StressChaos", "stressChaos": {
        "selector": hotel_pods("geo"), "duration": "55s", "stressors": {"cpu": {"workers": 4, "load": 100}}}},
    "io-latency": {"type": "IOChaos", "ioChaos": {
        "action": "latency", "selector": hotel_pods("mongodb-reservation"), "volumePath": "/data/db",
        "path": "/data/db/**/*", "delay": "2s"}},
}


class Cluster:
    """A settled twin served over HTTP, and the official client on it as the cluster admin."""

    def __init__(self, twin, namespace: str, tmp):
        self.twin, self.namespace = twin, namespace
        twin.warp(300)  # the rules' rate windows fill with healthy traffic
        twin.start()
        configuration = k8s.Configuration()
        config.load_kube_config(config_file=twin.write_kubeconfig(tmp / "kubeconfig"),
                                client_configuration=configuration)
        self.api = k8s.ApiClient(configuration)
        assert self.firing() == set()

    def firing(self) -> set[str]:
        result = self.twin.monitoring.engine.instant_query(
            f'ALERTS{{alertstate="firing", severity!="info", namespace="{self.namespace}"}}', self.twin.clock.now()).value.to_json()
        return {s["metric"]["alertname"] for s in result}

    def warp_until(self, done, within: float) -> float:
        waited = 0.0
        while not done() and waited < within:
            self.twin.warp(STEP)
            waited += STEP
        return waited

    def custom(self, plural: str) -> list[dict]:
        return k8s.CustomObjectsApi(self.api).list_namespaced_custom_object(
            GROUP, VERSION, self.namespace, plural)["items"]

    def close(self):
        self.api.close()
        self.twin.stop()


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    cluster = Cluster(shop_twin(telemetry=True), SHOP, tmp_path_factory.mktemp("shop"))
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def hotel(tmp_path_factory):
    cluster = Cluster(hotel_twin(telemetry=True), HOTEL, tmp_path_factory.mktemp("hotel"))
    yield cluster
    cluster.close()


def record(namespace: str, name: str, spec: dict) -> FaultRecord:
    target = ObjectRef(kind="Schedule", apiVersion=f"{GROUP}/{VERSION}", namespace=namespace, name=name)
    return FaultRecord(FAULT, target, get(FAULT).check(target, {"scheduleSpec": spec}))


def inject_see_alert_remove_see_clear(cluster: Cluster, name: str, spec: dict) -> None:
    fault, rec = get(FAULT), record(cluster.namespace, name, spec)
    expected = set(fault.alerts_for(rec.args))
    assert expected, f"{name}: the fault names no alert for {spec['type']}"
    fault.inject(cluster.api, rec)
    fault.inject(cluster.api, rec)  # idempotent: still one Schedule
    schedules = [s for s in cluster.custom("schedules") if s["metadata"]["name"] == name]
    assert len(schedules) == 1
    assert {k: schedules[0]["spec"][k] for k in ("schedule", "concurrencyPolicy", "historyLimit", "type")} == \
        {"schedule": "* * * * *", "concurrencyPolicy": "Forbid", "historyLimit": 1, "type": spec["type"]}

    waited = cluster.warp_until(lambda: expected <= cluster.firing(), FIRE_WITHIN)
    assert expected <= cluster.firing(), f"{name}: {sorted(expected)} did not fire within {waited:.0f} s " \
                                         f"(firing: {sorted(cluster.firing())})"
    plural = PLURALS[spec["type"]]
    spawned = [c for c in cluster.custom(plural) if c["metadata"]["labels"].get("managed-by") == name]
    assert spawned, f"{name}: the Schedule spawned no {spec['type']}"

    fault.remove(cluster.api, rec)
    fault.remove(cluster.api, rec)  # nothing left to remove
    waited = cluster.warp_until(lambda: not cluster.firing(), CLEAR_WITHIN)
    assert cluster.firing() == set(), f"{name}: still firing {waited:.0f} s after removal: {sorted(cluster.firing())}"
    assert not [s for s in cluster.custom("schedules") if s["metadata"]["name"] == name]
    assert not [c for c in cluster.custom(plural) if c["metadata"]["labels"].get("managed-by") == name]


@pytest.mark.parametrize("case", SHOP_CASES)
def test_each_kind_on_the_shop(shop, case):
    inject_see_alert_remove_see_clear(shop, f"chaos-{case}", SHOP_CASES[case])


@pytest.mark.parametrize("case", HOTEL_CASES)
def test_each_kind_on_the_hotel(hotel, case):
    inject_see_alert_remove_see_clear(hotel, f"chaos-{case}", HOTEL_CASES[case])


def test_cpu_stress_without_a_cpu_limit_raises_nothing(shop):
    """The shop's frontend has no CPU limit and its node has cores to spare: the stressor slows nothing."""
    fault = get(FAULT)
    rec = record(SHOP, "frontend-cpu", {"type": "StressChaos", "stressChaos": {
        "selector": shop_pods("frontend"), "duration": "55s", "stressors": {"cpu": {"workers": 2, "load": 100}}}})
    fault.inject(shop.api, rec)
    shop.twin.warp(420)
    assert shop.firing() == set()
    fault.remove(shop.api, rec)
    shop.twin.warp(60)


@pytest.mark.parametrize("spec, words", [
    ({"type": "NetworkChaos", "networkChaos": {"action": "delay", "selector": shop_pods("cart")}}, "needs delay"),
    ({"type": "NetworkChaos", "networkChaos": {"action": "delay", "selector": shop_pods("cart"),
                                               "delay": {"latency": "2 seconds"}}}, "not a Go duration"),
    ({"type": "HTTPChaos", "httpChaos": {"selector": shop_pods("quote"), "port": 8080}}, "exactly one of abort"),
    ({"type": "JVMChaos", "jvmChaos": {"action": "return", "selector": shop_pods("ad"), "class": "AdService",
                                       "method": "getAds"}}, "needs returnValue"),
    ({"type": "StressChaos", "stressChaos": {"selector": shop_pods("ad"), "stressors": {}}}, "cpu or a memory"),
    ({"type": "PodChaos", "podChaos": {"action": "pod-kill", "selector": shop_pods("ad")}}, "pod-failure"),
    ({"type": "DNSChaos", "dnsChaos": {}}, "does not match any of the expected tags"),
])
def test_invalid_schedule_specs_are_refused_with_the_reason(spec, words):
    with pytest.raises(ValidationError, match=words):
        record(SHOP, "invalid", spec)


def test_the_target_is_a_schedule_with_a_short_name():
    fault = get(FAULT)
    spec = {"scheduleSpec": SHOP_CASES["pod-failure"]}
    with pytest.raises(ValueError, match="acts on Schedule"):
        fault.check(ObjectRef(kind="Deployment", namespace=SHOP, name="payment"), spec)
    with pytest.raises(ValueError, match="at most 57"):
        fault.check(ObjectRef(kind="Schedule", namespace=SHOP, name="x" * 58), spec)
