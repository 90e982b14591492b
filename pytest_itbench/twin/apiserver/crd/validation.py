"""Validation of custom resources against their CRD version's ``openAPIV3Schema``.

apiextensions validates with kube-openapi's schema validator and turns its
results into field errors; this module reproduces both the checks and the
messages, e.g.::

    spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"
    spec.size: Required value
    spec.color: Unsupported value: "purple": supported values: "red", "blue"
    spec.name: Invalid value: "ABC": spec.name in body should match '^[a-z]+$'
    spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10
    spec.name: Too long: may not be longer than 5

and the duplicate checks of ``x-kubernetes-list-type: set`` and ``map``.
``x-kubernetes-validations`` (CEL) rules are not evaluated, and validation
ratcheting (errors in unchanged fields tolerated on update) is not modelled.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import re
from typing import Any

from ... import errors
from ...errors import FieldError
from ...schema import json_type_name
from ..gojson import format_float, quote

# Formats apiextensions validates (the others are stripped from the schema before validation).
_FORMAT_PATTERNS = {
    "bsonobjectid": r"^[0-9a-fA-F]{24}$",
    "email": r"^[^@\s]+@[^@\s]+$",
    "hostname": r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$",
    "mac": r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$",
    "uuid": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid3": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid4": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
    "uuid5": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
    "hexcolor": r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$",
    "rgbcolor": r"^rgb\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*\)$",
    "ssn": r"^\d{3}[- ]?\d{2}[- ]?\d{4}$",
    "duration": r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$|^\d+\s*(ns|us|ms|s|m|h|d|w)[a-z]*$",
    "date": r"^\d{4}-\d{2}-\d{2}$",
    "datetime": r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$",
}
_COMPILED = {name: re.compile(p) for name, p in _FORMAT_PATTERNS.items()}
_VALIDATED_FORMATS = set(_COMPILED) | {"ipv4", "ipv6", "cidr", "byte", "uri", "isbn", "isbn10", "isbn13",
                                       "creditcard", "password"}


def validate(obj: dict, schema: dict) -> list[FieldError]:
    """Field errors of ``obj`` against a CRD version's schema, in the order apiextensions reports them."""
    checker = _Validator()
    checker.node(obj, schema, "")
    checker.list_types(obj, schema, "")
    return checker.errors


def _types(schema: dict) -> list[str]:
    if schema.get("x-kubernetes-int-or-string"):
        return ["integer", "string"]
    t = schema.get("type")
    return [t] if t else []


def _number(value) -> str:
    return format_float(value) if isinstance(value, float) else str(value)


def _format_name(schema: dict) -> str:
    """The schema's format if apiextensions validates it (go-openapi normalizes names by dropping '-')."""
    fmt = schema.get("format") or ""
    return fmt if fmt.replace("-", "") in _VALIDATED_FORMATS else ""


