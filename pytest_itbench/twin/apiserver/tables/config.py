"""Configuration printers: config maps, secrets and service accounts."""

from __future__ import annotations

from .core import Column, age, age_column, api_doc, name_column, register


def config_map_row(obj: dict, now: float) -> list:
    entries = len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
    return [obj["metadata"].get("name", ""), entries, age(obj, now)]


def secret_row(obj: dict, now: float) -> list:
    return [obj["metadata"].get("name", ""), obj.get("type", ""), len(obj.get("data") or {}), age(obj, now)]


def service_account_row(obj: dict, now: float) -> list:
    return [obj["metadata"].get("name", ""), len(obj.get("secrets") or ()), age(obj, now)]


register("", "ConfigMap", [
    name_column(),
    Column("Data", description=api_doc("core.v1.ConfigMap", "data")),
    age_column(),
], config_map_row)

register("", "Secret", [
    name_column(),
    Column("Type", description=api_doc("core.v1.Secret", "type")),
    Column("Data", description=api_doc("core.v1.Secret", "data")),
    age_column(),
], secret_row)

register("", "ServiceAccount", [
    name_column(),
    Column("Secrets", description=api_doc("core.v1.ServiceAccount", "secrets")),
    age_column(),
], service_account_row)
