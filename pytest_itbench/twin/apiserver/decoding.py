"""Decoding checks: unknown and duplicate fields, pruned or refused per ``fieldValidation``.

A real API server decodes a body into the Go type; fields the type does not
have are dropped, and ``fieldValidation`` decides whether that is silent
(Ignore), a ``Warning`` header (Warn, the default) or a 400 (Strict).
"""

from __future__ import annotations

from ..errors import BadRequest
from ..schema import Node
from .resources import Resource


def check_fields(obj: dict, node: Node | None, res: Resource, mode: str, duplicates: list[str]) -> list[str]:
    """Prune fields the schema does not know; return warnings or raise per ``mode``."""
    if node is None:
        return []
    unknown: list[str] = []
    _prune(obj, node, "", unknown, top=True)
    problems = [f'duplicate field "{d}"' for d in duplicates] + [f'unknown field "{u}"' for u in unknown]
    if not problems:
        return []
    if mode == "Strict":
        raise BadRequest(f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: '
                         f"strict decoding error: {', '.join(problems)}")
    if mode == "Warn":
        return problems
    return []


def _prune(value, node: Node, path: str, unknown: list[str], top: bool = False) -> None:
    if node.preserves_unknown:
        return
    if isinstance(value, dict):
        props = node.properties()
        if props:
            for key in list(value):
                if key in props:
                    child = node.field(key)
                    if child is not None:
                        _prune(value[key], child, f"{path}.{key}" if path else key, unknown)
                elif not (top and key in ("apiVersion", "kind")):
                    unknown.append(f"{path}.{key}" if path else key)
                    del value[key]
        elif node.is_map:
            values = node.map_values()
            if values is not None:
                for key, item in value.items():
                    _prune(item, values, f"{path}.{key}" if path else key, unknown)
    elif isinstance(value, list):
        items = node.items()
        if items is not None:
            for i, item in enumerate(value):
                _prune(item, items, f"{path}[{i}]", unknown)
