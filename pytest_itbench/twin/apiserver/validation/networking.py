"""Validation of Services, NetworkPolicies, Ingresses and IngressClasses."""

from __future__ import annotations

import ipaddress

from ... import errors
from ...errors import FieldError
from .. import gosyntax
from . import name_rules, objectmeta
from .pod import port_number_or_name

_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_IP_FAMILY_POLICIES = ["PreferDualStack", "RequireDualStack", "SingleStack"]
_INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
_INVALID_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _is_cidr(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return "/" in text


# ---- Service ----------------------------------------------------------------------------------------

def service(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns1035_label)
    return problems + _service_spec(obj.get("spec") or {})


def service_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    problems += _cluster_ips_update(spec, old_spec)
    return problems + _service_spec(spec)


def _cluster_ips_update(spec: dict, old_spec: dict) -> list[FieldError]:
    """The primary cluster IP may not change, except to or from ExternalName."""
    if "ExternalName" in (spec.get("type"), old_spec.get("type")):
        return []
    if spec.get("clusterIP") == "None" and old_spec.get("clusterIP") == "None":
        return []
    ips, old_ips = spec.get("clusterIPs") or [], old_spec.get("clusterIPs") or []
    value = gosyntax.string_slice(spec.get("clusterIPs"))
    if old_ips and not ips:
        return [errors.invalid("spec.clusterIPs[0]", value, "primary clusterIP can not be unset")]
    problems = []
    for i, (ip, old_ip) in enumerate(zip(ips, old_ips)):
        if ip != old_ip and (i == 0 or len(ips) == len(old_ips)):
            problems.append(errors.invalid(f"spec.clusterIPs[{i}]", value, "may not change once set"))
    return problems


def _service_spec(spec: dict) -> list[FieldError]:
    problems: list[FieldError] = []
    kind = spec.get("type") or ""
    ports = spec.get("ports") or []
    headless = spec.get("clusterIP") == "None"
    if not ports and not headless and kind != "ExternalName":
        problems.append(errors.required("spec.ports"))
    if kind in ("LoadBalancer", "NodePort") and headless:
        problems.append(errors.invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {kind} services"))
    elif kind == "ExternalName":
        for key in ("clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if spec.get(key):
                problems.append(errors.forbidden(f"spec.{key}", "may not be set for ExternalName services"))
        cname = (spec.get("externalName") or "").removesuffix(".")
        if cname:
            problems += [errors.invalid("spec.externalName", cname, m) for m in name_rules.is_dns1123_subdomain(cname)]
        else:
            problems.append(errors.required("spec.externalName"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        problems += _service_port(port, len(ports) > 1, names, f"spec.ports[{i}]")
    problems += objectmeta.labels(spec.get("selector"), "spec.selector")
    affinity = spec.get("sessionAffinity")
    if not affinity:
        problems.append(errors.required("spec.sessionAffinity"))
    elif affinity not in ("ClientIP", "None"):
        problems.append(errors.not_supported("spec.sessionAffinity", affinity, ["ClientIP", "None"]))
    elif affinity == "ClientIP":
        seconds = ((spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}).get("timeoutSeconds")
        if seconds is not None and not 0 < seconds <= 86400:
            problems.append(errors.invalid("spec.sessionAffinityConfig.clientIP.timeoutSeconds", seconds,
                                           "must be greater than 0 and less than 86400"))
    elif spec.get("sessionAffinityConfig") is not None:
        problems.append(errors.forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None"))
    problems += _cluster_ip_fields(spec)
    for i, ip in enumerate(spec.get("externalIPs") or ()):
        if not _is_ip(ip):
            problems.append(errors.invalid(f"spec.externalIPs[{i}]", ip, _INVALID_IP))
    if not kind:
        problems.append(errors.required("spec.type"))
    elif kind not in _SERVICE_TYPES:
        problems.append(errors.not_supported("spec.type", kind, _SERVICE_TYPES))
    if kind == "ClusterIP":
        for i, port in enumerate(ports):
            if port.get("nodePort"):
                problems.append(errors.forbidden(f"spec.ports[{i}].nodePort",
                                                 "may not be used when `type` is 'ClusterIP'"))
    seen_node_ports: set[tuple] = set()
    seen_ports: set[tuple] = set()
    for i, port in enumerate(ports):
        if port.get("nodePort"):
            key = (port.get("protocol"), port["nodePort"])
            if key in seen_node_ports:
                problems.append(errors.duplicate(f"spec.ports[{i}].nodePort", port["nodePort"]))
            seen_node_ports.add(key)
        key = (port.get("protocol"), port.get("port"))
        if key in seen_ports:
            problems.append(errors.duplicate(f"spec.ports[{i}]", gosyntax.struct("core.ServicePort", [
                ("Name", '""'), ("Protocol", gosyntax.quote(port.get("protocol") or "")),
                ("AppProtocol", "(*string)(nil)"), ("Port", str(port.get("port") or 0)),
                ("TargetPort", 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}'), ("NodePort", "0")])))
        seen_ports.add(key)
    problems += _traffic_policies(spec, kind)
    return problems


def _service_port(port: dict, name_required: bool, names: set[str], path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    name = port.get("name") or ""
    if name_required and not name:
        problems.append(errors.required(f"{path}.name"))
    elif name:
        problems += [errors.invalid(f"{path}.name", name, m) for m in name_rules.is_dns1123_label(name)]
        if name in names:
            problems.append(errors.duplicate(f"{path}.name", name))
        names.add(name)
    number = port.get("port") or 0
    problems += [errors.invalid(f"{path}.port", number, m) for m in name_rules.is_valid_port_num(number)]
    protocol = port.get("protocol")
    if not protocol:
        problems.append(errors.required(f"{path}.protocol"))
    elif protocol not in _PROTOCOLS:
        problems.append(errors.not_supported(f"{path}.protocol", protocol, _PROTOCOLS))
    problems += port_number_or_name(port.get("targetPort"), f"{path}.targetPort")
    return problems


def _cluster_ip_fields(spec: dict) -> list[FieldError]:
    """ValidateServiceClusterIPsRelatedFields."""
    if spec.get("type") == "ExternalName":
        return []
    problems: list[FieldError] = []
    ip, ips = spec.get("clusterIP") or "", spec.get("clusterIPs") or []
    value = gosyntax.string_slice(spec.get("clusterIPs"))
    if ip:
        if not ips:
            problems.append(errors.required("spec.clusterIPs"))
        elif ips[0] != ip:
            problems.append(errors.invalid("spec.clusterIPs", value, "first value must match `clusterIP`"))
    elif ips:
        problems.append(errors.invalid("spec.clusterIPs", value, "must be empty when `clusterIP` is not specified"))
    seen: set[str] = set()
    for i, family in enumerate(spec.get("ipFamilies") or ()):
        if family not in ("IPv4", "IPv6"):
            problems.append(errors.not_supported(f"spec.ipFamilies[{i}]", family, ["IPv4", "IPv6"]))
        if family in seen:
            problems.append(errors.duplicate(f"spec.ipFamilies[{i}]", family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in _IP_FAMILY_POLICIES:
        problems.append(errors.not_supported("spec.ipFamilyPolicy", policy, _IP_FAMILY_POLICIES))
    invalid_ips = False
    for i, address in enumerate(ips):
        if i == 0 and address == "None":
            if len(ips) > 1:
                invalid_ips = True
                problems.append(errors.invalid("spec.clusterIPs", value, "'None' must be the first and only value"))
            continue
        if not _is_ip(address):
            invalid_ips = True
            problems.append(errors.invalid(f"spec.clusterIPs[{i}]", address, _INVALID_IP))
    if len(ips) > 2:
        problems.append(errors.invalid("spec.clusterIPs", value, "may only hold up to 2 values"))
    if invalid_ips or len(ips) > 2 or ip == "None":
        return problems
    for i, (address, family) in enumerate(zip(ips, spec.get("ipFamilies") or ())):
        ipv6 = ":" in address
        if family == "IPv4" and ipv6 or family == "IPv6" and not ipv6:
            problems.append(errors.invalid(f"spec.clusterIPs[{i}]", address,
                                           f"expected an {family} value as indicated by `ipFamilies[{i}]`"))
    return problems


def _traffic_policies(spec: dict, kind: str) -> list[FieldError]:
    problems: list[FieldError] = []
    external = spec.get("externalTrafficPolicy")
    reachable = kind in ("NodePort", "LoadBalancer") or (kind == "ClusterIP" and spec.get("externalIPs"))
    if not reachable:
        if external:
            problems.append(errors.invalid("spec.externalTrafficPolicy", external,
                                           "may only be set for externally-accessible services"))
    elif not external:
        problems.append(errors.required("spec.externalTrafficPolicy"))
    elif external not in ("Cluster", "Local"):
        problems.append(errors.not_supported("spec.externalTrafficPolicy", external, ["Cluster", "Local"]))
    health = spec.get("healthCheckNodePort")
    if health and not (kind == "LoadBalancer" and external == "Local"):
        problems.append(errors.invalid("spec.healthCheckNodePort", health,
                                       "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is "
                                       "'Local'"))
    internal = spec.get("internalTrafficPolicy")
    if internal is None and kind in ("ClusterIP", "NodePort", "LoadBalancer"):
        problems.append(errors.required("spec.internalTrafficPolicy"))
    elif internal is not None and internal not in ("Cluster", "Local"):
        problems.append(errors.not_supported("spec.internalTrafficPolicy", internal, ["Cluster", "Local"]))
    return problems


# ---- NetworkPolicy ------------------------------------------------------------------------------------

def network_policy(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    return problems + _network_policy_spec(obj.get("spec") or {})


def network_policy_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    return problems + _network_policy_spec(obj.get("spec") or {})


def _network_policy_spec(spec: dict) -> list[FieldError]:
    problems = objectmeta.label_selector(spec.get("podSelector"), "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or ()):
            at = f"spec.{direction}[{i}]"
            for j, port in enumerate(rule.get("ports") or ()):
                problems += _network_policy_port(port, f"{at}.ports[{j}]")
            for j, peer in enumerate(rule.get(peers) or ()):
                problems += _network_policy_peer(peer, f"{at}.{peers}[{j}]")
    types = spec.get("policyTypes") or []
    if len(types) > 2:
        return problems + [errors.invalid("spec.policyTypes", gosyntax.string_slice(types, "[]networking.PolicyType"),
                                          "may not specify more than two policyTypes")]
    for i, kind in enumerate(types):
        if kind not in ("Ingress", "Egress"):
            problems.append(errors.not_supported(f"spec.policyTypes[{i}]", kind, ["Ingress", "Egress"]))
    return problems


def _network_policy_port(port: dict, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in ("TCP", "UDP", "SCTP"):
        problems.append(errors.not_supported(f"{path}.protocol", protocol, ["TCP", "UDP", "SCTP"]))
    number, end = port.get("port"), port.get("endPort")
    if number is None:
        if end is not None:
            problems.append(errors.invalid(f"{path}.endPort", end, "may not be specified when `port` is not specified"))
    elif isinstance(number, int):
        problems += [errors.invalid(f"{path}.port", number, m) for m in name_rules.is_valid_port_num(number)]
        if end is not None:
            if end < number:
                problems.append(errors.invalid(f"{path}.endPort", number, "must be greater than or equal to `port`"))
            problems += [errors.invalid(f"{path}.endPort", end, m) for m in name_rules.is_valid_port_num(end)]
    else:
        if end is not None:
            problems.append(errors.invalid(f"{path}.endPort", end, "may not be specified when `port` is non-numeric"))
        problems += [errors.invalid(f"{path}.port", number, m) for m in name_rules.is_valid_port_name(number)]
    return problems


def _network_policy_peer(peer: dict, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    given = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            given += 1
            problems += objectmeta.label_selector(peer[key], f"{path}.{key}")
    block = peer.get("ipBlock")
    if block is not None:
        given += 1
        cidr = block.get("cidr") or ""
        if not cidr:
            problems.append(errors.required(f"{path}.ipBlock.cidr"))
        elif not _is_cidr(cidr):
            problems.append(errors.invalid(f"{path}.ipBlock.cidr", cidr, _INVALID_CIDR))
        else:
            network = ipaddress.ip_network(cidr, strict=False)
            for i, excepted in enumerate(block.get("except") or ()):
                at = f"{path}.ipBlock.except[{i}]"
                if not _is_cidr(excepted):
                    problems.append(errors.invalid(at, excepted, _INVALID_CIDR))
                    continue
                inner = ipaddress.ip_network(excepted, strict=False)
                if inner.version != network.version or not inner.subnet_of(network) or inner == network:
                    problems.append(errors.invalid(at, excepted, "must be a strict subset of `cidr`"))
    if not given:
        problems.append(errors.required(path, "must specify a peer"))
    elif given > 1 and block is not None:
        problems.append(errors.forbidden(path, "may not specify both ipBlock and another peer"))
    return problems


# ---- Ingress ------------------------------------------------------------------------------------------

def ingress(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    return problems + _ingress_spec(obj.get("spec") or {})


def ingress_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    return problems + _ingress_spec(obj.get("spec") or {})


def _ingress_spec(spec: dict) -> list[FieldError]:
    problems: list[FieldError] = []
    rules = spec.get("rules") or []
    if not rules and spec.get("defaultBackend") is None:
        problems.append(errors.invalid("spec", gosyntax.GoLiteral("[]networking.IngressRule(nil)") if spec.get(
            "rules") is None else gosyntax.GoLiteral("[]networking.IngressRule{}"),
            "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        problems += _ingress_backend(spec["defaultBackend"], "spec.defaultBackend")
    for i, rule in enumerate(rules):
        at = f"spec.rules[{i}]"
        host = rule.get("host") or ""
        if host:
            if _is_ip(host):
                problems.append(errors.invalid(f"{at}.host", host, "must be a DNS name, not an IP address"))
            check = name_rules.is_wildcard_dns1123_subdomain if "*" in host else name_rules.is_dns1123_subdomain
            problems += [errors.invalid(f"{at}.host", host, m) for m in check(host)]
        http = rule.get("http")
        if http is not None:
            paths = http.get("paths") or []
            if not paths:
                problems.append(errors.required(f"{at}.http.paths"))
            for j, item in enumerate(paths):
                problems += _ingress_path(item, f"{at}.http.paths[{j}]")
    for i, tls in enumerate(spec.get("tls") or ()):
        for j, host in enumerate(tls.get("hosts") or ()):
            check = name_rules.is_wildcard_dns1123_subdomain if "*" in host else name_rules.is_dns1123_subdomain
            problems += [errors.invalid(f"spec.tls[{i}].hosts[{j}]", host, m) for m in check(host)]
    class_name = spec.get("ingressClassName")
    if class_name is not None:
        problems += [errors.invalid("spec.ingressClassName", class_name, m)
                     for m in name_rules.name_is_dns_subdomain(class_name, False)]
    return problems


def _ingress_path(item: dict, path: str) -> list[FieldError]:
    kind = item.get("pathType")
    if kind is None:
        return [errors.required(f"{path}.pathType", "pathType must be specified")]
    problems: list[FieldError] = []
    value = item.get("path") or ""
    if kind in ("Exact", "Prefix"):
        if not value.startswith("/"):
            problems.append(errors.invalid(f"{path}.path", value, "must be an absolute path"))
        if value:
            for sequence in ("//", "/./", "/../", "%2f", "%2F"):
                if sequence in value:
                    problems.append(errors.invalid(f"{path}.path", value, f"must not contain '{sequence}'"))
            for suffix in ("/..", "/."):
                if value.endswith(suffix):
                    problems.append(errors.invalid(f"{path}.path", value, f"cannot end with '{suffix}'"))
    elif kind == "ImplementationSpecific":
        if value and not value.startswith("/"):
            problems.append(errors.invalid(f"{path}.path", value, "must be an absolute path"))
    else:
        problems.append(errors.not_supported(f"{path}.pathType", kind, _PATH_TYPES))
    return problems + _ingress_backend(item.get("backend") or {}, f"{path}.backend")


def _ingress_backend(backend: dict, path: str) -> list[FieldError]:
    resource, svc = backend.get("resource"), backend.get("service")
    if resource is not None and svc is not None:
        return [errors.invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        problems = []
        if not resource.get("kind"):
            problems.append(errors.required(f"{path}.resource.kind"))
        if not resource.get("name"):
            problems.append(errors.required(f"{path}.resource.name"))
        return problems
    if svc is None:
        return [errors.invalid(path, "", "resource or service backend is required")]
    problems: list[FieldError] = []
    name = svc.get("name") or ""
    if not name:
        problems.append(errors.required(f"{path}.service.name"))
    else:
        problems += [errors.invalid(f"{path}.service.name", name, m)
                     for m in name_rules.name_is_dns1035_label(name, False)]
    port = svc.get("port") or {}
    port_name, number = port.get("name") or "", port.get("number") or 0
    if port_name and number:
        problems.append(errors.invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        problems += [errors.invalid(f"{path}.service.port.name", port_name, m)
                     for m in name_rules.is_valid_port_name(port_name)]
    elif number:
        problems += [errors.invalid(f"{path}.service.port.number", number, m)
                     for m in name_rules.is_valid_port_num(number)]
    else:
        problems.append(errors.required(path, "port name or number is required"))
    return problems


def ingress_class(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], False, name_rules.name_is_dns_subdomain)
    controller = (obj.get("spec") or {}).get("controller") or ""
    if not controller:
        problems.append(errors.required("spec.controller"))
    return problems


def ingress_class_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    controller = (obj.get("spec") or {}).get("controller")
    if controller != (old.get("spec") or {}).get("controller"):
        problems.append(errors.invalid("spec.controller", controller or "", "field is immutable"))
    return problems
