"""YAML into typed dataclasses, with errors that name the file, the line and the field.

The behaviour sheets are data written by hand; a mistake in one should read like a compiler's
message (``behaviour.yaml:120: services.cart.operations.GetCart.latency.median: invalid duration
"2 ms"``), not like a stack trace. Decoding walks PyYAML's node tree (which keeps positions)
against the dataclasses' type hints:

* a dataclass is a mapping whose keys are its field names; unknown keys and missing required
  fields are errors; a field named ``at`` receives the position of the mapping (``file:line``)
  so later cross-checks can point at it;
* ``list[T]``, ``dict[str, T]``, ``T | None``, unions tried in order, ``Literal[...]``;
* ``Annotated[T, convert]`` passes the scalar through ``convert`` (durations, byte sizes...),
  whose ValueError becomes the error's message.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

import yaml


class SheetError(ValueError):
    """A behaviour sheet that cannot be used; ``str()`` starts with ``file:line:``."""


def position(source: str, node: yaml.Node) -> str:
    return f"{source}:{node.start_mark.line + 1}"


def load(text: str, source: str, cls: type) -> Any:
    """Parse ``text`` (named ``source`` in errors) and decode its single document as ``cls``."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise SheetError(f"{source}{line}: {exc.problem or exc}") from None
    if node is None:
        raise SheetError(f"{source}:1: the sheet is empty")
    return _Decoder(source).decode(node, cls, "")


class _Decoder:
    def __init__(self, source: str):
        self.source = source
        self._constructor = yaml.constructor.SafeConstructor()
        self._hints: dict[type, dict[str, Any]] = {}

    def fail(self, node: yaml.Node, path: str, message: str) -> typing.NoReturn:
        where = f"{path}: " if path else ""
        raise SheetError(f"{position(self.source, node)}: {where}{message}")

    def decode(self, node: yaml.Node, hint: Any, path: str) -> Any:
        origin = get_origin(hint)
        if origin is Annotated:
            convert = get_args(hint)[1]
            value = self._scalar(node, path)
            try:
                return convert(value)
            except (ValueError, ArithmeticError) as exc:
                self.fail(node, path, str(exc))
        if origin in (Union, types.UnionType):
            return self._union(node, get_args(hint), path)
        if origin is Literal:
            value = self._scalar(node, path)
            if value not in get_args(hint):
                allowed = ", ".join(repr(a) for a in get_args(hint))
                self.fail(node, path, f"{value!r} is not one of {allowed}")
            return value
        if origin is list:
            if not isinstance(node, yaml.SequenceNode):
                self.fail(node, path, "expected a list")
            (item,) = get_args(hint)
            return [self.decode(child, item, f"{path}[{i}]") for i, child in enumerate(node.value)]
        if origin is dict:
            if not isinstance(node, yaml.MappingNode):
                self.fail(node, path, "expected a mapping")
            _, item = get_args(hint)
            out = {}
            for key_node, value_node in node.value:
                key = str(self._scalar(key_node, path))
                if key in out:
                    self.fail(key_node, path, f"duplicate key {key!r}")
                out[key] = self.decode(value_node, item, _join(path, key))
            return out
        if dataclasses.is_dataclass(hint):
            return self._dataclass(node, hint, path)
        if hint is Any:
            return self._constructor.construct_object(node, deep=True)
        return self._typed_scalar(node, hint, path)

    def _union(self, node: yaml.Node, options: tuple, path: str) -> Any:
        if type(None) in options and isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null"):
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return self.decode(node, option, path)
            except SheetError as exc:
                errors.append(str(exc).split(": ", 2)[-1])
        self.fail(node, path, " or ".join(dict.fromkeys(errors)))

    def _dataclass(self, node: yaml.Node, cls: type, path: str) -> Any:
        if not isinstance(node, yaml.MappingNode):
            self.fail(node, path, f"expected a mapping ({cls.__name__})")
        hints = self._hints.get(cls)
        if hints is None:
            hints = self._hints[cls] = get_type_hints(cls, include_extras=True)
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
        values: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = str(self._scalar(key_node, path))
            if key not in fields or key == "at":
                known = ", ".join(name for name in fields if name != "at")
                self.fail(key_node, path, f"unknown field {key!r} (fields: {known})")
            if key in values:
                self.fail(key_node, path, f"duplicate field {key!r}")
            values[key] = self.decode(value_node, hints[key], _join(path, key))
        for name, field in fields.items():
            required = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
            if required and name not in values and name != "at":
                self.fail(node, path, f"missing field {name!r}")
        if "at" in fields:
            values["at"] = position(self.source, node)
        try:
            return cls(**values)
        except ValueError as exc:  # the dataclass's own checks (__post_init__)
            self.fail(node, path, str(exc))

    def _scalar(self, node: yaml.Node, path: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            self.fail(node, path, "expected a single value")
        return self._constructor.construct_object(node)

    def _typed_scalar(self, node: yaml.Node, hint: Any, path: str) -> Any:
        value = self._scalar(node, path)
        if hint is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if hint is str and isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)  # ports, versions and the like written bare
        if not isinstance(value, hint) or (hint in (int, float) and isinstance(value, bool)):
            self.fail(node, path, f"expected {_type_name(hint)}, got {_type_name(type(value))} {value!r}")
        return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_name(hint: Any) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false",
            type(None): "null"}.get(hint, getattr(hint, "__name__", str(hint)))
