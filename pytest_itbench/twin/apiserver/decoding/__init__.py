"""Decoding a request body: type errors, unknown and duplicate fields, per ``fieldValidation``.

A real API server decodes a body into the Go type. A value of the wrong type
is a 400 whatever ``fieldValidation`` says; fields the type does not have
are dropped, and ``fieldValidation`` decides whether unknown and repeated
fields are silent (Ignore), ``Warning`` headers (Warn, the default) or a 400
(Strict). Built-in types go through the Go decoder model in go_decoder.py;
custom resources are pruned against their CRD schema here, and validated
elsewhere (crd/validation.py).
"""

from __future__ import annotations

from ...errors import BadRequest
from ...schema import Node
from . import go_decoder
from ..resources import Resource


def check_fields(obj: dict, node: Node | None, res: Resource, mode: str, duplicates: list[str]) -> list[str]:
    """Check and prune ``obj``; return warnings or raise per ``mode``."""
    if node is None:
        return []
    repeated = _repeated_keys(duplicates)
    if res.crd is None:
        try:
            problems = go_decoder.decode(obj, go_decoder.type_of(node.name), repeated)
        except go_decoder.DecodeError as exc:
            raise BadRequest(f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: {exc}') \
                from None
    else:
        problems = []
        _prune(obj, node, "", problems, repeated, top=True)
    if not problems:
        return []
    if mode == "Strict":
        raise BadRequest(f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: '
                         f"strict decoding error: {', '.join(problems)}")
    if mode == "Warn":
        return problems
    return []


def _repeated_keys(duplicates: list[str]) -> dict[int, set[str]]:
    """The keys each JSON object repeated, by ``id()`` of that object (see negotiation.DuplicateKey)."""
    repeated: dict[int, set[str]] = {}
    for key in duplicates:
        container = getattr(key, "container", None)
        if container is not None:
            repeated.setdefault(id(container), set()).add(str(key))
    return repeated


def _prune(value, node: Node, path: str, problems: list[str], repeated: dict[int, set[str]],
           top: bool = False) -> None:
    """Drop fields a custom resource's schema does not know, noting unknown and repeated ones in order."""
    if node.preserves_unknown:
        return
    if isinstance(value, dict):
        props = node.properties()
        keys_given_twice = repeated.get(id(value), ()) if repeated else ()
        if props:
            for key in list(value):
                sub_path = f"{path}.{key}" if path else key
                if key in props:
                    if key in keys_given_twice:
                        problems.append(f'duplicate field "{sub_path}"')
                    child = node.field(key)
                    if child is not None:
                        _prune(value[key], child, sub_path, problems, repeated)
                elif not (top and key in ("apiVersion", "kind")):
                    problems.append(f'unknown field "{sub_path}"')
                    del value[key]
        elif node.is_map:
            values = node.map_values()
            if values is not None:
                for key, item in value.items():
                    _prune(item, values, f"{path}.{key}" if path else key, problems, repeated)
    elif isinstance(value, list):
        items = node.items()
        if items is not None:
            for i, item in enumerate(value):
                _prune(item, items, f"{path}[{i}]", problems, repeated)
