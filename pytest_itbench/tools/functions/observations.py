"""Tool answers as text for the model: plain text as it is, traces as one line a span, the rest as JSON.

Jaeger's JSON spends most of its characters on ids and references; the model needs who called whom,
how long it took and what failed, so a trace search is shown in that form (the trajectory and the
budget see the same text).
"""

from __future__ import annotations

import json
from typing import Any

from ...tools.traces import PEER_TAGS, spans_of

MAX_SPANS_PER_TRACE = 40


def render(tool: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    if tool in ("trace_search", "trace_get") and isinstance(value, list):
        return render_traces(value)
    if tool == "logs" and isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value) if value else "(no log lines)"
    if value in ([], {}, None):
        return "(nothing found)" if value is not None else "(no answer)"
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


def render_traces(traces: list[dict[str, Any]]) -> str:
    if not traces:
        return "(no traces found)"
    lines = [f"{len(traces)} traces; one line a span: service operation [kind] duration, error, callee"]
    for trace in traces:
        spans = sorted(spans_of(trace), key=lambda s: s.get("startTime", 0))
        failed = sum(1 for s in spans if _error(s["tags"]))
        lines.append(f"trace {str(trace.get('traceID', ''))[:16]}: {len(spans)} spans, {failed} failed")
        for span in spans[:MAX_SPANS_PER_TRACE]:
            tags = span["tags"]
            parts = [f"  {span['service']} {span.get('operationName', '')}"]
            if tags.get("span.kind"):
                parts.append(f"[{tags['span.kind']}]")
            parts.append(f"{span.get('duration', 0) / 1000:.1f}ms")
            callee = next((str(tags[k]) for k in PEER_TAGS if tags.get(k)), "")
            if callee:
                parts.append(f"-> {callee}")
            if tags.get("http.status_code") or tags.get("http.response.status_code"):
                parts.append(f"http {tags.get('http.status_code') or tags.get('http.response.status_code')}")
            if _error(tags):
                message = tags.get("otel.status_description") or tags.get("error.message") or ""
                parts.append(f"ERROR {message}".rstrip())
            lines.append(" ".join(parts))
        if len(spans) > MAX_SPANS_PER_TRACE:
            lines.append(f"  ... {len(spans) - MAX_SPANS_PER_TRACE} more spans")
    return "\n".join(lines)


def _error(tags: dict[str, Any]) -> bool:
    return tags.get("error") in (True, "true") or tags.get("otel.status_code") == "ERROR"
