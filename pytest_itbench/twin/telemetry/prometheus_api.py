"""The Prometheus HTTP API (``/api/v1/...``) over the twin's store and PromQL engine.

    app = create_app(tsdb, Engine(tsdb), now=clock.now, metadata=registry, rules=rule_manager)

Responses use Prometheus' envelope, ``{"status": "success", "data": ...,
"warnings": [...]}`` or ``{"status": "error", "errorType": "bad_data",
"error": "..."}`` with the status code of the error type, and its parameter
rules: ``time``/``start``/``end`` as RFC 3339 or Unix seconds, ``step`` and
``timeout`` as a duration or seconds, repeated ``match[]``, ``limit``; GET
query strings and POSTed forms alike. ``time`` defaults to ``now()``, the
twin's clock. Queries run on a worker thread so a slow one does not stall
the server; ``timeout`` (wall time, default two minutes) aborts them.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from datetime import datetime, timezone
from typing import Any, Callable, Optional, Sequence

import orjson
import promql_parser
from aiohttp import web
from multidict import MultiDict, MultiDictProxy

from . import labels as lbl
from .labels import Matcher
from .metadata import MetadataRegistry
from .promql import Engine, PromQLError, QueryResult, parse_selector, result_json
from .promql.values import Matrix, Vector, format_exponent
from .rule_status import AlertingRuleStatus, ActiveAlert, RecordingRuleStatus, RuleGroupStatus, RulesProvider
from .tsdb import TSDB, to_millis

BUILD_INFO = {
    "version": "3.14.0",
    "revision": "d15adb9ad7e5d9fbde3a9a8f30200593a5a14d86",
    "branch": "HEAD",
    "buildUser": "root@5e4b3c2a1f0d",
    "buildDate": "20260817-09:41:27",
    "goVersion": "go1.25.10",
}
log = logging.getLogger(__name__)

DEFAULT_QUERY_TIMEOUT = 120.0  # seconds of wall time, Prometheus' --query.timeout
MAX_POINTS_PER_SERIES = 11000
_STATUS = {"bad_data": 400, "execution": 422, "canceled": 499, "timeout": 503, "internal": 500, "not_found": 404}


class APIError(Exception):
    def __init__(self, error_type: str, message: str):
        super().__init__(message)
        self.error_type = error_type


def invalid_parameter(name: str, message: str) -> APIError:
    return APIError("bad_data", f'invalid parameter "{name}": {message}')


# ---- parameters -----------------------------------------------------------------------------------

class Params:
    """Request parameters as Go's ``Request.FormValue`` sees them: a POSTed form first, then the URL."""

    def __init__(self, url: MultiDictProxy, form: MultiDictProxy | MultiDict):
        self._url = url
        self._form = form

    @classmethod
    async def of(cls, request: web.Request) -> "Params":
        form: MultiDictProxy | MultiDict = MultiDict()
        if request.method == "POST" and request.content_type == "application/x-www-form-urlencoded":
            form = await request.post()
        return cls(request.query, form)

    def get(self, name: str) -> str:
        value = self._form.get(name)
        if value is None:
            value = self._url.get(name, "")
        return str(value)

    def getall(self, name: str) -> list[str]:
        return [str(v) for v in self._form.getall(name, [])] + list(self._url.getall(name, []))


def parse_time(text: str) -> float:
    """Unix seconds (rounded to milliseconds) or RFC 3339, as Prometheus accepts them."""
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        if math.isfinite(seconds):
            whole = math.trunc(seconds)
            return whole + round((seconds - whole) * 1000) / 1000
    try:
        moment = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        raise ValueError(f'cannot parse "{text}" to a valid timestamp') from None
    if moment.tzinfo is None:
        raise ValueError(f'cannot parse "{text}" to a valid timestamp')
    return moment.timestamp()


def parse_duration(text: str) -> float:
    """Seconds, or a Prometheus duration such as ``1m30s``."""
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(seconds) or abs(seconds) * 1e9 > 2 ** 63:
            raise ValueError(f'cannot parse "{text}" to a valid duration. It overflows int64')
        return seconds
    try:
        return promql_parser.parse_duration(text).total_seconds()
    except ValueError:
        raise ValueError(f'cannot parse "{text}" to a valid duration') from None


def _time_param(params: Params, name: str, default: Optional[float]) -> Optional[float]:
    text = params.get(name)
    if text == "":
        return default
    try:
        return parse_time(text)
    except ValueError as exc:
        raise invalid_parameter(name, f"invalid time value for '{name}': {exc}") from None


def _limit_param(params: Params) -> int:
    text = params.get("limit")
    if text == "":
        return 0
    try:
        limit = int(text)
    except ValueError:
        raise invalid_parameter("limit", f'strconv.Atoi: parsing "{text}": invalid syntax') from None
    if limit < 0:
        raise invalid_parameter("limit", "limit must be non-negative")
    return limit


