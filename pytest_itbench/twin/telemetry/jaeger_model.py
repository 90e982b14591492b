"""The twin's spans as Jaeger v2 stores and serves them.

ITBench runs Jaeger 2.20 on OpenSearch behind an OpenTelemetry Collector, so a
span an agent reads has been through two translations, reproduced here:

- **Stored** (what a tag search matches): the OpenSearch span document's tags,
  process tags and log fields, as ``to_dbmodel.go`` writes them. Values are
  indexed as keywords, so every value is searched as text: ``500``, ``true``.
  An ERROR status is stored as the tag ``error=true`` (no ``otel.status_code``),
  an OK status as ``otel.status_code=OK``.
- **Served** (the query API's JSON): read back, adjusted (attributes and events
  sorted by name) and translated to Jaeger's model by the collector's
  translator: tags are the sorted attributes, then ``span.kind``,
  ``otel.status_code``, ``error`` and ``otel.status_description``; the resource
  becomes the process (``service.name`` its name, the rest its tags); events
  become logs whose first field is ``event``.
"""

from __future__ import annotations

import base64
import decimal
import math
from typing import Any, Iterable, Iterator

import orjson

from .spans import Span

KIND_NAMES = {"SPAN_KIND_SERVER": "server", "SPAN_KIND_CLIENT": "client", "SPAN_KIND_PRODUCER": "producer",
              "SPAN_KIND_CONSUMER": "consumer", "SPAN_KIND_INTERNAL": "internal"}
JS_MAX_SAFE_INTEGER = (1 << 53) - 1
SERVICE_NAME = "service.name"

Tag = tuple[str, str, Any]  # key, Jaeger value type, value


# ---- ids and times --------------------------------------------------------------------------------------------

def trace_key(trace_id: str) -> int:
    """A trace id as the 128-bit number Jaeger compares."""
    return int(trace_id, 16)


def format_trace_id(key: int) -> str:
    """jaeger-idl's ``TraceID.String()``: 16 hex digits when the high half is zero, else 32."""
    high, low = key >> 64, key & ((1 << 64) - 1)
    return f"{low:016x}" if high == 0 else f"{high:016x}{low:016x}"


def format_span_id(span_id: str) -> str:
    return f"{int(span_id, 16):016x}"


def micros(seconds: float) -> int:
    """Simulated seconds as the whole microseconds Jaeger keeps."""
    return round(seconds * 1_000_000)


def span_kind(span: Span) -> str:
    """The span kind as Jaeger names it (``server``), ``""`` when unspecified."""
    return KIND_NAMES.get(span.kind, "")


# ---- values ------------------------------------------------------------------------------------------------

def typed(value: Any) -> tuple[str, Any]:
    """An attribute value as the translator types it: bool, int64, float64, binary, or string (lists and maps
    become their JSON text, as pcommon's ``AsString`` writes them)."""
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, int):
        return "int64", value
    if isinstance(value, float):
        return "float64", value
    if isinstance(value, (bytes, bytearray)):
        return "binary", bytes(value)
    if isinstance(value, str):
        return "string", value
    return "string", orjson.dumps(value).decode()


def go_float(value: float) -> str:
    """A float64 as Go's encoding/json writes it: shortest digits, exponent only below 1e-6 or from 1e21."""
    if value == 0:
        return "0"
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        text = repr(value)  # Python's repr is already in exponent form in this range
        mantissa, _, exponent = text.partition("e")
        sign, digits = exponent[0], exponent[1:].lstrip("0")
        return f"{mantissa}e{sign}{digits.zfill(1) if sign == '-' else digits.zfill(2)}"
    return format(decimal.Decimal(repr(value)).normalize(), "f")


def keyword(value: Any) -> str:
    """A stored tag value as OpenSearch indexes it (a keyword: the value's JSON text, binary in hex)."""
    kind, plain = typed(value)
    if kind == "bool":
        return "true" if plain else "false"
    if kind == "float64":
        return go_float(plain) if math.isfinite(plain) else repr(plain)
    if kind == "binary":
        return plain.hex()
    return str(plain)


