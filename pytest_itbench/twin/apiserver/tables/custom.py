"""Tables for custom resources: a CRD version's ``additionalPrinterColumns``, as apiextensions prints them.

A Name column comes first, then one column per printer column with its
type, format, priority and description. A version without printer columns
gets a single Age column, as upstream defaults it. Cells follow the
column's type: ``date`` cells are ages (``5m``), ``integer``/``number``/
``boolean`` cells are JSON values of that type (anything else is ``null``,
which kubectl shows as ``<none>``), and ``string`` cells print what the
JSONPath found, objects and lists as compact JSON.
"""

from __future__ import annotations

import functools
import json

from ...clock import parse_time
from ..gojson import format_float
from ..crd.jsonpath import JSONPath, JSONPathError
from .core import Column, Printer, human_duration

_AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}


def printer_for_columns(columns: list[dict]) -> Printer | None:
    """The printer of one CRD version; ``None`` (the default table) when a column's JSONPath does not parse."""
    columns = columns or [dict(_AGE, description=_object_meta_doc("creationTimestamp"))]
    try:
        paths = [JSONPath(col.get("jsonPath", "")) for col in columns]
    except JSONPathError:
        return None
    definitions = [Column("Name", "string", "name", _object_meta_doc("name"))]
    for col in columns:
        description = col.get("description") or \
            f"Custom resource definition column (in JSONPath format): {col.get('jsonPath', '')}"
        definitions.append(Column(col["name"], col.get("type", "string"), col.get("format", ""), description,
                                  int(col.get("priority", 0))))
    types = [col.get("type", "string") for col in columns]

    def row(obj: dict, now: float) -> list:
        cells: list = [(obj.get("metadata") or {}).get("name", "")]
        for path, kind in zip(paths, types):
            found = path.find(obj)
            cells.append(_cell(kind, found[0], now) if found else None)
        return cells

    return Printer(tuple(definitions), row)


def _cell(kind: str, value, now: float):
    if value is None:
        return None
    if kind == "string":
        return _print(value)
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return int(value)
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return float(value)
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "date":
        if not isinstance(value, str):
            return None
        try:
            return human_duration(now - parse_time(value))
        except ValueError:
            return "<invalid>"
    return None


def _print(value) -> str:
    """What client-go's JSONPath prints for a value: JSON for objects and lists, Go's %v for the rest."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_float(value)
    return str(value)


@functools.lru_cache(maxsize=None)
def _object_meta_doc(field: str) -> str:
    from ...schema import builtin_definitions
    return builtin_definitions()["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"][field] \
        .get("description", "")