def _matcher_sets(params: Params, parameter: str = "match[]") -> list[tuple[Matcher, ...]]:
    sets = []
    for text in params.getall(parameter):
        try:
            sets.append(parse_selector(text))
        except PromQLError as exc:
            raise invalid_parameter(parameter, str(exc)) from None
    return sets


def _range_millis(start: Optional[float], end: Optional[float]) -> tuple[Optional[int], Optional[int]]:
    return (None if start is None else to_millis(start)), (None if end is None else to_millis(end))


def rfc3339(t: Optional[float]) -> str:
    """A time as Go's ``time.Time`` marshals to JSON; the zero time for never."""
    if t is None:
        return "0001-01-01T00:00:00Z"
    moment = datetime.fromtimestamp(t, tz=timezone.utc)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += ("." + f"{moment.microsecond:06d}").rstrip("0")
    return text + "Z"


# ---- responses ----------------------------------------------------------------------------------------

def success(data: Any, warnings: Sequence[str] = (), infos: Sequence[str] = ()) -> web.Response:
    body: dict[str, Any] = {"status": "success", "data": data}
    if warnings:
        body["warnings"] = list(warnings)
    if infos:
        body["infos"] = list(infos)
    return web.Response(body=orjson.dumps(body), content_type="application/json")


def failure(error: APIError) -> web.Response:
    body = {"status": "error", "errorType": error.error_type, "error": str(error)}
    return web.Response(body=orjson.dumps(body), status=_STATUS.get(error.error_type, 500),
                        content_type="application/json")


def _query_error(exc: PromQLError) -> APIError:
    if exc.error_type == "bad_data":
        return invalid_parameter("query", str(exc))
    return APIError(exc.error_type, str(exc))


def _truncate(result: QueryResult, limit: int) -> list[str]:
    """Apply ``limit`` to a vector or matrix result; returns the warnings to add."""
    value = result.value
    if limit > 0 and isinstance(value, Vector) and len(value.samples) > limit:
        value.samples = value.samples[:limit]
        return ["results truncated due to limit"]
    if limit > 0 and isinstance(value, Matrix) and len(value.series) > limit:
        value.series = value.series[:limit]
        return ["results truncated due to limit"]
    return []


def _limited(items: list, limit: int) -> tuple[list, list[str]]:
    if limit > 0 and len(items) > limit:
        return items[:limit], ["results truncated due to limit"]
    return items, []


# ---- the application ----------------------------------------------------------------------------------

