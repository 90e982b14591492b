"""Reading a body into a built-in API type the way kube-apiserver's Go JSON decoder does.

The API server decodes a request into a Go struct. That decides what a
client sees for a bad body:

* a value of the wrong JSON type is a 400 with Go's message, naming the
  innermost struct and the field path without list indexes (``json: cannot
  unmarshal string into Go struct field DeploymentSpec.spec.replicas of type
  int32``); only the first such error is reported, except that an error from
  a type with its own unmarshaller (quantities, int-or-string, times) stops
  decoding at once and wins;
* fields the type does not have, and keys given twice, are "strict decoding"
  problems, reported in document order and acted on per ``fieldValidation``;
* quantities come back in canonical form (``0.5`` reads back as ``500m``),
  and ``[]byte`` fields must hold valid base64.

Schemas come from the upstream OpenAPI definitions; each definition is
compiled once into a tree of :class:`FieldType` and shared by every twin.
"""

from __future__ import annotations

import re
from typing import Callable

from ...schema import builtin_definitions, ref_name
from ... import quantity

STRUCT, MAP, LIST, INT, FLOAT, STRING, BOOL, BYTES, QUANTITY, INT_OR_STRING, TIME, ANY = range(12)

_INT_RANGES = {"int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1)}
_SPECIAL = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": (QUANTITY, "resource.Quantity"),
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": (INT_OR_STRING, "intstr.IntOrString"),
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": (TIME, "v1.Time"),
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": (TIME, "v1.MicroTime"),
}
# Types that hold arbitrary JSON.
_RAW = {"io.k8s.apimachinery.pkg.runtime.RawExtension", "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch", "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray"}
# Fields declared with a named Go string type; their errors name it (the schema only says "string").
_NAMED_STRINGS = {
    ("io.k8s.api.core.v1.Container", "imagePullPolicy"): "v1.PullPolicy",
    ("io.k8s.api.core.v1.Container", "terminationMessagePolicy"): "v1.TerminationMessagePolicy",
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): "v1.Protocol",
    ("io.k8s.api.core.v1.ServicePort", "protocol"): "v1.Protocol",
    ("io.k8s.api.core.v1.PodSpec", "restartPolicy"): "v1.RestartPolicy",
    ("io.k8s.api.core.v1.PodSpec", "dnsPolicy"): "v1.DNSPolicy",
    ("io.k8s.api.core.v1.ServiceSpec", "type"): "v1.ServiceType",
    ("io.k8s.api.core.v1.ServiceSpec", "sessionAffinity"): "v1.ServiceAffinity",
    ("io.k8s.api.core.v1.ServiceSpec", "externalTrafficPolicy"): "v1.ServiceExternalTrafficPolicy",
    ("io.k8s.api.core.v1.Secret", "type"): "v1.SecretType",
    ("io.k8s.api.core.v1.Toleration", "operator"): "v1.TolerationOperator",
    ("io.k8s.api.core.v1.Toleration", "effect"): "v1.TaintEffect",
    ("io.k8s.api.apps.v1.DeploymentStrategy", "type"): "v1.DeploymentStrategyType",
    ("io.k8s.api.apps.v1.StatefulSetSpec", "podManagementPolicy"): "v1.PodManagementPolicyType",
    ("io.k8s.api.batch.v1.CronJobSpec", "concurrencyPolicy"): "v1.ConcurrencyPolicy",
    ("io.k8s.api.networking.v1.HTTPIngressPath", "pathType"): "v1.PathType",
}
_NAMED_STRING_LISTS = {
    ("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "accessModes"): "[]v1.PersistentVolumeAccessMode",
    ("io.k8s.api.networking.v1.NetworkPolicySpec", "policyTypes"): "[]v1.PolicyType",
}


class DecodeError(Exception):
    """The body cannot be read into the type; ``str()`` is the decoder's message."""


class FieldType:
    """One position in an API type: its kind, its Go type name and, for structs, its fields."""

    __slots__ = ("kind", "go_type", "struct", "elem", "_properties", "_fields")

    def __init__(self, kind: int, go_type: str, struct: str = "", elem: "FieldType | None" = None,
                 properties: dict | None = None):
        self.kind = kind
        self.go_type = go_type
        self.struct = struct  # definition name of a struct, for its field table
        self.elem = elem
        self._properties = properties
        self._fields: dict[str, FieldType] | None = None

    @property
    def struct_name(self) -> str:
        return self.struct.rsplit(".", 1)[-1]

    def fields(self) -> dict[str, "FieldType"]:
        if self._fields is None:
            self._fields = {name: _compile(schema, self.struct, name)
                            for name, schema in (self._properties or {}).items()}
        return self._fields


_compiled: dict[str, FieldType] = {}


def type_of(definition: str) -> FieldType:
    """The compiled type of an upstream definition such as ``io.k8s.api.apps.v1.Deployment``."""
    found = _compiled.get(definition)
    if found is not None:
        return found
    if definition in _SPECIAL:
        kind, go_type = _SPECIAL[definition]
        compiled = FieldType(kind, go_type)
    elif definition in _RAW:
        compiled = FieldType(ANY, "")
    else:
        schema = builtin_definitions().get(definition) or {}
        parts = definition.split(".")
        go_type = f"{parts[-2]}.{parts[-1]}"
        if "properties" in schema or "object" in _types(schema):
            compiled = FieldType(STRUCT, go_type, definition, properties=schema.get("properties") or {})
        else:
            compiled = _compile(schema, definition, "")
    _compiled[definition] = compiled
    return compiled


def _types(schema: dict) -> set[str]:
    t = schema.get("type")
    if t is None:
        return set()
    return {t} if isinstance(t, str) else set(t)


def _compile(schema: dict, owner: str, field: str) -> FieldType:
    if "$ref" in schema:
        return type_of(ref_name(schema["$ref"]))
    if "allOf" in schema and len(schema["allOf"]) == 1 and "$ref" in schema["allOf"][0]:
        return type_of(ref_name(schema["allOf"][0]["$ref"]))
    if schema.get("x-kubernetes-int-or-string"):
        return FieldType(INT_OR_STRING, "intstr.IntOrString")
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return FieldType(ANY, "")
    types = _types(schema)
    if "array" in types:
        elem = _compile(schema.get("items") or {}, owner, field)
        return FieldType(LIST, _NAMED_STRING_LISTS.get((owner, field)) or "[]" + elem.go_type, elem=elem)
    if "object" in types or "additionalProperties" in schema:
        values = schema.get("additionalProperties")
        if isinstance(values, dict):
            elem = _compile(values, owner, field)
            return FieldType(MAP, _map_type(elem), elem=elem)
        return FieldType(ANY, "")
    if "integer" in types:
        return FieldType(INT, schema.get("format") or "int64")
    if "number" in types:
        return FieldType(FLOAT, "float64")
    if "boolean" in types:
        return FieldType(BOOL, "bool")
    if "string" in types:
        if schema.get("format") == "byte":
            return FieldType(BYTES, "[]uint8")
        if schema.get("format") == "date-time":
            return FieldType(TIME, "v1.Time")
        return FieldType(STRING, _NAMED_STRINGS.get((owner, field), "string"))
    return FieldType(ANY, "")


def _map_type(elem: FieldType) -> str:
    if elem.kind == QUANTITY:
        return "v1.ResourceList"
    return f"map[string]{elem.go_type}"


# ---- decoding -------------------------------------------------------------------------------------

def decode(obj: dict, root: FieldType, duplicates: dict[int, set[str]] | None = None) -> list[str]:
    """Check ``obj`` against ``root`` and normalise it in place.

    Unknown fields are removed. Returns the strict-decoding problems in
    document order (``unknown field "spec.foo"``, ``duplicate field
    "spec.replicas"``); ``duplicates`` maps ``id()`` of each JSON object that
    repeated keys to those keys. Raises :class:`DecodeError` when a value
    cannot be read into its field.
    """
    walker = _Walker(duplicates or {})
    walker.struct_value(obj, root, "", "", top=True)
    if walker.type_error:
        raise DecodeError(walker.type_error)
    return walker.problems


class _Walker:
    def __init__(self, duplicates: dict[int, set[str]]):
        self.duplicates = duplicates
        self.problems: list[str] = []
        self.type_error: str | None = None

    # ---- errors -----------------------------------------------------------------------------------
    def mismatch(self, value, target: str, owner: str, gopath: str, *, abort: bool = False,
                 integer: bool = False) -> None:
        """Go's UnmarshalTypeError; ``integer``: the target is an integer, whose errors quote the number."""
        message = (f"json: cannot unmarshal {_json_kind(value, integer)} into Go struct field {owner}.{gopath} "
                   f"of type {target}")
        if abort:
            raise DecodeError(message)
        if self.type_error is None:
            self.type_error = message

    # ---- values -------------------------------------------------------------------------------------
    def value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        """Check one non-null value; returns it, or its replacement (a canonical quantity)."""
        check = _CHECKS[t.kind]
        return check(self, value, t, path, gopath, owner)

    def struct_value(self, value, t: FieldType, path: str, gopath: str, owner: str = "", top: bool = False):
        if not isinstance(value, dict):
            self.mismatch(value, t.go_type, owner, gopath)
            return value
        fields = t.fields()
        repeated = self.duplicates.get(id(value)) if self.duplicates else None
        name = t.struct_name
        for key in list(value):
            sub_path = f"{path}.{key}" if path else key
            field = fields.get(key)
            if field is None:
                if not (top and key in ("apiVersion", "kind")):
                    self.problems.append(f'unknown field "{sub_path}"')
                    del value[key]
                continue
            if repeated and key in repeated:
                self.problems.append(f'duplicate field "{sub_path}"')
            item = value[key]
            if item is None:
                del value[key]  # null reads as the zero value, which the API never writes back
                continue
            replaced = self.value(item, field, sub_path, f"{gopath}.{key}" if gopath else key, name)
            if replaced is not item:
                value[key] = replaced
        return value

    def map_value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        if not isinstance(value, dict):
            self.mismatch(value, t.go_type, owner, gopath)
            return value
        elem = t.elem
        for key, item in value.items():
            if item is None:
                value[key] = _zero(elem.kind)
                continue
            replaced = self.value(item, elem, f"{path}.{key}", gopath, owner)
            if replaced is not item:
                value[key] = replaced
        return value

    def list_value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        if not isinstance(value, list):
            self.mismatch(value, t.go_type, owner, gopath)
            return value
        elem = t.elem
        for i, item in enumerate(value):
            if item is None:
                value[i] = _zero(elem.kind)
                continue
            replaced = self.value(item, elem, f"{path}[{i}]", gopath, owner)
            if replaced is not item:
                value[i] = replaced
        return value

    def int_value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _fits(value, t.go_type):
            self.mismatch(value, t.go_type, owner, gopath, integer=True)
        return value

    def float_value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.mismatch(value, t.go_type, owner, gopath)
        return value

    def string_value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        if not isinstance(value, str):
            self.mismatch(value, t.go_type, owner, gopath)
        return value

    def bool_value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        if not isinstance(value, bool):
            self.mismatch(value, t.go_type, owner, gopath)
        return value

    def bytes_value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        if not isinstance(value, str):
            self.mismatch(value, t.go_type, owner, gopath)
        elif self.type_error is None:
            self.type_error = base64_error(value.encode())
        return value

    def quantity_value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        try:
            return str(quantity.from_json(value))
        except quantity.QuantityError as exc:
            raise DecodeError(str(exc)) from None

    def int_or_string_value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        if isinstance(value, str):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _fits(value, "int32"):
            self.mismatch(value, "int32", owner, gopath, abort=True, integer=True)
        return value

    def time_value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        if not isinstance(value, str):
            self.mismatch(value, "string", owner, gopath, abort=True)
        problem = rfc3339_error(value)
        if problem:
            raise DecodeError(problem)
        return value

    def any_value(self, value, t: FieldType, path: str, gopath: str, owner: str):
        return value


_CHECKS: dict[int, Callable] = {
    STRUCT: _Walker.struct_value, MAP: _Walker.map_value, LIST: _Walker.list_value, INT: _Walker.int_value,
    FLOAT: _Walker.float_value, STRING: _Walker.string_value, BOOL: _Walker.bool_value,
    BYTES: _Walker.bytes_value, QUANTITY: _Walker.quantity_value, INT_OR_STRING: _Walker.int_or_string_value,
    TIME: _Walker.time_value, ANY: _Walker.any_value,
}
# What a JSON null inside a map or list decodes to: the element type's zero value, as the API writes it back.
_ZERO = {STRING: "", INT: 0, FLOAT: 0, BOOL: False, QUANTITY: "0", BYTES: ""}


def _zero(kind: int):
    return {} if kind == STRUCT else _ZERO.get(kind)


def _fits(value, go_type: str) -> bool:
    if isinstance(value, float):
        return False  # Go parses integer fields with ParseInt: 1.5 and 1.0 alike are refused
    low, high = _INT_RANGES.get(go_type, _INT_RANGES["int64"])
    return low <= value <= high


def _json_kind(value, integer: bool) -> str:
    """How Go's UnmarshalTypeError names the JSON value it could not store."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return f"number {value!r}" if integer else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# ---- base64, as encoding/base64's StdEncoding.Decode ----------------------------------------------

_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_NEWLINES = frozenset(b"\r\n")


def base64_error(src: bytes) -> str | None:
    """Go's error for decoding ``src`` as padded standard base64 (newlines ignored), or None."""
    si, end = 0, len(src)
    while True:
        j = 0
        while j < 4:
            if si == end:
                return None if j == 0 else _corrupt(si - j)
            ch = src[si]
            si += 1
            if ch in _BASE64:
                j += 1
                continue
            if ch in _NEWLINES:
                continue
            if ch != ord("=") or j < 2:
                return _corrupt(si - 1)
            if j == 2:  # "==" expected; the first "=" is consumed
                while si < end and src[si] in _NEWLINES:
                    si += 1
                if si == end:
                    return _corrupt(end)
                if src[si] != ord("="):
                    return _corrupt(si - 1)
                si += 1
            while si < end and src[si] in _NEWLINES:
                si += 1
            return _corrupt(si) if si < end else None


def _corrupt(offset: int) -> str:
    return f"illegal base64 data at input byte {offset}"


# ---- times, as time.Parse(time.RFC3339, ...) -------------------------------------------------------

_RFC3339 = "2006-01-02T15:04:05Z07:00"
# The layout's elements in order: (layout text, pattern of what may stand there, range name).
_TIME_ELEMENTS = (("2006", re.compile(r"\d{4}"), ""), ("-", None, ""), ("01", re.compile(r"\d\d"), "month"),
                  ("-", None, ""), ("02", re.compile(r"\d\d"), ""), ("T", None, ""),
                  ("15", re.compile(r"\d\d?"), "hour"), (":", None, ""), ("04", re.compile(r"\d\d"), "minute"),
                  (":", None, ""), ("05", re.compile(r"\d\d([.,]\d+)?"), "second"),
                  ("Z07:00", re.compile(r"Z|[+-]\d\d:\d\d"), ""))
_LIMITS = {"month": (1, 12), "hour": (0, 23), "minute": (0, 59), "second": (0, 59)}


def rfc3339_error(value: str) -> str | None:
    """Go's error for parsing ``value`` as an RFC 3339 time, or None when it parses."""
    rest = value
    day = month = year = 0
    for layout, pattern, range_name in _TIME_ELEMENTS:
        if pattern is None:
            if not rest.startswith(layout):
                return f'parsing time "{value}" as "{_RFC3339}": cannot parse "{rest}" as "{layout}"'
            rest = rest[len(layout):]
            continue
        match = pattern.match(rest)
        if match is None:
            return f'parsing time "{value}" as "{_RFC3339}": cannot parse "{rest}" as "{layout}"'
        text, rest = match.group(0), rest[match.end():]
        if range_name:
            low, high = _LIMITS[range_name]
            if not low <= int(text.split(".")[0].split(",")[0]) <= high:
                return f'parsing time "{value}": {range_name} out of range'
        if layout == "2006":
            year = int(text)
        elif layout == "01":
            month = int(text)
        elif layout == "02":
            day = int(text)
    if rest:
        return f'parsing time "{value}": extra text: "{rest}"'
    if not 1 <= day <= _days_in(month, year):
        return f'parsing time "{value}": day out of range'
    return None


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31
