"""Topology-aware NTAM, propagation-chain F1 and the topology graph they read, on small graphs worked by hand.

The graph used throughout (namespace ``shop``; arrows as listed, distances ignore them)::

    Namespace/shop --> Deployment/cart --> ReplicaSet/cart-1 --> Pod/cart-1-a --> ConfigMap/cart-conf
         |  |  \\                                                  ^
         |  |   '----------------------------------------------> (also to ConfigMap/cart-conf)
         |  '--> Service/cart ------------------------------------'  (Service/cart -> Pod/cart-1-a)
         '-----> Service/frontend --> Service/cart

Edges (9): N->D, N->S, N->F, N->C, D->R, R->P, S->P, P->C, F->S. So |E| = 9 and
ln(|E|+1) + 1 = ln 10 + 1 = 3.302585. Degrees: N 4; P 3; S 3; D 2; R 2; C 2; F 2.
"""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from pytest_itbench.evaluate import chain, ntam
from pytest_itbench.evaluate.ntam import Parameters, Placed
from pytest_itbench.evaluate.topology_graph import Graph, from_monitor_json, from_objects
from pytest_itbench.scenario.schema import Evaluation, SreGroundTruth

NODES = {"N": ("Namespace", "", "shop"), "D": ("Deployment", "shop", "cart"), "R": ("ReplicaSet", "shop", "cart-1"),
         "P": ("Pod", "shop", "cart-1-a"), "S": ("Service", "shop", "cart"), "C": ("ConfigMap", "shop", "cart-conf"),
         "F": ("Service", "shop", "frontend")}
EDGES = [("N", "D"), ("N", "S"), ("N", "F"), ("N", "C"), ("D", "R"), ("R", "P"), ("S", "P"), ("P", "C"), ("F", "S")]

# The monitor's /graph body for that graph.
GRAPH_JSON = {
    "nodes": [{"id": i, "attributes": {"kind": k, "namespace": ns, "name": n, "group": "", "version": "v1"}}
              for i, (k, ns, n) in NODES.items()],
    "edges": [{"source": a, "target": b, "attributes": {"type": "OWNS"}} for a, b in EDGES],
}

TRUTH = SreGroundTruth.model_validate({
    "groups": [
        {"id": "conf", "kind": "ConfigMap", "namespace": "shop", "filter": ["^cart-conf$"], "root_cause": True},
        {"id": "cart-deploy", "kind": "Deployment", "namespace": "shop", "filter": ["^cart$"]},
        {"id": "cart-pod", "kind": "Pod", "namespace": "shop", "filter": ["^cart-"]},
        {"id": "cart-svc", "kind": "Service", "namespace": "shop", "filter": ["^cart$"]},
        {"id": "frontend-svc", "kind": "Service", "namespace": "shop", "filter": ["^frontend$"]},
    ],
    "aliases": [["cart-deploy", "cart-pod"]],
    "propagations": [
        {"source": "conf", "target": "cart-pod"},
        {"source": "cart-deploy", "target": "cart-svc"},
        {"source": "cart-svc", "target": "frontend-svc"},
    ],
})

CM, DEPLOY, RS, POD, SVC, FRONT, NS = ("shop/ConfigMap/cart-conf", "shop/Deployment/cart", "shop/ReplicaSet/cart-1",
                                       "shop/Pod/cart-1-a", "shop/Service/cart", "shop/Service/frontend",
                                       "shop/Namespace/shop")
DENOMINATOR = math.log(10) + 1  # 3.302585


def spec(degree: int) -> float:
    """s(p) on the 9-edge graph: (ln(10 / (deg + 1)) + 1) / (ln 10 + 1)."""
    return (math.log(10 / (degree + 1)) + 1) / DENOMINATOR


def entities(*names: str, contributing: bool = True) -> list[dict]:
    return [{"name": n, "contributing_factor": contributing} for n in names]


@pytest.fixture
def graph() -> Graph:
    return from_monitor_json(graph=GRAPH_JSON)


