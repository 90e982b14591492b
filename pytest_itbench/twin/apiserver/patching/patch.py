"""Patch requests: JSON patch (RFC 6902), JSON merge patch (RFC 7386), strategic merge patch, apply bodies.

Each patch type decodes its body and fails the way kube-apiserver's patch
handler does (k8s.io/apiserver/pkg/endpoints/handlers/patch.go), with the
field validation the server defaults to (``Warn``): a body that is not JSON
of the right shape is a 400 ``error decoding patch: ...``; a JSON patch
operation that does not apply is a 422 whose message is the generic one
(the library's text is not passed on).
"""

from __future__ import annotations

import yaml

from ...errors import BadRequest, RequestEntityTooLarge, UnsupportedMediaType
from ...schema import Node
from .. import gojson
from . import json_patch, strategic
from .go_encoding import as_go_encodes
from ..negotiation import load_yaml
from .shapes import shape_of

JSON_PATCH = "application/json-patch+json"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
APPLY_CBOR = "application/apply-patch+cbor"
PATCH_TYPES = (JSON_PATCH, MERGE, STRATEGIC, APPLY)
CUSTOM_PATCH_TYPES = (JSON_PATCH, MERGE, APPLY)

_MAX_JSON_PATCH_OPERATIONS = 10000
_JSON_PATCH_FIELDS = {"op": str, "path": str, "from": str}


def apply_patch(current: dict, body: bytes, content_type: str, node: Node | None, *, custom: bool,
                kind: str) -> dict:
    """``current`` (the object as served) with the patch in ``body`` applied; ``current`` may be changed.

    The result of a built-in kind is what the server holds after decoding it
    into the Go type: null fields and emptied ``omitempty`` maps are gone.
    """
    if content_type == JSON_PATCH:
        patched = _json_patch(current, body)
    elif content_type == MERGE:
        patched = _merge_patch(current, body)
    elif content_type == STRATEGIC and not custom:
        patched = _strategic_patch(current, body, node)
    else:
        raise UnsupportedMediaType("the body of the request was in an unknown format - accepted media types "
                                   "include: " + ", ".join(CUSTOM_PATCH_TYPES if custom else PATCH_TYPES))
    if custom or node is None or not isinstance(patched, dict):
        return patched
    return as_go_encodes(patched, shape_of(node))


def _decode(body: bytes, *, prefix: str = "error decoding patch: "):
    try:
        return gojson.loads(body)
    except gojson.GoJSONError as exc:
        raise BadRequest(f"{prefix}{exc}") from None


# ---- JSON patch ------------------------------------------------------------------------------

def _json_patch(current: dict, body: bytes) -> dict:
    operations = _decode(body)
    _check_operations(operations)
    operations = operations or []
    if len(operations) > _MAX_JSON_PATCH_OPERATIONS:
        raise RequestEntityTooLarge(f"The allowed maximum operations in a JSON patch is "
                                    f"{_MAX_JSON_PATCH_OPERATIONS}, got {len(operations)}")
    try:
        return json_patch.apply(current, [op or {} for op in operations])
    except json_patch.JSONPatchError:
        raise strategic.unprocessable() from None


def _check_operations(operations) -> None:
    """The shape check Go's decoder makes when it reads the body into its list of operations."""
    if operations is None:
        return
    if not isinstance(operations, list):
        raise BadRequest(f"error decoding patch: json: cannot unmarshal {gojson.json_kind(operations)} into Go "
                         f"value of type []handlers.jsonPatchOp")
    for op in operations:
        if op is None:
            continue
        if not isinstance(op, dict):
            raise BadRequest(f"error decoding patch: json: cannot unmarshal {gojson.json_kind(op)} into Go value "
                             f"of type handlers.jsonPatchOp")
        for field, expected in _JSON_PATCH_FIELDS.items():
            value = op.get(field)
            if value is not None and not isinstance(value, expected):
                raise BadRequest(f"error decoding patch: json: cannot unmarshal {gojson.json_kind(value)} into Go "
                                 f"struct field jsonPatchOp.{field} of type string")


# ---- JSON merge patch ------------------------------------------------------------------------------

def _merge_patch(current: dict, body: bytes) -> dict:
    patch = _decode(body)
    if patch is None:
        raise BadRequest("Invalid JSON Patch")
    if not isinstance(patch, dict):
        raise BadRequest(f"error decoding patch: json: cannot unmarshal {gojson.json_kind(patch)} into Go value "
                         f"of type map[string]interface {{}}")
    return _merge_objects(current, patch)


def _merge_objects(target, patch):
    """RFC 7386: null deletes, objects merge, anything else replaces (nulls inside new values are dropped)."""
    if not isinstance(target, dict):
        _prune_nulls(patch)
        return patch
    if not isinstance(patch, dict):
        return patch
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif target.get(key) is None:
            _prune_nulls(value)
            target[key] = value
        else:
            target[key] = _merge_objects(target[key], value)
    return target


def _prune_nulls(value) -> None:
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for child in value.values():
            _prune_nulls(child)
    elif isinstance(value, list):
        for child in value:
            if child is not None:
                _prune_nulls(child)


# ---- strategic merge patch -------------------------------------------------------------------------

def _strategic_patch(current: dict, body: bytes, node: Node | None) -> dict:
    patch = _decode(body, prefix="")
    if patch is None:
        return current
    if not isinstance(patch, dict):
        raise BadRequest(f"json: cannot unmarshal {gojson.json_kind(patch)} into Go value of type "
                         f"map[string]interface {{}}")
    return strategic.apply(current, patch, node)


# ---- apply ------------------------------------------------------------------------------------------

def parse_apply_body(body: bytes) -> dict:
    """The applied configuration of an ``application/apply-patch+yaml`` request (YAML or JSON)."""
    try:
        obj = load_yaml(body)
    except yaml.YAMLError as exc:
        raise BadRequest(f"error decoding YAML: {_yaml_problem(exc)}") from None
    if obj is None:
        obj = {}
    if not isinstance(obj, dict):
        raise BadRequest(f"error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot "
                         f"unmarshal {gojson.json_kind(obj)} into Go value of type map[string]interface {{}}")
    return obj


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"yaml: line {mark.line + 1}: {problem}"
    return f"yaml: {problem}"
