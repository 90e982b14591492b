"""Time on a cluster the harness cannot warp: wall time on a real cluster, the advertised scale on a twin."""

from __future__ import annotations

import time

import pytest
from kubernetes import client as k8s, config as k8s_config

from pytest_itbench.backends import cluster_clock
from pytest_itbench.backends.base import BackendError
from pytest_itbench.twin.clock import SimClock
from pytest_itbench.twin.time_advert import NAME, NAMESPACE, advertise


def api_of(twin):
    return k8s_config.new_client_from_config(config_file=twin.kubeconfig_path)


def test_a_cluster_without_the_advert_runs_on_wall_time_and_waits_it_out(live_twin, monkeypatch):
    with api_of(live_twin) as api:
        clock = cluster_clock.read(api, "here")
    assert clock.scale == 1.0 and abs(clock.now() - time.time()) < 0.5
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    clock.wait(15)
    assert slept == [15]


def test_a_scaled_twin_is_waited_for_one_scale_th_as_long_and_read_on_its_own_clock(live_twin, monkeypatch):
    live_twin.clock.stop_following()
    live_twin.clock.follow_wall_time(40)
    advertise(live_twin, 40)
    with api_of(live_twin) as api:
        clock = cluster_clock.read(api, "here")
    assert clock.scale == 40.0
    assert abs(clock.now() - live_twin.clock.now()) < 2.0  # 2 simulated seconds: 50 ms of wall time
    time.sleep(0.5)
    assert abs(clock.now() - live_twin.clock.now()) < 2.0
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    clock.wait(60)
    assert slept == [1.5]


def test_a_malformed_advert_is_a_clear_error(live_twin):
    with api_of(live_twin) as api:
        k8s.CoreV1Api(api).create_namespaced_config_map(NAMESPACE, {"metadata": {"name": NAME},
                                                                    "data": {"timeScale": "fast"}})
        with pytest.raises(BackendError, match=f"ConfigMap {NAMESPACE}/{NAME} on here does not advertise a clock"):
            cluster_clock.read(api, "here")


def test_the_twin_clock_follows_wall_time_at_a_scale():
    clock = SimClock(start=1000.0)
    try:
        clock.follow_wall_time(50)
        assert clock.scale == 50
        time.sleep(0.4)
        assert 1010 <= clock.now() <= 1031  # 20 simulated seconds, give or take scheduling
    finally:
        clock.close()
    with pytest.raises(ValueError, match="time scale must be a positive number"):
        SimClock().follow_wall_time(0)
