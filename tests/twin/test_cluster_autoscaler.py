"""The cluster autoscaler over the kwok provider's node-group ConfigMaps, driven through the official client.

Each test starts a twin with every controller, writes ``kube-system/kwok-provider-config`` and
``kwok-provider-templates`` as a user or a fault would, and warps the clock: new nodes register 75 s after
their launch, the loop runs every 10 s, nodes go after 10 unneeded minutes.
"""

from __future__ import annotations

import pytest
import yaml
from kubernetes import client as k8s

from pytest_itbench.twin import Twin
from pytest_itbench.twin.controllers.autoscaler import config as node_groups

T0 = 1_700_000_000
GROUP_LABEL = "eks.amazonaws.com/nodegroup"
PROVIDER = {"apiVersion": "v1alpha1", "readNodesFrom": "configmap",
            "nodegroups": {"fromNodeLabelKey": GROUP_LABEL}, "nodes": {"skipTaint": True},
            "configmap": {"name": "kwok-provider-templates"}}
BOOT = 80  # provisioning (75 s) and the next loop


def template(name: str, instance_type: str | None = "m5.large", min_count=0, max_count=5, desired=None,
             labels: dict | None = None) -> dict:
    annotations = {"cluster-autoscaler.kwok.nodegroup/min-count": str(min_count),
                   "cluster-autoscaler.kwok.nodegroup/max-count": str(max_count)}
    if desired is not None:
        annotations["cluster-autoscaler.kwok.nodegroup/desired-count"] = str(desired)
    node_labels = {GROUP_LABEL: name, **(labels or {})}
    if instance_type:
        node_labels["node.kubernetes.io/instance-type"] = instance_type
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"{name}-template", "labels": node_labels, "annotations": annotations}}


def templates_text(*nodes: dict) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(nodes)})


@pytest.fixture
def twin():
    with Twin(seed=21, nodes=0, start_time=T0, telemetry=False, workload=False) as t:
        yield t


@pytest.fixture
def core(client):
    return k8s.CoreV1Api(client)


@pytest.fixture
def apps(client):
    return k8s.AppsV1Api(client)


def configure(core, *nodes: dict) -> None:
    core.create_namespaced_config_map("kube-system", {
        "metadata": {"name": "kwok-provider-config"}, "data": {"config": yaml.safe_dump(PROVIDER)}})
    core.create_namespaced_config_map("kube-system", {
        "metadata": {"name": "kwok-provider-templates"}, "data": {"templates": templates_text(*nodes)}})


def reconfigure(core, *nodes: dict) -> None:
    core.patch_namespaced_config_map("kwok-provider-templates", "kube-system",
                                     {"data": {"templates": templates_text(*nodes)}})


def group_nodes(core, group: str = "general") -> list:
    return sorted(core.list_node(label_selector=f"{GROUP_LABEL}={group}").items, key=lambda n: n.metadata.name)


def ready(node) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or ())


def status(core) -> dict:
    return yaml.safe_load(core.read_namespaced_config_map("cluster-autoscaler-status", "kube-system").data["status"])


def group_status(core, group: str = "general") -> dict:
    return next(g for g in status(core)["nodeGroups"] if g["name"] == group)


def events(core, reason: str, namespace: str = "default") -> list:
    return [e for e in core.list_namespaced_event(namespace).items if e.reason == reason]


def deployment(apps, name: str, replicas: int, cpu: str, memory: str = "256Mi", **pod_spec) -> None:
    labels = {"app": name}
    apps.create_namespaced_deployment("default", {
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "app", "image": "nginx:1.25", "resources": {
                                  "requests": {"cpu": cpu, "memory": memory}}}], **pod_spec}}}})


def pods(core, app: str) -> list:
    return sorted(core.list_namespaced_pod("default", label_selector=f"app={app}").items,
                  key=lambda p: p.metadata.name)


# ---- sizes ----------------------------------------------------------------------------------------------------

def test_a_twin_without_node_groups_has_no_autoscaler_activity(twin, core, apps):
    twin.add_node()
    deployment(apps, "big", 1, "64")  # unschedulable anywhere
    twin.warp(120)
    assert [cm.metadata.name for cm in core.list_namespaced_config_map("kube-system").items] == ["kube-root-ca.crt"]
    assert not [e for e in core.list_event_for_all_namespaces().items if e.source.component == "cluster-autoscaler"]
    assert [n.metadata.name for n in core.list_node().items] == ["itbench-worker"]


