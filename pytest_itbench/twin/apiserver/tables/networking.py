"""Service discovery and networking printers: services, endpoints, endpoint slices, ingresses,
ingress classes and network policies."""

from __future__ import annotations

import ipaddress

from .core import Column, age, age_column, api_doc, name_column, register
from .formatting import format_label_selector, format_labels

SHOWN_ADDRESSES = 3
SHOWN_HOSTS = 3


def _load_balancer_addresses(status: dict | None) -> str:
    """The distinct ingress IPs (or hostnames) of a load balancer, sorted. The server prints for ``-o wide``,
    so long lists are not clipped."""
    found = {entry.get("ip") or entry.get("hostname") for entry in ((status or {}).get("ingress") or ())}
    return ",".join(sorted(a for a in found if a))


def service_external_ip(svc: dict) -> str:
    spec = svc.get("spec") or {}
    external = spec.get("externalIPs") or []
    kind = spec.get("type")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        balancer = _load_balancer_addresses((svc.get("status") or {}).get("loadBalancer"))
        if external:
            return ",".join((balancer.split(",") if balancer else []) + external)
        return balancer or "<pending>"
    if kind == "ExternalName":
        return spec.get("externalName", "")
    return "<unknown>"


def service_ports(ports: list[dict] | None) -> str:
    """``80/TCP``, or ``443:30443/TCP`` when a node port is allocated."""
    pieces = []
    for port in ports or ():
        protocol = port.get("protocol", "")
        if port.get("nodePort"):
            pieces.append(f"{port.get('port', 0)}:{port['nodePort']}/{protocol}")
        else:
            pieces.append(f"{port.get('port', 0)}/{protocol}")
    return ",".join(pieces) or "<none>"


def service_row(svc: dict, now: float) -> list:
    spec = svc.get("spec") or {}
    cluster_ips = spec.get("clusterIPs") or []
    return [svc["metadata"].get("name", ""), spec.get("type", ""), cluster_ips[0] if cluster_ips else "<none>",
            service_external_ip(svc), service_ports(spec.get("ports")), age(svc, now),
            format_labels(spec.get("selector"))]


register("", "Service", [
    name_column(),
    Column("Type", description=api_doc("core.v1.ServiceSpec", "type")),
    Column("Cluster-IP", description=api_doc("core.v1.ServiceSpec", "clusterIP")),
    Column("External-IP", description=api_doc("core.v1.ServiceSpec", "externalIPs")),
    Column("Port(s)", description=api_doc("core.v1.ServiceSpec", "ports")),
    age_column(),
    Column("Selector", description=api_doc("core.v1.ServiceSpec", "selector"), priority=1),
], service_row)


def _host_port(ip: str, port: int) -> str:
    """net.JoinHostPort: IPv6 addresses go in brackets."""
    try:
        if isinstance(ipaddress.ip_address(ip), ipaddress.IPv6Address):
            return f"[{ip}]:{port}"
    except ValueError:
        pass
    return f"{ip}:{port}"


def _with_more(shown: list[str], total: int, limit: int) -> str:
    text = ",".join(shown)
    return f"{text} + {total - limit} more..." if total > limit else text


def endpoints_cell(subsets: list[dict] | None) -> str:
    """Up to three ``ip:port`` endpoints, then ``+ N more...``; ``<none>`` without subsets."""
    if not subsets:
        return "<none>"
    shown: list[str] = []
    total = 0
    for subset in subsets:
        addresses = subset.get("addresses") or []
        ports = subset.get("ports") or []
        if not ports:
            # A headless service without ports lists bare addresses.
            total += len(addresses)
            shown += [a.get("ip", "") for a in addresses][:SHOWN_ADDRESSES - len(shown)]
            continue
        for port in ports:
            total += len(addresses)
            shown += [_host_port(a.get("ip", ""), port.get("port", 0))
                      for a in addresses][:SHOWN_ADDRESSES - len(shown)]
    return _with_more(shown, total, SHOWN_ADDRESSES)


