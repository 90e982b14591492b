"""The Table machinery shared by every printer."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from ...clock import parse_time

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


@dataclass(frozen=True)
class FieldDoc:
    """The API documentation of one field, as the server puts it in a column's description.

    It is looked up when a table is first rendered, not when printers
    register, so importing the printers does not load the schemas.
    """

    definition: str  # e.g. "io.k8s.api.core.v1.PodStatus"
    field: str

    def __str__(self) -> str:
        return _field_description(self.definition, self.field)


@functools.lru_cache(maxsize=None)
def _field_description(definition: str, field: str) -> str:
    from ...schema import builtin_definitions
    return builtin_definitions()[definition]["properties"][field].get("description", "")


def api_doc(definition: str, field: str) -> FieldDoc:
    """``api_doc("core.v1.PodStatus", "podIP")``: a field of a type under ``io.k8s.api``."""
    return FieldDoc(f"io.k8s.api.{definition}", field)


@dataclass(frozen=True)
class Column:
    name: str
    type: str = "string"
    format: str = ""
    description: str | FieldDoc = ""
    priority: int = 0

    def definition(self) -> dict:
        return {"name": self.name, "type": self.type, "format": self.format, "description": str(self.description),
                "priority": self.priority}


def name_column() -> Column:
    return Column("Name", "string", "name", FieldDoc(OBJECT_META, "name"))


def age_column() -> Column:
    return Column("Age", "string", "", FieldDoc(OBJECT_META, "creationTimestamp"))


def containers_column() -> Column:
    return Column("Containers", description="Names of each container in the template.", priority=1)


def images_column() -> Column:
    return Column("Images", description="Images referenced by each container in the template.", priority=1)


RowFunc = Callable[[dict, float], list]
ConditionsFunc = Callable[[dict], list[dict]]


@dataclass(frozen=True)
class Printer:
    columns: tuple[Column, ...]
    row: RowFunc
    conditions: ConditionsFunc | None = None  # a row's TableRowConditions (pods mark themselves Completed)


_PRINTERS: dict[tuple[str, str], Printer] = {}


def register(group: str, kind: str, columns: list[Column], row: RowFunc,
             conditions: ConditionsFunc | None = None) -> None:
    _PRINTERS[(group, kind)] = Printer(tuple(columns), row, conditions)


def printer_for(group: str, kind: str) -> Printer | None:
    return _PRINTERS.get((group, kind))


def _default_row(obj: dict, now: float) -> list:
    meta = obj.get("metadata") or {}
    return [meta.get("name", ""), meta.get("creationTimestamp")]


_DEFAULT_PRINTER = Printer(
    (name_column(), Column("Created At", "date", "", FieldDoc(OBJECT_META, "creationTimestamp"))), _default_row)


def partial_metadata(obj: dict) -> dict:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


def render(printer: Printer | None, objs: list[dict], *, now: float, include_object: str = "Metadata",
           with_columns: bool = True, resource_version: str | None = None, continue_token: str | None = None,
           remaining: int | None = None) -> dict:
    """A meta.k8s.io/v1 Table of ``objs`` (already in the requested version)."""
    printer = printer or _DEFAULT_PRINTER
    rows = []
    for obj in objs:
        cells = printer.row(obj, now)
        row: dict = {"cells": cells}
        conditions = printer.conditions(obj) if printer.conditions else None
        if conditions:
            row["conditions"] = conditions
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = partial_metadata(obj)
        rows.append(row)
    metadata: dict = {}
    if resource_version:
        metadata["resourceVersion"] = resource_version
    if continue_token:
        metadata["continue"] = continue_token
    if remaining:
        metadata["remainingItemCount"] = remaining
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata,
            "columnDefinitions": [c.definition() for c in printer.columns] if with_columns else [],
            "rows": rows}


def age(obj: dict, now: float) -> str:
    """The AGE cell: time since creationTimestamp, formatted as kubectl formats durations."""
    ts = (obj.get("metadata") or {}).get("creationTimestamp")
    return since(ts, now)


def since(ts: str | None, now: float) -> str:
    if not ts:
        return "<unknown>"
    return human_duration(now - parse_time(ts))


def human_duration(seconds_f: float) -> str:
    """Go's k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    seconds = int(seconds_f)  # truncates toward zero, as Go's int(d.Seconds()) does
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"