def test_min_size_is_honoured_with_nodes_of_the_instance_type(twin, core):
    twin.add_node()  # a static node: in no group, never touched
    configure(core, template("general", "m5.large", min_count=2, max_count=4))
    twin.warp(30)
    assert group_nodes(core) == []  # still booting
    health = group_status(core)["health"]
    assert (health["cloudProviderTarget"], health["nodeCounts"]["unregistered"], health["minSize"],
            health["maxSize"]) == (2, 2, 2, 4)
    twin.warp(60)
    nodes = group_nodes(core)
    assert len(nodes) == 2 and all(ready(n) for n in nodes)
    assert all(n.metadata.name.startswith("general-") for n in nodes)
    labels = nodes[0].metadata.labels
    assert labels["node.kubernetes.io/instance-type"] == labels["beta.kubernetes.io/instance-type"] == "m5.large"
    assert labels["topology.kubernetes.io/region"] == "us-east-1"
    assert {n.metadata.labels["topology.kubernetes.io/zone"] for n in nodes} == {"us-east-1a", "us-east-1b"}
    assert nodes[0].status.capacity["cpu"] == "2" and nodes[0].status.capacity["memory"] == "8388608Ki"
    assert nodes[0].status.allocatable["cpu"] == "1930m"  # the EKS AMI's kube-reserved
    assert nodes[0].metadata.annotations["cluster-autoscaler.kwok.nodegroup/name"] == "general"
    assert not nodes[0].spec.taints  # skipTaint
    static = core.read_node("itbench-worker")
    assert "node.kubernetes.io/instance-type" not in static.metadata.labels
    assert group_status(core)["health"]["nodeCounts"]["registered"]["ready"] == 2
    twin.warp(900)  # idle, but at min size: nothing goes
    assert len(group_nodes(core)) == 2 and core.read_node("itbench-worker")


def test_an_unschedulable_pod_triggers_a_scale_up_and_runs_on_the_new_node(twin, core, apps):
    configure(core, template("general", "m5.large", min_count=1, max_count=3))
    twin.warp(BOOT)
    first = group_nodes(core)[0].metadata.name
    deployment(apps, "web", 2, "1500m")  # one per m5.large (1930m allocatable)
    twin.warp(15)
    waiting = [p for p in pods(core, "web") if not p.spec.node_name]
    assert len(waiting) == 1
    triggered = events(core, "TriggeredScaleUp")
    assert [(e.involved_object.name, e.message, e.source.component) for e in triggered] == [
        (waiting[0].metadata.name, "pod triggered scale-up: [{general 1->2 (max: 3)}]", "cluster-autoscaler")]
    scaled = events(core, "ScaledUpGroup", "kube-system")
    assert [e.message for e in scaled] == ["Scale-up: setting group general size to 2 instead of 1 (max: 3)",
                                           "Scale-up: group general size set to 2 instead of 1 (max: 3)"]
    assert scaled[0].involved_object.name == "cluster-autoscaler-status"
    assert group_status(core)["scaleUp"]["status"] == "InProgress"
    assert len(group_nodes(core)) == 1  # the instance is booting
    twin.warp(BOOT + 10)
    nodes = [n.metadata.name for n in group_nodes(core)]
    assert len(nodes) == 2
    (new,) = set(nodes) - {first}
    placed = core.read_namespaced_pod(waiting[0].metadata.name, "default")
    assert placed.spec.node_name == new and placed.status.phase == "Running"
    assert group_status(core)["scaleUp"]["status"] == "NoActivity"


def test_max_size_is_respected_and_the_pod_stays_pending(twin, core, apps):
    configure(core, template("general", "m5.large", min_count=1, max_count=1))
    twin.warp(BOOT)
    deployment(apps, "web", 2, "1500m")
    twin.warp(180)
    assert len(group_nodes(core)) == 1
    waiting = [p for p in pods(core, "web") if not p.spec.node_name]
    assert len(waiting) == 1 and waiting[0].status.phase == "Pending"
    refused = [e for e in events(core, "NotTriggerScaleUp") if e.involved_object.name == waiting[0].metadata.name]
    assert [e.message for e in refused] == ["pod didn't trigger scale-up: 1 max node group size reached"]
    assert refused[0].count > 10  # said again at every loop, counted on one event
    assert not events(core, "TriggeredScaleUp")


