"""NetworkPolicy as the API documents it (networking.k8s.io/v1), for one connection between two pods.

A pod is isolated for ingress (egress) when some policy in its namespace selects it with
``Ingress`` (``Egress``) among its ``policyTypes`` (which default to Ingress, plus Egress when the
policy has egress rules). A connection is allowed when neither end is isolated in its direction, or
when at least one policy isolating it has a rule whose peers and ports both match: peers by
``podSelector`` (pods of the policy's namespace), ``namespaceSelector`` (all pods of matching
namespaces), both together (matching pods in matching namespaces) or ``ipBlock`` (the peer's
address inside ``cidr`` and outside every ``except``); ports by number, by the destination pod's
named container port, or a range up to ``endPort``, with the protocol (TCP when unset). An empty
or missing ``from``/``to`` allows every peer, empty or missing ``ports`` every port. A denied
connection's packets are dropped, so clients see a timeout rather than a refusal.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Iterable

from ...selectors import LabelSelector
from ...store import Store


@dataclass(frozen=True)
class Endpoint:
    """One end of a connection: a pod (or the cluster DNS as a stand-in peer)."""

    namespace: str
    labels: dict
    ip: str
    container_ports: tuple[dict, ...] = ()  # the pod's containers' ports, for named ports

    @staticmethod
    def of(pod: dict) -> "Endpoint":
        ports = tuple(p for c in (pod.get("spec") or {}).get("containers") or () for p in c.get("ports") or ())
        return Endpoint(pod["metadata"].get("namespace", ""), dict(pod["metadata"].get("labels") or {}),
                        (pod.get("status") or {}).get("podIP") or "", ports)


class NetworkPolicies:
    """The policies of the cluster, read from the store when asked (the engine asks when routes change)."""

    def __init__(self, store: Store):
        self.store = store

    def allows(self, source: Endpoint, destination: Endpoint, port: int, protocol: str = "TCP") -> bool:
        return (self._allowed(destination, source, destination, port, protocol, "Ingress")
                and self._allowed(source, destination, destination, port, protocol, "Egress"))

    def _allowed(self, subject: Endpoint, peer: Endpoint, destination: Endpoint, port: int, protocol: str,
                 direction: str) -> bool:
        isolating = [p for p in self._policies(subject.namespace)
                     if direction in _types(p) and _selects(p, subject)]
        if not isolating:
            return True
        key = "ingress" if direction == "Ingress" else "egress"
        peers_key = "from" if direction == "Ingress" else "to"
        for policy in isolating:
            for rule in policy["spec"].get(key) or ():
                if _peers_match(self.store, policy, rule.get(peers_key), peer) and \
                        _ports_match(rule.get("ports"), destination, port, protocol):
                    return True
        return False

    def _policies(self, namespace: str) -> list[dict]:
        return self.store.list("networkpolicies.networking.k8s.io", namespace)[0]


def _types(policy: dict) -> list[str]:
    spec = policy.get("spec") or {}
    types = spec.get("policyTypes")
    if types:
        return list(types)
    return ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


def _selects(policy: dict, endpoint: Endpoint) -> bool:
    selector = LabelSelector.from_object((policy.get("spec") or {}).get("podSelector") or {})
    return selector is not None and selector.matches(endpoint.labels)


def _peers_match(store: Store, policy: dict, peers: list | None, peer: Endpoint) -> bool:
    if not peers:
        return True
    policy_namespace = policy["metadata"].get("namespace", "")
    return any(_peer_matches(store, policy_namespace, entry, peer) for entry in peers)


def _peer_matches(store: Store, policy_namespace: str, entry: dict, peer: Endpoint) -> bool:
    block = entry.get("ipBlock")
    if block is not None:
        return _in_block(block, peer.ip)
    pods = entry.get("podSelector")
    namespaces = entry.get("namespaceSelector")
    if namespaces is not None:
        namespace = store.get("namespaces", "", peer.namespace) or {}
        selector = LabelSelector.from_object(namespaces)
        if selector is None or not selector.matches((namespace.get("metadata") or {}).get("labels")):
            return False
    elif peer.namespace != policy_namespace:
        return False
    if pods is not None:
        selector = LabelSelector.from_object(pods)
        return selector is not None and selector.matches(peer.labels)
    return True


def _in_block(block: dict, ip: str) -> bool:
    if not ip:
        return False
    try:
        address = ipaddress.ip_address(ip)
        if address not in ipaddress.ip_network(block.get("cidr", ""), strict=False):
            return False
        return not any(address in ipaddress.ip_network(e, strict=False) for e in block.get("except") or ())
    except ValueError:
        return False


def _ports_match(ports: list | None, destination: Endpoint, port: int, protocol: str) -> bool:
    if not ports:
        return True
    return any(_port_matches(entry, destination.container_ports, port, protocol) for entry in ports)


def _port_matches(entry: dict, container_ports: Iterable[dict], port: int, protocol: str) -> bool:
    if (entry.get("protocol") or "TCP") != protocol:
        return False
    wanted = entry.get("port")
    if wanted is None:
        return True
    if isinstance(wanted, str) and not wanted.isdigit():
        return any(p.get("name") == wanted and p.get("containerPort") == port
                   and (p.get("protocol") or "TCP") == protocol for p in container_ports)
    first = int(wanted)
    last = entry.get("endPort") or first
    return first <= port <= last