class PrometheusAPI:
    def __init__(self, tsdb: TSDB, engine: Engine, now: Callable[[], float], *,
                 metadata: Optional[MetadataRegistry] = None, rules: Optional[RulesProvider] = None,
                 build_info: Optional[dict] = None, query_timeout: float = DEFAULT_QUERY_TIMEOUT):
        self.tsdb = tsdb
        self.engine = engine
        self.now = now
        self.metadata = metadata or MetadataRegistry()
        self.rules = rules
        self.build_info = build_info or BUILD_INFO
        self.query_timeout = query_timeout

    def routes(self) -> list[web.RouteDef]:
        both = ("GET", "POST")
        table = [
            (both, "/api/v1/query", self.query),
            (both, "/api/v1/query_range", self.query_range),
            (both, "/api/v1/series", self.series),
            (both, "/api/v1/labels", self.labels),
            (("GET",), "/api/v1/label/{name}/values", self.label_values),
            (("GET",), "/api/v1/metadata", self.metric_metadata),
            (("GET",), "/api/v1/rules", self.rule_groups),
            (("GET",), "/api/v1/alerts", self.alerts),
            (("GET",), "/api/v1/status/buildinfo", self.status_buildinfo),
            (("GET",), "/-/healthy", self.healthy),
            (("GET",), "/-/ready", self.ready),
        ]
        routes = []
        for methods, path, handler in table:
            served = self._wrap(handler)
            routes.append(web.get(path, served))  # GET routes answer HEAD too
            if "POST" in methods:
                routes.append(web.post(path, served))
        return routes

    @staticmethod
    def _wrap(handler: Callable) -> Callable:
        async def serve(request: web.Request) -> web.StreamResponse:
            try:
                return await handler(request, await Params.of(request))
            except APIError as exc:
                return failure(exc)
            except Exception as exc:  # a bug must not look like a network failure to the client
                log.exception("internal error serving %s %s", request.method, request.path)
                return failure(APIError("internal", f"{type(exc).__name__}: {exc}"))

        return serve

    async def _run(self, work: Callable[[Callable[[], bool]], QueryResult], params: Params) -> QueryResult:
        timeout = self.query_timeout
        if params.get("timeout"):
            try:
                timeout = min(timeout, parse_duration(params.get("timeout")))
            except ValueError as exc:
                raise invalid_parameter("timeout", str(exc)) from None
        deadline = time.monotonic() + timeout  # wall time: a budget for the CPU, not simulated time

        def run() -> QueryResult:
            return work(lambda: time.monotonic() > deadline)

        try:
            return await asyncio.get_running_loop().run_in_executor(None, run)
        except PromQLError as exc:
            raise _query_error(exc) from None

    def _lookback(self, params: Params) -> Optional[float]:
        text = params.get("lookback_delta")
        if not text:
            return None
        try:
            return parse_duration(text)
        except ValueError as exc:
            raise APIError("bad_data", f"error parsing lookback delta duration: {exc}") from None

    # ---- queries --------------------------------------------------------------------------------------
    async def query(self, request: web.Request, params: Params) -> web.Response:
        limit = _limit_param(params)
        at = _time_param(params, "time", self.now())
        lookback = self._lookback(params)
        text = params.get("query")
        result = await self._run(lambda abort: self.engine.instant_query(text, at, lookback_delta=lookback,
                                                                          abort=abort), params)
        warnings = [*result.warnings, *_truncate(result, limit)]
        return success(result_json(result.value), warnings, result.infos)

    async def query_range(self, request: web.Request, params: Params) -> web.Response:
        limit = _limit_param(params)
        start, end = self._required_time(params, "start"), self._required_time(params, "end")
        if end < start:
            raise invalid_parameter("end", "end timestamp must not be before start time")
        try:
            step = parse_duration(params.get("step"))
        except ValueError as exc:
            raise invalid_parameter("step", str(exc)) from None
        if step <= 0:
            raise invalid_parameter("step", "zero or negative query resolution step widths are not accepted. "
                                            "Try a positive integer")
        if (end - start) / step > MAX_POINTS_PER_SERIES:
            raise APIError("bad_data", "exceeded maximum resolution of 11,000 points per timeseries. "
                                       "Try decreasing the query resolution (?step=XX)")
        lookback = self._lookback(params)
        text = params.get("query")
        result = await self._run(lambda abort: self.engine.range_query(text, start, end, step,
                                                                        lookback_delta=lookback, abort=abort),
                                 params)
        warnings = [*result.warnings, *_truncate(result, limit)]
        return success(result_json(result.value), warnings, result.infos)

    @staticmethod
    def _required_time(params: Params, name: str) -> float:
        try:
            return parse_time(params.get(name))
        except ValueError as exc:
            raise invalid_parameter(name, str(exc)) from None

    # ---- series, labels, metadata ----------------------------------------------------------------------
    async def series(self, request: web.Request, params: Params) -> web.Response:
        if not params.getall("match[]"):
            raise APIError("bad_data", "no match[] parameter provided")
        limit = _limit_param(params)
        mint, maxt = _range_millis(_time_param(params, "start", None), _time_param(params, "end", None))
        found = self.tsdb.series(_matcher_sets(params), mint, maxt)
        found, warnings = _limited(found, limit)
        return success([lbl.to_dict(labels) for labels in found], warnings)

    async def labels(self, request: web.Request, params: Params) -> web.Response:
        limit = _limit_param(params)
        mint, maxt = _range_millis(_time_param(params, "start", None), _time_param(params, "end", None))
        names, warnings = _limited(self.tsdb.label_names(_matcher_sets(params), mint, maxt), limit)
        return success(names, warnings)

    async def label_values(self, request: web.Request, params: Params) -> web.Response:
        name = request.match_info["name"]
        if name.startswith("U__"):
            name = _unescape_label_name(name)
        limit = _limit_param(params)
        mint, maxt = _range_millis(_time_param(params, "start", None), _time_param(params, "end", None))
        values, warnings = _limited(self.tsdb.label_values(name, _matcher_sets(params), mint, maxt), limit)
        return success(values, warnings)

    async def metric_metadata(self, request: web.Request, params: Params) -> web.Response:
        limit = self._number(params, "limit")
        per_metric = self._number(params, "limit_per_metric")
        families = self.metadata.families(params.get("metric") or None, limit, per_metric)
        return success({name: [{"type": m.type, "help": m.help, "unit": m.unit} for m in entries]
                        for name, entries in families.items()})

    @staticmethod
    def _number(params: Params, name: str) -> int:
        text = params.get(name)
        if text == "":
            return -1
        try:
            return int(text)
        except ValueError:
            raise APIError("bad_data", f"{name} must be a number") from None

    # ---- rules and alerts ----------------------------------------------------------------------------------
    def _groups(self) -> Sequence[RuleGroupStatus]:
        return self.rules.rule_groups() if self.rules is not None else ()

    async def rule_groups(self, request: web.Request, params: Params) -> web.Response:
        kind = request.query.get("type", "").lower()
        if kind not in ("", "alert", "record"):
            raise invalid_parameter("type", f'not supported value "{kind}"')
        exclude_alerts = params.get("exclude_alerts").lower()
        if exclude_alerts not in ("", "true", "false"):
            raise invalid_parameter("exclude_alerts", f'strconv.ParseBool: parsing "{exclude_alerts}": invalid syntax')
        names, groups, files = (set(params.getall(p)) for p in ("rule_name[]", "rule_group[]", "file[]"))
        out = []
        for group in self._groups():
            if (groups and group.name not in groups) or (files and group.file not in files):
                continue
            rules = []
            for rule in group.rules:
                if names and rule.name not in names:
                    continue
                if isinstance(rule, AlertingRuleStatus) and kind in ("", "alert"):
                    rules.append(_alerting_rule_json(rule, exclude_alerts == "true"))
                elif isinstance(rule, RecordingRuleStatus) and kind in ("", "record"):
                    rules.append(_recording_rule_json(rule))
            if rules:
                out.append({"name": group.name, "file": group.file, "rules": rules, "interval": group.interval,
                            "limit": group.limit, "evaluationTime": group.evaluation_time,
                            "lastEvaluation": rfc3339(group.last_evaluation)})
        return success({"groups": out})

    async def alerts(self, request: web.Request, params: Params) -> web.Response:
        alerts = [_alert_json(alert) for group in self._groups() for rule in group.rules
                  if isinstance(rule, AlertingRuleStatus) for alert in rule.alerts]
        return success({"alerts": alerts})

    # ---- status ----------------------------------------------------------------------------------------------
    async def status_buildinfo(self, request: web.Request, params: Params) -> web.Response:
        return success(self.build_info)

    async def healthy(self, request: web.Request, params: Params) -> web.Response:
        return web.Response(text="Prometheus Server is Healthy.\n")

    async def ready(self, request: web.Request, params: Params) -> web.Response:
        return web.Response(text="Prometheus Server is Ready.\n")


