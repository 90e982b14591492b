"""How structured-merge-diff types each position of an object, read from its schema.

* a struct or a map with free keys merges field by field, unless it is marked
  ``x-kubernetes-map-type: atomic``;
* a list is ``atomic`` (one leaf), a ``set`` of scalars, or a ``map`` keyed by
  ``x-kubernetes-list-map-keys`` (lists without a list type but with a patch
  merge key count as maps, see :func:`schema.list_meta`); an item of a set or
  map list is named by a path element (:func:`item_element`);
* anything else is a leaf; positions without a schema are *deduced*: maps
  merge by key, lists are atomic.
"""

from __future__ import annotations

from ...schema import Node, list_meta
from .fieldpath import Path, PathElement, freeze, path_string
from .zero_fields import ZERO_FIELDS

MISSING = object()  # a field that is absent (JSON null is None)

# Defaults of list-map key fields, which the OpenAPI documents carry and the schemas we load lack.
_KEY_DEFAULTS = {
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): "TCP",
    ("io.k8s.api.core.v1.ServicePort", "protocol"): "TCP",
}


class TypedError(ValueError):
    """An object that does not fit its schema the way structured-merge-diff requires."""

    def __init__(self, path: Path, message: str):
        where = path_string(path)
        super().__init__(f"{where}: {message}" if where else message)


class Shape:
    """How structured-merge-diff types one position: scalar, map (struct or free keys), list, or deduced."""

    __slots__ = ("kind", "atomic", "node", "keys", "zero_fields", "_children", "_element", "_props",
                 "_element_schema")

    def __init__(self, kind: str, node: Node | None = None, *, atomic: bool = False, keys: tuple[str, ...] = ()):
        self.kind = kind  # "scalar", "map", "list", "deduced"
        self.atomic = atomic
        self.node = node
        self.keys = keys  # list-map keys; () for a set
        self.zero_fields: dict = ZERO_FIELDS.get(node.name, {}) if node is not None else {}
        self._children: dict[str, Shape] = {}
        self._element: Shape | None = None
        self._props: dict = node.properties() if node is not None and kind == "map" else {}
        self._element_schema = node.schema.get("additionalProperties") if node is not None else None

    def declares(self, name: str) -> bool:
        return name in self._props

    def child(self, name: str) -> "Shape":
        """The shape of map field ``name``: the declared field, else the map's values, else deduced."""
        shape = self._children.get(name)
        if shape is None:
            if name in self._props:
                shape = shape_of(Node(self._props[name], self.node.registry), self._props[name])
            elif isinstance(self._element_schema, dict):
                shape = shape_of(Node(self._element_schema, self.node.registry), self._element_schema)
            else:
                shape = DEDUCED
            self._children[name] = shape
        return shape

    @property
    def element(self) -> "Shape":
        """The shape of a list's items."""
        if self._element is None:
            items = self.node.items() if self.node is not None else None
            self._element = shape_of(items, items.schema) if items is not None else DEDUCED
        return self._element

    def key_default(self, name: str):
        item = self.element.node
        if item is None:
            return None
        declared = item.properties().get(name) or {}
        return declared.get("default", _KEY_DEFAULTS.get((item.name, name)))

    @property
    def is_free_map(self) -> bool:
        """A map with free keys (a Go map, which ``omitempty`` drops when empty), not a struct."""
        return self.kind == "map" and not self._props

    def holds_map(self, value) -> bool:
        return isinstance(value, dict) and self.kind in ("map", "deduced")

    def holds_list(self, value) -> bool:
        return isinstance(value, list) and self.kind == "list"


DEDUCED = Shape("deduced")
_SCALAR_TYPES = {"string", "integer", "number", "boolean"}
_cache: dict[int, tuple[dict, Shape]] = {}


def shape_of(node: Node | None, raw: dict | None = None) -> Shape:
    """The shape of ``node``; ``raw`` is the property schema that led to it (its extensions count too)."""
    if node is None:
        return DEDUCED
    anchor = raw if raw is not None else node.schema
    hit = _cache.get(id(anchor))
    if hit is not None and hit[0] is anchor:
        return hit[1]
    shape = _build(node, anchor)
    _cache[id(anchor)] = (anchor, shape)
    return shape


def _build(node: Node, raw: dict) -> Shape:
    def extension(name: str):
        return raw.get(name, node.schema.get(name))

    if node.int_or_string:
        return Shape("scalar", node)
    if node.is_array:
        list_type, keys = list_meta(raw if "items" in raw else node.schema)
        return Shape("list", node, atomic=list_type == "atomic", keys=tuple(keys) if list_type == "map" else ())
    atomic = extension("x-kubernetes-map-type") == "atomic"
    if node.properties() or node.is_map:
        return Shape("map", node, atomic=atomic)
    if node.types & _SCALAR_TYPES:
        return Shape("scalar", node)
    return Shape("deduced", node, atomic=atomic)


# ---- list items --------------------------------------------------------------------------------

def item_element(shape: Shape, item, path: Path, index: int) -> PathElement:
    """The path element naming ``item`` in an associative list: its key values, or itself in a set."""
    if shape.keys:
        if item is None:
            raise TypedError(path, f"element {index}: associative list with keys may not have a null element")
        if not isinstance(item, dict):
            raise TypedError(path, f"element {index}: associative list with keys may not have non-map elements")
        fields = []
        for name in shape.keys:
            if name in item:
                fields.append((name, freeze(item[name])))
                continue
            default = shape.key_default(name)
            if default is None:
                raise TypedError(path, f'element {index}: associative list with keys has an element that omits '
                                       f'key field "{name}" (and doesn\'t have default value)')
            fields.append((name, freeze(default)))
        return ("k", tuple(sorted(fields)))
    if isinstance(item, dict):
        raise TypedError(path, f"element {index}: associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise TypedError(path, f"element {index}: not supported: associative list with lists as elements")
    if item is None:
        raise TypedError(path, f"element {index}: associative list without keys has an element that's an explicit "
                               f"null")
    return ("v", freeze(item))


def index_items(shape: Shape, items: list, path: Path) -> tuple[list[PathElement], dict[PathElement, list]]:
    """The items' path elements in order (each once) and the items under each."""
    order: list[PathElement] = []
    by_pe: dict[PathElement, list] = {}
    for index, item in enumerate(items):
        pe = item_element(shape, item, path, index)
        if pe in by_pe:
            by_pe[pe].append(item)
        else:
            by_pe[pe] = [item]
            order.append(pe)
    return order, by_pe
