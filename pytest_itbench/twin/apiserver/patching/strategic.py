"""Strategic merge patch, applied as apimachinery's strategicpatch applies it on the server.

The merge keys and strategies come from the schema's
``x-kubernetes-patch-merge-key`` / ``x-kubernetes-patch-strategy``: a list with
the ``merge`` strategy merges by its key (or, for primitives, as a set); any
other list is replaced; maps merge unless their strategy is ``replace``.
Directives ride in the patch: ``$patch`` (replace, delete, merge),
``$retainKeys``, ``$deleteFromPrimitiveList/<field>`` and
``$setElementOrder/<field>``, the last being what ``kubectl apply`` sends to
keep list order.

Errors carry the messages and codes a real server answers with: the few
malformed-patch errors apimachinery names are 400 (or 422), everything else
reaches the client as a bare 500 with the library's message.
"""

from __future__ import annotations

from ...errors import BadRequest, StatusError
from ...schema import Node, patch_meta
from .. import gojson

DIRECTIVE = "$patch"
DELETE = "delete"
REPLACE = "replace"
MERGE = "merge"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER = "$setElementOrder"

BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
BAD_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"
_UNPROCESSABLE = "the server rejected our request due to an error in our request"


class PatchFailed(StatusError):
    """A patch the merge code refused with a plain error: the server answers 500 with its text."""

    code, reason = 500, ""


def unprocessable() -> StatusError:
    """422 as NewGenericServerResponse builds it: the library's message is not passed on."""
    return StatusError(_UNPROCESSABLE, code=422, reason="Invalid")


class PatchSchema:
    """The patch metadata of one position in an object (a Go struct, a map, or unknown)."""

    __slots__ = ("node",)

    def __init__(self, node: Node | None):
        self.node = node

    @property
    def type_name(self) -> str:
        """The Go type name of this struct, as lookup errors print it."""
        return self.node.name.rsplit(".", 1)[-1] if self.node is not None else ""

    @property
    def kind(self) -> str:
        """The Go kind (struct or map) that ``cannot merge lists`` errors name."""
        if self.node is not None and self.node.is_map:
            return "map"
        return "struct"

    def struct_field(self, key: str) -> tuple["PatchSchema", str | None, list[str]]:
        """(schema of field ``key``, merge key, strategies); unknown fields are an error, as in Go."""
        node = self.node
        if node is None or node.preserves_unknown and key not in node.properties():
            return PatchSchema(None), None, []
        if node.is_map:
            raise PatchFailed("merging an object in json but data type is not struct, instead is: map")
        if key not in node.properties():
            raise PatchFailed(f'unable to find api field in struct {self.type_name} for the json field "{key}"')
        merge_key, strategies = patch_meta(node.field_schema(key))
        return PatchSchema(node.field(key)), merge_key, strategies

    def slice_field(self, key: str) -> tuple["PatchSchema", str | None, list[str]]:
        """As :meth:`struct_field`, with the schema of the list's items."""
        sub, merge_key, strategies = self.struct_field(key)
        if sub.node is None:
            return sub, merge_key, strategies
        if not sub.node.is_array:
            raise PatchFailed("expected slice or array type, but got: struct")
        return PatchSchema(sub.node.items()), merge_key, strategies


def apply(original: dict, patch: dict, node: Node | None) -> dict:
    """Merge ``patch`` into ``original`` (both are modified); returns the result."""
    return _merge_map(original, patch, PatchSchema(node))


# ---- maps ---------------------------------------------------------------------------------------

def _merge_map(original: dict | None, patch: dict, schema: PatchSchema) -> dict:
    if DIRECTIVE in patch:
        return _map_directive(patch[DIRECTIVE], patch)
    if original is None:
        original = {}
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, schema)
    for key, patch_value in list(patch.items()):
        is_delete_list = key.startswith(DELETE_FROM_PRIMITIVE_LIST)
        if is_delete_list:
            key = _suffix(key, DELETE_FROM_PRIMITIVE_LIST, BAD_PRIMITIVE_LIST)
        if patch_value is None:
            original.pop(key, None)
            continue
        if key not in original:
            if not is_delete_list:
                _set_without_directives(original, key, patch_value)
            continue
        current = original[key]
        if _go_type(current) != _go_type(patch_value):
            if not is_delete_list:
                _set_without_directives(original, key, patch_value)
            continue
        if isinstance(current, dict):
            sub, _, strategies = schema.struct_field(key)
            original[key] = _merge_map_field(current, patch_value, sub, _main_strategy(strategies))
        elif isinstance(current, list):
            sub, merge_key, strategies = schema.slice_field(key)
            original[key] = _merge_list_field(current, patch_value, sub, _main_strategy(strategies),
                                              merge_key or "", is_delete_list)
        else:
            _set_without_directives(original, key, patch_value)
    return original


