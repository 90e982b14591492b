"""The kubelet's node-pressure eviction for memory: the signal, the ranking, and a pod evicted on a node short
of memory."""

from __future__ import annotations

from pytest_itbench.twin.controllers.kubelet.eviction import (Candidate, memory_available, message, rank,
                                                               under_pressure)
from pytest_itbench.twin import quantity
from pytest_itbench.twin.store import clone

from tests.twin.kubelet_helpers import NODE, create_pod, events, kubelet_twin, status, warp_until

MI = 2 ** 20
NGINX = {"name": "web", "image": "nginx:1.27"}


def test_the_signal_is_capacity_minus_working_set_against_100mi():
    assert memory_available(1000 * MI, 900 * MI) == 100 * MI
    assert not under_pressure(1000 * MI, 900 * MI)  # exactly at the threshold is not below it
    assert under_pressure(1000 * MI, 900 * MI + 1)
    assert under_pressure(1000 * MI, 1200 * MI)
    assert not under_pressure(None, 10 ** 12)  # no capacity known, no signal


def test_pods_above_their_requests_go_first_then_by_priority_then_by_excess():
    within = Candidate(("ns", "within"), priority=-10, request=500 * MI, usage=400 * MI)
    small = Candidate(("ns", "small"), priority=0, request=100 * MI, usage=150 * MI)
    large = Candidate(("ns", "large"), priority=0, request=0, usage=600 * MI)
    important = Candidate(("ns", "important"), priority=1000, request=0, usage=2000 * MI)
    low = Candidate(("ns", "low"), priority=-5, request=0, usage=60 * MI)
    order = [c.key[1] for c in rank([within, important, small, large, low])]
    assert order == ["low", "large", "small", "important", "within"]


def test_the_message_names_the_threshold_what_is_left_and_the_containers_over_their_requests():
    victim = Candidate(("ns", "p"), 0, 100 * MI, 700 * MI, (("app", 600 * MI, 100 * MI), ("side", 100 * MI, 0),
                                                            ("idle", 0, 50 * MI)))
    assert message(victim, 51201 * 1024) == (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 51201Ki. "
        "Container app was using 600Mi, request is 100Mi, has larger consumption of memory. "
        "Container side was using 100Mi, request is 0, has larger consumption of memory. ")


def test_a_node_short_of_memory_evicts_the_pod_furthest_above_its_requests_and_then_stops():
    with kubelet_twin() as twin:
        create_pod(twin, "modest", [dict(NGINX, resources={"requests": {"memory": "1Gi"}})])
        create_pod(twin, "greedy", [dict(NGINX)])
        twin.warp(10)
        assert status(twin, "greedy")["phase"] == status(twin, "modest")["phase"] == "Running"
        agent = next(iter(_kubelet(twin).nodes.values()))
        _, working_set = agent.node_usage()
        node = clone(twin.store.get("nodes", "", NODE))
        greedy = agent.usage[("default", "greedy", "web")][1]
        assert greedy > 0
        left = 100 * MI - greedy // 2  # below the threshold, and above it again once greedy is gone
        node["status"]["capacity"]["memory"] = str(working_set + left)
        twin.api.update(twin.api.catalog.lookup("", "v1", "nodes"), None, NODE, node, twin.admin_ctx,
                        subresource="status")
        warp_until(twin, lambda: status(twin, "greedy").get("phase") == "Failed", 30)
        st = status(twin, "greedy")
        assert st["reason"] == "Evicted"
        assert st["message"].startswith("The node was low on resource: memory. Threshold quantity: 100Mi, "
                                         f"available: {quantity.format_binary(left)}. Container web was using ")
        assert [e["message"] for e in events(twin, "greedy", "Evicted")] == [st["message"]]
        # Its working set is gone: enough is left, so the pod within its requests keeps running.
        twin.warp(30)
        assert status(twin, "modest")["phase"] == "Running"
        assert not events(twin, "modest", "Evicted")


def _kubelet(twin):
    return next(c for c in twin.controllers.controllers if c.name == "kubelet")
