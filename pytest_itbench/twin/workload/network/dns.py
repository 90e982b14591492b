"""Name resolution as a pod's resolver sees it: its DNS policy, its search path, the cluster's DNS.

The kubelet writes each pod's resolv.conf from its ``dnsPolicy`` (``ClusterFirst``: the cluster DNS
and the namespace's search domains; ``Default``: the node's resolver, which knows no Service;
``None``: exactly ``dnsConfig``) and the resolver walks the search list as glibc and Go do
(``ndots:5``: a name with fewer dots is tried with each search domain first). CoreDNS answers
``<service>.<namespace>.svc.cluster.local`` with the ClusterIP, a headless Service with the
addresses of its ready endpoints, and ``<hostname>.<service>.<namespace>.svc.cluster.local`` with
that pod's address.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ...containers.fs import CLUSTER_DOMAIN, DEFAULT_CLUSTER_DNS
from ...images import NODE_RESOLVER
from ...store import Store

NDOTS = 5


@dataclass(frozen=True)
class Resolution:
    """What a name resolved to: a Service, one pod (an IP or a headless record), or a failure."""

    nameserver: str  # "10.96.0.10:53", as resolvers name it in their errors
    service: dict | None = None
    pod: dict | None = None
    ip: str | None = None  # an address that is neither a ClusterIP nor a pod's
    failure: str | None = None  # "no_such_host" or "dns_timeout"
    uses_cluster_dns: bool = False


def cluster_dns_ip(store: Store) -> str:
    dns = store.get("services", "kube-system", "kube-dns")
    return ((dns or {}).get("spec") or {}).get("clusterIP") or DEFAULT_CLUSTER_DNS


def resolve(store: Store, pod: dict, host: str, *, dns_reachable: bool = True) -> Resolution:
    """Resolve ``host`` from ``pod``; ``dns_reachable`` is False when the pod's egress cannot reach the DNS."""
    cluster_ip = cluster_dns_ip(store)
    literal = _ip(host)
    if literal is not None:
        return _by_address(store, literal, f"{cluster_ip}:53")
    nameservers, searches = _resolver(pod, cluster_ip)
    nameserver = f"{nameservers[0]}:53" if nameservers else f"{NODE_RESOLVER}"
    uses_cluster = cluster_ip in nameservers
    if not uses_cluster:
        # The node's (or an external) resolver knows no cluster name; anything else here is out of the cluster.
        return Resolution(nameserver, failure="no_such_host")
    if not dns_reachable:
        return Resolution(nameserver, failure="dns_timeout", uses_cluster_dns=True)
    for name in _candidates(host, searches):
        found = _lookup(store, name)
        if found is not None:
            service, target_pod = found
            return Resolution(nameserver, service=service, pod=target_pod, uses_cluster_dns=True)
    return Resolution(nameserver, failure="no_such_host", uses_cluster_dns=True)


def _resolver(pod: dict, cluster_ip: str) -> tuple[list[str], list[str]]:
    spec = pod.get("spec") or {}
    namespace = pod["metadata"].get("namespace", "")
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    config = spec.get("dnsConfig") or {}
    if policy == "ClusterFirst" and spec.get("hostNetwork"):
        policy = "Default"  # ClusterFirst on the host's network falls back to the node's resolver
    if policy in ("ClusterFirst", "ClusterFirstWithHostNet"):
        nameservers = [cluster_ip, *(config.get("nameservers") or [])]
        searches = [f"{namespace}.svc.{CLUSTER_DOMAIN}", f"svc.{CLUSTER_DOMAIN}", CLUSTER_DOMAIN,
                    *(config.get("searches") or [])]
    elif policy == "None":
        nameservers = list(config.get("nameservers") or [])
        searches = list(config.get("searches") or [])
    else:  # Default: the node's resolv.conf (plus dnsConfig)
        nameservers = [NODE_RESOLVER.partition(":")[0], *(config.get("nameservers") or [])]
        searches = list(config.get("searches") or [])
    return nameservers, searches


def _candidates(host: str, searches: list[str]) -> list[str]:
    if host.endswith("."):
        return [host[:-1]]
    with_search = [f"{host}.{domain}" for domain in searches]
    return [host, *with_search] if host.count(".") >= NDOTS else [*with_search, host]


def _lookup(store: Store, name: str) -> tuple[dict | None, dict | None] | None:
    """CoreDNS's kubernetes plugin for one fully qualified name."""
    suffix = f".svc.{CLUSTER_DOMAIN}"
    if not name.endswith(suffix):
        return None
    labels = name[:-len(suffix)].split(".")
    if len(labels) == 2:
        service = store.get("services", labels[1], labels[0])
        return (service, None) if service is not None else None
    if len(labels) == 3:
        hostname, service_name, namespace = labels
        service = store.get("services", namespace, service_name)
        if service is None:
            return None
        for pod in store.list("pods", namespace)[0]:
            spec = pod.get("spec") or {}
            if spec.get("hostname") == hostname and spec.get("subdomain") == service_name:
                return None, pod
    return None


def _by_address(store: Store, ip: str, nameserver: str) -> Resolution:
    for service in store.list("services")[0]:
        if ip in ((service.get("spec") or {}).get("clusterIPs") or [(service.get("spec") or {}).get("clusterIP")]):
            return Resolution(nameserver, service=service)
    for pod in store.list("pods")[0]:
        if (pod.get("status") or {}).get("podIP") == ip:
            return Resolution(nameserver, pod=pod)
    return Resolution(nameserver, ip=ip)


def _ip(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        return None
