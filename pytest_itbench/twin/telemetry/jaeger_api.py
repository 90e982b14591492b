"""Jaeger's HTTP query API (what its UI and trace tools call) over the twin's trace store.

    app = create_jaeger_app(store, now=clock.now)

The reference is Jaeger 2.20, ITBench's version (``jaegerquery/internal/http_handler.go`` and
``query_parser.go``): ``/api/services``, ``/api/services/{service}/operations``,
``/api/operations?service=&spanKind=``, ``/api/traces`` (search, or ``traceID=`` lookups),
``/api/traces/{traceID}`` and ``/api/dependencies?endTs=&lookback=``.

Answers use Jaeger's envelope ``{"data": ..., "total": N, "limit": 0, "offset": 0, "errors": null}``,
written as Go's encoding/json writes it. A refused request gets the same envelope with
``"errors": [{"code": 400, "msg": ...}]`` and ``"data": null``, sent as ``http.Error`` sends it
(``text/plain``, a trailing newline); messages are Go's (see ``jaeger_params``). Times are Unix
microseconds (``endTs`` and ``lookback`` of dependencies: milliseconds), durations Go durations
(``100ms``, ``1.2s``). Defaults are Jaeger's, on the twin's clock: a search looks back two days,
dependencies one day. The UI-only ``lookback`` of a search is ignored, as the server ignores it
(the UI turns it into ``start``).
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any, Callable
from urllib.parse import unquote_plus

import orjson
from aiohttp import web
from multidict import MultiDictProxy

from .jaeger_model import format_trace_id, micros, trace_json
from .jaeger_params import (ParamError, parse_bool, parse_duration, parse_int, parse_tags, trace_id_from_hex,
                            trace_id_from_path)
from .traces import DEFAULT_LIMIT, StoredTrace, TraceQuery, TraceQueryError, TraceStore

log = logging.getLogger(__name__)

TRACE_LOOKBACK = 2 * 24 * 3600.0  # seconds a search looks back without ``start``
DEPENDENCIES_LOOKBACK_MS = 24 * 3600 * 1000
TRACE_NOT_FOUND = "trace not found"

# Go's encoding/json escapes these inside strings (HTML safety); they never occur outside strings.
_GO_ESCAPES = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"), ("\u2028".encode(), b"\\u2028"),
               ("\u2029".encode(), b"\\u2029"))


class JaegerError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _go_json(value: Any) -> bytes:
    body = orjson.dumps(value)
    for raw, escaped in _GO_ESCAPES:
        body = body.replace(raw, escaped)
    return body


def _envelope(data: Any, total: int = 0, errors: list | None = None) -> dict:
    return {"data": data, "total": total, "limit": 0, "offset": 0, "errors": errors}


def _answer(data: Any, total: int = 0, errors: list | None = None) -> web.Response:
    return web.Response(body=_go_json(_envelope(data, total, errors)), content_type="application/json")


def _refusal(error: JaegerError) -> web.Response:
    body = _go_json(_envelope(None, errors=[{"code": error.status, "msg": str(error)}])) + b"\n"
    return web.Response(body=body, status=error.status, headers={"X-Content-Type-Options": "nosniff"},
                        content_type="text/plain", charset="utf-8")


def _bad_param(name: str, error: ParamError) -> JaegerError:
    return JaegerError(400, f"unable to parse param '{name}': {error}")


_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _query_unescape(text: str) -> str:
    """Go's ``url.QueryUnescape``, which Jaeger applies to the already decoded path value (errors give "")."""
    return "" if _ESCAPE.search(text) else unquote_plus(text)


