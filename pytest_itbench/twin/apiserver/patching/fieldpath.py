"""Field paths and field sets as structured-merge-diff defines them, with their FieldsV1 encoding.

A path is a tuple of path elements, each one of:

* ``("f", name)``: a field of a map or struct (``f:name``, printed ``.name``);
* ``("k", ((key, value), ...))``: the item of an associative list with these
  key values, sorted by key name (``k:{"name":"web"}``, printed ``[name="web"]``);
* ``("v", value)``: the item of a set (``v:"foo"``, printed ``[="foo"]``);
* ``("i", index)``: a list item by position (``i:0``, printed ``[0]``).

Key and set values are kept in a hashable form (see :func:`freeze`) so that
path elements can live in Python sets. A :class:`FieldSet` is a tree: the
paths that end at this level (members) and the subtrees below (children);
FieldsV1 writes a member that also has children as ``".": {}``.
"""

from __future__ import annotations

from typing import Any, Iterator

from .. import gojson

PathElement = tuple
Path = tuple

_BOOL = "\0bool"  # tags booleans so that true and 1 stay different values


def field(name: str) -> PathElement:
    return ("f", name)


def freeze(value) -> Any:
    """A hashable stand-in for a JSON value, equal exactly when the values are (1 == 1.0, true != 1)."""
    if isinstance(value, bool):
        return (_BOOL, value)
    if isinstance(value, dict):
        return ("\0map", tuple(sorted((k, freeze(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("\0list", tuple(freeze(v) for v in value))
    return value


def thaw(value) -> Any:
    if isinstance(value, tuple):
        tag, payload = value
        if tag == _BOOL:
            return payload
        if tag == "\0map":
            return {k: thaw(v) for k, v in payload}
        return [thaw(v) for v in payload]
    return value


def _value_order(value) -> tuple:
    """structured-merge-diff's total order of values: numbers, strings, bools, lists, maps, null."""
    if isinstance(value, tuple):
        tag, payload = value
        if tag == _BOOL:
            return (2, payload)
        if tag == "\0list":
            return (3, tuple(_value_order(v) for v in payload))
        return (4, tuple((k, _value_order(v)) for k, v in payload))
    if value is None:
        return (5,)
    if isinstance(value, str):
        return (1, value)
    return (0, value)


def order_key(pe: PathElement) -> tuple:
    """Sort key of path elements: fields, then keys, then values, then indices."""
    kind, payload = pe
    if kind == "f":
        return (0, payload)
    if kind == "k":
        return (1, tuple((name, _value_order(v)) for name, v in payload))
    if kind == "v":
        return (2, _value_order(payload))
    return (3, payload)


# ---- printing ----------------------------------------------------------------------------------

def _value_string(value) -> str:
    """How structured-merge-diff prints a value inside a path (strings quoted as Go's %q does)."""
    if isinstance(value, tuple):
        tag, payload = value
        if tag == _BOOL:
            return "true" if payload else "false"
        if tag == "\0list":
            return "[" + ",".join(_value_string(v) for v in payload) + "]"
        return "".join(f"{k}={_value_string(v)}" for k, v in payload)
    if value is None:
        return "null"
    if isinstance(value, str):
        return gojson.quote(value)
    if isinstance(value, float):
        return gojson.format_float(value)
    return str(value)


def element_string(pe: PathElement) -> str:
    kind, payload = pe
    if kind == "f":
        return "." + payload
    if kind == "k":
        return "[" + ",".join(f"{name}={_value_string(v)}" for name, v in payload) + "]"
    if kind == "v":
        return f"[={_value_string(payload)}]"
    return f"[{payload}]"


def path_string(path: Path) -> str:
    """The path as conflict messages print it: ``.spec.containers[name="web"].image``."""
    return "".join(element_string(pe) for pe in path)


# ---- FieldsV1 keys ------------------------------------------------------------------------------

def serialize_element(pe: PathElement) -> str:
    kind, payload = pe
    if kind == "f":
        return "f:" + payload
    if kind == "k":
        return "k:{" + ",".join(f"{gojson.dumps(name)}:{gojson.dumps(thaw(v))}" for name, v in payload) + "}"
    if kind == "v":
        return "v:" + gojson.dumps(thaw(payload))
    return f"i:{payload}"


class FieldsV1Error(ValueError):
    pass


class UnknownElement(FieldsV1Error):
    """A key of a kind this version does not know; such keys are skipped, as upstream does."""


def parse_element(text: str) -> PathElement:
    if len(text) < 2:
        raise FieldsV1Error("key must be 2 characters long:")
    if text[1] != ":":
        raise FieldsV1Error(f"missing colon: {text}")
    kind, rest = text[0], text[2:]
    if kind == "f":
        return ("f", rest)
    if kind == "v":
        return ("v", freeze(_json(rest)))
    if kind == "k":
        fields = _json(rest)
        if not isinstance(fields, dict):
            raise FieldsV1Error(f"ReadObjectCB: expect {{ or n, but found {rest[:1]}")
        return ("k", tuple(sorted((k, freeze(v)) for k, v in fields.items())))
    if kind == "i":
        try:
            return ("i", int(rest))
        except ValueError:
            raise FieldsV1Error(f'strconv.Atoi: parsing "{rest}": invalid syntax') from None
    raise UnknownElement(text)


def _json(text: str):
    try:
        return gojson.loads(text)
    except gojson.GoJSONError as exc:
        raise FieldsV1Error(str(exc)) from None


# ---- sets ---------------------------------------------------------------------------------------

class FieldSet:
    """A set of paths, stored as a tree."""

    __slots__ = ("members", "children")

    def __init__(self, paths=()):
        self.members: set[PathElement] = set()
        self.children: dict[PathElement, FieldSet] = {}
        for path in paths:
            self.insert(path)

    def insert(self, path: Path) -> None:
        node = self
        for pe in path[:-1]:
            child = node.children.get(pe)
            if child is None:
                child = node.children[pe] = FieldSet()
            node = child
        if path:
            node.members.add(path[-1])

    def has(self, path: Path) -> bool:
        node = self
        for pe in path[:-1]:
            node = node.children.get(pe)
            if node is None:
                return False
        return bool(path) and path[-1] in node.members

    def empty(self) -> bool:
        return not self.members and all(child.empty() for child in self.children.values())

    def union(self, other: "FieldSet") -> "FieldSet":
        out = FieldSet()
        out.members = self.members | other.members
        out.children = dict(self.children)
        for pe, child in other.children.items():
            mine = out.children.get(pe)
            out.children[pe] = child if mine is None else mine.union(child)
        return out

    def intersection(self, other: "FieldSet") -> "FieldSet":
        out = FieldSet()
        out.members = self.members & other.members
        for pe, child in self.children.items():
            theirs = other.children.get(pe)
            if theirs is not None:
                both = child.intersection(theirs)
                if not both.empty():
                    out.children[pe] = both
        return out

    def difference(self, other: "FieldSet") -> "FieldSet":
        """Paths of self not in other (a member of other does not remove the paths below it)."""
        out = FieldSet()
        out.members = self.members - other.members
        for pe, child in self.children.items():
            theirs = other.children.get(pe)
            if theirs is None:
                out.children[pe] = child
            else:
                rest = child.difference(theirs)
                if not rest.empty():
                    out.children[pe] = rest
        return out

    def recursive_difference(self, other: "FieldSet") -> "FieldSet":
        """Paths of self not in other and not below a member of other."""
        out = FieldSet()
        out.members = self.members - other.members
        for pe, child in self.children.items():
            if pe in other.members:
                continue
            theirs = other.children.get(pe)
            if theirs is None:
                out.children[pe] = child
            else:
                rest = child.recursive_difference(theirs)
                if not rest.empty():
                    out.children[pe] = rest
        return out

    def paths(self, prefix: Path = ()) -> Iterator[Path]:
        """All paths, members of a level before the levels below it, each level in order."""
        for pe in sorted(self.members, key=order_key):
            yield prefix + (pe,)
        for pe in sorted(self.children, key=order_key):
            yield from self.children[pe].paths(prefix + (pe,))

    def __repr__(self) -> str:
        return "FieldSet(" + ", ".join(path_string(p) for p in self.paths()) + ")"

    # ---- FieldsV1 ----------------------------------------------------------------------------------
    def to_fields_v1(self) -> dict:
        return self._encode(include_self=False)

    def _encode(self, include_self: bool) -> dict:
        out: dict = {}
        if include_self:
            out["."] = {}
        keys = set(self.members) | {pe for pe, child in self.children.items() if not child.empty()}
        for pe in sorted(keys, key=order_key):
            child = self.children.get(pe)
            if child is None or child.empty():
                out[serialize_element(pe)] = {}
            else:
                out[serialize_element(pe)] = child._encode(include_self=pe in self.members)
        return out

    @classmethod
    def from_fields_v1(cls, data) -> "FieldSet":
        if not isinstance(data, dict):
            raise FieldsV1Error(f"ReadMapCB: expect {{ or n, but found {gojson.json_kind(data)}")
        found, _ = cls._decode(data)
        return found or FieldSet()

    @classmethod
    def _decode(cls, data: dict) -> tuple["FieldSet | None", bool]:
        """(the children found, whether this node is itself a member)."""
        children: FieldSet | None = None
        is_member = False
        for key, value in data.items():
            if key == ".":
                is_member = True
                continue
            try:
                pe = parse_element(key)
            except UnknownElement:
                continue
            if not isinstance(value, dict):
                raise FieldsV1Error(f"ReadMapCB: expect {{ or n, but found {gojson.json_kind(value)}")
            grandchildren, child_is_member = cls._decode(value)
            if children is None and (child_is_member or grandchildren is not None):
                children = FieldSet()
            if child_is_member:
                children.members.add(pe)
            if grandchildren is not None:
                children.children[pe] = grandchildren
        if children is None:
            is_member = True
        return children, is_member
