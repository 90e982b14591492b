"""Memory and CPU: OOM kills under a low limit, CPU capped at its limit, usage for metrics.k8s.io."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from pytest_itbench.twin import quantity
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.containers.behaviour import ContainerContext, DefaultBehaviour, Process
from pytest_itbench.twin.images import MiB

from tests.conftest import KUBECTL, Kubectl
from tests.twin.kubelet_helpers import (NODE, container, create_pod, events, kubelet_twin, messages, pod,
                                        pods_resource, table_status, warp_until)


def app(memory_limit: str | None = None, cpu_limit: str | None = None, image: str = "python:3.12-slim") -> dict:
    limits = {}
    if memory_limit:
        limits["memory"] = memory_limit
    if cpu_limit:
        limits["cpu"] = cpu_limit
    return {"name": "app", "image": image, "ports": [{"containerPort": 7000}], "resources": {"limits": limits}}


def test_a_memory_limit_below_the_footprint_oom_kills_and_a_higher_limit_heals():
    with kubelet_twin() as twin:
        create_pod(twin, "small", [app("16Mi")])
        warp_until(twin, lambda: container(twin, "small").get("restartCount", 0) >= 2, 60)
        last = container(twin, "small")["lastState"]["terminated"]
        assert (last["exitCode"], last["reason"]) == (137, "OOMKilled")
        twin.warp(30)
        assert table_status(twin, "small")[1] == "CrashLoopBackOff"
        oom = events(twin, NODE, "SystemOOM")
        assert oom and oom[0]["message"].startswith("System OOM encountered, victim process: python3, pid: ")
        assert oom[0]["involvedObject"]["kind"] == "Node"

        twin.api.delete(pods_resource(twin), "default", "small", DeleteOptions(grace_period=0), twin.admin_ctx)
        create_pod(twin, "roomy", [app("128Mi")])
        twin.warp(120)
        assert table_status(twin, "roomy") == ("1/1", "Running", "0")


def test_a_limit_too_low_for_the_runtime_itself_fails_to_start():
    with kubelet_twin() as twin:
        create_pod(twin, "tiny", [app("2Mi")])
        warp_until(twin, lambda: container(twin, "tiny").get("lastState"), 30)
        last = container(twin, "tiny")["lastState"]["terminated"]
        assert (last["exitCode"], last["reason"]) == (128, "StartError")
        assert "container init was OOM-killed (memory limit too low?)" in last["message"]


def _usage(twin, name: str) -> tuple[Fraction, int]:
    sample = twin.metrics.pod_sample("default", name)
    assert sample is not None, f"no metrics for {name}"
    usage = sample.usage["app"]
    return Fraction(usage.cpu_nanocores, 10 ** 9), usage.memory_bytes


class BusyLoop:
    """A behaviour provider whose process spins two cores once started."""

    def process(self, ctx: ContainerContext) -> Process | None:
        return replace(DefaultBehaviour().process(ctx), cpu=2.0)


def test_usage_reaches_metrics_and_cpu_is_capped_at_the_limit():
    with kubelet_twin() as twin:
        kubelet = next(c for c in twin.controllers.controllers if c.name == "kubelet")
        kubelet.behaviours.add(BusyLoop())
        create_pod(twin, "capped", [app("256Mi", cpu_limit="200m")])
        create_pod(twin, "free", [app()])
        twin.warp(60)  # started, then seen at two scrapes
        capped_cpu, memory = _usage(twin, "capped")
        assert capped_cpu == Fraction(1, 5)
        assert _usage(twin, "free")[0] == 2
        assert 20 * MiB < memory < 30 * MiB  # a small Python web application's working set
        node = twin.metrics.node_sample(NODE)
        assert node is not None and node.usage[""].memory_bytes > 2 * memory


class LeakyShop:
    """A behaviour provider, as an application sheet would be: the cart service leaks memory."""

    def process(self, ctx: ContainerContext) -> Process | None:
        if ctx.pod["metadata"]["name"] != "cart":
            return None
        default = DefaultBehaviour().process(ctx)
        return replace(default, memory_growth=1 * MiB)  # a megabyte a second


def test_a_behaviour_provider_plugs_in_before_the_default():
    with kubelet_twin() as twin:
        kubelet = next(c for c in twin.controllers.controllers if c.name == "kubelet")
        kubelet.behaviours.add(LeakyShop())
        create_pod(twin, "cart", [app("128Mi")])
        create_pod(twin, "other", [app("128Mi")])
        died = warp_until(twin, lambda: container(twin, "cart").get("restartCount", 0) >= 1, 200)
        # A Python application's 24 MiB plus a megabyte a second crosses 128 MiB after about 105 s.
        assert 100 <= died <= 115
        assert container(twin, "cart")["lastState"]["terminated"]["reason"] == "OOMKilled"
        assert container(twin, "other")["restartCount"] == 0


@pytest.mark.kubectl
def test_kubectl_top_and_describe_show_usage_and_oom_kills(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH")
    with kubelet_twin(serve=True) as twin:
        kubectl = Kubectl(twin, tmp_path / "admin")
        create_pod(twin, "web", [{"name": "app", "image": "nginx:1.27"}])
        create_pod(twin, "oom", [app("16Mi")])
        twin.warp(90)
        top = kubectl("top", "pod", "web", "--no-headers").split()
        assert top[0] == "web" and top[2].endswith("Mi") and 3 <= int(top[2][:-2]) <= 10
        assert kubectl("top", "node", "--no-headers").split()[0] == NODE
        described = kubectl("describe", "pod", "oom")
        assert "Reason:       OOMKilled" in described and "Exit Code:    137" in described
        assert "memory:  16Mi" in described
        assert pod(twin, "oom")["status"]["qosClass"] == "Burstable"
        assert quantity.value("16Mi") == 16 * MiB
        assert messages(twin, "oom", "BackOff")
