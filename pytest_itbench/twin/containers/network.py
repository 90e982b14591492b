"""What a TCP connection from a pod gets: the hook ``nc -z`` and ``nslookup`` in a container ask.

The kubelet's default container model does not know the cluster network; it asks a :class:`Network`.
The workload engine installs one that decides as its traffic model does (DNS, kube-proxy's rules,
NetworkPolicy, who listens). Without a workload engine, :class:`StoreNetwork` answers from the store
alone: a Service name (short, ``svc.ns``, ``svc.ns.svc``, ``svc.ns.svc.cluster.local``) or ClusterIP is
reachable on a port the Service has when the port has a ready endpoint; a pod's IP when something in
the pod listens on the port (the kubelet says which).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Callable, Protocol

from ..store import Store
from .fs import CLUSTER_DOMAIN

OPEN, REFUSED, TIMED_OUT, UNRESOLVED = "open", "refused", "timeout", "unresolved"


@dataclass(frozen=True)
class Connection:
    """The outcome of one connection attempt."""

    outcome: str  # OPEN, REFUSED, TIMED_OUT (packets dropped: no rule, a NetworkPolicy) or UNRESOLVED
    address: str = ""  # the IP the name resolved to (empty when it did not)
    resolve_seconds: float = 0.0  # the resolver's time before it gave up (an unreachable DNS server)

    @property
    def ok(self) -> bool:
        return self.outcome == OPEN


class Network(Protocol):
    def connect(self, pod: dict, host: str, port: int) -> Connection:
        """What a TCP connection from ``pod`` to ``host:port`` gets right now."""

    def resolve(self, pod: dict, host: str) -> str | None:
        """The address ``host`` resolves to from ``pod`` right now, or None."""


Listening = Callable[[str, str, int], bool]  # (namespace, pod name, port): does something in the pod listen?


class StoreNetwork:
    """Connections judged from Services, Endpoints and pods in the store (no NetworkPolicy, no chaos)."""

    def __init__(self, store: Store, listening: Listening | None = None):
        self.store = store
        self.listening = listening

    def resolve(self, pod: dict, host: str) -> str | None:
        target = self._target(pod, host)
        return target[0] if target is not None else None

    def connect(self, pod: dict, host: str, port: int) -> Connection:
        target = self._target(pod, host)
        if target is None:
            return Connection(UNRESOLVED)
        address, service, target_pod = target
        if service is not None:
            return Connection(self._via_service(service, port), address)
        if target_pod is not None:
            return Connection(self._at_pod(target_pod, port), address)
        return Connection(TIMED_OUT, address)  # an address nothing in the cluster has

    def _target(self, pod: dict, host: str) -> tuple[str, dict | None, dict | None] | None:
        """(address, Service or None, pod or None) that ``host`` names from ``pod``."""
        literal = _ip(host)
        if literal is not None:
            for service in self.store.list("services")[0]:
                spec = service.get("spec") or {}
                if literal in (spec.get("clusterIPs") or [spec.get("clusterIP")]):
                    return literal, service, None
            for candidate in self.store.list("pods")[0]:
                if (candidate.get("status") or {}).get("podIP") == literal:
                    return literal, None, candidate
            return literal, None, None
        service = self._service_named(pod, host)
        if service is None:
            return None
        spec = service.get("spec") or {}
        if spec.get("clusterIP") in (None, "", "None"):
            ready = self._ready_pods(service)
            if not ready:
                return None  # a headless Service without ready endpoints has no A records
            return (ready[0].get("status") or {}).get("podIP") or "", None, ready[0]
        return spec["clusterIP"], service, None

    def _service_named(self, pod: dict, host: str) -> dict | None:
        namespace = pod["metadata"].get("namespace", "")
        name = host.rstrip(".")
        suffix = f".svc.{CLUSTER_DOMAIN}"
        if name.endswith(suffix):
            name = name[:-len(suffix)]
        elif name.endswith(".svc"):
            name = name[:-len(".svc")]
        labels = name.split(".")
        if len(labels) == 1:
            return self.store.get("services", namespace, labels[0])
        if len(labels) == 2:
            return self.store.get("services", labels[1], labels[0])
        return None

    def _via_service(self, service: dict, port: int) -> str:
        spec = service.get("spec") or {}
        service_port = next((p for p in spec.get("ports") or () if p.get("port") == port
                             and (p.get("protocol") or "TCP") == "TCP"), None)
        if service_port is None:
            return TIMED_OUT  # kube-proxy has no rule for the port: nothing answers the ClusterIP
        namespace = service["metadata"].get("namespace", "")
        endpoints = self.store.get("endpoints", namespace, service["metadata"]["name"]) or {}
        name = service_port.get("name") or ""
        backends = [(address.get("targetRef") or {}, p["port"]) for subset in endpoints.get("subsets") or ()
                    for p in subset.get("ports") or () if (p.get("name") or "") == name
                    for address in subset.get("addresses") or ()]
        if not backends:
            return REFUSED  # kube-proxy rejects connections to a port without endpoints
        if self.listening is None:
            return OPEN
        # kube-proxy picks one backend; the twin answers for the best of them (a ready pod that listens).
        listening = any(self.listening(ref.get("namespace") or namespace, ref.get("name", ""), number)
                        for ref, number in backends if ref.get("kind") == "Pod")
        return OPEN if listening else REFUSED

    def _at_pod(self, pod: dict, port: int) -> str:
        meta = pod["metadata"]
        if self.listening is not None:
            return OPEN if self.listening(meta.get("namespace", ""), meta["name"], port) else REFUSED
        declared = {p.get("containerPort") for c in (pod.get("spec") or {}).get("containers") or ()
                    for p in c.get("ports") or ()}
        return OPEN if port in declared and (pod.get("status") or {}).get("phase") == "Running" else REFUSED

    def _ready_pods(self, service: dict) -> list[dict]:
        endpoints = self.store.get("endpoints", service["metadata"].get("namespace", ""),
                                   service["metadata"]["name"]) or {}
        out = []
        for subset in endpoints.get("subsets") or ():
            for address in subset.get("addresses") or ():
                target = address.get("targetRef") or {}
                found = self.store.get("pods", target.get("namespace") or service["metadata"].get("namespace", ""),
                                       target.get("name", ""))
                if found is not None:
                    out.append(found)
        return out


def current_pod(store: Store, pod: dict) -> dict:
    """The pod as the store holds it now (its address and labels may have changed since it was read)."""
    meta = pod["metadata"]
    return store.get("pods", meta.get("namespace", ""), meta["name"]) or pod


def _ip(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        return None