def test_a_pod_no_template_fits_says_why_in_the_scheduler_s_words(twin, core, apps):
    configure(core, template("general", "m5.large", min_count=0, max_count=3),
              template("compute", "c5.xlarge", min_count=0, max_count=3, labels={"workload": "batch"}))
    deployment(apps, "huge", 1, "6")  # more than any template offers
    deployment(apps, "picky", 1, "100m", nodeSelector={"disktype": "ssd"})
    twin.warp(30)
    messages = {e.involved_object.name.split("-")[0]: e.message for e in events(core, "NotTriggerScaleUp")}
    assert messages == {"huge": "pod didn't trigger scale-up: 2 Insufficient cpu",
                        "picky": "pod didn't trigger scale-up: 2 node(s) didn't match Pod's node affinity/selector"}
    assert core.list_node().items == []


def test_without_skip_taint_nodes_carry_kwok_s_taint_and_only_tolerating_pods_scale_up(twin, core, apps):
    core.create_namespaced_config_map("kube-system", {"metadata": {"name": "kwok-provider-config"}, "data": {
        "config": yaml.safe_dump({**PROVIDER, "nodes": {}})}})
    core.create_namespaced_config_map("kube-system", {"metadata": {"name": "kwok-provider-templates"}, "data": {
        "templates": templates_text(template("general", "m5.large", min_count=0, max_count=2))}})
    deployment(apps, "plain", 1, "100m")
    deployment(apps, "tolerant", 1, "100m", tolerations=[{"key": "kwok-provider", "operator": "Exists"}])
    twin.warp(15)
    (refused,) = events(core, "NotTriggerScaleUp")
    assert refused.involved_object.name.startswith("plain-")
    assert refused.message == "pod didn't trigger scale-up: 1 node(s) had untolerated taint {kwok-provider: true}"
    (triggered,) = events(core, "TriggeredScaleUp")
    assert triggered.involved_object.name.startswith("tolerant-")
    twin.warp(BOOT)
    (node,) = group_nodes(core)
    assert [(t.key, t.value, t.effect) for t in node.spec.taints] == [("kwok-provider", "true", "NoSchedule")]


# ---- scale-down -----------------------------------------------------------------------------------------------

def test_an_unneeded_node_is_drained_after_ten_minutes_and_not_before(twin, core, apps):
    configure(core, template("general", "m5.large", min_count=1, max_count=3, desired=2))
    twin.warp(BOOT)
    deployment(apps, "web", 2, "200m")
    twin.warp(20)
    placed = {p.spec.node_name for p in pods(core, "web")}
    assert len(placed) == 2  # spread: both nodes hold a pod, both under half used
    twin.warp(540)  # nine minutes of being unneeded
    assert len(group_nodes(core)) == 2
    scale_down = status(core)["clusterWide"]["scaleDown"]
    # One of the two can go: once its pod is counted on the other node, the other node cannot go as well.
    assert (scale_down["status"], scale_down["candidates"]) == ("CandidatesPresent", 1)
    drained = None
    for _ in range(20):  # the first loop to find it unneeded ran as the nodes registered, at T0 + 75 s
        twin.warp(5)
        marked = [n for n in group_nodes(core) if n.spec.taints]
        if marked:
            (node,) = marked
            drained = node.metadata.name
            assert [(t.key, t.effect) for t in node.spec.taints] == [("ToBeDeletedByClusterAutoscaler", "NoSchedule")]
            break
    assert drained is not None and 75 + 600 <= twin.clock.now() - T0 < 75 + 600 + 15
    marked = events(core, "ScaleDown")
    node_events = [e for e in marked if e.involved_object.kind == "Node"]
    assert [(e.involved_object.name, e.message) for e in node_events] == [
        (drained, "marked the node as toBeDeleted/unschedulable")]
    pod_events = [e for e in marked if e.involved_object.kind == "Pod"]
    assert [e.message for e in pod_events] == ["deleting pod for node scale down"]
    twin.warp(60)
    nodes = [n.metadata.name for n in group_nodes(core)]
    assert len(nodes) == 1 and drained not in nodes
    running = [p for p in pods(core, "web") if p.status.phase == "Running" and not p.metadata.deletion_timestamp]
    assert len(running) == 2 and {p.spec.node_name for p in running} == set(nodes)
    removed = [e.message for e in events(core, "ScaleDown", "kube-system")]
    assert removed[0].startswith(f"Scale-down: removing node {drained}, utilization: {{")
    assert removed[-1] == f"Scale-down: node {drained} removed with drain"
    twin.warp(900)
    assert len(group_nodes(core)) == 1  # min size