def test_the_graph_reads_the_monitor_json_with_degrees_and_undirected_hops(graph):
    assert graph.edge_count == 9
    assert {k: graph.degree(k) for k in NODES} == {"N": 4, "P": 3, "S": 3, "D": 2, "R": 2, "C": 2, "F": 2}
    assert graph.distance("D", "C") == 2  # D <- N -> C, against the arrow
    assert graph.distance("F", "R") == 3  # F -> S -> P <- R
    assert graph.find("service", "cart", "shop") == ["S"]
    assert graph.find("Namespace", "shop", "shop") == ["N"]  # a Namespace named within itself


def test_the_graph_reads_nodes_and_edges_when_graph_is_not_served():
    nodes = [{"id": i, "kind": k, "namespace": ns or "None", "name": n} for i, (k, ns, n) in NODES.items()]
    edges = [{"source": a, "target": b, "type": "OWNS"} for a, b in EDGES] + [{"source": "D", "target": "gone"}]
    g = from_monitor_json(nodes=nodes, edges=edges)
    assert g.edge_count == 9  # the edge to a node that is not listed is dropped
    assert g.nodes["N"].namespace == ""  # /nodes prints a missing namespace as None


def test_specificity_by_hand():
    # deg 0 on any graph: (ln(|E|+1) + 1) / (ln(|E|+1) + 1) = 1
    assert ntam.specificity(0, 9) == pytest.approx(1.0)
    # deg 2 of 9 edges: (ln(10/3) + 1) / (ln 10 + 1) = (1.203973 + 1) / 3.302585 = 0.667348
    assert ntam.specificity(2, 9) == pytest.approx(0.667348, abs=1e-6)
    # deg 9 of 9 edges: (ln 1 + 1) / 3.302585 = 0.302793
    assert ntam.specificity(9, 9) == pytest.approx(0.302793, abs=1e-6)


def fl(graph, names, params=Parameters(), contributing=True):
    return ntam.fault_localisation(TRUTH, {"entities": entities(*names, contributing=contributing)}, graph, params)


def test_fl_the_root_cause_alone_scores_one(graph):
    # w^0 / w^0 x exp(0) = 1
    assert fl(graph, [CM]).value == pytest.approx(1.0)


def test_fl_a_near_miss_scores_specificity_times_t_to_the_hops(graph):
    # Deployment/cart: not a root cause; D <- N -> C is 2 hops; deg D = 2:
    # s = 0.667348; 0.667348 x 0.8^2 = 0.427103; best = w^0 = 1; |P| = |T| = 1.
    assert fl(graph, [DEPLOY]).value == pytest.approx(0.427103, abs=1e-6)
    # Pod/cart-1-a: 1 hop (P -> C), deg 3: (ln(10/4) + 1) / 3.302585 = 0.580240; x 0.8 = 0.464192
    assert fl(graph, [POD]).value == pytest.approx(0.464192, abs=1e-6)
    # Namespace/shop: 1 hop, deg 4, a hub: (ln 2 + 1) / 3.302585 = 0.512672; x 0.8 = 0.410139
    assert fl(graph, [NS]).value == pytest.approx(0.410139, abs=1e-6)


def test_fl_extra_entities_are_penalised_and_the_sum_capped(graph):
    # Pod at rank 0: 0.464192; ConfigMap at rank 1: 0.7; sum 1.164192 / 1 -> capped at 1;
    # |P| - |T| = 1: x exp(-1) = 0.367879
    scored = fl(graph, [POD, CM])
    assert [round(t.score, 6) for t in scored.terms] == [0.464192, 0.7]
    assert scored.value == pytest.approx(0.367879, abs=1e-6)


def test_fl_with_other_parameters(graph):
    # w = 0.5, t = 0.5, g = 2: Pod 0.580240 x 0.5 = 0.290120; ConfigMap 0.5^1 = 0.5; sum 0.790120;
    # best 1; x exp(-2) = 0.135335: 0.106931
    assert fl(graph, [POD, CM], Parameters(w=0.5, t=0.5, g=2)).value == pytest.approx(0.106931, abs=1e-6)


def test_fl_scores_zero_for_what_is_not_in_the_graph_or_unreadable(graph):
    assert fl(graph, ["shop/Deployment/ghost"]).value == 0.0
    assert fl(graph, ["not a name"]).value == 0.0
    # Without a graph a near miss scores 0, a hit still counts: (0 + 0.7) / 1 x exp(-1) = 0.257516
    assert fl(None, [POD, CM]).value == pytest.approx(0.257516, abs=1e-6)


