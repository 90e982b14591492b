"""Validation of ConfigMaps, Secrets, ServiceAccounts and Namespaces."""

from __future__ import annotations

import base64
import binascii
import json

from ... import errors
from ...errors import FieldError
from . import name_rules, objectmeta

MAX_SIZE = 1024 * 1024  # core.MaxSecretSize, which also bounds ConfigMaps
IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"


def config_map(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    total = 0
    for key in sorted(data):
        problems += [errors.invalid(f"data[{key}]", key, m) for m in name_rules.is_config_map_key(key)]
        if key in binary:
            problems.append(errors.invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += len(str(data[key]).encode())
    for key in sorted(binary):
        problems += [errors.invalid(f"binaryData[{key}]", key, m) for m in name_rules.is_config_map_key(key)]
        total += _decoded_length(binary[key])
    if total > MAX_SIZE:
        problems.append(errors.too_long("", "", MAX_SIZE))
    return problems


def config_map_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    if old.get("immutable"):
        if not obj.get("immutable"):
            problems.append(errors.forbidden("immutable", IMMUTABLE_WHEN_SET))
        for key in ("data", "binaryData"):
            if (obj.get(key) or None) != (old.get(key) or None):
                problems.append(errors.forbidden(key, IMMUTABLE_WHEN_SET))
    return problems + config_map(obj)


def _decoded_length(text: str) -> int:
    try:
        return len(base64.b64decode(text))
    except (binascii.Error, ValueError):
        return len(text)


def secret(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    data = obj.get("data") or {}
    total = 0
    for key in sorted(data):
        problems += [errors.invalid(f"data[{key}]", key, m) for m in name_rules.is_config_map_key(key)]
        total += _decoded_length(data[key])
    if total > MAX_SIZE:
        problems.append(errors.too_long("data", "", MAX_SIZE))
    kind = obj.get("type") or ""
    annotations = obj["metadata"].get("annotations") or {}
    if kind == "kubernetes.io/service-account-token":
        if not annotations.get("kubernetes.io/service-account.name"):
            problems.append(errors.required("metadata.annotations[kubernetes.io/service-account.name]"))
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if kind == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        if key not in data:
            problems.append(errors.required(f"data[{key}]"))
        else:
            try:
                parsed = json.loads(base64.b64decode(data[key]) or b"null")
                if not isinstance(parsed, dict):
                    raise ValueError("json: cannot unmarshal into Go value of type map[string]interface {}")
            except ValueError as exc:
                problems.append(errors.invalid(f"data[{key}]", "<secret contents redacted>", str(exc)))
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            problems += [errors.required("data[username]"), errors.required("data[password]")]
    elif kind == "kubernetes.io/ssh-auth":
        if not data.get("ssh-privatekey"):
            problems.append(errors.required("data[ssh-privatekey]"))
    elif kind == "kubernetes.io/tls":
        for key in ("tls.crt", "tls.key"):
            if key not in data:
                problems.append(errors.required(f"data[{key}]"))
    return problems


def secret_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    if obj.get("type") != old.get("type"):
        problems.append(errors.invalid("type", obj.get("type") or "", "field is immutable"))
    if old.get("immutable"):
        if not obj.get("immutable"):
            problems.append(errors.forbidden("immutable", IMMUTABLE_WHEN_SET))
        if (obj.get("data") or None) != (old.get("data") or None):
            problems.append(errors.forbidden("data", IMMUTABLE_WHEN_SET))
    return problems + secret(obj)


def service_account(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    for i, ref in enumerate(obj.get("secrets") or ()):
        name = ref.get("name") or ""
        if name:
            problems += [errors.invalid(f"secrets[{i}].name", name, m)
                         for m in name_rules.name_is_dns_subdomain(name, False)]
    return problems


def namespace(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], False, name_rules.name_is_dns_label)
    for i, finalizer in enumerate((obj.get("spec") or {}).get("finalizers") or ()):
        problems += _namespace_finalizer(finalizer, f"spec.finalizers[{i}]")
    return problems


def _namespace_finalizer(name: str, path: str) -> list[FieldError]:
    messages = name_rules.is_qualified_name(name)
    if not messages and "/" not in name and name != "kubernetes":
        messages = ["name is neither a standard finalizer name nor is it fully qualified"]
    return [errors.invalid(path, name, m) for m in messages]