def test_no_node_goes_within_ten_minutes_of_a_scale_up(twin, core, apps):
    configure(core, template("general", "m5.large", min_count=1, max_count=5, desired=3),
              template("batch", "c5.large", min_count=0, max_count=2, labels={"workload": "batch"}))
    twin.warp(BOOT)  # two idle general nodes, unneeded from now on
    twin.warp(420)
    deployment(apps, "job", 1, "500m", nodeSelector={"workload": "batch"})  # only the batch group fits it
    twin.warp(10)
    scaled_up_at = twin.clock.now()
    assert [e.message for e in events(core, "TriggeredScaleUp")] == ["pod triggered scale-up: [{batch 0->1 (max: 2)}]"]
    twin.warp(400)  # the general nodes have been unneeded for more than ten minutes, but the scale-up was recent
    assert len(group_nodes(core)) == 3
    twin.warp(scaled_up_at + 600 + 15 - twin.clock.now())
    assert len(group_nodes(core)) == 1
    assert len(group_nodes(core, "batch")) == 1  # its pod runs there


def test_a_pod_without_a_controller_keeps_its_node(twin, core):
    configure(core, template("general", "m5.large", min_count=0, max_count=3, desired=1))
    twin.warp(BOOT)
    core.create_namespaced_pod("default", {"metadata": {"name": "lonely"}, "spec": {"containers": [
        {"name": "app", "image": "nginx:1.25", "resources": {"requests": {"cpu": "100m"}}}]}})
    twin.warp(1200)
    assert len(group_nodes(core)) == 1
    assert core.read_namespaced_pod("lonely", "default").status.phase == "Running"


def test_lowering_min_size_lets_idle_nodes_go(twin, core):
    configure(core, template("general", "m5.large", min_count=3, max_count=5))
    twin.warp(BOOT)
    assert len(group_nodes(core)) == 3
    twin.warp(720)  # idle for twelve minutes, held by the min size
    assert len(group_nodes(core)) == 3
    reconfigure(core, template("general", "m5.large", min_count=1, max_count=5))
    twin.warp(5)
    assert len(group_nodes(core)) == 1  # unneeded long enough already: the empty nodes go at once
    empty = [e.message for e in events(core, "ScaleDownEmpty", "kube-system")]
    assert len(empty) == 2 and all(m.startswith('Scale-down: removing empty node "general-') for m in empty)
    assert group_status(core)["health"]["minSize"] == 1


# ---- instance types -------------------------------------------------------------------------------------------

