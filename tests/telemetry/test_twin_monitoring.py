"""The twin serves Prometheus and Alertmanager: failing Deployments raise the shipped alerts over the HTTP APIs,
a repair clears them, and nothing is left behind when the twin stops."""

from __future__ import annotations

import json
import socket
import threading
import urllib.parse
import urllib.request

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin.cluster import TwinError

from .monitoring_helpers import START, create


def get(url: str, path: str, **params: str):
    query = ("?" + urllib.parse.urlencode(params)) if params else ""
    with urllib.request.urlopen(url + path + query, timeout=30) as response:
        return json.load(response)


def deployment(name: str, image: str, command: list[str] | None = None, **container_fields) -> dict:
    container = {"name": name, "image": image, **({"command": command} if command else {}), **container_fields}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}}}


def patch_container(twin: Twin, name: str, **fields) -> None:
    res = twin.api.catalog.lookup("apps", "v1", "deployments")
    obj = twin.api.get(res, "default", name)
    obj["spec"]["template"]["spec"]["containers"][0].update(fields)
    twin.api.update(res, "default", name, obj, twin.admin_ctx)


def prometheus_alerts(twin: Twin) -> set[tuple[str, str]]:
    alerts = get(twin.prometheus_url, "/api/v1/alerts")["data"]["alerts"]
    return {(a["labels"]["alertname"], a["state"]) for a in alerts if a["labels"].get("namespace") == "default"}


def alertmanager_alerts(twin: Twin) -> set[str]:
    return {a["labels"]["alertname"] for a in get(twin.alertmanager_url, "/api/v2/alerts")
            if a["labels"].get("namespace") == "default"}


WATCHED = {"KubePodCrashLooping", "KubePodNotReady", "KubeContainerWaiting"}


@pytest.fixture
def failing():
    """A served twin with a crash-looping Deployment and one whose container reads a Secret that does not exist.

    (A missing image would do too, but its waiting reason alternates between ImagePullBackOff and ErrImagePull,
    and each change restarts KubeContainerWaiting's five minutes, on the twin as on a cluster.)
    """
    with Twin(seed=2, nodes=2, start_time=START) as twin:
        create(twin, deployment("crasher", "busybox:1.36", ["sh", "-c", "exit 1"]))
        create(twin, deployment("configless", "nginx:1.27", env=[
            {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}]))
        yield twin


def test_the_alerts_go_pending_then_firing_and_clear_after_the_repair(failing):
    twin = failing
    twin.warp(90)
    # The crash loop's container is waiting between its restarts only: a scrape that finds it running ends its
    # waiting series (a stale marker), so the reasons are read over the last minute.
    reasons = {r["metric"]["reason"] for r in get(
        twin.prometheus_url, "/api/v1/query",
        query="last_over_time(kube_pod_container_status_waiting_reason[1m])")["data"]["result"]}
    assert reasons == {"CrashLoopBackOff", "CreateContainerConfigError"}
    assert {name for name, state in prometheus_alerts(twin) if state == "pending"} >= WATCHED
    assert alertmanager_alerts(twin) & WATCHED == set()  # pending alerts are not sent
    twin.warp(300)
    assert {name for name, state in prometheus_alerts(twin) if state == "firing"} >= WATCHED
    assert alertmanager_alerts(twin) >= WATCHED
    crash = [a for a in get(twin.alertmanager_url, "/api/v2/alerts", filter='alertname="KubePodCrashLooping"')]
    assert crash[0]["labels"]["container"] == "crasher" and crash[0]["status"]["state"] == "active"
    assert crash[0]["labels"]["prometheus"] == "prometheus/prometheus-kube-prometheus-prometheus"

    patch_container(twin, "crasher", command=["sh", "-c", "sleep 86400"])
    create(twin, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "default"},
                  "stringData": {"password": "s3cret"}})
    twin.warp(60)
    assert {name for name, _ in prometheus_alerts(twin)} & WATCHED == {"KubePodCrashLooping"}
    twin.warp(300)  # KubePodCrashLooping takes max_over_time over 5 minutes: it clears 5 minutes after the crashes
    assert {name for name, _ in prometheus_alerts(twin)} & WATCHED == set()
    assert alertmanager_alerts(twin) & WATCHED == set()


