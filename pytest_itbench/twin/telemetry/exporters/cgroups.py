"""Container and pod cgroup paths, as cAdvisor's ``id`` label shows them on a systemd-managed kubelet.

Pods sit under their QoS class's slice (Guaranteed pods directly under ``kubepods.slice``), with the
pod UID's dashes turned into underscores (systemd reserves ``-`` for nesting); containers are the
containerd scopes inside.
"""

from __future__ import annotations

_QOS_SLICES = {"Guaranteed": "", "Burstable": "burstable", "BestEffort": "besteffort"}


def pod_cgroup(uid: str, qos_class: str) -> str:
    qos = _QOS_SLICES.get(qos_class, "besteffort")
    pod = f"pod{uid.replace('-', '_')}"
    if not qos:
        return f"/kubepods.slice/kubepods-{pod}.slice"
    return f"/kubepods.slice/kubepods-{qos}.slice/kubepods-{qos}-{pod}.slice"


def container_cgroup(uid: str, qos_class: str, container_id: str) -> str:
    return f"{pod_cgroup(uid, qos_class)}/cri-containerd-{container_id}.scope"