def endpoints_row(obj: dict, now: float) -> list:
    return [obj["metadata"].get("name", ""), endpoints_cell(obj.get("subsets")), age(obj, now)]


register("", "Endpoints", [
    name_column(),
    Column("Endpoints", description=api_doc("core.v1.Endpoints", "subsets")),
    age_column(),
], endpoints_row)


def _or_unset(shown: list[str], total: int) -> str:
    return _with_more(shown, total, SHOWN_ADDRESSES) or "<unset>"


def endpoint_slice_row(obj: dict, now: float) -> list:
    ports = obj.get("ports") or []
    port_cells = [str(p["port"]) if p.get("port") is not None else p["name"] if p.get("name") is not None else "*"
                  for p in ports]
    addresses = [a for endpoint in obj.get("endpoints") or () for a in endpoint.get("addresses") or ()]
    return [obj["metadata"].get("name", ""), obj.get("addressType", ""),
            _or_unset(port_cells[:SHOWN_ADDRESSES], len(port_cells)),
            _or_unset(addresses[:SHOWN_ADDRESSES], len(addresses)), age(obj, now)]


register("discovery.k8s.io", "EndpointSlice", [
    name_column(),
    Column("AddressType", description=api_doc("discovery.v1.EndpointSlice", "addressType")),
    Column("Ports", description=api_doc("discovery.v1.EndpointSlice", "ports")),
    Column("Endpoints", description=api_doc("discovery.v1.EndpointSlice", "endpoints")),
    age_column(),
], endpoint_slice_row)


def ingress_hosts(rules: list[dict] | None) -> str:
    """The first three hosts the rules name, ``*`` when none does.

    Once three are shown, any further rule adds ``+ N more...``, N counting rules beyond the third.
    """
    rules = rules or []
    hosts: list[str] = []
    more = False
    for rule in rules:
        more = more or len(hosts) == SHOWN_HOSTS
        if not more and rule.get("host"):
            hosts.append(rule["host"])
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - SHOWN_HOSTS} more..." if more else text


def ingress_row(obj: dict, now: float) -> list:
    spec = obj.get("spec") or {}
    return [obj["metadata"].get("name", ""), spec.get("ingressClassName") or "<none>",
            ingress_hosts(spec.get("rules")),
            _load_balancer_addresses((obj.get("status") or {}).get("loadBalancer")),
            "80, 443" if spec.get("tls") else "80", age(obj, now)]


register("networking.k8s.io", "Ingress", [
    name_column(),
    Column("Class", description="The name of the IngressClass resource that should be used for additional "
                                "configuration"),
    Column("Hosts", description="Hosts that incoming requests are matched against before the ingress rule"),
    Column("Address", description="Address is a list containing ingress points for the load-balancer"),
    Column("Ports", description="Ports of TLS configurations that open"),
    age_column(),
], ingress_row)


def ingress_class_row(obj: dict, now: float) -> list:
    spec = obj.get("spec") or {}
    parameters = "<none>"
    if spec.get("parameters"):
        ref = spec["parameters"]
        kind = f"{ref.get('kind', '')}.{ref['apiGroup']}" if ref.get("apiGroup") is not None else ref.get("kind", "")
        parameters = f"{kind}/{ref.get('name', '')}"
    return [obj["metadata"].get("name", ""), spec.get("controller", ""), parameters, age(obj, now)]


register("networking.k8s.io", "IngressClass", [
    name_column(),
    Column("Controller", description="Controller that is responsible for handling this class"),
    Column("Parameters", description="A reference to a resource with additional parameters"),
    age_column(),
], ingress_class_row)


def network_policy_row(obj: dict, now: float) -> list:
    # podSelector is not a pointer: a missing one is the empty selector, which selects every pod.
    selector = (obj.get("spec") or {}).get("podSelector") or {}
    return [obj["metadata"].get("name", ""), format_label_selector(selector), age(obj, now)]


register("networking.k8s.io", "NetworkPolicy", [
    name_column(),
    Column("Pod-Selector", description=api_doc("networking.v1.NetworkPolicySpec", "podSelector")),
    age_column(),
], network_policy_row)