def test_queries_and_rules_answer_from_scraped_data(failing):
    twin = failing
    twin.warp(390)
    ready = get(twin.prometheus_url, "/api/v1/query", query='sum(kube_deployment_spec_replicas{namespace="default"})')
    assert ready["data"]["result"][0]["value"][1] == "2"
    targets = get(twin.prometheus_url, "/api/v1/query", query="count by (job) (up == 1)")["data"]["result"]
    assert {r["metric"]["job"]: r["value"][1] for r in targets} == {"kube-state-metrics": "1", "kubelet": "2",
                                                                         "opencost": "1"}
    cpu = get(twin.prometheus_url, "/api/v1/query_range", query='sum(rate(container_cpu_usage_seconds_total'
              '{namespace="kube-system", container!=""}[1m]))', start=str(START + 120), end=str(twin.clock.now()),
              step="15")
    assert cpu["status"] == "success"
    metadata = get(twin.prometheus_url, "/api/v1/metadata", metric="kube_pod_info")["data"]
    assert metadata == {"kube_pod_info": [{"type": "gauge", "help": "[STABLE] Information about pod.", "unit": ""}]}
    groups = get(twin.prometheus_url, "/api/v1/rules")["data"]["groups"]
    rules = [rule for group in groups for rule in group["rules"]]
    assert len({rule["name"] for rule in rules}) == 13 and all(rule["health"] == "ok" for rule in rules), \
        [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
    for rule in rules:  # every shipped expression runs against the twin's series
        assert get(twin.prometheus_url, "/api/v1/query", query=rule["query"])["status"] == "success"
    assert groups[0]["file"].startswith("/etc/prometheus/rules/")


def test_stopping_the_twin_closes_its_ports_and_threads():
    before = {t.ident for t in threading.enumerate()}
    twin = Twin(seed=1, nodes=1, start_time=START).start()
    ports = [urllib.parse.urlsplit(url).port for url in (twin.prometheus_url, twin.alertmanager_url)]
    twin.warp(30)
    assert get(twin.prometheus_url, "/api/v1/query", query="up")["data"]["result"]
    assert get(twin.alertmanager_url, "/api/v2/status")["cluster"]["status"] == "disabled"
    twin.stop()
    for port in ports:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
    assert {t.ident for t in threading.enumerate()} <= before
    with pytest.raises(TwinError, match="not serving"):
        twin.prometheus_url


def test_detached_monitoring_scrapes_and_evaluates_no_more():
    twin = Twin(seed=1, nodes=1, start_time=START)
    twin.warp(30)
    samples = twin.tsdb.stats()["samples"]
    twin.monitoring.detach()
    twin.warp(60)
    assert twin.tsdb.stats()["samples"] == samples
    assert all(g.last_evaluation is None or g.last_evaluation <= START + 30 for g in twin.rules.rule_groups())


def test_a_twin_without_telemetry():
    with Twin(seed=1, nodes=1, telemetry=False) as twin:
        assert twin.monitoring is None and twin.tsdb is None and twin.rules is None and twin.alertmanager is None
        with pytest.raises(TwinError, match="without telemetry"):
            twin.prometheus_url
        twin.warp(30)


def test_the_same_seed_gives_the_same_telemetry():
    def run() -> list:
        twin = Twin(seed=9, nodes=2, start_time=START)
        create(twin, deployment("crasher", "busybox:1.36", ["sh", "-c", "exit 1"]))
        create(twin, deployment("web", "nginx:1.27"))
        twin.warp(300)
        result = twin.monitoring.engine.range_query('{__name__=~".+"}', START, twin.clock.now(), 15).value
        twin.stop()
        return [(s.labels, s.points) for s in result.series]

    first, second = run(), run()
    assert len(first) > 200 and first == second