class JaegerAPI:
    def __init__(self, store: TraceStore, now: Callable[[], float]):
        self.store = store
        self.now = now

    def routes(self) -> list[web.RouteDef]:
        table = [
            ("/api/services", self.services),
            ("/api/services/{service}/operations", self.service_operations),
            ("/api/operations", self.operations),
            ("/api/traces", self.search),
            ("/api/traces/{trace_id}", self.trace),
            ("/api/dependencies", self.dependencies),
        ]
        return [web.get(path, self._wrap(handler)) for path, handler in table]

    @staticmethod
    def _wrap(handler: Callable) -> Callable:
        async def serve(request: web.Request) -> web.StreamResponse:
            try:
                return await handler(request, request.query)
            except JaegerError as exc:
                return _refusal(exc)
            except Exception as exc:  # a bug must not look like a network failure to the client
                log.exception("internal error serving %s %s", request.method, request.path)
                return _refusal(JaegerError(500, f"{type(exc).__name__}: {exc}"))

        return serve

    @staticmethod
    async def _off_loop(work: Callable[[], Any]) -> Any:
        """Searches and renderings run on a worker thread: the loop also serves the Kubernetes API."""
        return await asyncio.get_running_loop().run_in_executor(None, work)

    # ---- services and operations ----------------------------------------------------------------------
    async def services(self, request: web.Request, query: MultiDictProxy) -> web.Response:
        services = self.store.services()
        return _answer(services, len(services))

    async def service_operations(self, request: web.Request, query: MultiDictProxy) -> web.Response:
        service = _query_unescape(request.match_info["service"])
        names = sorted({name for name, _ in self.store.operations(service)})
        return _answer(names or None, len(names))  # Go's nil slice: null when the service has none

    async def operations(self, request: web.Request, query: MultiDictProxy) -> web.Response:
        service = query.get("service", "")
        if not service:
            raise JaegerError(400, "parameter 'service' is required")
        found = self.store.operations(service, query.get("spanKind", ""))
        return _answer([{"name": name, "spanKind": kind} for name, kind in found], len(found))

    # ---- traces ----------------------------------------------------------------------------------------------
    async def search(self, request: web.Request, query: MultiDictProxy) -> web.Response:
        service, operation = query.get("service", ""), query.get("operation", "")
        start = self._micros_param(query, "start", default=micros(self.now() - TRACE_LOOKBACK))
        end = self._micros_param(query, "end", default=micros(self.now()))
        try:
            tags = parse_tags(query.getall("tag", []), query.getall("tags", []))
        except ParamError as exc:
            raise JaegerError(400, str(exc)) from None
        limit = DEFAULT_LIMIT
        if query.get("limit"):
            try:
                limit = parse_int(query["limit"], 32)
            except ParamError as exc:  # Jaeger returns this one unwrapped
                raise JaegerError(400, str(exc)) from None
        min_duration, max_duration = self._duration_param(query, "minDuration"), self._duration_param(query,
                                                                                                     "maxDuration")
        trace_ids = []
        for text in query.getall("traceID", []):
            try:
                trace_ids.append(trace_id_from_hex(text))
            except ParamError as exc:
                raise JaegerError(400, f"cannot parse traceID param: {exc}") from None
        self._check_bool(query, "raw")  # accepted and checked; the store keeps no unadjusted form
        if not trace_ids and not service:
            raise JaegerError(400, "parameter 'service' is required")
        if min_duration and max_duration and max_duration < min_duration:
            raise JaegerError(400, "'maxDuration' should be greater than 'minDuration'")
        if trace_ids:
            return await self._off_loop(lambda: self._by_ids(trace_ids))
        search = TraceQuery(service, start, end, operation=operation, duration_min_us=min_duration,
                            duration_max_us=max_duration, tags=tags, limit=limit)

        def run() -> web.Response:
            try:
                found = self.store.find(search)
            except TraceQueryError as exc:
                raise JaegerError(500, str(exc)) from None
            return _answer([trace_json(t.key, t.spans) for t in found])

        return await self._off_loop(run)

    def _by_ids(self, keys: list[int]) -> web.Response:
        found: list[StoredTrace] = []
        missing = []
        for key in dict.fromkeys(keys):
            trace = self.store.get(key)
            if trace is None:
                missing.append({"msg": TRACE_NOT_FOUND, "traceID": format_trace_id(key)})
            else:
                found.append(trace)
        return _answer([trace_json(t.key, t.spans) for t in found], errors=missing or None)

    async def trace(self, request: web.Request, query: MultiDictProxy) -> web.Response:
        try:
            key = trace_id_from_path(request.match_info["trace_id"])
        except ParamError as exc:
            raise JaegerError(400, str(exc)) from None
        # start/end only narrow which indices OpenSearch reads; the store has none, so they are checked only.
        for name in ("start", "end"):
            if query.get(name):
                self._int_param(query, name)
        self._check_bool(query, "raw")

        def run() -> web.Response:
            trace = self.store.get(key)
            if trace is None:
                raise JaegerError(404, TRACE_NOT_FOUND)
            return _answer([trace_json(trace.key, trace.spans)])

        return await self._off_loop(run)

    # ---- dependencies ------------------------------------------------------------------------------------------
    async def dependencies(self, request: web.Request, query: MultiDictProxy) -> web.Response:
        end_ms = round(self.now() * 1000)
        if query.get("endTs"):
            end_ms = self._int_param(query, "endTs")
        lookback_ms = DEPENDENCIES_LOOKBACK_MS
        if query.get("lookback"):
            lookback_ms = self._int_param(query, "lookback")
        service = query.get("service", "")
        links = await self._off_loop(lambda: self.store.dependencies((end_ms - lookback_ms) * 1000, end_ms * 1000))
        return _answer([{"parent": link.parent, "child": link.child, "callCount": link.call_count}
                        for link in links if not service or service in (link.parent, link.child)])

    # ---- parameters ------------------------------------------------------------------------------------------
    @staticmethod
    def _int_param(query: MultiDictProxy, name: str) -> int:
        try:
            return parse_int(query[name])
        except ParamError as exc:
            raise _bad_param(name, exc) from None

    def _micros_param(self, query: MultiDictProxy, name: str, default: int) -> int:
        return self._int_param(query, name) if query.get(name) else default

    @staticmethod
    def _duration_param(query: MultiDictProxy, name: str) -> int:
        """A Go duration in whole microseconds (truncated, as Jaeger's storage reads it); 0 when absent."""
        if not query.get(name):
            return 0
        try:
            nanos = parse_duration(query[name])
        except ParamError as exc:
            raise _bad_param(name, exc) from None
        return nanos // 1000 if nanos >= 0 else -(-nanos // 1000)

    @staticmethod
    def _check_bool(query: MultiDictProxy, name: str) -> None:
        if query.get(name):
            try:
                parse_bool(query[name])
            except ParamError as exc:
                raise _bad_param(name, exc) from None


def create_jaeger_app(store: TraceStore, now: Callable[[], float]) -> web.Application:
    """The Jaeger query API as an aiohttp application; ``now`` gives the default search window."""
    app = web.Application()
    app.add_routes(JaegerAPI(store, now).routes())
    return app