def _map_directive(directive, patch: dict) -> dict:
    if directive == REPLACE:
        del patch[DIRECTIVE]
        return patch
    if directive == DELETE:
        return {}
    raise PatchFailed(f"unknown patch type: {_go_s(directive)} in map: {gojson.format_value(patch)}")


def _set_without_directives(original: dict, key: str, patch_value) -> None:
    """A value the original lacks (or has with another type) is taken from the patch, cleaned."""
    _discard_nulls(patch_value)
    value, keep = _remove_directives(patch_value)
    if keep:
        original[key] = value
    else:
        original.pop(key, None)


def _merge_map_field(original: dict, patch: dict, schema: PatchSchema, strategy: str) -> dict:
    if strategy == REPLACE:
        return patch
    return _merge_map(original, patch, schema)


def _apply_retain_keys(original: dict, patch: dict) -> None:
    """``$retainKeys``: drop the original's fields the list does not name."""
    if RETAIN_KEYS not in patch:
        return
    retained = patch.pop(RETAIN_KEYS)
    if not isinstance(retained, list):
        raise BadRequest(BAD_RETAIN_KEYS)
    allowed = {v for v in retained if isinstance(v, str)}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if key not in allowed:
            raise BadRequest(BAD_RETAIN_KEYS)
    for key in list(original):
        if key not in allowed:
            del original[key]


# ---- $setElementOrder ----------------------------------------------------------------------------

def _merge_ordered_lists(original: dict, patch: dict, schema: PatchSchema) -> None:
    """Merge each list that has a ``$setElementOrder`` directive, in the order the directive gives."""
    for directive_key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        order = patch.pop(directive_key)
        if not isinstance(order, list):
            raise PatchFailed(_bad_arg_type("[]interface {}", order))
        key = _suffix(directive_key, SET_ELEMENT_ORDER, BAD_SET_ELEMENT_ORDER)
        found_original, found_patch = key in original, key in patch
        original_list = original.get(key)
        patch_list = patch.get(key)
        if found_original and not isinstance(original_list, list):
            raise PatchFailed(_bad_arg_type("[]interface {}", original_list))
        if found_patch and not isinstance(patch_list, list):
            raise PatchFailed(_bad_arg_type("[]interface {}", patch_list))
        sub, merge_key, strategies = schema.slice_field(key)
        merge_key = merge_key or ""
        _check_order(patch_list or [], order, merge_key)
        if found_original and not found_patch:
            merged = original_list
        elif found_patch and not found_original:
            merged, _ = _remove_directives(patch_list)
        elif found_original and found_patch:
            merged = _merge_list_field(original_list, patch_list, sub, _main_strategy(strategies), merge_key,
                                       False)
        else:
            continue
        if merge_key:
            in_order, server_only = _partition_maps(merged, order, merge_key)
        else:
            in_order, server_only = _partition_primitives(merged, order)
        kind = _element_kind(original_list or [], patch_list or [])
        if not kind:
            raise PatchFailed("no elements in any of the given slices")
        original[key] = _normalize_order(in_order, server_only, order, original_list or [], merge_key, kind)
        patch.pop(key, None)


def _check_order(patch_list: list, order: list, merge_key: str) -> None:
    """The patch list's items must appear in the ``$setElementOrder`` list, in the same relative order."""
    if not order or not patch_list:
        return
    items = _split_deletions(patch_list)[0] if merge_key else patch_list
    i = j = 0
    while i < len(items) and j < len(order):
        if isinstance(items[i], dict) and DIRECTIVE in items[i]:
            i += 1
            continue
        if _merge_key_equal(items[i], order[j], merge_key):
            i += 1
        j += 1
    if i < len(items) and j >= len(order):
        raise PatchFailed(f"The order in patch list:\n{gojson.format_value(patch_list)}\n doesn't match "
                          f"{SET_ELEMENT_ORDER} list:\n{gojson.format_value(order)}\n")


