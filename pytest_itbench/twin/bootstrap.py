"""What a freshly installed cluster holds before anyone uses it.

Namespaces ``default``, ``kube-system``, ``kube-public`` and
``kube-node-lease``; the ``kubernetes`` Service with its Endpoints and
EndpointSlice; the two system PriorityClasses; a default StorageClass as kind
ships; the RBAC bootstrap policy; and, on request, ready worker nodes with
realistic capacity, labels, status and leases.
"""

from __future__ import annotations

import hashlib

from .apiserver.access import rbac_policy
from .apiserver.registry import Ctx, ResourceAPI

API_SERVER_IP = "172.18.0.2"
NODE_CAPACITY = {
    "cpu": "8",
    "ephemeral-storage": "102625208Ki",
    "hugepages-1Gi": "0",
    "hugepages-2Mi": "0",
    "memory": "32863516Ki",
    "pods": "110",
}


def _create(api: ResourceAPI, ctx: Ctx, obj: dict) -> dict:
    res = api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
    assert res is not None, obj["kind"]
    return api.create(res, obj["metadata"].get("namespace"), obj, ctx)


def bootstrap(api: ResourceAPI, ctx: Ctx, nodes: int = 0, cluster_name: str = "itbench") -> None:
    for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
        _create(api, ctx, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    for obj in rbac_policy.bootstrap_objects():
        _create(api, ctx, obj)
    _create(api, ctx, {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kubernetes", "namespace": "default",
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"clusterIP": "10.96.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                                                      "targetPort": 6443}]},
    })
    _create(api, ctx, {
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "kubernetes", "namespace": "default",
                     "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": [{"ip": API_SERVER_IP}],
                     "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}],
    })
    _create(api, ctx, {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "kubernetes", "namespace": "default",
                     "labels": {"kubernetes.io/service-name": "kubernetes"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": [API_SERVER_IP], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}],
    })
    for name, value, description in (
            ("system-cluster-critical", 2000000000,
             "Used for system critical pods that must run in the cluster, but can be moved to another node if "
             "necessary."),
            ("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their "
                                                 "current node.")):
        _create(api, ctx, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": name}, "value": value, "description": description,
                           "preemptionPolicy": "PreemptLowerPriority"})
    _create(api, ctx, {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
    })
    for i in range(nodes):
        add_node(api, ctx, node_name(cluster_name, i), i)


def node_name(cluster: str, index: int) -> str:
    return f"{cluster}-worker" if index == 0 else f"{cluster}-worker{index + 1}"


def add_node(api: ResourceAPI, ctx: Ctx, name: str, index: int, capacity: dict | None = None,
             labels: dict | None = None, arch: str = "amd64", *, allocatable: dict | None = None,
             annotations: dict | None = None, taints: list[dict] | None = None,
             provider_id: str | None = None) -> dict:
    """Register a Ready node with its lease, as a kubelet joining the cluster does.

    ``index`` gives the node its InternalIP and pod CIDR. Allocatable is the capacity unless given (a cloud
    node's kubelet reserves some); ``annotations``, ``taints`` and ``provider_id`` are what a cloud's node
    template adds (the cluster autoscaler's nodes)."""
    cap = dict(NODE_CAPACITY, **(capacity or {}))
    allocatable = dict(cap, **(allocatable or {}))
    now = api.clock.timestamp()
    digest = hashlib.sha256(name.encode()).hexdigest()
    node_labels = {
        "beta.kubernetes.io/arch": arch,
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": arch,
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
    }
    node_labels.update(labels or {})
    ip = f"172.18.0.{index + 3}"
    condition = lambda type_, status, reason, message: {  # noqa: E731
        "type": type_, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": now,
        "reason": reason, "message": message}
    node = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": node_labels, "annotations": {
            "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock",
            "node.alpha.kubernetes.io/ttl": "0",
            "volumes.kubernetes.io/controller-managed-attach-detach": "true", **(annotations or {})}},
        "spec": {"podCIDR": f"10.244.{index + 1}.0/24", "podCIDRs": [f"10.244.{index + 1}.0/24"],
                 "providerID": provider_id or f"kind://docker/itbench/{name}"},
        "status": {
            "capacity": cap,
            "allocatable": allocatable,
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                          "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": digest[:32], "systemUUID": f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-"
                                                        f"{digest[16:20]}-{digest[20:32]}",
                "bootID": f"{digest[32:40]}-{digest[40:44]}-{digest[44:48]}-{digest[48:52]}-{digest[52:64]}",
                "kernelVersion": "6.1.0-28-cloud-amd64", "osImage": "Debian GNU/Linux 12 (bookworm)",
                "containerRuntimeVersion": "containerd://1.7.24", "kubeletVersion": "v1.31.4",
                "kubeProxyVersion": "v1.31.4", "operatingSystem": "linux", "architecture": arch},
            "images": [],
        },
    }
    if taints:
        node["spec"]["taints"] = [dict(t) for t in taints]
    created = _create(api, ctx, node)
    _create(api, ctx, {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": name, "namespace": "kube-node-lease", "ownerReferences": [{
            "apiVersion": "v1", "kind": "Node", "name": name, "uid": created["metadata"]["uid"]}]},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
                 "renewTime": api.clock.micro_timestamp()},
    })
    return created
