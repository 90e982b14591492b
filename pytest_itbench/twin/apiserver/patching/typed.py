"""Structured-merge-diff's operations on objects: field sets, comparison, merge, removal.

Comparisons see objects as the API server's Go types hold them: a struct field
that is a value and not a pointer (``spec``, ``template``, a container's
``resources``) exists, empty, whenever its parent does, and so does a list
without ``omitempty`` (``containers``), as null. That is why a create's managed
fields show ``f:spec`` and ``f:containers`` without ``.`` but a new map such as
``f:labels`` with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .fieldpath import FieldSet, Path, PathElement, element_string, freeze
from .shapes import DEDUCED, MISSING, Shape, TypedError, index_items, item_element


# ---- field sets ------------------------------------------------------------------------------------

def to_field_set(value, shape: Shape) -> FieldSet:
    """Every field ``value`` sets, as an applier comes to own them."""
    out = FieldSet()
    _collect(value, shape, (), out)
    return out


def _collect(value, shape: Shape, path: Path, out: FieldSet) -> None:
    if shape.holds_map(value):
        if shape.atomic:
            out.insert(path)
            return
        for key, child in value.items():
            child_path = path + (("f", key),)
            _collect(child, shape.child(key), child_path, out)
            if child is None or child == {} or not shape.declares(key):
                out.insert(child_path)
    elif shape.holds_list(value):
        if shape.atomic:
            out.insert(path)
            return
        order, by_pe = index_items(shape, value, path)
        for pe in order:
            items = by_pe[pe]
            if len(items) > 1:
                out.insert(path + (pe,))
                continue
            _collect(items[0], shape.element, path + (pe,), out)
            out.insert(path + (pe,))
    elif value is None and shape.kind in ("map", "list", "deduced") and not shape.atomic:
        return
    else:
        out.insert(path)


def ensure_named_fields_are_members(fields: FieldSet, shape: Shape) -> FieldSet:
    """``fields`` with every declared struct field that has paths below it counted as a member too."""
    out = FieldSet()
    out.members = set(fields.members)
    for pe, child in fields.children.items():
        child_shape = DEDUCED
        if pe[0] == "f" and shape.kind in ("map", "deduced"):
            if shape.declares(pe[1]):
                out.members.add(pe)
            child_shape = shape.child(pe[1])
        elif pe[0] == "k" and shape.kind == "list":
            child_shape = shape.element
        out.children[pe] = ensure_named_fields_are_members(child, child_shape)
    return out


# ---- comparison ---------------------------------------------------------------------------------------

@dataclass
class Comparison:
    added: FieldSet = field(default_factory=FieldSet)
    modified: FieldSet = field(default_factory=FieldSet)
    removed: FieldSet = field(default_factory=FieldSet)

    def exclude(self, fields: FieldSet | None) -> "Comparison":
        if fields is None or fields.empty():
            return self
        return Comparison(self.added.recursive_difference(fields), self.modified.recursive_difference(fields),
                          self.removed.recursive_difference(fields))

    def changed(self) -> FieldSet:
        return self.modified.union(self.added)


def compare(old, new, shape: Shape) -> Comparison:
    """What ``new`` added, modified and removed relative to ``old`` (either may be :data:`MISSING`)."""
    out = Comparison()
    _compare(old, new, shape, (), out)
    return out


def _compare(lhs, rhs, shape: Shape, path: Path, out: Comparison) -> None:
    # Unchanged subtrees are most of any write: Python's own equality settles them at C speed. (It takes
    # true for 1 and 1 for true, which JSON does not; a field flipping between the two is not worth the cost.)
    if type(lhs) is type(rhs) and lhs is not MISSING and lhs == rhs:
        return
    if (shape.holds_map(lhs) or shape.holds_map(rhs)) and _map_or_empty(lhs) and _map_or_empty(rhs):
        _compare_maps(lhs, rhs, shape, path, out)
    elif (shape.holds_list(lhs) or shape.holds_list(rhs)) and _list_or_empty(lhs) and _list_or_empty(rhs):
        _compare_lists(lhs, rhs, shape, path, out)
    else:
        _compare_leaf(lhs, rhs, path, out)


def _map_or_empty(value) -> bool:
    return value is MISSING or value is None or isinstance(value, dict)


def _list_or_empty(value) -> bool:
    return value is MISSING or value is None or isinstance(value, list)


def _compare_leaf(lhs, rhs, path: Path, out: Comparison) -> None:
    if lhs is MISSING:
        out.added.insert(path)
    elif rhs is MISSING:
        out.removed.insert(path)
    elif not equal(lhs, rhs):
        out.modified.insert(path)


def _compare_maps(lhs, rhs, shape: Shape, path: Path, out: Comparison) -> None:
    left = _with_zero_fields(lhs, shape)
    right = _with_zero_fields(rhs, shape)
    if shape.atomic or not left and not right:
        _compare_leaf(lhs, rhs, path, out)
        return
    for key in _union_keys(left, right):
        _compare(left.get(key, MISSING), right.get(key, MISSING), shape.child(key), path + (("f", key),), out)
    if lhs is MISSING:
        out.added.insert(path)
    elif rhs is MISSING:
        out.removed.insert(path)


def _with_zero_fields(value, shape: Shape) -> dict:
    """The map's entries, with the fields a Go object always has filled in as it holds them."""
    if not isinstance(value, dict):
        return {}
    missing = {name: zero for name, zero in shape.zero_fields.items() if name not in value}
    if not missing:
        return value
    return {**value, **missing}


