"""Kubernetes v1.31 type schemas, for validation, patching, OpenAPI and ``kubectl explain``.

The schemas come from the ``kubernetes-validate`` package (its v1.31.0 strict
JSON Schema definitions, which keep the upstream descriptions and the
``x-kubernetes-*`` extensions). They are read once, on first use, and shared by
every twin in the process. Custom resources add their own schemas at run time
(see :class:`SchemaRegistry`).

A :class:`Node` is one position in a schema with ``$ref`` resolved; walking
``node.field("spec").field("template")`` follows an object's structure, which
is what strategic merge patch, server-side apply and field validation need.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from typing import Any, Iterator

KUBERNETES_VERSION = "1.31.0"
_REF_PREFIXES = ("#/$defs/", "/api/_definitions.json#/$defs/", "_definitions.json#/$defs/")


@functools.lru_cache(maxsize=1)
def builtin_definitions() -> dict[str, dict]:
    """All upstream definitions, keyed by their Go-package name (``io.k8s.api.apps.v1.Deployment``)."""
    import kubernetes_validate

    base = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema",
                        f"v{KUBERNETES_VERSION}-local-strict", "_definitions.json")
    with open(base, encoding="utf-8") as fh:
        return json.load(fh)["$defs"]


def ref_name(ref: str) -> str:
    for prefix in _REF_PREFIXES:
        if ref.startswith(prefix):
            return ref[len(prefix):]
    raise ValueError(f"unexpected $ref {ref!r}")


def _types(schema: dict) -> set[str]:
    t = schema.get("type")
    if t is None:
        return set()
    return {t} if isinstance(t, str) else set(t) - {"null"}


class Node:
    """A resolved position in a schema."""

    __slots__ = ("schema", "registry", "name")

    def __init__(self, schema: dict, registry: "SchemaRegistry", name: str = ""):
        self.registry = registry
        self.name = name
        while "$ref" in schema:
            name = ref_name(schema["$ref"])
            schema = registry.definition(name) or {}
            self.name = name
        if "allOf" in schema and len(schema["allOf"]) == 1 and "$ref" in schema["allOf"][0]:
            inner = Node(schema["allOf"][0], registry)
            self.name = inner.name
            schema = inner.schema
        self.schema = schema

    # ---- shape -------------------------------------------------------------------
    @property
    def types(self) -> set[str]:
        return _types(self.schema)

    @property
    def is_object(self) -> bool:
        return "object" in self.types or "properties" in self.schema

    @property
    def is_array(self) -> bool:
        return "array" in self.types

    @property
    def is_map(self) -> bool:
        """An object whose keys are free (``additionalProperties`` with a schema)."""
        ap = self.schema.get("additionalProperties")
        return isinstance(ap, dict) and "properties" not in self.schema

    @property
    def int_or_string(self) -> bool:
        if self.schema.get("x-kubernetes-int-or-string"):
            return True
        return self.name == "io.k8s.apimachinery.pkg.util.intstr.IntOrString"

    @property
    def preserves_unknown(self) -> bool:
        return bool(self.schema.get("x-kubernetes-preserve-unknown-fields"))

    @property
    def description(self) -> str:
        return self.schema.get("description", "")

    def properties(self) -> dict[str, dict]:
        return self.schema.get("properties") or {}

    def field(self, name: str) -> "Node | None":
        props = self.properties()
        if name in props:
            return Node(props[name], self.registry)
        ap = self.schema.get("additionalProperties")
        if isinstance(ap, dict):
            return Node(ap, self.registry)
        return None

    def field_schema(self, name: str) -> dict | None:
        """The raw property schema (its ``x-kubernetes-patch-*`` extensions sit here, beside the $ref)."""
        return self.properties().get(name)

    def items(self) -> "Node | None":
        it = self.schema.get("items")
        return Node(it, self.registry) if isinstance(it, dict) else None

    def map_values(self) -> "Node | None":
        ap = self.schema.get("additionalProperties")
        return Node(ap, self.registry) if isinstance(ap, dict) else None

    def required(self) -> list[str]:
        return list(self.schema.get("required") or [])

    def walk(self, path: Iterator[str]) -> "Node | None":
        node: Node | None = self
        for part in path:
            if node is None:
                return None
            node = node.items() if part == "[]" else node.field(part)
        return node


def patch_meta(field_schema: dict | None) -> tuple[str | None, list[str]]:
    """(merge key, strategies) from a property's ``x-kubernetes-patch-*`` extensions."""
    if not field_schema:
        return None, []
    strategy = field_schema.get("x-kubernetes-patch-strategy") or ""
    return field_schema.get("x-kubernetes-patch-merge-key"), [s for s in strategy.split(",") if s]


