"""Structural defaulting of custom resources, as apiextensions applies a CRD schema's ``default`` values.

Before defaulting, a ``null`` in a field that is neither ``nullable`` nor
defaulted is dropped (Go would decode it to the zero value and omit it);
then every missing field (or ``null`` in a non-nullable one) whose schema
has a ``default`` gets a copy of it, and defaulting continues inside the
value, so defaults nested in defaults apply too.
"""

from __future__ import annotations

import copy


def apply_defaults(obj: dict, schema: dict) -> None:
    """Drop non-nullable nulls and fill in schema defaults, in place."""
    _prune_nulls(obj, schema)
    _default(obj, schema)


def _non_nullable_null(value, schema: dict | None) -> bool:
    return value is None and not (schema or {}).get("nullable")


def _prune_nulls(value, schema: dict | None) -> None:
    if not schema:
        return
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        extra = extra if isinstance(extra, dict) else None
        for key in list(value):
            sub = props.get(key) if key in props else extra
            if sub is None:
                continue
            if _non_nullable_null(value[key], sub) and "default" not in sub:
                del value[key]
            else:
                _prune_nulls(value[key], sub)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                _prune_nulls(item, items)


def _default(value, schema: dict | None) -> None:
    if not schema:
        return
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if "default" in sub and (key not in value or _non_nullable_null(value[key], sub)):
                value[key] = copy.deepcopy(sub["default"])
        extra = schema.get("additionalProperties")
        for key in list(value):
            if key in props:
                _default(value[key], props[key])
            elif isinstance(extra, dict):
                if _non_nullable_null(value[key], extra) and "default" in extra:
                    value[key] = copy.deepcopy(extra["default"])
                _default(value[key], extra)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                if _non_nullable_null(item, items) and "default" in items:
                    value[i] = copy.deepcopy(items["default"])
                _default(value[i], items)