def test_fl_reads_only_contributing_entities(graph):
    diagnosis = {"entities": entities(CM) + entities(FRONT, contributing=False)}
    assert ntam.fault_localisation(TRUTH, diagnosis, graph).value == pytest.approx(1.0)
    # No contributing entity: |P| = 0, nothing scores.
    assert fl(graph, [CM], contributing=False).value == 0.0


def test_fpc_over_every_chain_entity_with_aliases_counted_once(graph):
    # Truth answers: conf, cart (Deployment = Pod), cart-svc, frontend-svc: |T| = 4;
    # best = 1 + 0.7 + 0.49 + 0.343 = 2.533.
    # Predicted: CM (truth, rank 0): 1; R (1 hop from D and from P, deg 2, rank 1): 0.667348 x 0.8 = 0.533878;
    # FRONT (truth, rank 2): 0.49. Sum 2.023878 / 2.533 = 0.799004; |P| = 3: x exp(-1): 0.293937.
    scored = ntam.propagation_chain(TRUTH, {"entities": entities(CM, RS, FRONT)}, graph)
    assert scored.best == pytest.approx(2.533)
    assert scored.value == pytest.approx(0.293937, abs=1e-6)
    # The Pod after its aliased Deployment is dropped (no score, not counted), and the ends of the
    # propagations come after the entities: CM 1, D 0.7, R (near miss, rank 2): 0.533878, S at rank 3:
    # 0.343. Sum 2.576878 / 2.533 > 1 -> 1; |P| = 4 = |T|: 1.
    diagnosis = {"entities": entities(CM, DEPLOY, POD, RS), "propagations": [{"source": POD, "target": SVC}]}
    scored = ntam.propagation_chain(TRUTH, diagnosis, graph)
    assert [t.placed.name for t in scored.terms] == [CM, DEPLOY, RS, SVC]
    assert scored.value == pytest.approx(1.0)


def test_fpc_without_truth_propagations_uses_every_group(graph):
    truth = SreGroundTruth.model_validate({"groups": [g.model_dump() for g in TRUTH.groups],
                                           "aliases": [["cart-deploy", "cart-pod"]]})
    # Same four answers as the chain; one of them named: 1 / 2.533 = 0.394789, x exp(-3) = 0.019655
    scored = ntam.propagation_chain(truth, {"entities": entities(CM)}, graph)
    assert scored.value == pytest.approx(0.019655, abs=1e-6)


def test_the_score_of_placed_predictions():
    # Independent of any graph: 20 edges; a near miss of degree 4 at 3 hops, then a hit, then a stranger.
    # s = (ln(21/5) + 1) / (ln 21 + 1) = (1.435085 + 1) / (3.044522 + 1) = 0.602070; x 0.8^3 = 0.308260.
    # hit at rank 1: 0.7. Sum 1.008260; |T| = 2, best 1.7: 0.593094; |P| 3: x exp(-1): 0.218187.
    placed = [Placed("a", False, 3, 4), Placed("b", True), Placed("c", False)]
    assert ntam.score(placed, 2, 20).value == pytest.approx(0.218187, abs=1e-6)


def test_parameters_defaults_scenario_and_command_line():
    assert Parameters() == Parameters(0.7, 0.8, 1.0)
    assert Parameters.combine({"w": 0.5, "t": None, "g": None}, None) == Parameters(0.5, 0.8, 1.0)
    assert Parameters.combine({"w": 0.5, "t": 0.9}, {"w": 0.6, "g": 0.0}) == Parameters(0.6, 0.9, 0.0)
    with pytest.raises(ValueError, match="w must be in"):
        Parameters(w=0.0)
    with pytest.raises(ValueError, match="g must be in"):
        Parameters(g=-1)


def test_the_scenario_sets_ntam_under_evaluation():
    assert Evaluation.model_validate({"ntam": {"w": 0.5}}).ntam.model_dump() == {"w": 0.5, "t": None, "g": None}
    with pytest.raises(ValidationError):
        Evaluation.model_validate({"ntam": {"t": 1.5}})
    with pytest.raises(ValidationError):
        Evaluation.model_validate({"ntam": {"x": 1}})


