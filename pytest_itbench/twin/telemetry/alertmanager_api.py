"""Alertmanager's HTTP API v2 (v0.27) over the twin's :class:`~.alertmanager.Alertmanager`.

    app = create_alertmanager_app(alertmanager)

``/api/v2/alerts`` (GET with ``filter``, ``active``, ``silenced``,
``inhibited``, ``unprocessed``, ``receiver``; POST), ``/api/v2/alerts/groups``,
``/api/v2/silences`` (GET, POST), ``/api/v2/silence/{id}`` (GET, DELETE),
``/api/v2/status``, ``/api/v2/receivers``, ``/-/healthy``, ``/-/ready``.
Bodies are go-swagger's: fields in its order, times as RFC 3339 with
milliseconds, bad requests as a JSON string (400) and schema violations as
``{"code": 602, "message": "comment in body is required"}`` (422). As in
v0.27, ``unprocessed`` is accepted and has no effect: the API sets every
alert's status before filtering, so no alert is unprocessed when listed.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timezone
from typing import Any, Optional

import orjson
from aiohttp import web

from .alertmanager import (Alertmanager, AlertView, InvalidSilence, Matcher, MatcherError, MatchType, PostableAlert,
                           Silence, SilenceNotFound, parse_matcher)

VERSION_INFO = {"branch": "HEAD", "buildDate": "20240228-11:51:20", "buildUser": "root@22cd11f671e9",
                "goVersion": "go1.21.7", "revision": "0aa3c2aad14cff039931923ab16b26b7481783b5",
                "version": "0.27.0"}
_TRUE = {"1", "y", "yes", "t", "true", "on", "ok", "selected", "checked", "enabled"}
_FALSE = {"0", "n", "no", "f", "false", "off", "disabled", ""}
_HEADERS = {"Cache-Control": "no-store"}


class _Problem(Exception):
    """An error response: a JSON string (go-swagger's BadRequest) or a {code, message} object (validation)."""

    def __init__(self, status: int, body: Any):
        super().__init__(str(body))
        self.status = status
        self.body = body


def _invalid(code: int, message: str) -> _Problem:
    # go-openapi validation codes are >= 600 and answered as 422.
    return _Problem(422 if code >= 600 else code, {"code": code, "message": message})


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json", headers=_HEADERS)


def format_time(t: float) -> str:
    """strfmt.DateTime: RFC 3339 with milliseconds (truncated), UTC."""
    millis = int(t * 1000) if t >= 0 else -int(-t * 1000)
    seconds, ms = divmod(millis, 1000)
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + f".{ms:03d}Z"


def parse_time(text: Any, field: str, body: str) -> float:
    if not isinstance(text, str):
        raise _Problem(400, {"code": 400, "message": f'parsing {body} body from "" failed, because '
                                                     f"{field} is not a date-time string"})
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise _Problem(400, {"code": 400, "message": f'parsing {body} body from "" failed, because parsing time '
                                                     f'"{text}" as a date-time failed'}) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _bool_param(request: web.Request, name: str) -> bool:
    text = request.query.get(name)
    if text is None:
        return True  # every boolean filter of the alerts API defaults to true
    lowered = text.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise _invalid(601, f'{name} in query must be of type bool: "{text}"')


def _filter(request: web.Request) -> list[Matcher]:
    try:
        return [parse_matcher(text) for text in request.query.getall("filter", [])]
    except MatcherError as exc:
        raise _Problem(400, str(exc)) from None


def _receiver(request: web.Request) -> Optional[re.Pattern]:
    text = request.query.get("receiver")
    if text is None:
        return None
    try:
        return re.compile(f"(?:{text})")
    except re.error as exc:
        raise _Problem(400, f"failed to parse receiver param: error parsing regexp: {exc}") from None


def _alert_json(view: AlertView) -> dict:
    alert = view.alert
    out: dict[str, Any] = {
        "annotations": dict(alert.annotations), "endsAt": format_time(alert.ends_at), "fingerprint": alert.fingerprint,
        "receivers": [{"name": r} for r in view.receivers], "startsAt": format_time(alert.starts_at),
        "status": {"inhibitedBy": list(view.status.inhibited_by), "silencedBy": list(view.status.silenced_by),
                   "state": view.status.state},
        "updatedAt": format_time(alert.updated_at)}
    if alert.generator_url:
        out["generatorURL"] = alert.generator_url
    out["labels"] = dict(alert.labels)
    return out


def _silence_json(silence: Silence, now: float) -> dict:
    return {"id": silence.id, "status": {"state": silence.state(now)}, "updatedAt": format_time(silence.updated_at),
            "comment": silence.comment, "createdBy": silence.created_by, "endsAt": format_time(silence.ends_at),
            "matchers": [{"isEqual": m.is_equal, "isRegex": m.is_regex, "name": m.name, "value": m.value}
                         for m in silence.matchers],
            "startsAt": format_time(silence.starts_at)}


_SILENCE_ORDER = {"active": 0, "pending": 1, "expired": 2}


def _silence_sort_key(silence: Silence, now: float) -> tuple:
    """``SortSilences``: active by soonest end, pending by soonest start, expired by latest end."""
    state = silence.state(now)
    moment = {"active": silence.ends_at, "pending": silence.starts_at, "expired": -silence.ends_at}[state]
    return _SILENCE_ORDER[state], moment


def _silence_matches_filter(silence: Silence, matchers: list[Matcher]) -> bool:
    """A silence matches a filter when each filter matcher equals one of the silence's (name, type, value)."""
    return all(any((m.name, m.type, m.value) == (s.name, s.type, s.value) for s in silence.matchers)
               for m in matchers)


def _postable_alerts(body: Any) -> list[PostableAlert]:
    if not isinstance(body, list):
        raise _Problem(400, {"code": 400, "message": 'parsing alerts body from "" failed, because json: cannot '
                                                     "unmarshal object into Go value of type models.PostableAlerts"})
    alerts = []
    for i, item in enumerate(body):
        if not isinstance(item, dict) or item.get("labels") is None:
            raise _invalid(602, f"{i}.labels in body is required")
        for field in ("labels", "annotations"):
            if not isinstance(item.get(field) or {}, dict) or not all(
                    isinstance(v, str) for v in (item.get(field) or {}).values()):
                raise _Problem(400, {"code": 400, "message": f'parsing alerts body from "" failed, because json: '
                                                             f"cannot unmarshal {field} into Go struct field of type "
                                                             "models.LabelSet"})
        starts = parse_time(item["startsAt"], "startsAt", "alerts") if item.get("startsAt") else None
        ends = parse_time(item["endsAt"], "endsAt", "alerts") if item.get("endsAt") else None
        alerts.append(PostableAlert(dict(item["labels"]), dict(item.get("annotations") or {}), starts, ends,
                                    str(item.get("generatorURL") or "")))
    return alerts


def _postable_silence(body: Any) -> Silence:
    if not isinstance(body, dict):
        raise _Problem(400, {"code": 400, "message": 'parsing silence body from "" failed, because json: cannot '
                                                     "unmarshal array into Go value of type models.PostableSilence"})
    for name in ("comment", "createdBy", "endsAt"):
        if body.get(name) is None:
            raise _invalid(602, f"{name} in body is required")
    raw_matchers = body.get("matchers")
    if raw_matchers is None:
        raise _invalid(602, "matchers in body is required")
    if not raw_matchers:
        raise _invalid(612, "matchers in body should have at least 1 items")
    if body.get("startsAt") is None:
        raise _invalid(602, "startsAt in body is required")
    matchers = []
    for i, m in enumerate(raw_matchers):
        for name in ("isRegex", "name", "value"):
            if m.get(name) is None:
                raise _invalid(602, f"matchers.{i}.{name} in body is required")
        is_equal, is_regex = m.get("isEqual", True), m["isRegex"]
        kind = {(True, False): MatchType.EQUAL, (False, False): MatchType.NOT_EQUAL, (True, True): MatchType.REGEX,
                (False, True): MatchType.NOT_REGEX}[(bool(is_equal), bool(is_regex))]
        try:
            matchers.append(Matcher.of(kind, str(m["name"]), str(m["value"])))
        except MatcherError as exc:
            raise _Problem(400, f"silence invalid: invalid label matcher {i}: invalid regular expression "
                                f"\"{m['value']}\": {exc}") from None
    return Silence(str(body.get("id") or ""), tuple(matchers), parse_time(body["startsAt"], "startsAt", "silence"),
                   parse_time(body["endsAt"], "endsAt", "silence"), 0.0, str(body["createdBy"]),
                   str(body["comment"]))


class AlertmanagerAPI:
    def __init__(self, alertmanager: Alertmanager):
        self.am = alertmanager

    def routes(self) -> list[web.RouteDef]:
        wrap = self._wrap
        return [
            web.get("/api/v2/status", wrap(self.status)),
            web.get("/api/v2/receivers", wrap(self.receivers)),
            web.get("/api/v2/alerts", wrap(self.get_alerts)),
            web.post("/api/v2/alerts", wrap(self.post_alerts)),
            web.get("/api/v2/alerts/groups", wrap(self.alert_groups)),
            web.get("/api/v2/silences", wrap(self.get_silences)),
            web.post("/api/v2/silences", wrap(self.post_silences)),
            web.get("/api/v2/silence/{id}", wrap(self.get_silence)),
            web.delete("/api/v2/silence/{id}", wrap(self.delete_silence)),
            web.get("/-/healthy", self.ok),
            web.get("/-/ready", self.ok),
        ]

    @staticmethod
    def _wrap(handler):
        async def serve(request: web.Request) -> web.StreamResponse:
            try:
                return await handler(request)
            except _Problem as problem:
                return _json(problem.body, problem.status)

        return serve

    async def ok(self, request: web.Request) -> web.Response:
        return web.Response(text="OK")

    async def status(self, request: web.Request) -> web.Response:
        return _json({"cluster": {"peers": [], "status": "disabled"},
                      "config": {"original": self.am.config.text()},
                      "uptime": format_time(self.am.started_at), "versionInfo": VERSION_INFO})

    async def receivers(self, request: web.Request) -> web.Response:
        return _json([{"name": name} for name in self.am.config.receivers])

    async def get_alerts(self, request: web.Request) -> web.Response:
        matchers = _filter(request)
        flags = {name: _bool_param(request, name) for name in ("active", "silenced", "inhibited")}
        _bool_param(request, "unprocessed")
        views = self.am.alerts(matchers, receiver=_receiver(request), **flags)
        return _json([_alert_json(v) for v in views])

    async def post_alerts(self, request: web.Request) -> web.Response:
        alerts = _postable_alerts(await self._body(request, "alerts"))
        errors = self.am.post_alerts(alerts)
        if errors:
            raise _Problem(400, "; ".join(errors))
        return web.Response(status=200, headers=_HEADERS)

    async def alert_groups(self, request: web.Request) -> web.Response:
        matchers = _filter(request)
        flags = {name: _bool_param(request, name) for name in ("active", "silenced", "inhibited")}
        groups = self.am.groups(matchers, receiver=_receiver(request), **flags)
        return _json([{"alerts": [_alert_json(v) for v in g.alerts], "labels": dict(g.labels),
                       "receiver": {"name": g.receiver}} for g in groups])

    async def get_silences(self, request: web.Request) -> web.Response:
        matchers = _filter(request)
        now = self.am.now()
        silences = [s for s in self.am.list_silences() if _silence_matches_filter(s, matchers)]
        silences.sort(key=lambda s: _silence_sort_key(s, now))
        return _json([_silence_json(s, now) for s in silences])

    async def post_silences(self, request: web.Request) -> web.Response:
        silence = _postable_silence(await self._body(request, "silence"))
        if silence.starts_at >= silence.ends_at:
            raise _Problem(400, "Failed to create silence: start time must be before end time")
        if silence.ends_at < self.am.now():
            raise _Problem(400, "Failed to create silence: end time can't be in the past")
        try:
            silence_id = self.am.set_silence(silence)
        except SilenceNotFound as exc:
            raise _Problem(404, str(exc)) from None
        except InvalidSilence as exc:
            raise _Problem(400, str(exc)) from None
        return _json({"silenceID": silence_id})

    @staticmethod
    def _silence_id(request: web.Request) -> str:
        text = request.match_info["id"]
        try:
            uuid.UUID(text)
        except ValueError:
            raise _invalid(601, f'silenceID in path must be of type strfmt.UUID: "{text}"') from None
        return text

    async def get_silence(self, request: web.Request) -> web.Response:
        silence = self.am.get_silence(self._silence_id(request))
        if silence is None:
            return web.Response(status=404, headers=_HEADERS)
        return _json(_silence_json(silence, self.am.now()))

    async def delete_silence(self, request: web.Request) -> web.Response:
        try:
            self.am.expire_silence(self._silence_id(request))
        except SilenceNotFound:
            return web.Response(status=404, headers=_HEADERS)
        return web.Response(status=200, headers=_HEADERS)

    @staticmethod
    async def _body(request: web.Request, name: str) -> Any:
        raw = await request.read()
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            message = f'parsing {name} body from "" failed, because {exc}'
            raise _Problem(400, {"code": 400, "message": message}) from None


def create_alertmanager_app(alertmanager: Alertmanager) -> web.Application:
    app = web.Application()
    app.add_routes(AlertmanagerAPI(alertmanager).routes())
    return app