def _union_keys(left: dict, right: dict) -> list[str]:
    return list(left) + [k for k in right if k not in left]


def _compare_lists(lhs, rhs, shape: Shape, path: Path, out: Comparison) -> None:
    left = lhs if isinstance(lhs, list) else []
    right = rhs if isinstance(rhs, list) else []
    if shape.atomic or not left and not right:
        _compare_leaf(lhs, rhs, path, out)
        return
    left_order, left_items = index_items(shape, left, path)
    right_order, right_items = index_items(shape, right, path)
    element = shape.element
    for pe in left_order + [pe for pe in right_order if pe not in left_items]:
        before, after = left_items.get(pe, []), right_items.get(pe, [])
        item_path = path + (pe,)
        if len(before) <= 1 and len(after) <= 1:
            _compare(before[0] if before else MISSING, after[0] if after else MISSING, element, item_path, out)
        elif len(before) >= 2 and len(after) >= 2:
            if len(before) != len(after) or not all(equal(a, b) for a, b in zip(before, after)):
                out.modified.insert(item_path)
        elif len(before) >= 2:
            if after:
                _compare(MISSING, after[0], element, item_path, out)
            out.removed.insert(item_path)
        else:
            if before:
                _compare(before[0], MISSING, element, item_path, out)
            out.added.insert(item_path)
    if lhs is MISSING:
        out.added.insert(path)
    elif rhs is MISSING:
        out.removed.insert(path)


def equal(a, b) -> bool:
    """JSON equality as structured-merge-diff has it: 1 equals 1.0, true does not equal 1."""
    if type(a) is type(b) and not isinstance(a, (dict, list)):
        return a == b
    return freeze(a) == freeze(b)


# ---- merge ---------------------------------------------------------------------------------------------

def merge(live, config, shape: Shape):
    """``config`` merged over ``live``: config wins at leaves, maps merge by field, associative lists by key."""
    return _merge(live, config, shape, ())


def _merge(lhs, rhs, shape: Shape, path: Path):
    if rhs is MISSING:
        return lhs
    if lhs is MISSING:
        return rhs
    if (shape.holds_map(lhs) or shape.holds_map(rhs)) and not shape.atomic and \
            isinstance(lhs, (dict, type(None))) and isinstance(rhs, (dict, type(None))) and (lhs or rhs):
        left, right = lhs or {}, rhs or {}
        out = {}
        for key in _union_keys(left, right):
            value = _merge(left.get(key, MISSING), right.get(key, MISSING), shape.child(key), path + (("f", key),))
            if value is not MISSING:
                out[key] = value
        return out
    if (shape.holds_list(lhs) or shape.holds_list(rhs)) and not shape.atomic and \
            isinstance(lhs, (list, type(None))) and isinstance(rhs, (list, type(None))) and (lhs or rhs):
        return _merge_lists(lhs or [], rhs or [], shape, path)
    return rhs


def _merge_lists(lhs: list, rhs: list, shape: Shape, path: Path) -> list:
    """Keyed merge keeping the live order and placing new items where the config puts them."""
    rhs_order, rhs_items = index_items(shape, rhs, path)
    for pe, items in rhs_items.items():
        if len(items) > 1:
            raise TypedError(path, f"duplicate entries for key {element_string(pe)}")
    lhs_pes = [item_element(shape, item, path, i) for i, item in enumerate(lhs)]
    lhs_items: dict[PathElement, object] = {}
    for pe, item in zip(lhs_pes, lhs):
        lhs_items[pe] = None if pe in lhs_items else item  # a duplicated live item merges as null
    shared = [pe for pe in rhs_order if pe in lhs_items]
    next_shared = shared.pop(0) if shared else None
    element = shape.element
    out: list = []
    merged_rhs: set = set()
    li = ri = 0
    while li < len(lhs_pes) or ri < len(rhs_order):
        if li < len(lhs_pes) and ri < len(rhs_order):
            pe = lhs_pes[li]
            if pe == rhs_order[ri]:
                merged_rhs.add(pe)
                out.append(_merge(lhs_items[pe], rhs_items[pe][0], element, path + (pe,)))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in rhs_items and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(lhs_pes):
            pe = lhs_pes[li]
            if pe not in rhs_items:
                out.append(_merge(lhs[li], MISSING, element, path + (pe,)))
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
        if ri < len(rhs_order):
            pe = rhs_order[ri]
            merged_rhs.add(pe)
            out.append(_merge(lhs_items.get(pe, MISSING), rhs_items[pe][0], element, path + (pe,)))
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
    return out


# ---- removal -------------------------------------------------------------------------------------------

def remove_items(value, fields: FieldSet, shape: Shape):
    """``value`` without the paths in ``fields`` (containers left empty become null, as upstream)."""
    if shape.holds_map(value):
        if not value or shape.atomic:
            return None
        out = {}
        for key, child in value.items():
            pe = ("f", key)
            if pe in fields.members:
                continue
            below = fields.children.get(pe)
            if below is not None and not below.empty():
                child = remove_items(child, below, shape.child(key))
            out[key] = child
        return out or None
    if shape.holds_list(value):
        if not value or shape.atomic:
            return None
        out_items = []
        for index, item in enumerate(value):
            pe = item_element(shape, item, (), index)
            if pe in fields.members:
                continue
            below = fields.children.get(pe)
            if below is not None and not below.empty():
                item = remove_items(item, below, shape.element)
            out_items.append(item)
        return out_items or None
    return value
