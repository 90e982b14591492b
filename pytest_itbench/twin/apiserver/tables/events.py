"""Event printer, for core/v1 and events.k8s.io/v1 events alike (the server prints both from one form)."""

from __future__ import annotations

from .. import conversion
from .core import Column, api_doc, name_column, register, since

_EVENT = "core.v1.Event"


def event_source(event: dict) -> str:
    """``component, host``; the reporting controller and instance stand in for a missing component or host."""
    source = event.get("source") or {}
    component = source.get("component") or event.get("reportingComponent") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    return f"{component}, {instance}" if instance else component


def event_row(obj: dict, now: float) -> list:
    event = conversion.convert(obj, "v1")
    first_seen = since(event.get("firstTimestamp") or event.get("eventTime"), now)
    last_seen = since(event["lastTimestamp"], now) if event.get("lastTimestamp") else first_seen
    count = event.get("count") or 1  # singleton events of the new API carry no count
    series = event.get("series")
    if series:
        last_seen = since(series.get("lastObservedTime"), now)
        count = series.get("count", 0)
    involved = event.get("involvedObject") or {}
    kind, name = (involved.get("kind") or "").lower(), involved.get("name") or ""
    return [last_seen, event.get("type", ""), event.get("reason", ""), f"{kind}/{name}" if name else kind,
            involved.get("fieldPath", ""), event_source(event), (event.get("message") or "").strip(), first_seen,
            count, event["metadata"].get("name", "")]


_COLUMNS = [
    Column("Last Seen", description=api_doc(_EVENT, "lastTimestamp")),
    Column("Type", description=api_doc(_EVENT, "type")),
    Column("Reason", description=api_doc(_EVENT, "reason")),
    Column("Object", description=api_doc(_EVENT, "involvedObject")),
    Column("Subobject", description=api_doc("core.v1.ObjectReference", "fieldPath"), priority=1),
    Column("Source", description=api_doc(_EVENT, "source"), priority=1),
    Column("Message", description=api_doc(_EVENT, "message")),
    Column("First Seen", description=api_doc(_EVENT, "firstTimestamp"), priority=1),
    Column("Count", description=api_doc(_EVENT, "count"), priority=1),
    Column("Name", "string", "name", name_column().description, priority=1),
]

register("", "Event", _COLUMNS, event_row)
register("events.k8s.io", "Event", _COLUMNS, event_row)