def _merge_key_equal(left, right, merge_key: str) -> bool:
    if not merge_key:
        return left == right
    for item in (left, right):
        if not isinstance(item, dict):
            raise PatchFailed(_bad_arg_type("map[string]interface {}", item))
        if merge_key not in item:
            raise PatchFailed(_no_merge_key(item, merge_key))
    return left[merge_key] == right[merge_key]


# ---- lists ------------------------------------------------------------------------------------------

def _merge_list_field(original: list, patch: list, schema: PatchSchema, strategy: str, merge_key: str,
                      is_delete_list: bool) -> list:
    if strategy == MERGE or is_delete_list:
        return _merge_list(original, patch, schema, merge_key, is_delete_list)
    return patch


def _merge_list(original: list, patch: list, schema: PatchSchema, merge_key: str, is_delete_list: bool) -> list:
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    if kind != "map":
        if is_delete_list:
            doomed = [_hashable(v) for v in patch]
            return [v for v in original if _hashable(v) not in doomed]
        merged = _deduplicate(original + patch)
    else:
        if not merge_key:
            raise PatchFailed(f"cannot merge lists without merge key for {schema.kind}")
        original, patch = _apply_list_directives(original, patch, merge_key)
        merged = _merge_items(original, patch, merge_key, schema)
    if merge_key:
        in_patch, server_only = _partition_maps(merged, patch, merge_key)
    else:
        in_patch, server_only = _partition_primitives(merged, patch)
    return _normalize_order(in_patch, server_only, patch, original, merge_key, kind)


def _apply_list_directives(original: list, patch: list, merge_key: str) -> tuple[list, list]:
    """Handle ``$patch`` items: delete drops the matching original items, replace drops all of them."""
    plain = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == DELETE:
            if merge_key not in item:
                raise PatchFailed(_no_merge_key(item, merge_key))
            while (index := _find_by_key(original, merge_key, item[merge_key])) is not None:
                original = original[:index] + original[index + 1:]
        elif directive == REPLACE:
            replace = True
        elif directive == MERGE:
            raise PatchFailed("merging lists cannot yet be specified in the patch")
        else:
            raise PatchFailed(f"unknown patch type: {_go_s(directive)} in map: {gojson.format_value(item)}")
    if replace:
        return plain, []
    return original, plain


def _merge_items(original: list, patch: list, merge_key: str, schema: PatchSchema) -> list:
    """Patch items merged into the original items with the same key, or appended."""
    merged = list(original)
    for item in patch:
        if merge_key not in item:
            raise PatchFailed(_no_merge_key(item, merge_key))
        index = _find_by_key(merged, merge_key, item[merge_key])
        if index is None:
            merged.append(item)
        else:
            merged[index] = _merge_map(merged[index], item, schema)
    return merged


def _find_by_key(items: list, merge_key: str, value) -> int | None:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise PatchFailed(f"value for key {index} is not a map")
        if merge_key in item and _hashable(item[merge_key]) == _hashable(value):
            return index
    return None


