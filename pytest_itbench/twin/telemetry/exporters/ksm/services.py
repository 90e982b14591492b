"""kube-state-metrics' Service and Endpoints families."""

from __future__ import annotations

from typing import Iterable

from .common import Row, family, timestamp_row

# ---- Services (labels namespace, service, uid) ----------------------------------------------------------------------
SERVICE_INFO = family("kube_service_info", "Information about service.", stable=True)
SERVICE_CREATED = family("kube_service_created", "Unix creation timestamp", stable=True)
SERVICE_TYPE = family("kube_service_spec_type", "Type about service.", stable=True)
SERVICE_EXTERNAL_IP = family("kube_service_spec_external_ip", "Service external ips. One series for each ip",
                             stable=True)
SERVICE_LB_INGRESS = family("kube_service_status_load_balancer_ingress", "Service load balancer ingress status",
                            stable=True)
SERVICE_DELETION = family("kube_service_deletion_timestamp", "Unix deletion timestamp")

SERVICE_FAMILIES = (SERVICE_INFO, SERVICE_CREATED, SERVICE_TYPE, SERVICE_EXTERNAL_IP, SERVICE_LB_INGRESS,
                    SERVICE_DELETION)


def service_labels(obj: dict) -> dict[str, str]:
    meta = obj["metadata"]
    return {"namespace": meta.get("namespace", ""), "service": meta["name"], "uid": meta.get("uid", "")}


def service_rows(s: dict) -> Iterable[Row]:
    meta, spec, status = s["metadata"], s.get("spec") or {}, s.get("status") or {}
    yield SERVICE_INFO, {"cluster_ip": spec.get("clusterIP", ""), "external_name": spec.get("externalName", ""),
                         "load_balancer_ip": spec.get("loadBalancerIP", ""),
                         "external_traffic_policy": spec.get("externalTrafficPolicy", "")}, 1.0
    yield from timestamp_row(SERVICE_CREATED, meta.get("creationTimestamp"))
    yield SERVICE_TYPE, {"type": spec.get("type", "")}, 1.0
    for address in spec.get("externalIPs") or ():
        yield SERVICE_EXTERNAL_IP, {"external_ip": address}, 1.0
    for ingress in (status.get("loadBalancer") or {}).get("ingress") or ():
        yield SERVICE_LB_INGRESS, {"ip": ingress.get("ip", ""), "hostname": ingress.get("hostname", "")}, 1.0
    yield from timestamp_row(SERVICE_DELETION, meta.get("deletionTimestamp"))


# ---- Endpoints (labels namespace, endpoint) ---------------------------------------------------------------------------
ENDPOINT_INFO = family("kube_endpoint_info", "Information about endpoint.", stable=True)
ENDPOINT_CREATED = family("kube_endpoint_created", "Unix creation timestamp", stable=True)
ENDPOINT_ADDRESS = family("kube_endpoint_address", "Information about Endpoint available and non available addresses.",
                          stable=True)
# Deprecated since v2.14.0 and still exposed; the header says so after the stability level.
ENDPOINT_PORTS = family("kube_endpoint_ports", "(Deprecated since v2.14.0) Information about the Endpoint ports.",
                        stable=True)

ENDPOINT_FAMILIES = (ENDPOINT_INFO, ENDPOINT_CREATED, ENDPOINT_ADDRESS, ENDPOINT_PORTS)


def endpoint_labels(obj: dict) -> dict[str, str]:
    return {"namespace": obj["metadata"].get("namespace", ""), "endpoint": obj["metadata"]["name"]}


def endpoint_rows(e: dict) -> Iterable[Row]:
    yield ENDPOINT_INFO, {}, 1.0
    yield from timestamp_row(ENDPOINT_CREATED, e["metadata"].get("creationTimestamp"))
    subsets = e.get("subsets") or ()
    for subset in subsets:
        for port in subset.get("ports") or ():
            where = {"port_protocol": port.get("protocol", ""), "port_number": str(port.get("port", "")),
                     "port_name": port.get("name", "")}
            for address in subset.get("addresses") or ():
                yield ENDPOINT_ADDRESS, {**where, "ip": address.get("ip", ""), "ready": "true"}, 1.0
            for address in subset.get("notReadyAddresses") or ():
                yield ENDPOINT_ADDRESS, {**where, "ip": address.get("ip", ""), "ready": "false"}, 1.0
    for subset in subsets:
        for port in subset.get("ports") or ():
            yield ENDPOINT_PORTS, {"port_name": port.get("name", ""), "port_protocol": port.get("protocol", ""),
                                   "port_number": str(port.get("port", ""))}, 1.0
