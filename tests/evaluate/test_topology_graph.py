"""The topology graph NTAM reads, from the twin's topology monitor over HTTP and from the Kubernetes API."""

from __future__ import annotations

import pytest

from pytest_itbench.apps.catalog import application
from pytest_itbench.apps.deploy import deploy
from pytest_itbench.backends.twin import TwinBackend
from pytest_itbench.evaluate.topology_graph import TopologyUnavailable, from_api, read_topology


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    cluster = TwinBackend().provision(7, str(tmp_path_factory.mktemp("twin")))
    try:
        deploy(cluster.api_client(), application("astronomy-shop"), cluster.advance)
        yield cluster
    finally:
        cluster.close()


def named_edges(graph) -> set[tuple]:
    """Undirected edges as pairs of (kind, namespace, name)."""
    out = set()
    for a in graph.nodes:
        for b, hops in graph.hops_from(a).items():
            if hops == 1:
                ends = sorted([(graph.nodes[a].kind, graph.nodes[a].namespace, graph.nodes[a].name),
                               (graph.nodes[b].kind, graph.nodes[b].namespace, graph.nodes[b].name)])
                out.add(tuple(ends))
    return out


def test_the_monitor_graph_is_read_over_http(shop):
    graph = read_topology(shop.urls["topology"], None)
    assert graph.source == "topology monitor"
    [deployment] = graph.find("Deployment", "product-catalog", "astronomy-shop")
    [service] = graph.find("Service", "product-catalog", "astronomy-shop")
    # Deployment -> ReplicaSet -> Pod <- Service is 3 hops; Deployment <- Namespace -> Service is 2.
    assert graph.distance(deployment, service) == 2


def test_the_api_builder_draws_a_subset_of_the_monitors_edges(shop):
    monitor = named_edges(read_topology(shop.urls["topology"], None))
    api = from_api(shop.api_client())
    assert api.source == "Kubernetes API"
    built = named_edges(api)
    # The cluster node is named alike in both; every relation the API builder draws, the monitor draws.
    assert len(built) > 100
    assert built - monitor == set()
    # What the monitor adds are Port nodes and service calls (and kinds the builder does not list).
    extra_kinds = {kind for edge in monitor - built for kind, _, _ in edge}
    assert {"Port", "Service"} <= extra_kinds


def test_without_a_monitor_the_graph_comes_from_the_api(shop):
    graph = read_topology("http://127.0.0.1:9", shop.api_client())  # nothing listens on the discard port
    assert graph.source == "Kubernetes API"
    with pytest.raises(TopologyUnavailable, match="no topology URL and no API client"):
        read_topology(None, None)
