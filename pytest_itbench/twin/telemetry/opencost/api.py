"""OpenCost's HTTP API, as far as the twin serves it: ``/allocation/compute`` (alias ``/allocation``) and
``/healthz``, on the twin's clock.

Parameters are OpenCost's (``ComputeAllocationHandler``): ``window`` (required; see :mod:`.window`),
``aggregate`` (comma-separated properties, ``label:<name>``; ``all`` for one total), ``accumulate``,
``accumulateBy=all``, ``step`` (default: the window, one set), ``resolution`` (default 5m), ``includeIdle``
(``idle`` is taken too, the older API's name), ``shareIdle``, ``includeAggregatedMetadata``. The answer is
OpenCost's envelope ``{"code": 200, "status": "success", "data": [<set>, ...]}``, one set (a map from name to
allocation) per step, or one in all when accumulated.

A parameter that cannot be read is refused as OpenCost refuses a bad ``window``: 400, ``text/plain``,
``Invalid '<name>' parameter: <reason>``. OpenCost itself falls back to the default for an unreadable
``step``, ``resolution`` or boolean and drops an unknown ``aggregate`` property; the twin refuses them so that
a typo shows instead of silently changing the figures. ``filter`` and ``idleByNode`` are not supported
(``filter`` is refused, ``idleByNode`` ignored).
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import datetime, timezone
from typing import Callable

from aiohttp import web

from ..promql import Engine
from .aggregate import AggregateError, parse_aggregate
from .allocation import DEFAULT_RESOLUTION, AllocationQuery, query_allocation
from .pricing import PricingSource
from .window import WindowError, parse_duration, parse_window

log = logging.getLogger(__name__)

MAX_STEPS = 1000  # sets one request may ask for; each is a full computation over Prometheus
_TRUE = ("1", "t", "T", "TRUE", "true", "True")  # Go's strconv.ParseBool
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


class BadParameter(Exception):
    def __init__(self, name: str, reason: str):
        super().__init__(f"Invalid '{name}' parameter: {reason}")


class OpenCostAPI:
    def __init__(self, engine: Engine, pricing: PricingSource, now: Callable[[], float]):
        self.engine = engine
        self.pricing = pricing
        self.now = now

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/allocation/compute", self.allocation), web.get("/allocation", self.allocation),
                web.get("/healthz", self.healthz)]

    async def healthz(self, request: web.Request) -> web.Response:
        return web.Response(status=200, content_type="text/plain")

    async def allocation(self, request: web.Request) -> web.Response:
        try:
            query = self._query(request.query)
        except BadParameter as exc:
            # Go's http.Error: text/plain, nosniff, a trailing newline.
            return web.Response(status=400, text=f"{exc}\n", content_type="text/plain", charset="utf-8",
                                headers={"X-Content-Type-Options": "nosniff"})
        try:
            sets = await asyncio.get_running_loop().run_in_executor(None, self._compute, query)
        except Exception as exc:  # a bug must not look like a network failure to the client
            log.exception("internal error serving %s", request.path_qs)
            body = {"code": 500, "message": f"Error: {type(exc).__name__}: {exc}"}
            return web.Response(status=500, text=json.dumps(body), content_type="application/json")
        body = {"code": 200, "status": "success", "data": sets}
        return web.Response(text=json.dumps(body, separators=(",", ":")), content_type="application/json")

    def _compute(self, query: AllocationQuery) -> list[dict]:
        sets = query_allocation(self.engine, self.pricing.current(), query)
        return [{name: alloc.to_json() for name, alloc in sorted(one.items())} for one in sets]

    def _query(self, params) -> AllocationQuery:
        try:
            start, end = parse_window(params.get("window", ""), self.now())
        except WindowError as exc:
            raise BadParameter("window", str(exc)) from None
        if end < start:
            raise BadParameter("window", f"illegal window: [{_go_time(start)}, {_go_time(end)})")
        step = _duration(params, "step", end - start)
        resolution = _duration(params, "resolution", DEFAULT_RESOLUTION)
        if end > start and (end - start) / step > MAX_STEPS:
            raise BadParameter("step", f"{params.get('step')} cuts the window into more than {MAX_STEPS} sets")
        raw = params.get("aggregate")
        values = [v.strip() for v in raw.split(",") if v.strip()] if raw else None
        try:
            aggregate_by = parse_aggregate(values)
        except AggregateError as exc:
            raise BadParameter("aggregate", str(exc)) from None
        accumulate = _bool(params, "accumulate")
        accumulate_by = params.get("accumulateBy", "")
        if accumulate_by not in ("", "all"):
            raise BadParameter("accumulateBy", f"{accumulate_by!r}: the twin accumulates only by 'all'")
        if params.get("filter"):
            raise BadParameter("filter", "filters are not supported by the twin's OpenCost; aggregate instead")
        include_idle = _bool(params, "includeIdle") or _bool(params, "idle")
        return AllocationQuery(start=start, end=end, step=step, resolution=resolution, aggregate_by=aggregate_by,
                               include_idle=include_idle, share_idle=_bool(params, "shareIdle"),
                               accumulate=accumulate or accumulate_by == "all",
                               aggregated_metadata=_bool(params, "includeAggregatedMetadata"))


def _duration(params, name: str, default: float) -> float:
    text = params.get(name)
    if text is None or text == "":
        return default
    try:
        value = parse_duration(text)
    except ValueError as exc:
        raise BadParameter(name, str(exc)) from None
    if value <= 0:
        raise BadParameter(name, f"{text!r} is not a positive duration")
    return value


def _bool(params, name: str) -> bool:
    text = params.get(name)
    if text is None or text == "":
        return False
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise BadParameter(name, f'strconv.ParseBool: parsing "{text}": invalid syntax')


def _go_time(t: float) -> str:
    """A time as OpenCost's ``Window.String`` writes it: ``2006-01-02T15:04:05-0700``."""
    return datetime.fromtimestamp(t // 1, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+0000")


def create_opencost_app(engine: Engine, pricing: PricingSource, now: Callable[[], float]) -> web.Application:
    app = web.Application()
    app.add_routes(OpenCostAPI(engine, pricing, now).routes())
    return app
