"""The heuristic's rules over hand-built namespace snapshots: what each names, and what it leaves alone."""

from __future__ import annotations

import copy

from pytest_itbench.agents.heuristic.rules import (changed_template, chaos_objects, deny_network_policy,
                                                   service_selector, service_target_port)
from pytest_itbench.agents.heuristic.state import Namespace, labels_match, template_changes

NS = "shop"
TEMPLATE = {"metadata": {"labels": {"app": "cart", "pod-template-hash": "abc"}},
            "spec": {"containers": [{"name": "cart", "image": "cart:1", "ports": [{"containerPort": 8080,
                                                                                     "name": "http"}],
                                     "env": [{"name": "PORT", "value": "8080"}]}]}}


def deployment(name="cart", template=TEMPLATE, replicas=1, unavailable=0):
    return {"kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template},
            "status": {"unavailableReplicas": unavailable}}


def replicaset(name, revision, template, owner="cart"):
    return {"kind": "ReplicaSet", "metadata": {"name": name, "annotations": {"deployment.kubernetes.io/revision":
                                                                             str(revision)},
                                               "ownerReferences": [{"kind": "Deployment", "name": owner}]},
            "spec": {"replicas": 1, "template": template}, "status": {"readyReplicas": 1}}


def service(name="cart", selector=None, target=8080):
    return {"kind": "Service", "metadata": {"name": name},
            "spec": {"selector": selector or {"app": "cart"}, "ports": [{"port": 80, "targetPort": target}]}}


def snapshot(*objects, chaos=()):
    ns = Namespace(NS)
    for obj in objects:
        ns.objects.setdefault(obj["kind"], []).append(obj)
    ns.chaos = list(chaos)
    return ns


CONTEXT = {"implicated": set(), "callees": {}}


def test_template_changes_ignore_annotations_and_hash():
    new = copy.deepcopy(TEMPLATE)
    new["metadata"]["labels"]["pod-template-hash"] = "def"
    new["metadata"]["annotations"] = {"kubectl.kubernetes.io/restartedAt": "now"}
    assert template_changes(TEMPLATE, new) == []
    new["spec"]["containers"][0]["env"][0]["value"] = "7070"
    assert template_changes(TEMPLATE, new) == ["spec.containers[cart].env[PORT].value: 8080 -> 7070"]


def test_changed_template_needs_an_unwell_or_implicated_workload():
    new = copy.deepcopy(TEMPLATE)
    new["spec"]["containers"][0]["image"] = "cart:broken"
    objects = (deployment(template=new), replicaset("cart-1", 1, TEMPLATE), replicaset("cart-2", 2, new))
    assert changed_template(snapshot(*objects), CONTEXT) == []  # healthy and not implicated: a normal rollout
    found = changed_template(snapshot(*objects), {"implicated": {"cart"}, "callees": {}})
    assert [(f.kind, f.name) for f in found] == [("Deployment", "cart")]
    assert found[0].repairs == [["rollout", "undo", "deployment/cart", "--namespace", NS]]
    assert "cart:1 -> cart:broken" in found[0].evidence


def test_service_rules():
    ok = snapshot(deployment(), service())
    assert service_selector(ok, CONTEXT) == [] and service_target_port(ok, CONTEXT) == []
    wrong_selector = snapshot(deployment(), service(selector={"app": "kart"}))
    assert [f.name for f in service_selector(wrong_selector, CONTEXT)] == ["cart"]
    wrong_port = service_target_port(snapshot(deployment(), service(target=9999)), CONTEXT)
    assert [f.name for f in wrong_port] == ["cart"] and '"value": 8080' in wrong_port[0].repairs[0][-1]


def test_network_policy_denies_only_without_an_admitting_rule():
    def policy(ingress):
        return {"kind": "NetworkPolicy", "metadata": {"name": "p"},
                "spec": {"podSelector": {"matchLabels": {"app": "cart"}}, "policyTypes": ["Ingress"],
                         "ingress": ingress}}
    assert [f.name for f in deny_network_policy(snapshot(deployment(), policy([])), CONTEXT)] == ["p"]
    assert deny_network_policy(snapshot(deployment(), policy([{"ports": [{"port": 8080}]}])), CONTEXT) == []
    assert [f.name for f in deny_network_policy(snapshot(deployment(), policy([{"ports": [{"port": 9}]}])),
                                                CONTEXT)] == ["p"]


def test_chaos_experiments_are_blamed_on_their_schedule():
    schedule = {"kind": "Schedule", "metadata": {"name": "s", "uid": "u1"},
                "spec": {"networkChaos": {"selector": {"labelSelectors": {"app": "cart"}}}}}
    spawned = {"kind": "NetworkChaos", "metadata": {"name": "s-x1", "ownerReferences": [{"kind": "Schedule",
                                                                                         "uid": "u1"}]},
               "spec": {"selector": {"labelSelectors": {"app": "cart"}}}}
    found = chaos_objects(snapshot(deployment(), chaos=[schedule, spawned]), CONTEXT)
    assert [(f.kind, f.name, f.workloads) for f in found] == [("Schedule", "s", ("cart",))]
    assert [r[:3] for r in found[0].repairs] == [["delete", "schedule.chaos-mesh.org", "s"],
                                                 ["delete", "networkchaos.chaos-mesh.org", "s-x1"]]


def test_label_selectors():
    assert labels_match({"app": "cart"}, {"app": "cart", "x": "y"})
    assert not labels_match({"app": "cart"}, {"app": "kart"})
    assert labels_match({"matchExpressions": [{"key": "app", "operator": "In", "values": ["cart"]}]}, {"app": "cart"})
    assert not labels_match({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, {})


def test_quota_named_in_refusals_and_cordoned_nodes_explain_pending_pods():
    from pytest_itbench.agents.heuristic.rules import cordoned_nodes, quota_exhausted
    quota = {"kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hard": {"requests.memory": "1Gi"}}}
    ns = snapshot(deployment(), replicaset("cart-1", 1, TEMPLATE), quota)
    assert quota_exhausted(ns, CONTEXT) == []  # a quota nobody is refused by is no cause
    ns.events = [{"message": 'pods "cart-1-x" is forbidden: failed quota: q: must specify requests.memory',
                  "involvedObject": {"kind": "ReplicaSet", "name": "cart-1"}}]
    found = quota_exhausted(ns, CONTEXT)
    assert [(f.name, f.workloads) for f in found] == [("q", ("cart",))]
    pending = {"kind": "Pod", "metadata": {"name": "cart-1-y", "ownerReferences": [{"kind": "ReplicaSet",
                                                                                   "name": "cart-1"}]},
               "spec": {}, "status": {"phase": "Pending"}}
    ns = snapshot(deployment(), replicaset("cart-1", 1, TEMPLATE), pending)
    ns.nodes = [{"metadata": {"name": "n1"}, "spec": {"unschedulable": True}}, {"metadata": {"name": "n2"}, "spec": {}}]
    assert [(f.kind, f.name, f.namespace, f.workloads) for f in cordoned_nodes(ns, CONTEXT)] == \
        [("Node", "n1", None, ("cart",))]
