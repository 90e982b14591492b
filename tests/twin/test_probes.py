"""Startup, readiness and liveness probes against the modelled container: results, thresholds, events."""

from __future__ import annotations

import re

import pytest

from pytest_itbench.twin.apiserver.registry import DeleteOptions

from tests.conftest import KUBECTL, Kubectl
from tests.twin.kubelet_helpers import (condition, container, create_pod, events, kubelet_twin, log_text, messages,
                                        pod, pods_resource, status, table_status, warp_until)


def nginx(**probes) -> dict:
    return {"name": "web", "image": "nginx:1.27", "ports": [{"name": "http", "containerPort": 8080}], **probes}


def test_a_readiness_probe_on_a_port_nothing_listens_on_keeps_the_pod_unready():
    with kubelet_twin() as twin:
        create_pod(twin, "web", [nginx(readinessProbe={"httpGet": {"path": "/healthz", "port": 8081},
                                                       "periodSeconds": 5})])
        twin.warp(60)
        assert table_status(twin, "web") == ("0/1", "Running", "0")
        assert status(twin, "web")["phase"] == "Running"
        ready = condition(twin, "web", "Ready")
        assert (ready["status"], ready["reason"], ready["message"]) == (
            "False", "ContainersNotReady", "containers with unready status: [web]")
        ip = status(twin, "web")["podIP"]
        unhealthy = events(twin, "web", "Unhealthy")[0]
        assert unhealthy["message"] == (f'Readiness probe failed: Get "http://{ip}:8081/healthz": dial tcp {ip}:8081: '
                                        "connect: connection refused")
        assert unhealthy["type"] == "Warning" and unhealthy["count"] >= 10
        assert container(twin, "web")["restartCount"] == 0  # readiness never restarts anything


def test_a_readiness_probe_on_a_path_the_server_does_not_serve_fails_with_404_and_a_fixed_pod_is_ready():
    with kubelet_twin() as twin:
        create_pod(twin, "web", [nginx(readinessProbe={"httpGet": {"path": "/status/deep", "port": "http"}})])
        twin.warp(40)
        assert table_status(twin, "web")[0] == "0/1"
        assert messages(twin, "web", "Unhealthy") == ["Readiness probe failed: HTTP probe failed with statuscode: 404"]
        assert '"GET /status/deep HTTP/1.1" 404 153 "-" "kube-probe/1.31"' in log_text(twin, "web", "web")

        # The repair a Deployment rollout makes: a new pod with a probe the server answers.
        twin.api.delete(pods_resource(twin), "default", "web", DeleteOptions(), twin.admin_ctx)
        warp_until(twin, lambda: pod(twin, "web") is None, 40)
        create_pod(twin, "web", [nginx(readinessProbe={"httpGet": {"path": "/healthz", "port": "http"}})])
        warp_until(twin, lambda: table_status(twin, "web")[0] == "1/1", 30)
        assert condition(twin, "web", "Ready")["status"] == "True"


def test_readiness_waits_for_the_initial_delay_and_the_success_threshold():
    with kubelet_twin() as twin:
        create_pod(twin, "slow", [nginx(readinessProbe={"tcpSocket": {"port": 8080}, "initialDelaySeconds": 30,
                                                        "periodSeconds": 5, "successThreshold": 3})])
        became_ready = warp_until(twin, lambda: condition(twin, "slow", "Ready").get("status") == "True", 90)
        # The first check is 30 s after the start, the third success 10 s later.
        assert 40 <= became_ready <= 50
        assert messages(twin, "slow", "Unhealthy") == []


def test_a_failing_liveness_probe_restarts_the_container():
    with kubelet_twin() as twin:
        create_pod(twin, "live", [nginx(livenessProbe={"httpGet": {"path": "/", "port": 9999}, "periodSeconds": 5,
                                                       "failureThreshold": 3})])
        warp_until(twin, lambda: container(twin, "live").get("restartCount", 0) >= 2, 120)
        assert "Container web failed liveness probe, will be restarted" in messages(twin, "live", "Killing")
        last = container(twin, "live")["lastState"]["terminated"]
        assert (last["exitCode"], last["reason"]) == (0, "Completed")  # nginx exits cleanly on SIGTERM
        unhealthy = messages(twin, "live", "Unhealthy")
        assert unhealthy and unhealthy[0].startswith('Liveness probe failed: Get "http://')
        assert unhealthy[0].endswith(":9999: connect: connection refused")
        twin.warp(300)
        assert table_status(twin, "live")[1] in ("Running", "CrashLoopBackOff")
        assert container(twin, "live")["restartCount"] >= 4


