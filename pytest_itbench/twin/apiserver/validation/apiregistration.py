"""Validation of APIServices (kube-aggregator's pkg/apis/apiregistration/validation)."""

from __future__ import annotations

import base64
import binascii

from ... import errors
from ...errors import FieldError
from . import name_rules, objectmeta

CONDITION_STATUSES = ["True", "False", "Unknown"]


def api_service(obj: dict) -> list[FieldError]:
    """ValidateAPIService: named ``<version>.<group>``, a valid group and version, priorities in range, and a
    service reference unless the API is served locally."""
    spec = obj.get("spec") or {}
    group, version = spec.get("group") or "", spec.get("version") or ""
    problems = objectmeta.object_meta(obj["metadata"], False, _name_rule(f"{version}.{group}"))
    if not group and version != "v1":
        problems.append(errors.required("spec.group", "only v1 may have an empty group and it better be legacy kube"))
    if group:
        problems += [errors.invalid("spec.group", group, m) for m in name_rules.is_dns1123_subdomain(group)]
    problems += [errors.invalid("spec.version", version, m) for m in name_rules.is_dns1035_label(version)]
    group_priority = spec.get("groupPriorityMinimum") or 0
    if not 0 < group_priority <= 20000:
        problems.append(errors.invalid("spec.groupPriorityMinimum", group_priority,
                                       "must be positive and less than 20000"))
    version_priority = spec.get("versionPriority") or 0
    if not 0 < version_priority <= 1000:
        problems.append(errors.invalid("spec.versionPriority", version_priority,
                                       "must be positive and less than 1000"))
    ca_bundle = _byte_count(spec.get("caBundle"))
    skip_verify = bool(spec.get("insecureSkipTLSVerify"))
    service = spec.get("service")
    if not service:
        if ca_bundle:
            problems.append(errors.invalid("spec.caBundle", f"{ca_bundle} bytes",
                                           "local APIServices may not have a caBundle"))
        if skip_verify:
            problems.append(errors.invalid("spec.insecureSkipTLSVerify", True,
                                           "local APIServices may not have insecureSkipTLSVerify"))
        return problems
    if not service.get("namespace"):
        problems.append(errors.required("spec.service.namespace"))
    if not service.get("name"):
        problems.append(errors.required("spec.service.name"))
    if skip_verify and ca_bundle:
        problems.append(errors.invalid("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present"))
    return problems


def api_service_update(obj: dict, old: dict) -> list[FieldError]:
    return objectmeta.object_meta_update(obj["metadata"], old["metadata"]) + api_service(obj)


def api_service_status(obj: dict, old: dict) -> list[FieldError]:
    """ValidateAPIServiceStatus: each condition's status is True, False or Unknown."""
    problems = []
    for i, condition in enumerate((obj.get("status") or {}).get("conditions") or ()):
        status = (condition or {}).get("status") or ""
        if status not in CONDITION_STATUSES:
            problems.append(errors.not_supported(f"status.conditions[{i}].status", status, CONDITION_STATUSES))
    return problems


def _name_rule(required: str):
    """The name must be usable in a URL path and be exactly ``spec.version + "." + spec.group``."""
    def check(name: str, prefix: bool) -> list[str]:
        if name in (".", ".."):
            return [f"may not be '{name}'"]
        problems = [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]
        if problems:
            return problems
        if name != required:
            return [f'must be `spec.version+"."+spec.group`: {errors.go_value(required)}']
        return []
    return check


def _byte_count(value) -> int:
    """Length of a ``[]byte`` field, which JSON carries in base64."""
    if not isinstance(value, str) or not value:
        return 0
    try:
        return len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return len(value)
