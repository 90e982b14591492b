"""The downward API: pod fields and container resources as the kubelet exposes them to a container.

Used for ``env[].valueFrom.fieldRef`` / ``resourceFieldRef`` and for
``downwardAPI`` volume items; the values come from the Pod object (and, for
unset limits, the allocatable resources of the pod's node).
"""

from __future__ import annotations

import json
import math
import re

from .. import quantity

_SUBSCRIPT = re.compile(r"metadata\.(labels|annotations)\['(.+)'\]")


def field_value(pod: dict, path: str) -> str:
    """A ``fieldRef.fieldPath`` value; unknown paths give an empty string, as for unset fields."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    match = _SUBSCRIPT.fullmatch(path)
    if match:
        return (meta.get(match.group(1)) or {}).get(match.group(2), "")
    simple = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "metadata.uid": meta.get("uid", ""),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", ""),
        "status.hostIP": status.get("hostIP", ""),
        "status.podIP": status.get("podIP", ""),
        "status.hostIPs": ",".join(entry.get("ip", "") for entry in status.get("hostIPs") or []),
        "status.podIPs": ",".join(entry.get("ip", "") for entry in status.get("podIPs") or []),
    }
    if path in simple:
        return simple[path]
    if path in ("metadata.labels", "metadata.annotations"):
        return format_map(meta.get(path.split(".")[1]) or {})
    return ""


def format_map(values: dict[str, str]) -> str:
    """Labels or annotations as a downwardAPI file holds them: ``key="value"`` lines, sorted, no final newline."""
    return "\n".join(f"{key}={json.dumps(values[key], ensure_ascii=False)}" for key in sorted(values))


def resource_value(container: dict, node: dict | None, resource: str, divisor: str | None) -> str:
    """A ``resourceFieldRef`` value: the container's request or limit, divided by ``divisor`` and rounded up.

    An unset limit reads as the node's allocatable amount, as the kubelet defaults it.
    """
    kind, _, name = resource.partition(".")
    resources = container.get("resources") or {}
    amount = (resources.get(kind) or {}).get(name)
    if amount is None and kind == "limits":
        amount = (((node or {}).get("status") or {}).get("allocatable") or {}).get(name)
    value = quantity.value(amount) if amount is not None else 0
    divide_by = quantity.value(divisor) if divisor else 1
    if name == "cpu":
        # The kubelet divides milli-values, so a divisor below 1m counts as 1m.
        return str(math.ceil(math.ceil(value * 1000) / max(math.ceil(divide_by * 1000), 1)))
    return str(math.ceil(math.ceil(value) / max(math.ceil(divide_by), 1)))
