"""JSON patch (RFC 6902) with the semantics of the library kube-apiserver uses (evanphx/json-patch v4).

Its quirks are part of what clients see: negative array indices count from
the end, ``replace`` of a missing object key adds it, ``test`` against a
missing key passes only for a null value, and an operation it does not
know fails the whole patch.
"""

from __future__ import annotations

import copy

_MISSING = object()


class JSONPatchError(Exception):
    """An operation that does not apply; the message is the library's."""


def decode_key(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def apply(doc, operations: list[dict]):
    """Apply ``operations`` to ``doc`` (modified in place where possible); returns the new document."""
    root = [doc]  # a box, so that replacing the whole document works like any other write
    for op in operations:
        kind = op.get("op")
        handler = _OPERATIONS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            raise JSONPatchError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
        handler(root, op)
    return root[0]


def _path(op: dict, field: str = "path") -> str:
    value = op.get(field)
    if not isinstance(value, str):
        raise JSONPatchError(f"{op.get('op')} operation failed to decode {field}")
    return value


def _container(root: list, path: str):
    """The container holding the last token of ``path`` and that token, or (None, "")."""
    parts = path.split("/")
    if len(parts) < 2:
        return None, ""
    node = root[0]
    for part in parts[1:-1]:
        node = _child(node, decode_key(part))
        if not isinstance(node, (dict, list)):
            return None, ""
    return node, decode_key(parts[-1])


def _index(container: list, key: str, size: int) -> int:
    try:
        idx = int(key)
    except ValueError:
        raise JSONPatchError(f"value was not a proper array index: '{key}'") from None
    if idx < -size or idx >= size:
        raise JSONPatchError(f"Unable to access invalid index: {idx}")
    return idx + size if idx < 0 else idx


def _child(node, key: str):
    if isinstance(node, dict):
        return node.get(key, _MISSING)
    if isinstance(node, list):
        try:
            return node[_index(node, key, len(node))]
        except JSONPatchError:
            return _MISSING
    return _MISSING


def _get(container, key: str):
    if isinstance(container, dict):
        return container.get(key, _MISSING)
    return container[_index(container, key, len(container))]


def _add(container, key: str, value) -> None:
    if isinstance(container, dict):
        container[key] = value
    elif key == "-":
        container.append(value)
    else:
        container.insert(_index(container, key, len(container) + 1), value)


def _remove(container, key: str):
    if isinstance(container, dict):
        if key not in container:
            raise JSONPatchError(f"Unable to remove nonexistent key: {key}")
        return container.pop(key)
    return container.pop(_index(container, key, len(container)))


def _op_add(root: list, op: dict) -> None:
    path = _path(op)
    container, key = _container(root, path)
    if container is None:
        raise JSONPatchError(f'add operation does not apply: doc is missing path: "{path}"')
    _add(container, key, op.get("value"))


def _op_remove(root: list, op: dict) -> None:
    path = _path(op)
    container, key = _container(root, path)
    if container is None:
        raise JSONPatchError(f'remove operation does not apply: doc is missing path: "{path}"')
    _remove(container, key)


def _op_replace(root: list, op: dict) -> None:
    path = _path(op)
    value = op.get("value")
    if path == "":
        if not isinstance(value, (dict, list)):
            raise JSONPatchError("replace operation value must be object or array")
        root[0] = value
        return
    container, key = _container(root, path)
    if container is None:
        raise JSONPatchError(f"replace operation does not apply: doc is missing path: {path}")
    if isinstance(container, dict):
        container[key] = value
    else:
        container[_index(container, key, len(container))] = value


def _op_move(root: list, op: dict) -> None:
    source = _path(op, "from")
    container, key = _container(root, source)
    if container is None:
        raise JSONPatchError(f"move operation does not apply: doc is missing from path: {source}")
    value = _get(container, key)
    _remove(container, key)
    path = _path(op)
    container, key = _container(root, path)
    if container is None:
        raise JSONPatchError(f"move operation does not apply: doc is missing destination path: {path}")
    _add(container, key, None if value is _MISSING else value)


def _op_copy(root: list, op: dict) -> None:
    source = _path(op, "from")
    container, key = _container(root, source)
    if container is None:
        raise JSONPatchError(f"copy operation does not apply: doc is missing from path: {source}")
    value = _get(container, key)
    path = _path(op)
    target, target_key = _container(root, path)
    if target is None:
        raise JSONPatchError(f"copy operation does not apply: doc is missing destination path: {path}")
    _add(target, target_key, None if value is _MISSING else copy.deepcopy(value))


def _op_test(root: list, op: dict) -> None:
    path = _path(op)
    expected = op.get("value")
    if path == "":
        actual = root[0]
    else:
        container, key = _container(root, path)
        if container is None:
            raise JSONPatchError(f"test operation does not apply: is missing path: {path}")
        actual = _get(container, key)
        if actual is _MISSING:
            actual = None
    if not _same(actual, expected):
        raise JSONPatchError(f"testing value {path} failed: test failed")


def _same(a, b) -> bool:
    """JSON equality: 1 and 1.0 are the same number, true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) in (int, float) and type(b) in (int, float) and a == b or \
        type(a) is type(b) and a == b


_OPERATIONS = {"add": _op_add, "remove": _op_remove, "replace": _op_replace, "move": _op_move,
               "copy": _op_copy, "test": _op_test}