def test_the_command_line_refuses_a_bad_parameter(pytester):
    result = pytester.runpytest("-p", "no:cacheprovider", "--itbench-ntam-w=2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--itbench-ntam-w: invalid NTAM w value: '2'*"])


# ---- propagation-chain F1 -----------------------------------------------------------------------------------------

def test_chain_f1_by_hand():
    # Truth steps (answers): conf -> cart, cart -> cart-svc, cart-svc -> frontend-svc.
    # Submitted: CM -> Pod (conf -> cart: right); Pod -> frontend (cart -> frontend-svc: skips cart-svc, wrong);
    # Deployment -> Service/cart (cart -> cart-svc: right); CM -> Deployment (conf -> cart again: counted once).
    # Precision 2/3, recall 2/3, F1 2/3.
    propagations = [{"source": CM, "target": POD}, {"source": POD, "target": FRONT},
                    {"source": DEPLOY, "target": SVC}, {"source": CM, "target": DEPLOY}]
    scored = chain.score(TRUTH, {"propagations": propagations})
    assert (scored.right, scored.submitted, scored.truth_steps) == (2, 3, 3)
    assert scored.f1 == pytest.approx(2 / 3)
    # A step from something the truth does not know is wrong: precision 2/4, recall 2/3,
    # F1 = 2 x 0.5 x 0.6667 / 1.1667 = 4/7.
    scored = chain.score(TRUTH, {"propagations": propagations + [{"source": "shop/Deployment/ghost",
                                                                  "target": SVC}]})
    assert scored.f1 == pytest.approx(4 / 7)


def test_chain_direction_matters_and_nothing_submitted_scores_zero():
    assert chain.score(TRUTH, {"propagations": [{"source": FRONT, "target": SVC}]}).f1 == 0.0
    assert chain.score(TRUTH, {"entities": entities(CM)}).f1 == 0.0
    # All three steps, in order: 1.
    full = [{"source": CM, "target": POD}, {"source": POD, "target": SVC}, {"source": SVC, "target": FRONT}]
    assert chain.score(TRUTH, {"propagations": full}).f1 == 1.0


def test_chain_is_not_scored_without_truth_propagations():
    truth = SreGroundTruth.model_validate({"groups": [{"id": "a", "kind": "Deployment", "root_cause": True}]})
    assert chain.score(truth, {"propagations": [{"source": DEPLOY, "target": SVC}]}) is None


# ---- the graph from Kubernetes objects -----------------------------------------------------------------------------

def obj(kind, name, namespace="shop", **extra):
    meta = {"name": name, "uid": f"uid-{kind}-{name}"}
    if namespace:
        meta["namespace"] = namespace
    meta.update(extra.pop("meta", {}))
    return {"kind": kind, "metadata": meta, **extra}


def owned_by(kind, name):
    return {"ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": f"uid-{kind}-{name}"}]}


def test_the_api_builder_draws_the_monitors_relations():
    objects = [
        obj("Namespace", "shop", namespace=None), obj("Node", "n1", namespace=None),
        obj("Deployment", "cart"),
        obj("ReplicaSet", "cart-1", meta=owned_by("Deployment", "cart")),
        obj("Pod", "cart-1-a", meta={**owned_by("ReplicaSet", "cart-1"), "labels": {"app": "cart"}},
            spec={"nodeName": "n1", "volumes": [{"name": "c", "configMap": {"name": "cart-conf"}},
                                                {"name": "s", "secret": {"secretName": "cart-pw"}}]}),
        obj("Pod", "other", meta={"labels": {"app": "other"}}),
        obj("Service", "cart", spec={"selector": {"app": "cart"}}),
        obj("Endpoints", "cart", subsets=[{"addresses": [{"targetRef": {"kind": "Pod", "name": "cart-1-a"}}]}]),
        obj("ConfigMap", "cart-conf"), obj("Secret", "cart-pw"),
    ]
    g = from_objects(objects)
    edges = {(g.nodes[a].name + ":" + g.nodes[a].kind, g.nodes[b].name + ":" + g.nodes[b].kind)
             for a in g.nodes for b in g.hops_from(a) if g.distance(a, b) == 1}
    expected = {
        ("cluster:K8Cluster", "shop:Namespace"), ("cluster:K8Cluster", "n1:Node"),  # cluster-scoped, unowned
        ("shop:Namespace", "cart:Deployment"), ("shop:Namespace", "other:Pod"), ("shop:Namespace", "cart:Service"),
        ("shop:Namespace", "cart-conf:ConfigMap"), ("shop:Namespace", "cart-pw:Secret"),  # namespace owns unowned
        ("cart:Deployment", "cart-1:ReplicaSet"), ("cart-1:ReplicaSet", "cart-1-a:Pod"),  # ownerReferences
        ("n1:Node", "cart-1-a:Pod"),  # NODE_RUNS_POD
        ("cart-1-a:Pod", "cart-conf:ConfigMap"), ("cart-1-a:Pod", "cart-pw:Secret"),  # mounts
        ("cart:Service", "cart-1-a:Pod"),  # the selector (not "other")
        ("cart:Service", "cart:Endpoints"), ("cart:Endpoints", "cart-1-a:Pod"),
    }
    undirected = {tuple(sorted(e)) for e in expected}
    assert {tuple(sorted(e)) for e in edges} == undirected
    assert g.edge_count == len(expected)  # Endpoints are not owned by the namespace
    pod = g.find("Pod", "cart-1-a", "shop")[0]
    assert g.degree(pod) == 6  # ReplicaSet, Node, ConfigMap, Secret, Service, Endpoints