def list_meta(field_schema: dict | None) -> tuple[str, list[str]]:
    """(list type, map keys) from ``x-kubernetes-list-type`` / ``x-kubernetes-list-map-keys``.

    Lists without an explicit type are ``atomic``, except that a list with a
    patch merge key behaves as a map keyed on it (as structured-merge-diff does).
    """
    if not field_schema:
        return "atomic", []
    list_type = field_schema.get("x-kubernetes-list-type")
    keys = list(field_schema.get("x-kubernetes-list-map-keys") or [])
    if list_type is None:
        merge_key, strategies = patch_meta(field_schema)
        if merge_key and "merge" in strategies:
            return "map", [merge_key]
        if "merge" in strategies:
            return "set", []
        return "atomic", []
    return list_type, keys


class SchemaRegistry:
    """Built-in definitions plus the schemas of custom resources served right now."""

    def __init__(self) -> None:
        self._custom: dict[str, dict] = {}
        self._custom_gvk: dict[tuple[str, str, str], str] = {}
        self._lock = threading.Lock()

    @functools.cached_property
    def _gvk_index(self) -> dict[tuple[str, str, str], str]:
        index = {}
        for name, schema in builtin_definitions().items():
            for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                index[(gvk["group"], gvk["version"], gvk["kind"])] = name
        return index

    def definition(self, name: str) -> dict | None:
        return self._custom.get(name) or builtin_definitions().get(name)

    def definition_name(self, group: str, version: str, kind: str) -> str | None:
        return self._custom_gvk.get((group, version, kind)) or self._gvk_index.get((group, version, kind))

    def for_kind(self, group: str, version: str, kind: str) -> Node | None:
        name = self.definition_name(group, version, kind)
        if name is None:
            return None
        return Node({"$ref": f"#/$defs/{name}"}, self)

    def is_custom(self, group: str, version: str, kind: str) -> bool:
        return (group, version, kind) in self._custom_gvk

    # ---- custom resources ------------------------------------------------------------
    def set_custom(self, group: str, version: str, kind: str, schema: dict) -> str:
        """Register a CRD version's openAPIV3Schema as a definition and return its name."""
        name = f"{_reverse_domain(group)}.{version}.{kind}"
        wrapped = dict(schema)
        props = dict(wrapped.get("properties") or {})
        props.setdefault("apiVersion", {"type": "string", "description": _standard_doc("apiVersion")})
        props.setdefault("kind", {"type": "string", "description": _standard_doc("kind")})
        props["metadata"] = {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                             "description": _standard_doc("metadata")}
        wrapped["properties"] = props
        wrapped.setdefault("type", "object")
        wrapped["x-kubernetes-group-version-kind"] = [{"group": group, "version": version, "kind": kind}]
        with self._lock:
            self._custom[name] = wrapped
            self._custom_gvk[(group, version, kind)] = name
        return name

    def drop_custom(self, group: str, version: str, kind: str) -> None:
        with self._lock:
            name = self._custom_gvk.pop((group, version, kind), None)
            if name:
                self._custom.pop(name, None)

    def custom_definitions(self) -> dict[str, dict]:
        return dict(self._custom)


def _reverse_domain(group: str) -> str:
    return ".".join(reversed(group.split(".")))


def _standard_doc(field: str) -> str:
    """The upstream description of a standard top-level field (apiVersion, kind, metadata)."""
    return builtin_definitions()["io.k8s.api.core.v1.ConfigMap"]["properties"][field].get("description", "")


def json_type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"
