"""Values written as Go's ``%#v`` prints them, for field errors whose bad value is a Go composite.

Upstream validators pass maps, slices and structs of the internal API types
as the bad value (``spec.selector: Invalid value: v1.LabelSelector{...}``);
the message shows them in Go syntax. These helpers write the few shapes
that appear in the errors the twin reports.
"""

from __future__ import annotations

import json

from ..errors import GoLiteral


def quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def string_map(values: dict | None, type_name: str = "map[string]string") -> GoLiteral:
    if values is None:
        return GoLiteral(f"{type_name}(nil)")
    body = ", ".join(f"{quote(k)}:{quote(str(values[k]))}" for k in sorted(values))
    return GoLiteral(f"{type_name}{{{body}}}")


def string_slice(values: list | None, type_name: str = "[]string") -> GoLiteral:
    if values is None:
        return GoLiteral(f"{type_name}(nil)")
    return GoLiteral(f"{type_name}{{{', '.join(quote(str(v)) for v in values)}}}")


def label_selector(selector: dict) -> GoLiteral:
    """A metav1.LabelSelector; a selector field holds a pointer, which the error prints dereferenced."""
    match_labels = selector.get("matchLabels")
    expressions = selector.get("matchExpressions")
    if expressions is None:
        exprs = "[]v1.LabelSelectorRequirement(nil)"
    else:
        items = ", ".join(
            f"v1.LabelSelectorRequirement{{Key:{quote(e.get('key', ''))}, Operator:{quote(e.get('operator', ''))}, "
            f"Values:{string_slice(e.get('values'))}}}" for e in expressions)
        exprs = f"[]v1.LabelSelectorRequirement{{{items}}}"
    return GoLiteral(f"v1.LabelSelector{{MatchLabels:{string_map(match_labels)}, MatchExpressions:{exprs}}}")


def int_or_string(value) -> GoLiteral:
    """An intstr.IntOrString value (Type 0 holds an int, Type 1 a string); missing reads as the int 0."""
    if isinstance(value, str):
        return GoLiteral(f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:{quote(value)}}}')
    return GoLiteral(f'intstr.IntOrString{{Type:0, IntVal:{int(value or 0)}, StrVal:""}}')


def struct(type_name: str, fields: list[tuple[str, str]]) -> GoLiteral:
    """A struct literal from already-rendered field values: ``rbac.RoleRef{APIGroup:"...", ...}``."""
    return GoLiteral(f"{type_name}{{{', '.join(f'{name}:{value}' for name, value in fields)}}}")


def pointer(type_name: str, present: bool) -> str:
    """A pointer field inside a struct: ``(*T)(nil)``, or an address (any address reads the same to a user)."""
    return f"(*{type_name})(0xc000a1c000)" if present else f"(*{type_name})(nil)"


def struct_diff(type_name: str, old: dict, new: dict) -> str:
    """A cmp.Diff-style report of the top-level fields that differ between two versions of a struct.

    Upstream appends go-cmp's diff of the internal Go structs to some errors; its exact layout is
    deliberately unstable, so this gives the same shape: changed fields with - and +, unchanged runs
    folded into ``... // N identical fields``.
    """
    lines = [f"  {type_name}{{"]
    same = 0
    for key in sorted(set(old) | set(new)):
        if old.get(key) == new.get(key):
            same += 1
            continue
        if same:
            lines.append(f"  \t... // {same} identical fields")
            same = 0
        name = key[:1].upper() + key[1:]
        if key in old:
            lines.append(f"- \t{name}: {_diff_value(old[key])},")
        if key in new:
            lines.append(f"+ \t{name}: {_diff_value(new[key])},")
    if same:
        lines.append(f"  \t... // {same} identical fields")
    lines.append("  }")
    return "\n".join(lines)


def _diff_value(value) -> str:
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def composite(type_name: str, value) -> GoLiteral:
    """A large value in Go's composite-literal shape (``core.PodTemplateSpec{Spec:{...}}``), fields by JSON name."""
    return GoLiteral(type_name + _composite(value))


def _composite(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k[:1].upper()}{k[1:]}:{_composite(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "{" + ", ".join(_composite(v) for v in value) + "}"
    if value is None:
        return "nil"
    return _diff_value(value)