def test_fpc_leaves_out_ground_truth_entities_off_the_chain(graph):
    # A truth whose chain is conf -> cart-svc only; the Deployment is a ground-truth group off the chain.
    truth = SreGroundTruth.model_validate({
        "groups": [g.model_dump() for g in TRUTH.groups],
        "aliases": [["cart-deploy", "cart-pod"]],
        "propagations": [{"source": "conf", "target": "cart-svc"}]})
    # CM (rank 0) 1 + S (rank 1) 0.7 = 1.7 / (1 + 0.7) = 1; the Deployment is skipped: |P| = 2 = |T|: 1.
    assert ntam.propagation_chain(truth, {"entities": entities(CM, DEPLOY, SVC)}, graph).value == pytest.approx(1.0)
    # The ReplicaSet is in no group: a near miss (1 hop to ... nothing on the chain: R - P - C is 2 hops,
    # R - P - S is 2 hops; deg 2): 0.667348 x 0.64 = 0.427103 at rank 2; sum 2.127103 / 1.7 -> 1;
    # |P| = 3: x exp(-1) = 0.367879.
    assert ntam.propagation_chain(truth, {"entities": entities(CM, RS, SVC)}, graph).value == \
        pytest.approx(0.367879, abs=1e-6)


def test_the_evaluator_writes_the_figures_with_the_scenarios_and_the_command_lines_parameters(graph):
    from types import SimpleNamespace

    from pytest_itbench.evaluate import sre
    from pytest_itbench.scenario.schema import NtamSettings

    def figures(scenario_ntam, command_line):
        trial = SimpleNamespace(scenario=SimpleNamespace(evaluation=Evaluation(ntam=scenario_ntam)),
                                options=SimpleNamespace(ntam=command_line),
                                result=SimpleNamespace(figures={}, attachments=[]))
        diagnosis = {"entities": entities(POD, CM), "propagations": [{"source": CM, "target": POD}]}
        sre._topology_aware(trial, TRUTH, diagnosis, (graph, ""))
        return trial.result.figures

    # FL with [Pod, ConfigMap]: capped sum 1 x exp(-g): g = 1 -> 0.367879; the scenario's g = 0 -> 1;
    # the command line's g = 2 over the scenario's -> exp(-2) = 0.135335.
    assert figures(None, {})["ntam"] == pytest.approx(0.3679)
    assert figures(NtamSettings(g=0), {})["ntam_fl"] == 1.0
    got = figures(NtamSettings(g=0), {"g": 2.0})
    assert got["ntam"] == got["ntam_fl"] == pytest.approx(0.1353)
    # FPC: Pod (answer cart, rank 0) 1 + ConfigMap (rank 1) 0.7 = 1.7 / 2.533 = 0.671141, x exp(-2 x 2)
    # = 0.018316: 0.012293. Chain: one right step of three: precision 1, recall 1/3, F1 0.5.
    assert got["ntam_fpc"] == pytest.approx(0.0123, abs=1e-4)
    assert got["chain_f1"] == 0.5
