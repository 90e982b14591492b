"""The APIService printer, as kube-aggregator's registry converts APIServices to a Table."""

from __future__ import annotations

from .core import Column, age, age_column, name_column, register


def api_service_row(obj: dict, now: float) -> list:
    service = (obj.get("spec") or {}).get("service")
    where = f"{service.get('namespace', '')}/{service.get('name', '')}" if service else "Local"
    available = "Unknown"
    for condition in (obj.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Available":
            status, reason = condition.get("status", ""), condition.get("reason", "")
            available = f"{status} ({reason})" if status != "True" and reason else status
            break
    return [obj["metadata"].get("name", ""), where, available, age(obj, now)]


register("apiregistration.k8s.io", "APIService", [
    name_column(),
    Column("Service", description="The reference to the service that hosts this API endpoint."),
    Column("Available", description="Whether this service is available."),
    age_column(),
], api_service_row)
