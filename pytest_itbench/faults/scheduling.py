"""Faults that leave a workload's pods with nowhere to run: cordoned nodes, a node selector no node matches, an
anti-affinity rule no node can satisfy.

The pods that cannot be placed stay Pending (the scheduler records a FailedScheduling event saying why), which
kube-state-metrics reports and KubePodNotReady alerts on.
"""

from __future__ import annotations

from typing import Literal

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from .base import Fault, FaultArgs, FaultError, FaultRecord
from ._k8s import read_workload
from ._template import POD_SPEC, evict, node_ready, nodes, pod_spec, restore_field, set_field, workload_pods

WORKLOADS = ("Deployment", "StatefulSet")
HOSTNAME = "kubernetes.io/hostname"


# ---- cordoned nodes -------------------------------------------------------------------------------------------------
class CordonArgs(FaultArgs):
    # "eligible": every Ready, schedulable node the workload's node selector allows (on a multi-node cluster the
    # evicted pods would otherwise land on a neighbour, as they do after a routine drain); "hosting": only the
    # nodes its pods run on now.
    nodes: Literal["eligible", "hosting"] = "eligible"


class CordonedWorkerNode(Fault):
    name = "cordoned-kubernetes-worker-node"
    description = ("Cordons the worker nodes the workload can run on (as `kubectl cordon` does) and evicts its "
                   "pods, so their replacements stay Pending.")
    Args = CordonArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodNotReady",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        workload = read_workload(api, record.target)
        if "cordoned" in record.saved:
            for name in record.saved["cordoned"]:
                _set_unschedulable(api, name, True)
            return
        pods = workload_pods(api, record.target, workload)
        hosting = {p["spec"].get("nodeName") for p in pods if p["spec"].get("nodeName")}
        selector = pod_spec(workload).get("nodeSelector") or {}
        chosen = []
        for node in nodes(api):
            meta, spec = node["metadata"], node.get("spec") or {}
            labels = meta.get("labels") or {}
            if spec.get("unschedulable") or not node_ready(node):
                continue
            if record.args.nodes == "hosting" and meta["name"] not in hosting:
                continue
            if any(labels.get(k) != v for k, v in selector.items()):
                continue
            chosen.append(meta["name"])
        if not chosen:
            raise FaultError(f"no schedulable node to cordon for {record.target.kind} "
                             f"{record.target.namespace}/{record.target.name}")
        record.saved["cordoned"] = sorted(chosen)
        for name in record.saved["cordoned"]:
            _set_unschedulable(api, name, True)
        for pod in pods:
            evict(api, pod)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        for name in record.saved.get("cordoned", ()):
            _set_unschedulable(api, name, False)


def _set_unschedulable(api: ApiClient, name: str, value: bool) -> None:
    try:
        client.CoreV1Api(api).patch_node(name, {"spec": {"unschedulable": value or None}})
    except ApiException as exc:
        raise FaultError(f"cannot {'cordon' if value else 'uncordon'} node {name}: {exc.reason}") from None


# ---- a node selector no node matches --------------------------------------------------------------------------------
class NodeArgs(FaultArgs):
    node: str = "worker-node-retired"  # a hostname no node has


class NonexistentNode(Fault):
    name = "nonexistent-kubernetes-workload-node"
    description = "Pins the workload's pods with a nodeSelector to a node that does not exist; they stay Pending."
    Args = NodeArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodNotReady",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        node = record.args.node
        if any(n["metadata"]["name"] == node for n in nodes(api)):
            raise FaultError(f"node {node} exists; name a node that does not")
        spec = pod_spec(read_workload(api, record.target))
        current = spec.get("nodeSelector")
        wanted = {**(current or {}), HOSTNAME: node}
        if current == wanted and "nodeSelector" in record.saved:
            return
        record.saved.setdefault("nodeSelector", current)
        set_field(api, record.target, f"{POD_SPEC}/nodeSelector", wanted, "nodeSelector" in spec)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "nodeSelector" in record.saved:
            restore_field(api, record.target, "nodeSelector", record.saved["nodeSelector"])


# ---- an anti-affinity rule no node satisfies ------------------------------------------------------------------------
class AntiAffinityArgs(FaultArgs):
    # The pods to keep away from, by one label: default the application's own (app.kubernetes.io/part-of, else
    # the workload's selector), which run on every node, the workload's own pods among them.
    label: str | None = None
    value: str | None = None


class UnschedulableAntiAffinity(Fault):
    name = "unschedulable-kubernetes-workload-pod-anti-affinity-rule"
    description = ("Gives the workload a required pod anti-affinity (per hostname) against pods that run on every "
                   "node, so its new pods cannot be placed anywhere.")
    Args = AntiAffinityArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodNotReady",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        t = record.target
        workload = read_workload(api, t)
        spec = pod_spec(workload)
        key, value = self._label(workload, record)
        term = {"labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]},
                "topologyKey": HOSTNAME}
        current = spec.get("affinity")
        wanted = {**(current or {}), "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        if current == wanted and "affinity" in record.saved:
            return
        self._check_every_node_hosts(api, t.namespace, key, value)
        record.saved.setdefault("affinity", current)
        set_field(api, t, f"{POD_SPEC}/affinity", wanted, "affinity" in spec)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "affinity" in record.saved:
            restore_field(api, record.target, "affinity", record.saved["affinity"])

    @staticmethod
    def _label(workload: dict, record: FaultRecord) -> tuple[str, str]:
        args: AntiAffinityArgs = record.args
        labels = workload["spec"]["template"]["metadata"].get("labels") or {}
        key = args.label or ("app.kubernetes.io/part-of" if "app.kubernetes.io/part-of" in labels
                             else next(iter(sorted((workload["spec"]["selector"].get("matchLabels") or {}))), None))
        value = args.value or labels.get(key or "")
        if not key or value is None:
            raise FaultError(f"{record.target.kind} {record.target.namespace}/{record.target.name}: no label to keep "
                             f"away from; give the fault label and value arguments")
        return key, value

    @staticmethod
    def _check_every_node_hosts(api: ApiClient, namespace: str, key: str, value: str) -> None:
        """The rule is meant to be unsatisfiable: every schedulable node must already run a matching pod."""
        pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=f"{key}={value}").items
        hosting = {p.spec.node_name for p in pods if p.spec.node_name}
        free = sorted(n["metadata"]["name"] for n in nodes(api)
                      if node_ready(n) and not (n.get("spec") or {}).get("unschedulable")
                      and n["metadata"]["name"] not in hosting)
        if free:
            raise FaultError(f"nodes {', '.join(free)} run no pod labelled {key}={value}: the anti-affinity rule "
                             f"could be met there; choose a label whose pods run on every node")


FAULTS = (CordonedWorkerNode(), NonexistentNode(), UnschedulableAntiAffinity())
