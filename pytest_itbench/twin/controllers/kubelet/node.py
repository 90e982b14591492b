"""What the kubelet of one node keeps about its machine: identity, image store, pod addresses, usage.

The node's own status and lease belong to the node heartbeat controller;
the kubelet here reads the Node object for what a kubelet knows of itself
(its addresses, pod CIDR, architecture, allocatable resources) and whether
it is running at all (a node that is not Ready runs no kubelet).
"""

from __future__ import annotations

import ipaddress
import math
import zlib
from dataclasses import dataclass, field

from ...apiserver.access.authn import user_for
from ...apiserver.registry import Ctx
from ...images import Image
from ..events import EventSource

# What the node's own processes (systemd, containerd, the kubelet) use, as metrics-server sees it on a kind node.
SYSTEM_CPU = 0.08
SYSTEM_MEMORY = 620 * 1024 * 1024
PLEG_RELIST_PERIOD = 1.0  # the generic PLEG relists the runtime's containers every second


def node_ready(node: dict | None) -> bool:
    if node is None:
        return False
    for condition in (node.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def internal_ip(node: dict) -> str:
    for address in (node.get("status") or {}).get("addresses") or ():
        if address.get("type") == "InternalIP":
            return address.get("address", "")
    return ""


@dataclass
class NodeAgent:
    name: str
    architecture: str
    host_ip: str
    pod_cidr: str
    ctx: Ctx
    source: EventSource
    images: dict[str, Image] = field(default_factory=dict)  # by normalized reference
    pulls_free_at: float = 0.0  # the kubelet pulls one image at a time (serializeImagePulls)
    usage: dict[tuple[str, str, str], tuple[float, int]] = field(default_factory=dict)
    admitted: dict[str, tuple[int, int]] = field(default_factory=dict)  # pod uid -> (milli CPU, memory bytes)
    next_eviction_at: float = float("-inf")  # the eviction manager evicts one pod per monitoring interval
    gateway: str = ""  # where the kubelet's probes come from, as pods see them (the pod CIDR's bridge address)
    _ips_in_use: set[str] = field(default_factory=set)
    _next_host: int = 2

    @property
    def relist_phase(self) -> float:
        """Where in each second this node's PLEG ticker fires: fixed by when its kubelet started, which is no
        cluster state; taken from the node's name so that it is the same on every run and differs by node."""
        return (zlib.crc32(self.name.encode()) % 1000) / 1000 * PLEG_RELIST_PERIOD

    def next_relist(self, t: float) -> float:
        """The first relist strictly after ``t``: when the kubelet learns of a container started or ended at ``t``."""
        phase = self.relist_phase
        ticks = math.floor((t - phase) / PLEG_RELIST_PERIOD + 1e-9) + 1
        return phase + ticks * PLEG_RELIST_PERIOD

    @classmethod
    def from_node(cls, node: dict) -> "NodeAgent":
        name = node["metadata"]["name"]
        spec, status = node.get("spec") or {}, node.get("status") or {}
        architecture = ((status.get("nodeInfo") or {}).get("architecture")
                        or (node["metadata"].get("labels") or {}).get("kubernetes.io/arch") or "amd64")
        ctx = Ctx(user=user_for(f"system:node:{name}", ("system:nodes",)), field_manager="kubelet", trusted=True)
        pod_cidr = spec.get("podCIDR") or ""
        host_ip = internal_ip(node)
        gateway = str(ipaddress.ip_network(pod_cidr, strict=False).network_address + 1) if pod_cidr else host_ip
        return cls(name, architecture, host_ip, pod_cidr, ctx, EventSource("kubelet", host=name), gateway=gateway)

    # ---- pod addresses (host-local IPAM: the next free address after the last one handed out) -------------------
    def allocate_ip(self) -> str:
        if not self.pod_cidr:
            return ""
        network = ipaddress.ip_network(self.pod_cidr, strict=False)
        hosts = network.num_addresses - 2
        for step in range(hosts):
            host = (self._next_host - 2 + step) % (hosts - 1) + 2
            address = str(network.network_address + host)
            if address not in self._ips_in_use:
                self._ips_in_use.add(address)
                self._next_host = host + 1
                return address
        return ""

    def release_ip(self, address: str) -> None:
        self._ips_in_use.discard(address)


    # ---- usage (what cAdvisor reports for the node) --------------------------------------------------------------
    def node_usage(self) -> tuple[float, int]:
        cpu = SYSTEM_CPU + sum(c for c, _ in self.usage.values())
        memory = SYSTEM_MEMORY + sum(m for _, m in self.usage.values())
        return cpu, memory
