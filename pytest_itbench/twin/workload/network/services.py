"""Where a connection to a Service's address goes: kube-proxy's view of Services and Endpoints.

kube-proxy (iptables mode, kind's default) programs, for each Service port, a rule that sends a
connection to one of the port's ready endpoints at random, to the port number the endpoints
controller resolved from ``targetPort`` (by number, or by the name of each pod's container port).
A Service port with no ready endpoint gets a REJECT rule (clients see "connection refused"); a port
the Service does not have matches no rule, and the connection to the ClusterIP times out.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...store import Store


@dataclass(frozen=True)
class Backend:
    namespace: str
    pod: str  # name
    port: int


@dataclass(frozen=True)
class ServicePorts:
    """The answer for one Service and port: its ready backends, or why there are none."""

    backends: tuple[Backend, ...] = ()
    no_port: bool = False  # the Service has no such port
    headless: bool = False


def backends(store: Store, service: dict, port: int) -> ServicePorts:
    spec = service.get("spec") or {}
    meta = service["metadata"]
    namespace = meta.get("namespace", "")
    headless = spec.get("clusterIP") == "None"
    service_port = next((p for p in spec.get("ports") or () if p.get("port") == port
                         and (p.get("protocol") or "TCP") == "TCP"), None)
    if service_port is None and not headless:
        return ServicePorts(no_port=True)
    endpoints = store.get("endpoints", namespace, meta["name"]) or {}
    found: list[Backend] = []
    for subset in endpoints.get("subsets") or ():
        ports = subset.get("ports") or ()
        if headless:
            numbers = [port]  # the client connects to the pod's own address, on the port it asked for
        else:
            name = service_port.get("name") or ""
            numbers = [p["port"] for p in ports if (p.get("name") or "") == name
                       and (p.get("protocol") or "TCP") == "TCP"]
        for number in numbers:
            for address in subset.get("addresses") or ():
                target = address.get("targetRef") or {}
                if target.get("kind") == "Pod":
                    found.append(Backend(target.get("namespace") or namespace, target["name"], number))
    return ServicePorts(tuple(found), headless=headless)