def json_value(kind: str, value: Any) -> Any:
    """A typed value in the UI JSON: big integers as text (JavaScript would round them), floats as Go writes
    them, binary in base64."""
    if kind == "int64" and abs(value) > JS_MAX_SAFE_INTEGER:
        return str(value)
    if kind == "float64":
        return orjson.Fragment(go_float(value)) if math.isfinite(value) else repr(value)
    if kind == "binary":
        return base64.b64encode(value).decode()
    return value


def _tag_json(tag: Tag) -> dict:
    key, kind, value = tag
    return {"key": key, "type": kind, "value": json_value(kind, value)}


# ---- stored form (tag search) --------------------------------------------------------------------------------

def stored_tags(span: Span) -> Iterator[tuple[str, str]]:
    """Every (key, keyword) a tag search can match: the span's tags, its process tags and its log fields."""
    for key, value in span.attributes.items():
        yield key, keyword(value)
    kind = span_kind(span)
    if kind:
        yield "span.kind", kind
    if span.status_code == "STATUS_CODE_OK":
        yield "otel.status_code", "OK"
    elif span.status_code == "STATUS_CODE_ERROR":
        yield "error", "true"
    if span.status_message:
        yield "otel.status_description", span.status_message
    for key, value in span.resource.items():
        if key != SERVICE_NAME:
            yield key, keyword(value)
    for event in span.events:
        attributes = event.get("attributes") or {}
        if event.get("name") and "event" not in attributes:
            yield "event", event["name"]
        for key, value in attributes.items():
            yield key, keyword(value)


# ---- served form (UI JSON) ------------------------------------------------------------------------------------

def span_tags(span: Span) -> list[Tag]:
    tags: list[Tag] = [(key, *typed(span.attributes[key])) for key in sorted(span.attributes)]
    kind = span_kind(span)
    if kind:
        tags.append(("span.kind", "string", kind))
    if span.status_code == "STATUS_CODE_OK":
        tags.append(("otel.status_code", "string", "OK"))
    elif span.status_code == "STATUS_CODE_ERROR":
        tags.append(("otel.status_code", "string", "ERROR"))
        tags.append(("error", "bool", True))
    if span.status_message:
        tags.append(("otel.status_description", "string", span.status_message))
    return tags


def process_of(span: Span) -> tuple[str, tuple[Tag, ...]]:
    """The process a span belongs to (service name and resource tags); equal processes share one id."""
    tags = tuple((key, *typed(span.resource[key])) for key in sorted(span.resource) if key != SERVICE_NAME)
    return span.service_name, tags


def span_logs(span: Span) -> list[dict]:
    logs = []
    for event in sorted(span.events, key=lambda e: e.get("name", "")):
        attributes = event.get("attributes") or {}
        fields: list[Tag] = []
        if event.get("name") and "event" not in attributes:
            fields.append(("event", "string", event["name"]))
        fields.extend((key, *typed(attributes[key])) for key in sorted(attributes))
        logs.append({"timestamp": micros(event["time"]), "fields": [_tag_json(f) for f in fields]})
    return logs


def trace_json(key: int, spans: Iterable[Span]) -> dict:
    """One trace as the UI JSON of ``/api/traces``: spans in the given order, processes ``p1``, ``p2``, ... in
    order of first use."""
    trace_id = format_trace_id(key)
    process_ids: dict[tuple, str] = {}
    out_spans = []
    for span in spans:
        process = process_of(span)
        process_id = process_ids.setdefault(process, f"p{len(process_ids) + 1}")
        references = [] if span.parent_span_id is None else [
            {"refType": "CHILD_OF", "traceID": trace_id, "spanID": format_span_id(span.parent_span_id)}]
        out_spans.append({
            "traceID": trace_id, "spanID": format_span_id(span.span_id), "operationName": span.operation_name,
            "references": references, "startTime": micros(span.start), "duration": micros(span.duration),
            "tags": [_tag_json(t) for t in span_tags(span)], "logs": span_logs(span), "processID": process_id,
            "warnings": None})
    # Go's encoding/json writes map keys sorted as strings: p1, p10, p2.
    processes = {pid: {"serviceName": process[0], "tags": [_tag_json(t) for t in process[1]]}
                 for process, pid in sorted(process_ids.items(), key=lambda item: item[1])}
    return {"traceID": trace_id, "spans": out_spans, "processes": processes, "warnings": None}
