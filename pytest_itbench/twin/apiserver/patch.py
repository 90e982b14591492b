"""Patches: JSON patch (RFC 6902), JSON merge patch (RFC 7386) and strategic merge patch."""

from __future__ import annotations

import json

import jsonpatch
import yaml

from ..errors import BadRequest, UnsupportedMediaType
from ..schema import Node

JSON_PATCH = "application/json-patch+json"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
APPLY_CBOR = "application/apply-patch+cbor"
PATCH_TYPES = (JSON_PATCH, MERGE, STRATEGIC, APPLY)


def _load(body: bytes):
    try:
        return json.loads(body)
    except ValueError as exc:
        raise BadRequest(f"error decoding patch: {exc}") from None


def apply_patch(current: dict, body: bytes, content_type: str, node: Node | None, *, custom: bool,
                kind: str) -> dict:
    if content_type == JSON_PATCH:
        ops = _load(body)
        try:
            return jsonpatch.JsonPatch(ops).apply(current)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as exc:
            raise BadRequest(f"the server rejected our request due to an error in our request: {exc}") from None
    if content_type == MERGE:
        return merge_patch(current, _load(body))
    if content_type == STRATEGIC:
        if custom:
            raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media types "
                                       f"include: application/json-patch+json, application/merge-patch+json, "
                                       f"application/apply-patch+yaml")
        return merge_patch(current, _load(body))
    raise UnsupportedMediaType(f"the media type {content_type!r} is not a supported patch type")


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def parse_apply_body(body: bytes) -> dict:
    try:
        obj = yaml.safe_load(body)
    except yaml.YAMLError as exc:
        raise BadRequest(f"error decoding YAML: {exc}") from None
    if not isinstance(obj, dict):
        raise BadRequest("error decoding apply configuration: not an object")
    return obj
