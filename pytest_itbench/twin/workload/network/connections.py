"""One TCP connection from a pod, as the traffic engine's network model decides it: the containers' ``nc``.

The kubelet's default container model asks a :class:`~pytest_itbench.twin.containers.network.Network`
what ``nc -z kafka 9092`` gets. The workload engine installs :class:`ClusterNetwork`, which answers
as the engine's routes do: the name resolves through the pod's DNS policy (unless NetworkPolicy keeps
the pod from the cluster DNS: the resolver times out), a Service port without ready endpoints
refuses, a port the Service lacks or a NetworkPolicy drops the packets (a timeout), and at the pod
something must listen on the port (else refused). Who listens is the kubelet's to say.
"""

from __future__ import annotations

from typing import Callable

from ...containers.network import OPEN, REFUSED, TIMED_OUT, UNRESOLVED, Connection, current_pod
from ...store import Store
from . import dns
from .policy import Endpoint, NetworkPolicies
from .services import backends

RESOLVER_GIVES_UP = 10.0  # BusyBox's resolver: two tries of 5 s at an unreachable server


class ClusterNetwork:
    def __init__(self, store: Store, listening: Callable[[str, str, int], bool]):
        self.store = store
        self.listening = listening
        self.policies = NetworkPolicies(store)

    def resolve(self, pod: dict, host: str) -> str | None:
        pod = current_pod(self.store, pod)
        resolution = dns.resolve(self.store, pod, host, dns_reachable=self._can_reach_dns(pod))
        if resolution.service is not None:
            return (resolution.service.get("spec") or {}).get("clusterIP")
        if resolution.pod is not None:
            return (resolution.pod.get("status") or {}).get("podIP")
        return resolution.ip

    def connect(self, pod: dict, host: str, port: int) -> Connection:
        pod = current_pod(self.store, pod)
        resolution = dns.resolve(self.store, pod, host, dns_reachable=self._can_reach_dns(pod))
        if resolution.failure == "dns_timeout":
            return Connection(UNRESOLVED, resolve_seconds=RESOLVER_GIVES_UP)
        if resolution.failure is not None:
            return Connection(UNRESOLVED)
        service = resolution.service
        if service is not None and (service.get("spec") or {}).get("type") == "ExternalName":
            return Connection(UNRESOLVED)  # a name outside the cluster: the twin has no outside world
        if service is not None:
            return self._via_service(pod, service, port)
        if resolution.pod is not None:
            address = (resolution.pod.get("status") or {}).get("podIP") or ""
            return Connection(self._to_pod(pod, resolution.pod, port), address)
        return Connection(TIMED_OUT, resolution.ip or "")

    def _via_service(self, pod: dict, service: dict, port: int) -> Connection:
        spec = service.get("spec") or {}
        ports = backends(self.store, service, port)
        if ports.headless:
            for backend in ports.backends:
                target = self.store.get("pods", backend.namespace, backend.pod)
                if target is not None:
                    address = (target.get("status") or {}).get("podIP") or ""
                    return Connection(self._to_pod(pod, target, backend.port), address)
            return Connection(UNRESOLVED)
        address = spec.get("clusterIP") or ""
        if ports.no_port:
            return Connection(TIMED_OUT, address)
        if not ports.backends:
            return Connection(REFUSED, address)
        # kube-proxy picks a backend at random; the twin answers for the best one, so the answer is stable.
        outcomes = []
        for backend in ports.backends:
            target = self.store.get("pods", backend.namespace, backend.pod)
            outcomes.append(self._to_pod(pod, target, backend.port) if target is not None else REFUSED)
        for outcome in (OPEN, REFUSED, TIMED_OUT):
            if outcome in outcomes:
                return Connection(outcome, address)
        return Connection(REFUSED, address)

    def _to_pod(self, source: dict, target: dict, port: int) -> str:
        if not self.policies.allows(Endpoint.of(source), Endpoint.of(target), port):
            return TIMED_OUT  # dropped, not refused
        meta = target["metadata"]
        return OPEN if self.listening(meta.get("namespace", ""), meta["name"], port) else REFUSED

    def _can_reach_dns(self, pod: dict) -> bool:
        servers = [p for p in self.store.list("pods", "kube-system")[0]
                   if (p["metadata"].get("labels") or {}).get("k8s-app") == "kube-dns"]
        targets = [Endpoint.of(p) for p in servers] or \
            [Endpoint("kube-system", {"k8s-app": "kube-dns"}, dns.cluster_dns_ip(self.store))]
        return all(self.policies.allows(Endpoint.of(pod), server, 53, "UDP") for server in targets)