def _alert_json(alert: ActiveAlert) -> dict:
    out = {"labels": dict(alert.labels), "annotations": dict(alert.annotations), "state": alert.state,
           "activeAt": rfc3339(alert.active_at), "value": format_exponent(alert.value)}
    if alert.keep_firing_since is not None:
        out["keepFiringSince"] = rfc3339(alert.keep_firing_since)
    return out


def _alerting_rule_json(rule: AlertingRuleStatus, exclude_alerts: bool) -> dict:
    out = {"state": rule.state, "name": rule.name, "query": rule.query, "duration": rule.duration,
           "keepFiringFor": rule.keep_firing_for, "labels": dict(rule.labels),
           "annotations": dict(rule.annotations),
           "alerts": None if exclude_alerts else [_alert_json(a) for a in rule.alerts], "health": rule.health}
    if rule.last_error:
        out["lastError"] = rule.last_error
    out.update(evaluationTime=rule.evaluation_time, lastEvaluation=rfc3339(rule.last_evaluation), type="alerting")
    return out


def _recording_rule_json(rule: RecordingRuleStatus) -> dict:
    out = {"name": rule.name, "query": rule.query, "labels": dict(rule.labels), "health": rule.health}
    if rule.last_error:
        out["lastError"] = rule.last_error
    out.update(evaluationTime=rule.evaluation_time, lastEvaluation=rfc3339(rule.last_evaluation), type="recording")
    return out


def _unescape_label_name(name: str) -> str:
    """Prometheus' ``U__`` escaping of label names in URLs: ``_`` is ``__``, ``_XX_`` a code point in hex."""
    body, out, i = name[3:], [], 0
    while i < len(body):
        if body[i] != "_":
            out.append(body[i])
            i += 1
        elif body[i + 1:i + 2] == "_":
            out.append("_")
            i += 2
        else:
            end = body.find("_", i + 1)
            if end < 0:
                return name
            try:
                out.append(chr(int(body[i + 1:end], 16)))
            except ValueError:
                return name
            i = end + 1
    return "".join(out)


def create_app(tsdb: TSDB, engine: Engine, now: Callable[[], float], *, metadata: Optional[MetadataRegistry] = None,
               rules: Optional[RulesProvider] = None, build_info: Optional[dict] = None,
               query_timeout: float = DEFAULT_QUERY_TIMEOUT) -> web.Application:
    """The Prometheus API as an aiohttp application; ``now`` gives the default evaluation time."""
    api = PrometheusAPI(tsdb, engine, now, metadata=metadata, rules=rules, build_info=build_info,
                        query_timeout=query_timeout)
    app = web.Application()
    app.add_routes(api.routes())
    return app
