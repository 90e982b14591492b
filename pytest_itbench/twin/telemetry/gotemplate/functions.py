"""Template functions: how one is declared, and Go's builtins (``and``, ``eq``, ``printf``, ``index``, ...).

A function declares Go parameter types so that execution checks arguments as
Go's reflection does (a number literal where a string is expected is
``expected string; found 3``). Types are Go type names: ``any`` (an empty
interface), ``string``, ``float64``, ``int``, ``bool``, or the ``go_type`` of a
:class:`~.values.GoValue`.
"""

from __future__ import annotations

import html
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from .gofmt import sprint, sprintf, sprintln
from .values import NO_VALUE, GoError, GoValue, go_type_name, is_true, map_zero


@dataclass(frozen=True)
class Function:
    call: Callable[..., Any]
    params: tuple[str, ...] = ()
    variadic: Optional[str] = None  # element type of a trailing ``...`` parameter


def truth(value: Any) -> bool:
    return is_true(value)[0]


# ---- comparison ---------------------------------------------------------------------------------------

_BAD_TYPE = "invalid type for comparison"
_INCOMPATIBLE = "incompatible types for comparison"


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "invalid" if value is None or value is NO_VALUE else "other"


def _eq(first: Any, *others: Any) -> bool:
    if not others:
        raise GoError("missing argument for comparison")
    k1 = _kind(first)
    for other in others:
        k2 = _kind(other)
        if k1 != k2:
            if "invalid" not in (k1, k2):  # comparing with nil is false, not an error
                raise GoError(_INCOMPATIBLE)
            continue
        if first is other or first == other:
            return True
    return False


def _lt(a: Any, b: Any) -> bool:
    k1, k2 = _kind(a), _kind(b)
    if k1 in ("invalid", "other") or k2 in ("invalid", "other"):
        raise GoError(_BAD_TYPE)
    if k1 != k2:
        raise GoError(_INCOMPATIBLE)
    if k1 == "bool":
        raise GoError(_BAD_TYPE)
    return a < b


def _le(a: Any, b: Any) -> bool:
    return _lt(a, b) or _eq(a, b)


# ---- indexing ---------------------------------------------------------------------------------------

def _index(item: Any, *indices: Any) -> Any:
    for i in indices:
        if item is None:
            raise GoError("index of untyped nil")
        if isinstance(item, (list, str)):
            if not isinstance(i, int) or isinstance(i, bool):
                raise GoError(f"cannot index slice/array with type {go_type_name(i)}")
            sequence = item.encode() if isinstance(item, str) else item
            if not 0 <= i < len(sequence):
                raise GoError(f"index out of range: {i}")
            item = sequence[i]
        elif isinstance(item, dict):
            if not isinstance(i, str):
                raise GoError(f"value has type {go_type_name(i)}; should be string")
            item = item.get(i, map_zero(item))
        else:
            raise GoError(f"can't index item of type {go_type_name(item)}")
    return item


def _slice(item: Any, *indices: Any) -> Any:
    if not isinstance(item, (list, str)):
        raise GoError(f"can't slice item of type {go_type_name(item)}")
    if len(indices) > 3 or (isinstance(item, str) and len(indices) > 2):
        raise GoError(f"too many slice indexes: {len(indices)}")
    bounds = [0, len(item)]
    for n, i in enumerate(indices[:2]):
        if not isinstance(i, int) or isinstance(i, bool):
            raise GoError(f"cannot index slice/array with type {go_type_name(i)}")
        if not 0 <= i <= len(item):
            raise GoError(f"index out of range: {i}")
        bounds[n] = i
    if bounds[0] > bounds[1]:
        raise GoError(f"invalid slice index: {bounds[0]} > {bounds[1]}")
    return item[bounds[0]:bounds[1]]


def _length(item: Any) -> int:
    if item is None:
        raise GoError("len of nil pointer")
    if isinstance(item, str):
        return len(item.encode())
    if isinstance(item, (list, dict)):
        return len(item)
    raise GoError(f"len of type {go_type_name(item)}")


def _call(function: Any, *args: Any) -> Any:
    raise GoError(f"non-function of type {go_type_name(function)}")


# ---- escaping -------------------------------------------------------------------------------------------

def _text_of(args: tuple) -> str:
    if len(args) == 1 and isinstance(args[0], str):
        return args[0]
    return sprint(["<no value>" if a is NO_VALUE else a for a in args])


def _html(*args: Any) -> str:
    return html.escape(_text_of(args), quote=True).replace("&#x27;", "&#39;").replace("&quot;", "&#34;")


def _js(*args: Any) -> str:
    out = []
    for ch in _text_of(args):
        if ch in "\\'\"":
            out.append("\\" + ch)
        elif ch == "<":
            out.append("\\u003C")
        elif ch == ">":
            out.append("\\u003E")
        elif ch == "&":
            out.append("\\u0026")
        elif ch == "=":
            out.append("\\u003D")
        elif ord(ch) < 0x20:
            out.append(f"\\u00{ord(ch):02X}")
        elif ord(ch) >= 0x80 and not ch.isprintable():
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


def _urlquery(*args: Any) -> str:
    return urllib.parse.quote_plus(_text_of(args), safe="")


BUILTINS: Mapping[str, Function] = {
    # and/or are evaluated lazily by the executor (Go short-circuits them since 1.18).
    "and": Function(lambda *a: a, ("any",), "any"),
    "or": Function(lambda *a: a, ("any",), "any"),
    "not": Function(lambda a: not truth(a), ("any",)),
    "eq": Function(_eq, ("any",), "any"),
    "ne": Function(lambda a, b: not _eq(a, b), ("any", "any")),
    "lt": Function(_lt, ("any", "any")),
    "le": Function(_le, ("any", "any")),
    "gt": Function(lambda a, b: not _le(a, b), ("any", "any")),
    "ge": Function(lambda a, b: not _lt(a, b), ("any", "any")),
    "index": Function(_index, ("any",), "any"),
    "slice": Function(_slice, ("any",), "any"),
    "len": Function(_length, ("any",)),
    "call": Function(_call, ("any",), "any"),
    "print": Function(lambda *a: sprint(a), (), "any"),
    "printf": Function(lambda f, *a: sprintf(f, a), ("string",), "any"),
    "println": Function(lambda *a: sprintln(a), (), "any"),
    "html": Function(_html, (), "any"),
    "js": Function(_js, (), "any"),
    "urlquery": Function(_urlquery, (), "any"),
}

LAZY = frozenset({"and", "or"})


def accepts(param: str, value: Any) -> bool:
    """Whether a value of ``value``'s Go type is assignable to a parameter of type ``param``."""
    if param == "any":
        return True
    if value is None:
        return param.startswith("*") or param.startswith("map[") or param.startswith("[]") or (
            param == "template.queryResult")
    if isinstance(value, GoValue):
        return value.go_type == param
    return go_type_name(value) == param
