"""The Table machinery shared by every printer."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from ...clock import parse_time

@dataclass(frozen=True)
class Column:
    name: str
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0

    def definition(self) -> dict:
        return {"name": self.name, "type": self.type, "format": self.format, "description": self.description,
                "priority": self.priority}


RowFunc = Callable[[dict, float], list]


@dataclass(frozen=True)
class Printer:
    columns: tuple[Column, ...]
    row: RowFunc


_PRINTERS: dict[tuple[str, str], Printer] = {}


def register(group: str, kind: str, columns: list[Column], row: RowFunc) -> None:
    _PRINTERS[(group, kind)] = Printer(tuple(columns), row)


def printer_for(group: str, kind: str) -> Printer | None:
    return _PRINTERS.get((group, kind))


def _default_printer() -> Printer:
    def row(obj: dict, now: float) -> list:
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), meta.get("creationTimestamp")]

    return Printer((Column("Name", "string", "name", _name_doc()),
                    Column("Created At", "date", "", _created_doc())), row)


def _name_doc() -> str:
    return _object_meta_doc("name")


def _created_doc() -> str:
    return _object_meta_doc("creationTimestamp")


def _object_meta_doc(field: str) -> str:
    try:
        from ...schema import builtin_definitions
        props = builtin_definitions()["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
        return props[field].get("description", "")
    except Exception:
        return ""


def partial_metadata(obj: dict) -> dict:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


def render(printer: Printer | None, objs: list[dict], *, now: float, include_object: str = "Metadata",
           with_columns: bool = True, resource_version: str | None = None, continue_token: str | None = None,
           remaining: int | None = None) -> dict:
    """A meta.k8s.io/v1 Table of ``objs`` (already in the requested version)."""
    printer = printer or _default_printer()
    rows = []
    for obj in objs:
        cells = printer.row(obj, now)
        row: dict = {"cells": cells}
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
    seconds = int(seconds_f) if seconds_f >= 0 else -int(math.ceil(-seconds_f))
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
