"""Noise during a trial (issue 17, items 2 and 3), played through the official client on a twin with an application
deployed as the harness deploys it: each kind shows in the signals a real one shows in, an hour of heavy noise
fires none of the catalog's expected alerts, and the same seed gives the same noise and the same telemetry."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from kubernetes import client as k8s, config

from pytest_itbench.apps.catalog import application
from pytest_itbench.apps.deploy import deploy
from pytest_itbench.apps.history import make_history
from pytest_itbench.noise import Noise
from pytest_itbench.noise.kinds import CHAOS_NAMESPACE
from pytest_itbench.run import BASELINE_WARMUP
from pytest_itbench.twin import Twin

from ..apps.test_background import START, expected_alerts

HOUR = 3600.0
NO_INCIDENT = SimpleNamespace(ground_truth={}, faults=())


class Deployed:
    def __init__(self, app: str, seed: int, workdir):
        self.app = application(app)
        self.ns = self.app.namespace
        self.twin = Twin(seed=seed, nodes=3, start_time=START, telemetry=True).start()
        self.api = config.new_client_from_config(self.twin.write_kubeconfig(workdir / "kubeconfig"))
        deploy(self.api, self.app, self.twin.warp)
        make_history(self.api, self.app, self.twin.warp)
        self.twin.warp(BASELINE_WARMUP)

    def play(self, level: str, seed: int, scenario=NO_INCIDENT) -> Noise:
        noise = Noise(level, seed, self.ns, scenario)
        noise.before_fault(self.api, self.twin.clock.now, self.twin.warp, self.twin.topology_url)
        return noise

    def query(self, promql: str) -> list[dict]:
        return self.twin.monitoring.engine.instant_query(promql, self.twin.clock.now()).value.to_json()

    def stop(self) -> None:
        self.twin.stop()


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    deployed = Deployed("astronomy-shop", 21, tmp_path_factory.mktemp("shop"))
    yield deployed
    deployed.stop()


def _of(noise: Noise, kind: str) -> list[dict]:
    return [r for r in noise.records if r["kind"] == kind]


def test_heavy_noise_plays_every_kind_on_bystanders_only(shop):
    groups = [{"kind": "Deployment", "namespace": shop.ns, "filter": ["^product-catalog$"]}]
    scenario = SimpleNamespace(ground_truth={"groups": groups}, faults=())
    seen: set[str] = set()
    for seed in range(4):
        noise = shop.play("heavy", seed, scenario)
        seen |= {r["kind"] for r in noise.records}
        targets = {r["target"].split("/", 1)[1] for r in noise.records}
        # Never the culprit, its callers (the frontends and checkout call the catalog), a store or the load.
        assert not targets & {"product-catalog", "frontend", "frontend-proxy", "checkout", "recommendation",
                              "load-generator", "valkey-cart", "postgresql", "kafka"}, noise.records
        assert not any(t.startswith(("product-catalog-", "frontend-", "valkey-cart-")) for t in targets)
        noise.close(shop.api)
    assert seen == {"rollout", "configmap", "autoscaler", "eviction", "network"}


def _client_p50(shop, service: str, since: float, until: float | None = None) -> float | None:
    """The highest median, over 15 s steps from ``since`` to ``until`` (now), of the client spans that call
    ``service``."""
    name = "(?i).*" + service.replace("-", "-?") + ".*"
    until = shop.twin.clock.now() if until is None else until
    found = shop.twin.monitoring.engine.instant_query(
        f'max_over_time((histogram_quantile(0.5, sum by (le) (rate(traces_span_metrics_duration_'
        f'milliseconds_bucket{{namespace="{shop.ns}", span_kind="SPAN_KIND_CLIENT", span_name=~"{name}"'
        f'}}[1m]))))[{until - since:.0f}s:15s])', until).value.to_json()
    return float(found[0]["value"][1]) / 1000 if found and found[0]["value"][1] != "NaN" else None


def test_each_kind_shows_in_its_signals(shop):
    core, apps = k8s.CoreV1Api(shop.api), k8s.AppsV1Api(shop.api)
    for seed in range(10, 40):  # a round that played all five, with a latency blip on a service that has callers
        before = shop.twin.clock.now()
        noise = shop.play("heavy", seed)
        blips = _of(noise, "network")
        if len(noise.records) == 5 and "latency" in blips[0]["detail"] and \
                _client_p50(shop, blips[0]["target"].split("/", 1)[1], before - 600) is not None:
            break
        noise.close(shop.api)
    else:
        pytest.fail("no round of heavy noise played all five kinds")
    started = min(r["at"] for r in noise.records)
    events = core.list_namespaced_event(shop.ns).items
    shop.twin.warp(60)  # the blip goes on for a minute or more

    blip = blips[0]
    service = blip["target"].split("/", 1)[1]
    added = int(blip["detail"].split(" ", 1)[0]) / 1000
    assert _client_p50(shop, service, started) >= added * 0.8, blip  # its callers waited for it
    assert _client_p50(shop, service, before - 900, before) < added * 0.5  # and did not before
    experiment = k8s.CustomObjectsApi(shop.api).get_namespaced_custom_object(
        "chaos-mesh.org", "v1alpha1", CHAOS_NAMESPACE, "networkchaos", blip["object"].split("/")[-1])
    assert experiment["spec"]["selector"]["namespaces"] == [shop.ns]

    rollout = _of(noise, "rollout")[0]["target"].split("/", 1)[1]
    revision = apps.read_namespaced_deployment(rollout, shop.ns).metadata.annotations[
        "deployment.kubernetes.io/revision"]
    assert int(revision) >= 2
    assert any(e.reason == "ScalingReplicaSet" and e.involved_object.name == rollout for e in events)
    owned = [rs for rs in apps.list_namespaced_replica_set(shop.ns).items
             if any(o.name == rollout for o in rs.metadata.owner_references or ())]
    assert sum(1 for rs in owned if rs.spec.replicas) == 1 and len(owned) >= 2

    edited = _of(noise, "configmap")[0]
    key = edited["detail"].rsplit(" ", 1)[1]
    assert key in core.read_namespaced_config_map(edited["target"].split("/", 1)[1], shop.ns).data

    evicted = _of(noise, "eviction")[0]["target"].split("/", 1)[1]
    assert all(p.metadata.name != evicted for p in core.list_namespaced_pod(shop.ns).items)
    assert any(e.involved_object.name == evicted and e.reason == "Killing" for e in events)

    scaled = _of(noise, "autoscaler")[0]["target"].split("/", 1)[1]
    shop.twin.warp(300)
    assert any(e.reason == "SuccessfulRescale" and e.involved_object.name == scaled
               for e in core.list_namespaced_event(shop.ns).items)
    replicas = shop.query(f'kube_deployment_spec_replicas{{namespace="{shop.ns}", deployment="{scaled}"}}')
    assert float(replicas[0]["value"][1]) >= 2
    noise.close(shop.api)


@pytest.mark.parametrize("app", ["astronomy-shop", "hotel-reservation"])
def test_an_hour_of_heavy_noise_fires_no_expected_alert(app, tmp_path):
    deployed = Deployed(app, 31, tmp_path)
    try:
        begun = deployed.twin.clock.now()
        played = []
        for round_ in range(6):
            noise = deployed.play("heavy", 100 + round_)
            played += noise.records
            deployed.twin.warp(max(0.0, begun + (round_ + 1) * HOUR / 6 - deployed.twin.clock.now()))
        assert {r["kind"] for r in played} >= {"rollout", "eviction", "network"}
        expected = "|".join(sorted(expected_alerts(app)))
        fired = deployed.query(f'max_over_time(ALERTS{{alertstate="firing", namespace="{deployed.ns}", '
                               f'alertname=~"{expected}"}}[{deployed.twin.clock.now() - begun:.0f}s])')
        assert fired == [], f"{app}: {[s['metric'] for s in fired]} after {played}"
    finally:
        deployed.stop()


def test_same_seed_same_noise_and_telemetry(tmp_path):
    def run(seed: int, where) -> tuple:
        where.mkdir()
        d = Deployed("hotel-reservation", 4, where)
        try:
            noise = d.play("heavy", seed)
            d.twin.warp(300)
            series = sorted((k.service_name, k.span_name, k.status_code, round(s.calls, 6), tuple(s.bucket_counts))
                            for k, s in d.twin.workload.span_series().items() if k.namespace == d.ns)
            return noise.records, series
        finally:
            d.stop()

    first, again, other = run(7, tmp_path / "a"), run(7, tmp_path / "b"), run(8, tmp_path / "c")
    assert first == again
    assert first[0] != other[0]
