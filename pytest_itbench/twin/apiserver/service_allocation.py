"""Cluster IPs and node ports of Services, allocated as the Service REST storage does.

Allocation happens once an object is valid (as upstream's BeginCreate and
BeginUpdate), and failures are field errors with the allocators' messages.
An allocator only *picks* free values; what is in use is learnt from the
Services actually stored (:func:`track`, an after-write hook), so a dry run
or a write refused later reserves nothing, and deleting a Service frees its
IP and ports.
"""

from __future__ import annotations

import ipaddress

from .. import errors
from ..errors import FieldError
from . import gosyntax

SERVICE_CIDR = "10.96.0.0/12"
NODE_PORT_RANGE = (30000, 32767)


class IPAllocator:
    """Addresses of the service CIDR; dynamic picks come from above the range's static band."""

    def __init__(self, cidr: str = SERVICE_CIDR):
        self.cidr = cidr
        self.network = ipaddress.ip_network(cidr)
        size = self.network.num_addresses
        # Upstream keeps min(max(16, size/16), 256) low addresses for IPs that users ask for.
        self._dynamic = (min(max(16, size // 16), 256), size - 2)
        self.used: set[str] = set()

    def contains(self, ip: str) -> bool:
        try:
            address = ipaddress.ip_address(ip)
        except ValueError:
            return False
        return address in self.network and address not in (self.network.network_address,
                                                           self.network.broadcast_address)

    def check(self, ip: str) -> str | None:
        """Why ``ip`` cannot be given to a new Service, or None."""
        if not self.contains(ip):
            return f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is {self.cidr}"
        if ip in self.used:
            return "provided IP is already allocated"
        return None

    def pick(self, rng) -> str:
        low, high = self._dynamic
        while True:
            ip = str(self.network.network_address + rng.randint(low, high))
            if ip not in self.used:
                return ip


class PortAllocator:
    """Node ports; dynamic picks come from above the range's static band, as upstream."""

    def __init__(self, low: int = NODE_PORT_RANGE[0], high: int = NODE_PORT_RANGE[1]):
        self.low, self.high = low, high
        size = high - low + 1
        self._dynamic_low = low + min(max(16, size // 32), 128)
        self.used: set[int] = set()

    def check(self, port: int) -> str | None:
        if not self.low <= port <= self.high:
            return (f"provided port is not in the valid range. The range of valid ports is "
                    f"{self.low}-{self.high}")
        if port in self.used:
            return "provided port is already allocated"
        return None

    def pick(self, rng, taken: set[int]) -> int:
        while True:
            port = rng.randint(self._dynamic_low, self.high)
            if port not in self.used and port not in taken:
                return port


def needs_cluster_ip(spec: dict) -> bool:
    return spec.get("type", "ClusterIP") in ("ClusterIP", "NodePort", "LoadBalancer")


def needs_node_ports(spec: dict) -> bool:
    kind = spec.get("type")
    return kind == "NodePort" or (kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True))


def needs_health_check_port(spec: dict) -> bool:
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def allocate(api, service: dict, old: dict | None) -> list[FieldError]:
    """Give a valid Service the cluster IP and node ports it needs; what cannot be given is an error."""
    spec = service["spec"]
    old_spec = (old or {}).get("spec") or {}
    rng = api.store.rng
    if needs_cluster_ip(spec) and spec.get("clusterIP") != "None":
        ip = spec.get("clusterIP")
        if not ip:
            ip = api.cluster_ips.pick(rng)
            spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
        elif ip not in (old_spec.get("clusterIPs") or ()):
            problem = api.cluster_ips.check(ip)
            if problem:
                return [errors.invalid("spec.clusterIPs", gosyntax.string_slice(spec.get("clusterIPs")),
                                       f"failed to allocate IP {ip}: {problem}")]
    if needs_node_ports(spec):
        kept = {p.get("nodePort") for p in old_spec.get("ports") or () if p.get("nodePort")}
        taken = {p["nodePort"] for p in spec.get("ports") or () if p.get("nodePort")}
        for i, port in enumerate(spec.get("ports") or ()):
            wanted = port.get("nodePort")
            if not wanted:
                port["nodePort"] = api.node_ports.pick(rng, taken)
                taken.add(port["nodePort"])
            elif wanted not in kept:
                problem = api.node_ports.check(wanted)
                if problem:
                    return [errors.invalid(f"spec.ports[{i}].nodePort", wanted, problem)]
    if needs_health_check_port(spec):
        wanted = spec.get("healthCheckNodePort")
        if not wanted:
            taken = {p.get("nodePort") for p in spec.get("ports") or ()}
            spec["healthCheckNodePort"] = api.node_ports.pick(rng, taken)
        elif wanted != old_spec.get("healthCheckNodePort"):
            problem = api.node_ports.check(wanted)
            if problem:
                return [errors.invalid("spec.healthCheckNodePort", wanted, problem)]
    return []


def track(api):
    """An after-write hook that keeps the allocators' in-use sets equal to what stored Services hold."""
    def hook(op: str, res, obj: dict, old: dict | None) -> None:
        if res.kind != "Service" or res.group:
            return
        if old is not None:
            _release(api, old)
        if op != "delete":
            _hold(api, obj)
    return hook


def _ips(service: dict) -> list[str]:
    spec = service.get("spec") or {}
    return [ip for ip in spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
            if ip != "None"]


def _ports(service: dict) -> list[int]:
    spec = service.get("spec") or {}
    ports = [p["nodePort"] for p in spec.get("ports") or () if p.get("nodePort")]
    if spec.get("healthCheckNodePort"):
        ports.append(spec["healthCheckNodePort"])
    return ports


def _hold(api, service: dict) -> None:
    api.cluster_ips.used.update(_ips(service))
    api.node_ports.used.update(_ports(service))


def _release(api, service: dict) -> None:
    api.cluster_ips.used.difference_update(_ips(service))
    api.node_ports.used.difference_update(_ports(service))
