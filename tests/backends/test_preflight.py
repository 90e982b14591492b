"""Preflight errors, before any work: Docker, kind, helm, the cluster, the marker, room for the applications.
Docker and kind are simulated by fake executables on PATH (this machine has no Docker engine)."""

from __future__ import annotations

import shutil
from fractions import Fraction

import pytest
from kubernetes import client as k8s, config as k8s_config

from pytest_itbench.backends import preflight
from pytest_itbench.backends.kind import check_kind
from pytest_itbench.backends.preflight import Needs, PreflightError


def test_docker_missing_not_running_and_running(fake_bin):
    with pytest.raises(PreflightError, match=r"`docker` is not installed \(not found on PATH\); install Docker"):
        preflight.docker_running()
    fake_bin.add("docker", """\
        echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2
        exit 1
    """)
    with pytest.raises(PreflightError, match=r"Docker is not running: `docker info` failed \(Cannot connect to the "
                                             r"Docker daemon .*\); start the Docker engine"):
        preflight.docker_running()
    fake_bin.add("docker", 'echo "8 16777216000"\n')
    host = preflight.docker_running()
    assert (host.cpus, host.memory) == (8, 16777216000)


def test_kind_missing_too_old_and_recent(fake_bin):
    with pytest.raises(PreflightError, match=r"`kind` is not installed .*install kind v0.29.0 or later"):
        check_kind()
    fake_bin.add("kind", 'echo "kind v0.20.0 go1.20.4 linux/amd64"\n')
    with pytest.raises(PreflightError, match=r"kind v0.20.0 is older than v0.29.0, which the pinned node image "
                                             r"\(kindest/node:v1.31.9\) was built for"):
        check_kind()
    fake_bin.add("kind", 'echo "kind v0.29.0 go1.24.2 linux/amd64"\n')
    assert check_kind() == "kind v0.29.0"


def test_helm_and_testcontainers_missing_say_how_to_install(fake_bin):
    with pytest.raises(PreflightError, match=r"`helm` is not installed .*--itbench-observability=none"):
        preflight.tool("helm", "install Helm 3, or pass --itbench-observability=none")
    with pytest.raises(PreflightError, match=r"pip install 'pytest-itbench\[k3s\]'"):
        preflight.python_package("no_such_module_here", "k3s")


def test_too_little_room_on_docker_states_what_the_applications_need():
    shop = preflight.application_needs("astronomy-shop")
    assert shop.memory == sum(Fraction(m * 2**20) for m in (120, 300, 160, 20, 20, 100, 75, 250, 300, 65, 250, 50,
                                                            600, 1500, 120, 100, 20, 40, 500, 20, 20))
    hotel = preflight.application_needs("hotel-reservation")
    assert hotel.cpu == Fraction(19, 10)  # 19 workloads requesting 100m each
    needs = preflight.needs_of(["astronomy-shop", "hotel-reservation"], preflight.SYSTEM)
    assert needs == Needs(Fraction(29, 10), shop.memory + 2**30)  # the largest of each, plus the system
    with pytest.raises(PreflightError, match=r"Docker has 2 CPUs and 4.0 GiB of memory; the shop needs 2.9 CPUs and "
                                             r"5.5 GiB of memory"):
        preflight.room_on_docker(preflight.DockerHost(2, 4 * 2**30), needs, "the shop")
    preflight.room_on_docker(preflight.DockerHost(8, 16 * 2**30), needs, "the shop")


def test_an_unreachable_cluster_is_named():
    configuration = k8s.Configuration()
    configuration.host = "https://127.0.0.1:1"
    with k8s.ApiClient(configuration) as api:
        with pytest.raises(PreflightError, match=r"cannot reach the cluster of context 'x' \(https://127.0.0.1:1\)"):
            preflight.reachable(api, "context 'x' (https://127.0.0.1:1)")


def test_only_a_cluster_marked_for_benchmarking_is_used(live_twin):
    with k8s_config.new_client_from_config(config_file=live_twin.kubeconfig_path) as api:
        with pytest.raises(PreflightError) as refused:
            preflight.benchmark_allowed(api, "prod", explicit=False, where="context 'prod'")
        message = str(refused.value)
        assert "refusing to run benchmark trials on context 'prod': it is not marked for benchmarking" in message
        assert "--itbench-context=prod" in message and preflight.MARK_COMMAND in message
        assert "named with --itbench-context" in preflight.benchmark_allowed(api, "prod", True, "x")
        assert "contains 'itbench'" in preflight.benchmark_allowed(api, "kind-ITBench-1", False, "x")
        k8s.CoreV1Api(api).patch_namespace("kube-system", {"metadata": {"labels": {
            preflight.BENCHMARK_LABEL: preflight.BENCHMARK_ALLOWED}}})
        assert "kube-system is labelled" in preflight.benchmark_allowed(api, "prod", False, "x")


def test_room_on_an_existing_cluster_counts_schedulable_nodes(live_twin):
    with k8s_config.new_client_from_config(config_file=live_twin.kubeconfig_path) as api:
        preflight.room_on_cluster(api, preflight.needs_of(["astronomy-shop"]), "the shop", "here")
        with pytest.raises(PreflightError, match=r"the schedulable nodes of here have 16.0 CPUs .*; the shop needs "
                                                 r"100.0 CPUs"):
            preflight.room_on_cluster(api, Needs(Fraction(100), Fraction(0)), "the shop", "here")


def test_no_real_docker_is_reached_through_the_fake_path(fake_bin):
    assert shutil.which("docker") is None
