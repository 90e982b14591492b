"""Where each call of each running instance goes, decided from cluster state alone.

For a call, the caller's environment names the peer; the peer's name resolves through the
caller's DNS policy (or not: ``no such host``, or a timeout when the caller's egress cannot reach
the DNS); a Service sends the connection to one of its ready endpoints (none: ``connection
refused``; a port it lacks: the connection times out); a NetworkPolicy may drop it (a timeout),
and so may a Chaos Mesh partition; at the endpoint, a process of the right service must listen on
the port (else ``connection refused``) and accept the caller's credential. What survives is a
:class:`Hop` to a callee instance with the network faults on the way; the engine then asks the
callee what it makes of the request.

Routes are computed when something they depend on changes (the engine refreshes the router on
writes to pods, services, endpoints, network policies, namespaces, config maps and chaos
objects), so a tick only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..store import Store
from .addresses import Peer, credential, peer as read_peer
from .chaos.faults import NO_NET, Injected, NetFault
from .errors import ErrorText, client_error
from .instances import Instance
from .network import dns
from .network.policy import Endpoint, NetworkPolicies
from .network.services import backends
from .sheet import Address, Call, ClientWording

REFUSED_LATENCY = 0.001
NO_SUCH_HOST_LATENCY = 0.002
DNS_TIMEOUT = 5.0  # the resolver's timeout before it gives up on an unreachable server
PROTOCOL_LATENCY = 0.002


@dataclass(frozen=True)
class Hop:
    """One way a call goes, with the share of calls that go this way."""

    weight: float
    failure: ErrorText | None = None  # the connection failed: the client's words
    failure_latency: float = 0.0
    instance: Instance | None = None  # the callee reached
    port: int = 0
    net: NetFault = NO_NET


@dataclass(frozen=True)
class Route:
    peer: str  # as configured, e.g. "cart:8080"
    hops: tuple[Hop, ...]
    service: tuple[str, str] | None = None  # the Service (namespace, name) the peer's name resolved to


class Router:
    def __init__(self, store: Store, chaos: Injected):
        self.store = store
        self.chaos = chaos
        self.policies = NetworkPolicies(store)
        self.pods: dict[tuple[str, str], dict] = {}
        self._by_pod: dict[tuple[str, str], list[Instance]] = {}
        self._dns_reachable: dict[tuple[str, str], bool] = {}
        self.now = 0.0
        self.next_change: float | None = None  # when an instance starts listening: the routes change then

    def refresh(self, pods: dict[tuple[str, str], dict], running: Iterable[Instance], now: float) -> None:
        self.pods = pods
        self.now = now
        self._by_pod = {}
        self._dns_reachable = {}
        upcoming = []
        for instance in running:
            self._by_pod.setdefault((instance.namespace, instance.pod), []).append(instance)
            if instance.listening_from > now:
                upcoming.append(instance.listening_from)
        self.next_change = min(upcoming) if upcoming else None

    # ---- a call's route ---------------------------------------------------------------------------------------
    def route(self, caller: Instance, call: Call, address: Address, wording: ClientWording,
              callee_service: str) -> Route:
        found = read_peer(address, caller.env)
        if found is None or not found.host:
            missing = Peer("", found.port if found else None)
            return self._failed(missing, wording, "no_such_host", NO_SUCH_HOST_LATENCY, "", _path(caller, call))
        pod = self.pods.get((caller.namespace, caller.pod))
        if pod is None:
            return Route(found.text(), ())
        resolution = dns.resolve(self.store, pod, found.host, dns_reachable=self._can_reach_dns(pod))
        if resolution.service is not None and (resolution.service.get("spec") or {}).get("type") == "ExternalName":
            external = resolution.service["spec"].get("externalName") or ""
            resolution = dns.resolve(self.store, pod, external.rstrip(".") + ".", dns_reachable=True)
        fields = {"host": found.host, "port": str(found.port or ""), "dns": resolution.nameserver,
                  "path": _path(caller, call)}
        if resolution.failure == "no_such_host":
            return self._failed(found, wording, "no_such_host", NO_SUCH_HOST_LATENCY, resolution.nameserver,
                                fields["path"])
        if resolution.failure == "dns_timeout":
            return self._failed(found, wording, "dns_timeout", DNS_TIMEOUT, resolution.nameserver, fields["path"])
        port = found.port or 0
        if resolution.service is not None:
            return self._via_service(caller, pod, call, resolution.service, port, wording, fields, callee_service,
                                     found)
        if resolution.pod is not None:
            hop = self._hop(caller, pod, call, resolution.pod, port, 1.0, wording, fields, callee_service)
            return Route(found.text(), (hop,))
        fields["address"] = f"{resolution.ip}:{port}"
        failure = client_error(wording, "unreachable", fields)
        return Route(found.text(), (Hop(1.0, failure, wording.connect_timeout),))

    def _via_service(self, caller: Instance, pod: dict, call: Call, service: dict, port: int,
                     wording: ClientWording, fields: dict, callee_service: str, found: Peer) -> Route:
        spec = service.get("spec") or {}
        name = (service["metadata"].get("namespace", ""), service["metadata"]["name"])
        fields = dict(fields, address=f"{spec.get('clusterIP')}:{port}")
        ports = backends(self.store, service, port)
        if ports.no_port:
            failure = client_error(wording, "unreachable", fields)
            return Route(found.text(), (Hop(1.0, failure, wording.connect_timeout),), name)
        if not ports.backends:
            cause = "no_such_host" if ports.headless else "refused"
            latency = NO_SUCH_HOST_LATENCY if ports.headless else REFUSED_LATENCY
            return Route(found.text(), (Hop(1.0, client_error(wording, cause, fields), latency),), name)
        weight = 1.0 / len(ports.backends)
        hops = []
        for backend in ports.backends:
            target = self.pods.get((backend.namespace, backend.pod))
            if target is None:
                hops.append(Hop(weight, client_error(wording, "refused", fields), REFUSED_LATENCY))
                continue
            hop_fields = fields if not ports.headless else \
                dict(fields, address=f"{(target.get('status') or {}).get('podIP')}:{backend.port}")
            hops.append(self._hop(caller, pod, call, target, backend.port, weight, wording, hop_fields,
                                  callee_service))
        return Route(found.text(), tuple(hops), name)

    def _hop(self, caller: Instance, pod: dict, call: Call, target: dict, port: int, weight: float,
             wording: ClientWording, fields: dict, callee_service: str) -> Hop:
        fields = dict(fields)
        fields.setdefault("address", f"{(target.get('status') or {}).get('podIP')}:{port}")
        if not self.policies.allows(Endpoint.of(pod), Endpoint.of(target), port):
            return Hop(weight, client_error(wording, "unreachable", fields), wording.connect_timeout)
        target_key = (target["metadata"].get("namespace", ""), target["metadata"]["name"])
        net = self.chaos.connection((caller.namespace, caller.pod), target_key)
        if net.partition:
            return Hop(weight, client_error(wording, "unreachable", fields), wording.connect_timeout)
        callee = self._listening(target_key, port)
        if callee is None:
            return Hop(weight, client_error(wording, "refused", fields), REFUSED_LATENCY)
        if callee.service_name != callee_service:
            return Hop(weight, client_error(wording, "protocol", fields), PROTOCOL_LATENCY)
        auth = callee.service.auth
        if auth is not None:
            expected = credential(auth.expects, callee.env, callee.argv)
            if expected is not None:
                presented = credential(call.presents, caller.env, caller.argv) if call.presents else None
                if presented != expected:
                    words = auth.missing if presented is None else auth.wrong
                    return Hop(weight, client_error(wording, "auth", dict(fields, message=words)), auth.latency)
        return Hop(weight, instance=callee, port=port, net=net)

    def _listening(self, pod: tuple[str, str], port: int) -> Instance | None:
        for instance in self._by_pod.get(pod, ()):
            if port in instance.ports and instance.listening_from <= self.now:
                return instance
        return None

    def _can_reach_dns(self, pod: dict) -> bool:
        key = (pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
        known = self._dns_reachable.get(key)
        if known is None:
            known = self._dns_reachable[key] = all(
                self.policies.allows(Endpoint.of(pod), server, 53, "UDP") for server in self._dns_servers())
        return known

    def _dns_servers(self) -> list[Endpoint]:
        """The cluster DNS's pods, or a stand-in with their usual labels when the twin runs none."""
        pods = [p for p in self.store.list("pods", "kube-system")[0]
                if (p["metadata"].get("labels") or {}).get("k8s-app") == "kube-dns"]
        if pods:
            return [Endpoint.of(p) for p in pods]
        return [Endpoint("kube-system", {"k8s-app": "kube-dns"}, dns.cluster_dns_ip(self.store))]

    def _failed(self, found: Peer, wording: ClientWording, cause: str, latency: float, nameserver: str,
                path: str = "") -> Route:
        fields = {"host": found.host, "port": str(found.port or ""), "dns": nameserver,
                  "address": found.text(), "path": path}
        return Route(found.text(), (Hop(1.0, client_error(wording, cause, fields), latency),))


def _path(caller: Instance, call: Call) -> str:
    """The HTTP path the call requests, for clients that name the URL in their errors."""
    callee = caller.sheet.services.get(call.service)
    op = callee.operations.get(call.operation) if callee is not None else None
    return (op.path or "") if op is not None else ""
