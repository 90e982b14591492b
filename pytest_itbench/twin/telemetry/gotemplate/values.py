"""How Go values appear to a template, in Python.

Python values stand for Go's: ``str`` is a string, ``bool`` a bool, ``int``
an int, ``float`` a float64, ``dict`` a ``map[string]string``, ``None`` a nil
interface or pointer. Go types with no Python counterpart are small classes
here (:class:`GoStruct`, :class:`GoMap`, :class:`GoTime`, :class:`GoDuration`)
that carry their Go type name, which execution errors and ``%T`` print.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, ClassVar, Mapping

from ...clock import format_go_duration


class _Sentinel:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


NO_VALUE = _Sentinel("NO_VALUE")  # Go's invalid reflect.Value: a nil data value, printed "<no value>"
MISSING = _Sentinel("MISSING")  # no previous pipeline value to pass as the final argument


class GoError(Exception):
    """An error returned by a template function (Go's second result), worded as Go words it."""


@dataclass(frozen=True)
class Method:
    """A method a template can call on a value: ``{{ .Unix }}``."""

    call: Callable[..., Any]
    params: tuple[str, ...] = ()


class GoValue:
    """A Go value of a named type; subclasses set the type name and what templates may reach."""

    go_type: ClassVar[str]
    methods: ClassVar[Mapping[str, Method]] = {}


class GoStruct(GoValue):
    """A struct, or a pointer to one (``go_type`` then starts with ``*``), with exported fields."""

    field_names: ClassVar[tuple[str, ...]]

    def field(self, name: str) -> Any:
        return getattr(self, _python_name(name))

    def field_values(self) -> list[Any]:
        return [self.field(name) for name in self.field_names]


def _python_name(go_name: str) -> str:
    out = []
    for i, ch in enumerate(go_name):
        if ch.isupper() and i and not go_name[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


class GoMap(dict, GoValue):
    """A map whose type is not ``map[string]string`` (``args`` returns ``map[string]interface {}``)."""

    go_type = "map[string]interface {}"
    zero: Any = None


class GoStringer(GoValue):
    """A value whose type has a ``String()`` method, which fmt uses for %v and %s."""

    def string(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class GoTime(GoStringer):
    """``*time.Time`` in UTC, from a Unix time in seconds."""

    unix_seconds: float
    go_type: ClassVar[str] = "*time.Time"

    def string(self) -> str:
        """``time.Time.String()``: ``2006-01-02 15:04:05.999999999 +0000 UTC``."""
        whole = math.floor(self.unix_seconds)
        nanos = round((self.unix_seconds - whole) * 1e9)
        text = datetime.fromtimestamp(whole, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        if nanos:
            text += "." + f"{nanos:09d}".rstrip("0")
        return text + " +0000 UTC"


GoTime.methods = {
    "Unix": Method(lambda t: math.floor(t.unix_seconds)),
    "UnixMilli": Method(lambda t: math.floor(t.unix_seconds * 1000)),
    "UTC": Method(lambda t: t),
    "String": Method(lambda t: t.string()),
}


@dataclass(frozen=True)
class GoDuration(GoStringer):
    """``*time.Duration``, in nanoseconds."""

    nanoseconds: int
    go_type: ClassVar[str] = "*time.Duration"

    def string(self) -> str:
        return format_go_duration(self.nanoseconds / 1e9)


GoDuration.methods = {
    "Seconds": Method(lambda d: d.nanoseconds / 1e9),
    "Minutes": Method(lambda d: d.nanoseconds / 6e10),
    "Hours": Method(lambda d: d.nanoseconds / 3.6e12),
    "Milliseconds": Method(lambda d: int(d.nanoseconds / 1e6)),
    "String": Method(lambda d: d.string()),
}


class SafeHTML(str, GoValue):
    """``html/template.HTML``: a string type of its own."""

    go_type = "template.HTML"


def go_type_name(value: Any) -> str:
    """The Go type of a value, as ``%T`` and execution errors print it."""
    if isinstance(value, GoValue):
        return value.go_type
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]string"
    if isinstance(value, list):
        return "[]interface {}"
    raise TypeError(f"no Go type for {type(value).__name__}")


def map_zero(value: dict) -> Any:
    """The zero value of a map's element type: what a missing key gives under ``missingkey=zero``."""
    return value.zero if isinstance(value, GoMap) else ""


def is_string_kind(value: Any) -> bool:
    return isinstance(value, str)


def is_true(value: Any) -> tuple[bool, bool]:
    """Go's ``template.IsTrue``: the truth of a value and whether it has one."""
    if value is NO_VALUE or value is None:
        return False, True
    if isinstance(value, (bool, int, float)):
        return bool(value), True
    if isinstance(value, (str, list, dict)):
        return len(value) > 0, True
    if isinstance(value, GoValue):
        return True, True  # structs and non-nil pointers
    return False, False