def test_an_instance_type_change_replaces_the_nodes_one_at_a_time(twin, core, apps, client):
    configure(core, template("general", "m5.large", min_count=2, max_count=2))
    twin.warp(BOOT)
    old = {n.metadata.name for n in group_nodes(core)}
    deployment(apps, "web", 2, "200m")
    k8s.PolicyV1Api(client).create_namespaced_pod_disruption_budget("default", {
        "metadata": {"name": "web"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    twin.warp(20)
    reconfigure(core, template("general", "m5.xlarge", min_count=2, max_count=2))
    most, cordoned = 0, set()
    for _ in range(60):
        twin.warp(10)
        nodes = group_nodes(core)
        most = max(most, len(nodes))
        cordoned |= {n.metadata.name for n in nodes if n.spec.unschedulable}
        assert sum(1 for n in nodes if ready(n) and not n.spec.unschedulable) >= 1
        running = [p for p in pods(core, "web") if p.status.phase == "Running" and not p.metadata.deletion_timestamp]
        assert len(running) >= 1  # the budget holds
        if not old & {n.metadata.name for n in nodes} and len(nodes) == 2:
            break
    nodes = group_nodes(core)
    assert not old & {n.metadata.name for n in nodes} and len(nodes) == 2
    assert most == 3  # one surge node at a time, above max size
    assert cordoned == old
    assert {n.metadata.labels["node.kubernetes.io/instance-type"] for n in nodes} == {"m5.xlarge"}
    assert {n.status.capacity["cpu"] for n in nodes} == {"4"}
    twin.warp(30)
    assert len([p for p in pods(core, "web") if p.status.phase == "Running"]) == 2


# ---- errors ---------------------------------------------------------------------------------------------------

def test_a_bad_node_group_is_reported_by_group_and_field_and_the_others_keep_working(twin, core):
    broken = template("broken", "m5.huge", min_count=1, max_count=3)
    inverted = template("inverted", "m5.large", min_count=4, max_count=2)
    configure(core, template("general", "m5.large", min_count=1, max_count=3), broken, inverted)
    twin.warp(BOOT)
    message = status(core)["message"]
    assert "node group 'broken' (template node 'broken-template'): metadata.labels[node.kubernetes.io/" \
           "instance-type]: unknown instance type 'm5.huge'" in message
    assert "node group 'inverted' (template node 'inverted-template'): metadata.annotations[cluster-autoscaler." \
           "kwok.nodegroup/max-count]: max-count 2 is less than min-count 4" in message
    warnings = events(core, "InvalidNodeGroupConfig", "kube-system")
    assert {e.involved_object.name for e in warnings} == {"kwok-provider-templates"}
    assert all(e.type == "Warning" for e in warnings) and len(warnings) == 2
    assert [g["name"] for g in status(core)["nodeGroups"]] == ["general"]
    assert len(group_nodes(core)) == 1 and group_nodes(core, "broken") == [] and group_nodes(core, "inverted") == []
    reconfigure(core, template("general", "m5.large", min_count=1, max_count=3),
                template("broken", "c5.large", min_count=1, max_count=3))
    twin.warp(BOOT)
    assert "message" not in status(core)
    assert len(group_nodes(core, "broken")) == 1


def test_a_broken_provider_config_is_reported_and_nothing_scales(twin, core):
    core.create_namespaced_config_map("kube-system", {
        "metadata": {"name": "kwok-provider-config"}, "data": {"config": "readNodesFrom: configmap\n"}})
    twin.warp(20)
    assert status(core)["message"] == "please specify 'configmap.name' in kwok config (currently empty or undefined)"
    assert status(core)["nodeGroups"] == [] if "nodeGroups" in status(core) else True
    (warning,) = events(core, "InvalidNodeGroupConfig", "kube-system")
    assert warning.involved_object.name == "kwok-provider-config"
    assert core.list_node().items == []


def test_the_same_seed_and_actions_give_the_same_nodes():
    def run() -> list[str]:
        with Twin(seed=4, nodes=0, start_time=T0, telemetry=False, workload=False) as twin:
            config = twin.api.catalog.lookup("", "v1", "configmaps")
            for name, key, text in (("kwok-provider-config", "config", yaml.safe_dump(PROVIDER)),
                                    ("kwok-provider-templates", "templates",
                                     templates_text(template("general", min_count=3)))):
                twin.api.create(config, "kube-system", {"apiVersion": "v1", "kind": "ConfigMap",
                                                        "metadata": {"name": name}, "data": {key: text}},
                                twin.admin_ctx)
            twin.warp(BOOT)
            return sorted((n["metadata"]["name"], n["metadata"]["uid"], n["metadata"]["labels"][
                "topology.kubernetes.io/zone"]) for n in twin.store.list("nodes")[0])
    first = run()
    assert len(first) == 3 and first == run()


def test_configmaps_renders_what_load_reads_back():
    provider, templates = node_groups.configmaps([
        {"name": "general", "instance_type": "m5.large", "min_size": 1, "max_size": 4},
        {"name": "batch", "instance_type": "c5.xlarge", "min_size": 0, "max_size": 2, "desired": 1,
         "labels": {"workload": "batch"}, "taints": [{"key": "batch", "value": "true", "effect": "NoSchedule"}]}])
    found = {cm["metadata"]["name"]: cm for cm in (provider, templates)}
    config = node_groups.load(lambda ns, name: found.get(name) if ns == "kube-system" else None)
    assert config.errors == []
    assert [(g.name, g.instance_type, g.min_size, g.max_size, g.desired) for g in config.groups] == [
        ("batch", "c5.xlarge", 0, 2, 1), ("general", "m5.large", 1, 4, 1)]
    batch = config.groups[0]
    assert batch.labels["workload"] == "batch" and batch.taints == ({"key": "batch", "value": "true",
                                                                       "effect": "NoSchedule"},)
    assert batch.capacity["cpu"] == "4" and batch.allocatable["cpu"] == "3920m"