def _deduplicate(items: list) -> list:
    """Go's in-place deduplication: a later duplicate is overwritten by the last item."""
    items = list(items)
    length = len(items) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if _hashable(items[i]) == _hashable(items[j]):
                items[j] = items[length]
                items = items[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return items


# ---- order ------------------------------------------------------------------------------------------

def _partition_primitives(items: list, by: list) -> tuple[list, list]:
    wanted = {_hashable(v) for v in by}
    return ([v for v in items if _hashable(v) in wanted], [v for v in items if _hashable(v) not in wanted])


def _partition_maps(items: list, by: list, merge_key: str) -> tuple[list, list]:
    inside, outside = [], []
    for item in items:
        if not isinstance(item, dict):
            raise PatchFailed(_bad_arg_type("map[string]interface {}", item))
        if merge_key not in item:
            raise PatchFailed(_no_merge_key(item, merge_key))
        found = _find_by_key(by, merge_key, item[merge_key]) is not None
        (inside if found else outside).append(item)
    return inside, outside


def _normalize_order(patch_items: list, server_only: list, patch_order: list, server_order: list,
                     merge_key: str, kind: str) -> list:
    """Patch items in the patch's order, server-only items in the live order, interleaved by live order."""
    patch_items = _sort_by(patch_items, patch_order, merge_key, kind)
    server_only = _sort_by(server_only, server_order, merge_key, kind)
    return _interleave(server_only, patch_items, server_order, merge_key, kind)


def _sort_by(items: list, order: list, merge_key: str, kind: str) -> list:
    deletions: list = []
    if kind == "map":
        for item in items + order:
            if not isinstance(item, dict):
                raise PatchFailed(_bad_arg_type("map[string]interface {}", item))
            if merge_key not in item:
                raise PatchFailed(_no_merge_key(item, merge_key))
        items, deletions = _split_deletions(items)
    positions = [_position(order, item, merge_key, kind) for item in items]
    ranked = sorted(range(len(items)), key=lambda i: positions[i] if positions[i] >= 0 else len(order))
    return [items[i] for i in ranked] + deletions


def _split_deletions(items: list) -> tuple[list, list]:
    keep, delete = [], []
    for item in items:
        if not isinstance(item, dict):
            raise PatchFailed(_bad_arg_type("map[string]interface {}", item))
        (delete if item.get(DIRECTIVE) == DELETE else keep).append(item)
    return keep, delete


def _position(order: list, item, merge_key: str, kind: str) -> int:
    if kind == "map":
        wanted = item.get(merge_key) if isinstance(item, dict) else None
        for index, candidate in enumerate(order):
            if isinstance(candidate, dict) and _hashable(candidate.get(merge_key)) == _hashable(wanted):
                return index
        return -1
    for index, candidate in enumerate(order):
        if _hashable(candidate) == _hashable(item):
            return index
    return -1


def _interleave(left: list, right: list, server_order: list, merge_key: str, kind: str) -> list:
    """Insert each server-only item (left) before the first patch item (right) that comes after it live."""
    out = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _position(server_order, left[i], merge_key, kind)
            ri = _position(server_order, right[j], merge_key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


# ---- directives and helpers ---------------------------------------------------------------------------

def _remove_directives(value):
    """(value without ``$patch`` maps, keep?) — a map carrying ``$patch`` is dropped entirely."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for key in list(value):
            child, keep = _remove_directives(value[key])
            if keep:
                value[key] = child
            else:
                del value[key]
        return value, True
    if isinstance(value, list):
        out = []
        for item in value:
            child, keep = _remove_directives(item)
            if keep:
                out.append(child)
        return out, True
    return value, True


def _discard_nulls(value) -> None:
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for child in value.values():
            _discard_nulls(child)
    elif isinstance(value, list):
        for child in value:
            _discard_nulls(child)


def _main_strategy(strategies: list[str]) -> str:
    """The strategy besides ``retainKeys`` (which the client expresses with ``$retainKeys``)."""
    others = [s for s in strategies if s != "retainKeys"]
    if len(strategies) > 2 or len(strategies) == 2 and len(others) != 1:
        raise PatchFailed(f"unexpected patch strategy: [{' '.join(strategies)}]")
    return others[0] if others else ""


def _suffix(key: str, prefix: str, error: str) -> str:
    head, sep, tail = key.partition("/")
    if not sep or head != prefix:
        raise BadRequest(error)
    return tail


def _element_kind(*lists: list) -> str:
    """The one Go type all items share ("map", "string", ...); mixed types and nested lists are errors."""
    seen = None
    for items in lists:
        for item in items:
            kind = _go_type(item)
            if seen is None:
                if kind == "slice":
                    raise unprocessable()
                seen = kind
            elif kind != seen:
                raise PatchFailed(f"list element types are not identical: {gojson.format_value(list(lists))}")
    return seen or ""


def _go_type(value) -> str:
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "slice"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return "nil"


def _hashable(value):
    """A key for comparing scalars as Go's ``==`` on interface values does (true is not 1)."""
    if isinstance(value, (dict, list)):
        return (_go_type(value), gojson.dumps(value))
    return (_go_type(value), value)


def _no_merge_key(item: dict, merge_key: str) -> str:
    return f"map: {gojson.format_value(item)} does not contain declared merge key: {merge_key}"


def _bad_arg_type(expected: str, actual) -> str:
    return f"expected a {expected}, but received a {gojson.type_name(actual)}"


def _go_s(value) -> str:
    """Go's ``%s`` of a decoded JSON value."""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return gojson.format_value(value)
    return f"%!s({gojson.type_name(value)}={gojson.format_value(value)})"