def test_the_documented_exec_liveness_example_restarts_after_the_file_goes():
    with kubelet_twin() as twin:
        create_pod(twin, "liveness-exec", [{
            "name": "liveness", "image": "busybox:1.36",
            "args": ["/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"],
            "livenessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "initialDelaySeconds": 5,
                              "periodSeconds": 5}}])
        twin.warp(30)
        assert messages(twin, "liveness-exec", "Unhealthy") == []
        warp_until(twin, lambda: container(twin, "liveness-exec").get("restartCount") == 1, 60)
        assert messages(twin, "liveness-exec", "Unhealthy")[0] == \
            "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory\n"
        last = container(twin, "liveness-exec")["lastState"]["terminated"]
        assert (last["exitCode"], last["reason"]) == (137, "Error")  # sleep ignores SIGTERM: killed after the grace


def test_a_startup_probe_holds_back_the_other_probes_and_restarts_a_container_that_never_starts():
    with kubelet_twin() as twin:
        create_pod(twin, "starting", [nginx(
            startupProbe={"httpGet": {"path": "/", "port": 8080}, "periodSeconds": 5, "failureThreshold": 10},
            livenessProbe={"httpGet": {"path": "/", "port": 8080}})])
        create_pod(twin, "never", [nginx(startupProbe={"tcpSocket": {"port": 7777}, "periodSeconds": 2,
                                                       "failureThreshold": 3})])
        warp_until(twin, lambda: container(twin, "starting").get("started") is True, 30)
        assert container(twin, "starting")["ready"]
        warp_until(twin, lambda: container(twin, "never").get("restartCount", 0) >= 1, 60)
        assert "Container web failed startup probe, will be restarted" in messages(twin, "never", "Killing")
        assert container(twin, "never")["started"] is False
        assert all(m.startswith("Startup probe failed: dial tcp ") for m in messages(twin, "never", "Unhealthy"))


def test_grpc_probes_and_named_ports():
    with kubelet_twin() as twin:
        ad = {"name": "ad", "image": "ghcr.io/open-telemetry/demo:1.12.0-adservice",
              "ports": [{"name": "grpc", "containerPort": 9555}]}
        create_pod(twin, "ad", [dict(ad, readinessProbe={"grpc": {"port": 9555}, "periodSeconds": 5})])
        create_pod(twin, "wrong", [dict(ad, readinessProbe={"grpc": {"port": 9556}, "periodSeconds": 5})])
        create_pod(twin, "typo", [dict(ad, readinessProbe={"tcpSocket": {"port": "grcp"}, "periodSeconds": 5})])
        twin.warp(40)
        assert table_status(twin, "ad")[0] == "1/1"
        ip = status(twin, "wrong")["podIP"]
        assert messages(twin, "wrong", "Unhealthy") == [
            f'Readiness probe failed: timeout: failed to connect service "{ip}:9556" within 1s: context deadline '
            f'exceeded']
        assert messages(twin, "typo", "Unhealthy") == [
            'Readiness probe errored and resulted in unknown state: strconv.Atoi: parsing "grcp": invalid syntax']


def test_probes_that_keep_passing_write_nothing():
    with kubelet_twin() as twin:
        create_pod(twin, "steady", [nginx(readinessProbe={"httpGet": {"path": "/healthz", "port": 8080},
                                                          "periodSeconds": 1},
                                          livenessProbe={"tcpSocket": {"port": 8080}, "periodSeconds": 1})])
        twin.warp(30)
        version = pod(twin, "steady")["metadata"]["resourceVersion"]
        events_before = twin.store.count("events")
        twin.warp(120)
        assert pod(twin, "steady")["metadata"]["resourceVersion"] == version
        assert twin.store.count("events") == events_before


@pytest.mark.kubectl
def test_kubectl_describe_shows_unhealthy_probes(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH")
    with kubelet_twin(serve=True) as twin:
        kubectl = Kubectl(twin, tmp_path / "admin")
        create_pod(twin, "web", [nginx(readinessProbe={"httpGet": {"path": "/healthz", "port": 8081},
                                                       "periodSeconds": 5})])
        twin.warp(60)
        assert kubectl("get", "pod", "web", "--no-headers").split()[1:3] == ["0/1", "Running"]
        described = kubectl("describe", "pod", "web")
        assert re.search(r"Warning\s+Unhealthy\s+\S+ \(x\d+ over \S+\)\s+kubelet\s+Readiness probe failed: Get "
                         r"\"http://10\.244\.1\.\d+:8081/healthz\": dial tcp", described)
        assert re.search(r"Ready\s+False", described)