class _Validator:
    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    # ---- error constructors (kubeOpenAPIResultToFieldErrors) -----------------------------
    def invalid(self, path: str, value, message: str) -> None:
        self.errors.append(errors.invalid(path or "<nil>", value, message))

    def type_invalid(self, path: str, value, message: str) -> None:
        self.errors.append(FieldError("TypeInvalid", path or "<nil>", value, message))

    # ---- the schema validator -------------------------------------------------------------
    def node(self, value, schema: dict, path: str) -> None:
        types = _types(schema)
        if value is None:
            if types and not schema.get("nullable"):
                self.type_invalid(path, "null", f"{path} in body must be of type {','.join(types)}: \"null\"")
            self.enum(value, schema, path)
            return
        actual = json_type_name(value)
        if types and not self.type_matches(actual, value, types, schema):
            self.type_invalid(path, actual, f"{path} in body must be of type {','.join(types)}: {quote(actual)}")
            return
        self.combinators(value, schema, path)
        if isinstance(value, str):
            self.string(value, schema, path)
        elif actual in ("integer", "number"):
            self.number(value, schema, path)
        elif isinstance(value, list):
            self.array(value, schema, path)
        self.enum(value, schema, path)
        if isinstance(value, dict):
            self.object(value, schema, path)

    @staticmethod
    def type_matches(actual: str, value, types: list[str], schema: dict) -> bool:
        if actual in types:
            return True
        if actual == "number" and "integer" in types and float(value).is_integer():
            return True
        if actual == "integer" and "number" in types:
            return True
        # A string with a validated format is the format validator's business.
        return actual == "string" and bool(_format_name(schema)) and not {"integer", "number"} & set(types)

    def combinators(self, value, schema: dict, path: str) -> None:
        any_of = schema.get("anyOf") or []
        if any_of and not any(self.passes(value, sub, path) for sub in any_of):
            self.invalid("", "", f"{quote(path)} must validate at least one schema (anyOf)")
        one_of = schema.get("oneOf") or []
        if one_of:
            valid = sum(1 for sub in one_of if self.passes(value, sub, path))
            if valid != 1:
                detail = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
                self.invalid("", "", f"{quote(path)} must validate one and only one schema (oneOf). {detail}")
        for sub in schema.get("allOf") or []:
            self.node(value, sub, path)
        if isinstance(schema.get("not"), dict) and self.passes(value, schema["not"], path):
            self.invalid("", "", f"{quote(path)} must not validate the schema (not)")

    @staticmethod
    def passes(value, schema: dict, path: str) -> bool:
        trial = _Validator()
        trial.node(value, schema, path)
        return not trial.errors

    def string(self, value: str, schema: dict, path: str) -> None:
        max_length = schema.get("maxLength")
        if max_length is not None and len(value) > max_length:
            self.errors.append(FieldError("TooLong", path, value, f"may not be longer than {max_length}"))
        min_length = schema.get("minLength")
        if min_length is not None and len(value) < min_length:
            self.invalid(path, value, f"{path} in body should be at least {min_length} chars long")
        pattern = schema.get("pattern")
        if pattern is not None and re.search(pattern, value) is None:
            self.invalid(path, value, f"{path} in body should match '{pattern}'")
        fmt = _format_name(schema)
        if fmt and not _format_ok(fmt.replace("-", ""), value):
            self.type_invalid(path, value, f"{path} in body must be of type {fmt}: {quote(value)}")

    def number(self, value, schema: dict, path: str) -> None:
        multiple = schema.get("multipleOf")
        if multiple and (value / multiple) != int(value / multiple):
            self.invalid(path, value, f"{path} in body should be a multiple of {_number(multiple)}")
        maximum = schema.get("maximum")
        if maximum is not None:
            if schema.get("exclusiveMaximum") and value >= maximum:
                self.invalid(path, value, f"{path} in body should be less than {_number(maximum)}")
            elif value > maximum:
                self.invalid(path, value, f"{path} in body should be less than or equal to {_number(maximum)}")
        minimum = schema.get("minimum")
        if minimum is not None:
            if schema.get("exclusiveMinimum") and value <= minimum:
                self.invalid(path, value, f"{path} in body should be greater than {_number(minimum)}")
            elif value < minimum:
                self.invalid(path, value, f"{path} in body should be greater than or equal to {_number(minimum)}")

    def array(self, value: list, schema: dict, path: str) -> None:
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                self.node(item, items, f"{path}[{i}]")
        min_items = schema.get("minItems")
        if min_items is not None and len(value) < min_items:
            self.invalid(path, len(value), f"{path} in body should have at least {min_items} items")
        max_items = schema.get("maxItems")
        if max_items is not None and len(value) > max_items:
            self.errors.append(FieldError("TooMany", path, len(value), f"must have at most {max_items} items"))

    def enum(self, value, schema: dict, path: str) -> None:
        allowed = schema.get("enum")
        if allowed is None or any(_same(value, a) for a in allowed):
            return
        shown = [a if isinstance(a, str) else errors.go_value(a) for a in allowed]
        self.errors.append(errors.not_supported(path or "<nil>", value, shown))

    def object(self, value: dict, schema: dict, path: str) -> None:
        max_props = schema.get("maxProperties")
        if max_props is not None and len(value) > max_props:
            self.errors.append(FieldError("TooMany", path or "<nil>", len(value), f"must have at most {max_props} items"))
        min_props = schema.get("minProperties")
        if min_props is not None and len(value) < min_props:
            self.invalid(path, len(value), f"{path} in body should have at least {min_props} properties")
        props = schema.get("properties") or {}
        for key in sorted(props):
            if key in value:
                self.node(value[key], props[key], f"{path}.{key}" if path else key)
        for key in schema.get("required") or []:
            if key not in value:
                self.errors.append(errors.required(f"{path}.{key}" if path else key))
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in sorted(value):
                if key not in props:
                    self.node(value[key], extra, f"{path}.{key}" if path else key)

    # ---- x-kubernetes-list-type ------------------------------------------------------------
    def list_types(self, value, schema: dict, path: str) -> None:
        if isinstance(value, dict):
            props = schema.get("properties") or {}
            extra = schema.get("additionalProperties")
            for key, item in value.items():
                sub = props.get(key) if key in props else (extra if isinstance(extra, dict) else None)
                if sub is not None:
                    self.list_types(item, sub, f"{path}.{key}" if path else key)
        elif isinstance(value, list):
            items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
            list_type = schema.get("x-kubernetes-list-type")
            keys = schema.get("x-kubernetes-list-map-keys") or []
            seen: list = []
            for i, item in enumerate(value):
                identity = {k: item.get(k) for k in keys} if list_type == "map" and isinstance(item, dict) else item
                if list_type in ("set", "map") and any(_same(identity, s) for s in seen):
                    self.errors.append(errors.duplicate(f"{path}[{i}]", identity))
                seen.append(identity)
                self.list_types(item, items, f"{path}[{i}]")


def _same(a, b) -> bool:
    """JSON equality (so that 1 == 1.0 but True != 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _format_ok(fmt: str, value: str) -> bool:
    pattern = _COMPILED.get(fmt)
    if pattern is not None:
        if not pattern.search(value):
            return False
        if fmt == "date":
            return _parses(lambda: datetime.date.fromisoformat(value))
        return True
    if fmt in ("ipv4", "ipv6"):
        kind = ipaddress.IPv4Address if fmt == "ipv4" else ipaddress.IPv6Address
        return _parses(lambda: kind(value))
    if fmt == "cidr":
        return _parses(lambda: ipaddress.ip_network(value, strict=False))
    if fmt == "byte":
        return _parses(lambda: base64.b64decode(value, validate=True))
    if fmt == "uri":
        return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", value) is not None or value.startswith("/")
    return True


def _parses(parse) -> bool:
    try:
        parse()
    except (ValueError, binascii.Error):
        return False
    return True
