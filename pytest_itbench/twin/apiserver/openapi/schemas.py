"""OpenAPI v3 component schemas, converted from our JSON Schema definitions as kube-apiserver publishes them.

The definitions come from kubernetes-validate (JSON Schema, draft 2020-12
flavour) and from CRDs. kube-openapi publishes the same types with a few
differences, which kubectl relies on (``explain`` reads types and
descriptions, client-side apply reads the patch extensions):

* nullable types (``["string", "null"]``) are plain types;
* a ``$ref`` with siblings (description, patch extensions) becomes
  ``allOf: [{$ref}]`` beside those siblings, as the v3 generator emits it;
* IntOrString is ``oneOf`` integer/string with format ``int-or-string`` and
  Quantity ``oneOf`` string/number, so ``explain`` names them by type;
* ``additionalProperties: false`` (a strictness marker of kubernetes-validate)
  and the single-value ``enum`` it puts on ``apiVersion``/``kind`` go away.

Custom resource schemas are published as apiextensions does: as written in
the CRD, with ``x-kubernetes-int-or-string`` unfolded into ``anyOf`` and
``$ref`` siblings left in place.
"""

from __future__ import annotations

from typing import Iterable

from ...schema import builtin_definitions, ref_name

COMPONENTS = "#/components/schemas/"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"

# kube-openapi's OpenAPIV3OneOfTypes for the two types that take more than one JSON type.
_ONE_OF_TYPES = {
    INT_OR_STRING: {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
    QUANTITY: {"oneOf": [{"type": "string"}, {"type": "number"}]},
}
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]


def ref(name: str) -> dict:
    return {"$ref": COMPONENTS + name}


def builtin_component(name: str, definition: dict) -> dict:
    """A built-in definition as a v3 component schema."""
    special = _ONE_OF_TYPES.get(name)
    if special is not None:
        out = {k: v for k, v in definition.items() if k in ("description",)}
        out.update(special)
        return out
    out = _convert(definition, wrap_refs=True)
    if "x-kubernetes-group-version-kind" in out:
        props = out.get("properties") or {}
        for field in ("apiVersion", "kind"):
            if field in props:
                props[field] = {k: v for k, v in props[field].items() if k != "enum"}
    return out


def custom_component(definition: dict) -> dict:
    """A custom resource's schema (as registered from its CRD) as a v3 component schema."""
    return _convert(definition, wrap_refs=False, unfold=True)


def _convert(schema: dict, *, wrap_refs: bool, unfold: bool = False) -> dict:
    out: dict = {}
    for key, value in schema.items():
        if key == "type":
            out["type"] = _plain_type(value)
        elif key == "$ref":
            out["$ref"] = COMPONENTS + ref_name(value)
        elif key == "properties":
            out["properties"] = {name: _convert(sub, wrap_refs=wrap_refs, unfold=unfold)
                                 for name, sub in value.items()}
        elif key in ("items", "not"):
            out[key] = _convert(value, wrap_refs=wrap_refs, unfold=unfold) if isinstance(value, dict) else value
        elif key == "additionalProperties":
            if value is False and wrap_refs:
                continue
            out[key] = _convert(value, wrap_refs=wrap_refs, unfold=unfold) if isinstance(value, dict) else value
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [_convert(sub, wrap_refs=wrap_refs, unfold=unfold) for sub in value]
        else:
            out[key] = value
    if wrap_refs and "$ref" in out and len(out) > 1:
        target = out.pop("$ref")
        out = {"allOf": [{"$ref": target}], **out}
    if unfold and out.get("x-kubernetes-int-or-string") and "anyOf" not in out and "type" not in out:
        out["anyOf"] = [dict(t) for t in _INT_OR_STRING_ANY_OF]
    return out


def _plain_type(value):
    if isinstance(value, str):
        return value
    types = [t for t in value if t != "null"]
    return types[0] if len(types) == 1 else types


def references(schema) -> Iterable[str]:
    """Names of the components a converted schema (or any JSON below it) refers to."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            target = node.get("$ref")
            if isinstance(target, str) and target.startswith(COMPONENTS):
                yield target[len(COMPONENTS):]
            stack.extend(v for k, v in node.items() if k not in ("enum", "default", "example"))
        elif isinstance(node, list):
            stack.extend(node)


def components(roots: Iterable[str], custom: dict[str, dict]) -> dict[str, dict]:
    """Component schemas for ``roots`` and everything they reference, sorted by name.

    ``custom`` maps the definition names of custom resources to their schemas;
    every other name is a built-in definition.
    """
    builtins = builtin_definitions()
    out: dict[str, dict] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in out:
            continue
        if name in custom:
            schema = custom_component(custom[name])
        elif name in builtins:
            schema = builtin_component(name, builtins[name])
        else:
            continue
        out[name] = schema
        pending.extend(n for n in references(schema) if n not in out)
    return dict(sorted(out.items()))
