"""Objects as the built-in Go types hold them, for results the server computes itself (patches, applies).

Decoding JSON into a Go struct and encoding it again unsets null fields,
drops ``omitempty`` maps and lists that are empty, and never loses a struct
field held by value. Custom resources are not Go types and keep all of these.
"""

from __future__ import annotations

from .shapes import Shape


def drop_nulls(value):
    """``value`` without null fields: null decodes as unset."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


def as_go_encodes(value, shape: Shape):
    """``value`` as decoding into the built-in Go type and encoding again gives it back.

    Removing the last label leaves no ``labels: {}``; an empty struct stays.
    """
    if shape.holds_map(value):
        out = {}
        for key, child in value.items():
            child_shape = shape.child(key)
            if shape.declares(key) and key not in shape.zero_fields and \
                    (child is None or child == [] or child == {} and child_shape.is_free_map):
                continue
            out[key] = as_go_encodes(child, child_shape)
        return out
    if shape.holds_list(value):
        element = shape.element
        return [as_go_encodes(item, element) for item in value]
    return value


def keep_value_structs(new: dict, old: dict, shape: Shape) -> None:
    """Put back, empty, the struct fields ``old`` had that ``new`` lost: a Go object cannot lose them."""
    for name, zero in shape.zero_fields.items():
        if zero is None or not isinstance(old.get(name), dict):
            continue
        if not isinstance(new.get(name), dict):
            new[name] = {}
        keep_value_structs(new[name], old[name], shape.child(name))
