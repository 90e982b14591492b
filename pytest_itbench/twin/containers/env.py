"""A container's process environment, computed from the pod and the objects it references.

Follows the kubelet (``makeEnvironmentVariables``) and containerd: the
runtime's ``PATH`` and ``HOSTNAME`` first, then ``envFrom`` sources, then
``env`` entries in order (``$(VAR)`` references expanded, ``valueFrom``
resolved from ConfigMaps, Secrets, pod fields and resources), then the
service-link variables of the namespace's services (and always those of the
``kubernetes`` service), and finally ``HOME`` when nothing set it.
A source that is missing contributes nothing: a container whose required
source is missing never starts, so nobody can exec into it.
"""

from __future__ import annotations

import base64
import re

from . import downward_api
from . import ContainerRef
from ..store import Store

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_REFERENCE = re.compile(r"\$\$|\$\(([^)]*)\)")


def pod_hostname(pod: dict) -> str:
    """The hostname the kubelet gives the pod: ``spec.hostname`` or the pod name cut to 63 characters."""
    hostname = (pod.get("spec") or {}).get("hostname") or pod["metadata"]["name"]
    if len(hostname) > 63:
        hostname = hostname[:63].rstrip("-.")
    return hostname


def run_as_user(pod: dict, container: dict) -> int:
    """The user the container's processes run as (container securityContext, then the pod's, else root)."""
    for context in (container.get("securityContext"), (pod.get("spec") or {}).get("securityContext")):
        if context and context.get("runAsUser") is not None:
            return int(context["runAsUser"])
    return 0


def environment(store: Store, pod: dict, ref: ContainerRef) -> dict[str, str]:
    """The environment ``env`` prints in the container, in order."""
    namespace = pod["metadata"].get("namespace", "")
    container = ref.spec
    service_env = _service_env(store, namespace, (pod.get("spec") or {}).get("enableServiceLinks", True))
    declared: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        declared.update(_from_source(store, namespace, source))
    for entry in container.get("env") or []:
        name = entry.get("name", "")
        if "valueFrom" in entry:
            value = _value_from(store, pod, container, entry["valueFrom"])
            if value is None:
                continue
        else:
            value = _expand(entry.get("value") or "", declared, service_env)
        declared[name] = value
    env = {"PATH": DEFAULT_PATH, "HOSTNAME": pod_hostname(pod)}
    env.update(declared)
    for name, value in service_env.items():
        env.setdefault(name, value)
    env.setdefault("HOME", "/root" if run_as_user(pod, container) == 0 else "/")
    return env


def _expand(value: str, declared: dict[str, str], service_env: dict[str, str]) -> str:
    """``$(VAR)`` references to earlier variables; ``$$`` escapes; unknown references stay as written."""
    def replace(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        if name in declared:
            return declared[name]
        return service_env.get(name, match.group(0))
    return _REFERENCE.sub(replace, value)


def _from_source(store: Store, namespace: str, source: dict) -> dict[str, str]:
    prefix = source.get("prefix", "")
    if "configMapRef" in source:
        data = config_map_data(store, namespace, source["configMapRef"].get("name", ""))
    else:
        data = secret_data(store, namespace, (source.get("secretRef") or {}).get("name", ""))
    out = {}
    for key in sorted(data or {}):
        name = prefix + key
        # The kubelet skips keys that are not valid variable names (and records an event).
        if _ENV_NAME.fullmatch(name):
            out[name] = data[key].decode(errors="replace")
    return out


def _value_from(store: Store, pod: dict, container: dict, source: dict) -> str | None:
    namespace = pod["metadata"].get("namespace", "")
    if "configMapKeyRef" in source:
        ref = source["configMapKeyRef"]
        data = config_map_data(store, namespace, ref.get("name", "")) or {}
        found = data.get(ref.get("key", ""))
        return found.decode(errors="replace") if found is not None else None
    if "secretKeyRef" in source:
        ref = source["secretKeyRef"]
        data = secret_data(store, namespace, ref.get("name", "")) or {}
        found = data.get(ref.get("key", ""))
        return found.decode(errors="replace") if found is not None else None
    if "fieldRef" in source:
        return downward_api.field_value(pod, source["fieldRef"].get("fieldPath", ""))
    if "resourceFieldRef" in source:
        ref = source["resourceFieldRef"]
        target = container_named(pod, ref.get("containerName")) or container
        return downward_api.resource_value(target, node_of(store, pod), ref.get("resource", ""),
                                           ref.get("divisor"))
    return None


def container_named(pod: dict, name: str | None) -> dict | None:
    """A container or init container of the pod by name (``resourceFieldRef.containerName``)."""
    if not name:
        return None
    spec = pod.get("spec") or {}
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if container.get("name") == name:
            return container
    return None


def node_of(store: Store, pod: dict) -> dict | None:
    node_name = (pod.get("spec") or {}).get("nodeName")
    return store.get("nodes", "", node_name) if node_name else None


def config_map_data(store: Store, namespace: str, name: str) -> dict[str, bytes] | None:
    """A ConfigMap's keys as bytes (``data`` and ``binaryData``), or ``None`` if it does not exist."""
    cm = store.get("configmaps", namespace, name)
    if cm is None:
        return None
    out = {key: value.encode() for key, value in (cm.get("data") or {}).items()}
    out.update({key: base64.b64decode(value) for key, value in (cm.get("binaryData") or {}).items()})
    return out


def secret_data(store: Store, namespace: str, name: str) -> dict[str, bytes] | None:
    """A Secret's decoded keys, or ``None`` if it does not exist."""
    secret = store.get("secrets", namespace, name)
    if secret is None:
        return None
    return {key: base64.b64decode(value) for key, value in (secret.get("data") or {}).items()}


def _service_env(store: Store, namespace: str, service_links: bool) -> dict[str, str]:
    """Docker-link style variables for services with a cluster IP, by service name."""
    chosen: dict[str, dict] = {}
    for service in store.list("services", "default")[0]:
        if service["metadata"]["name"] == "kubernetes":
            chosen["kubernetes"] = service
    if service_links:
        for service in store.list("services", namespace)[0]:
            chosen[service["metadata"]["name"]] = service
    env: dict[str, str] = {}
    for name in sorted(chosen):
        spec = chosen[name].get("spec") or {}
        ip, ports = spec.get("clusterIP"), spec.get("ports") or []
        if not ip or ip == "None" or not ports:
            continue
        env.update(_service_link_vars(name, ip, ports))
    return env


def _service_link_vars(service: str, ip: str, ports: list[dict]) -> dict[str, str]:
    prefix = service.upper().replace("-", "_")
    host = f"[{ip}]" if ":" in ip else ip
    env = {f"{prefix}_SERVICE_HOST": ip, f"{prefix}_SERVICE_PORT": str(ports[0].get("port"))}
    for port in ports:
        if port.get("name"):
            env[f"{prefix}_SERVICE_PORT_{port['name'].upper().replace('-', '_')}"] = str(port.get("port"))
    for i, port in enumerate(ports):
        protocol = port.get("protocol") or "TCP"
        url = f"{protocol.lower()}://{host}:{port.get('port')}"
        if i == 0:
            env[f"{prefix}_PORT"] = url
        base = f"{prefix}_PORT_{port.get('port')}_{protocol.upper()}"
        env[base] = url
        env[f"{base}_PROTO"] = protocol.lower()
        env[f"{base}_PORT"] = str(port.get("port"))
        env[f"{base}_ADDR"] = ip
    return env
