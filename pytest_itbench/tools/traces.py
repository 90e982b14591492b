"""Trace search over the Jaeger query API: services, traces of a service (by operation, tags, duration), and
the service dependencies the traces show."""

from __future__ import annotations

import json
import time
from typing import Any

from .base import HttpTool, ToolError

# Span tags that name the service or host a client span called (OpenTelemetry, then older conventions).
PEER_TAGS = ("peer.service", "server.address", "net.peer.name", "rpc.service")


class TracesTool(HttpTool):
    name = "traces"
    signal = "jaeger"

    def services(self, *, thought: str = "") -> list[str]:
        """Names of the services that reported spans."""
        return sorted(self.get("/api/services", thought=thought).get("data") or [])

    def search(self, service: str, *, operation: str | None = None, tags: dict[str, Any] | None = None,
               lookback: float = 900.0, limit: int = 20, min_duration: str | None = None,
               thought: str = "") -> list[dict[str, Any]]:
        """Traces with a span of ``service`` in the last ``lookback`` seconds, in Jaeger's JSON
        (``[{"traceID", "spans": [{"operationName", "tags", "references", "processID", ...}],
        "processes": {id: {"serviceName"}}}]``). ``tags={"error": "true"}`` keeps failed ones."""
        now = time.time()
        params: dict[str, Any] = {"service": service, "limit": limit, "start": int((now - lookback) * 1e6),
                                  "end": int(now * 1e6)}
        if operation:
            params["operation"] = operation
        if tags:
            params["tags"] = json.dumps({k: str(v).lower() if isinstance(v, bool) else str(v)
                                         for k, v in tags.items()}, sort_keys=True)
        if min_duration:
            params["minDuration"] = min_duration
        return list(self.get("/api/traces", params, thought=thought).get("data") or [])

    def trace(self, trace_id: str, *, thought: str = "") -> list[dict[str, Any]]:
        """One trace by its id, in the JSON of ``search`` (a list of one trace)."""
        if not trace_id or not all(c.isalnum() or c in "+/=-_" for c in trace_id):
            raise ToolError(f"traces: {trace_id!r} is not a trace id (hex, as in the traceID of a search)")
        return list(self.get(f"/api/traces/{trace_id}", thought=thought).get("data") or [])

    def dependencies(self, lookback: float = 3600.0, *, thought: str = "") -> list[dict[str, Any]]:
        """Caller-callee pairs seen in the traces: ``[{"parent", "child", "callCount"}]``."""
        params = {"endTs": int(time.time() * 1000), "lookback": int(lookback * 1000)}
        return list(self.get("/api/dependencies", params, thought=thought).get("data") or [])


def spans_of(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The trace's spans, each with ``service`` (its process' service name) and ``tags`` as a plain dict."""
    processes = trace.get("processes") or {}
    out = []
    for span in trace.get("spans") or []:
        tags = {t.get("key"): t.get("value") for t in span.get("tags") or []}
        service = (processes.get(span.get("processID")) or {}).get("serviceName", "")
        out.append({**span, "service": service, "tags": tags})
    return out


def failed_calls(traces: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The failed client spans of ``traces``: ``[{"caller", "callee", "operation", "port", "message"}]``, the callee
    read from the span's peer tags (``peer.service``, ``server.address``, ...), with the ``port`` called when a
    tag says it, de-duplicated and sorted."""
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for trace in traces:
        for span in spans_of(trace):
            tags = span["tags"]
            if str(tags.get("span.kind")) != "client" or not _is_error(tags):
                continue
            callee = next((str(tags[k]) for k in PEER_TAGS if tags.get(k)), "")
            if not callee:
                continue
            key = (span["service"], callee.split(":")[0], span.get("operationName", ""))
            port = tags.get("server.port") or tags.get("net.peer.port")
            seen.setdefault(key, {"caller": key[0], "callee": key[1], "operation": key[2],
                                  "port": int(port) if str(port or "").isdigit() else None,
                                  "message": str(tags.get("otel.status_description") or "")})
    return [seen[k] for k in sorted(seen)]


def _is_error(tags: dict[str, Any]) -> bool:
    return tags.get("error") in (True, "true") or tags.get("otel.status_code") == "ERROR"
