"""The Prometheus HTTP API: envelopes, parameters, error types and codes, series, labels, metadata, rules."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp.test_utils import TestClient, TestServer

from pytest_itbench.twin.telemetry.metadata import MetadataRegistry
from pytest_itbench.twin.telemetry.prometheus_api import create_app, rfc3339
from pytest_itbench.twin.telemetry.promql import Engine
from pytest_itbench.twin.telemetry.rule_status import (ActiveAlert, AlertingRuleStatus, RecordingRuleStatus,
                                                       RuleGroupStatus)
from pytest_itbench.twin.telemetry.tsdb import TSDB

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z


class Rules:
    def rule_groups(self):
        firing = ActiveAlert({"alertname": "HighErrorRate", "service": "cart", "severity": "critical"},
                             {"summary": "cart errors"}, "firing", NOW - 300, 0.25)
        return [RuleGroupStatus("sre", "/etc/prometheus/rules/sre.yaml", [
            AlertingRuleStatus("HighErrorRate", 'sum by (service) (rate(errors_total[5m])) > 0.1', 60.0,
                               {"severity": "critical"}, {"summary": "{{ $labels.service }} errors"}, [firing],
                               state="firing", health="ok", evaluation_time=0.002, last_evaluation=NOW - 15),
            RecordingRuleStatus("service:errors:rate5m", "sum by (service) (rate(errors_total[5m]))",
                                health="ok", last_evaluation=NOW - 15),
        ], interval=15.0, last_evaluation=NOW - 15)]


class API:
    """A started test server; call .get/.post from synchronous tests."""

    def __init__(self, app):
        self.loop = asyncio.new_event_loop()
        self.client = TestClient(TestServer(app), loop=self.loop)
        self.loop.run_until_complete(self.client.start_server())

    def request(self, method: str, path: str, **kw):
        async def go():
            resp = await self.client.request(method, path, **kw)
            if resp.content_type == "application/json":
                return resp.status, await resp.json()
            return resp.status, await resp.text()

        return self.loop.run_until_complete(go())

    def get(self, path: str, **params):
        return self.request("GET", path, params=params)

    def post(self, path: str, **form):
        return self.request("POST", path, data=form)

    def close(self):
        self.loop.run_until_complete(self.client.close())
        self.loop.close()


@pytest.fixture
def tsdb():
    db = TSDB()
    for i in range(21):  # ten minutes at 30 s
        t = NOW - 600 + i * 30
        db.append({"__name__": "up", "job": "api", "instance": "a:80"}, t, 1.0)
        db.append({"__name__": "up", "job": "db", "instance": "b:5432"}, t, 0.0)
        db.append({"__name__": "errors_total", "service": "cart"}, t, i * 3.0)
        db.append({"__name__": "temperature", "room": "1"}, t, 20.0 + i)
    return db


@pytest.fixture
def api(tsdb):
    registry = MetadataRegistry()
    registry.register("up", "gauge", "Whether the target is up.")
    registry.register("errors_total", "counter", "Errors served.")
    client = API(create_app(tsdb, Engine(tsdb), now=lambda: NOW, metadata=registry, rules=Rules()))
    yield client
    client.close()


# ---- /api/v1/query ------------------------------------------------------------------------------------

def test_instant_query_envelope(api):
    status, body = api.get("/api/v1/query", query='up{job="api"}', time=str(NOW))
    assert status == 200
    assert body == {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"__name__": "up", "instance": "a:80", "job": "api"}, "value": [1700000000, "1"]}]}}


def test_time_defaults_to_the_twin_clock(api):
    _, body = api.get("/api/v1/query", query="time()")
    assert body["data"] == {"resultType": "scalar", "result": [1700000000, "1700000000"]}


def test_time_as_rfc3339_and_with_milliseconds(api):
    _, body = api.get("/api/v1/query", query="time()", time="2023-11-14T22:13:20.5Z")
    assert body["data"]["result"] == [1700000000.5, "1700000000.5"]
    _, body = api.get("/api/v1/query", query="time()", time="1700000000.1234")
    assert body["data"]["result"] == [1700000000.123, "1700000000.123"]


def test_post_form_is_accepted_and_wins_over_the_url(api):
    status, body = api.request("POST", "/api/v1/query", params={"query": "up"},
                               data={"query": "vector(7)", "time": str(NOW)})
    assert status == 200
    assert body["data"]["result"] == [{"metric": {}, "value": [1700000000, "7"]}]


def test_string_and_special_values(api):
    _, body = api.get("/api/v1/query", query='"hello"')
    assert body["data"] == {"resultType": "string", "result": [1700000000, "hello"]}
    _, body = api.get("/api/v1/query", query="vector(1/0) or label_replace(vector(0/0), \"a\", \"b\", \"\", \"\")")
    values = sorted(r["value"][1] for r in body["data"]["result"])
    assert values == ["+Inf", "NaN"]
    _, body = api.get("/api/v1/query", query="1e21")
    assert body["data"]["result"][1] == "1000000000000000000000"


def test_instant_query_of_a_range_vector(api):
    _, body = api.get("/api/v1/query", query='up{job="api"}[1m]')
    assert body["data"]["resultType"] == "matrix"
    assert body["data"]["result"][0]["values"] == [[1699999970, "1"], [1700000000, "1"]]


def test_lookback_delta_parameter(api, tsdb):
    _, body = api.get("/api/v1/query", query='up{job="api"}', time=str(NOW + 60))
    assert len(body["data"]["result"]) == 1
    _, body = api.get("/api/v1/query", query='up{job="api"}', time=str(NOW + 60), lookback_delta="30s")
    assert body["data"]["result"] == []


def test_limit_truncates_with_a_warning(api):
    _, body = api.get("/api/v1/query", query="up", limit="1")
    assert len(body["data"]["result"]) == 1
    assert body["warnings"] == ["results truncated due to limit"]


def test_annotations_are_warnings_and_infos(api):
    _, body = api.get("/api/v1/query", query="rate(temperature[5m])")
    assert body["infos"] == ['PromQL info: metric might not be a counter, name does not end in '
                             '_total/_sum/_count/_bucket: "temperature" (1:6)']
    assert "warnings" not in body
    _, body = api.get("/api/v1/query", query="quantile(2, up)")
    assert body["warnings"] == ["PromQL warning: quantile value should be between 0 and 1, got 2 (1:10)"]


# ---- /api/v1/query_range --------------------------------------------------------------------------------

def test_range_query(api):
    params = {"query": "sum(up)", "start": str(NOW - 120), "end": str(NOW), "step": "1m"}
    status, body = api.get("/api/v1/query_range", **params)
    assert status == 200
    assert body["data"] == {"resultType": "matrix", "result": [
        {"metric": {}, "values": [[1699999880, "1"], [1699999940, "1"], [1700000000, "1"]]}]}
    _, same = api.post("/api/v1/query_range", **{**params, "step": "60"})
    assert same == body


def test_range_query_of_errors_rate(api):
    _, body = api.get("/api/v1/query_range", query="rate(errors_total[5m])", start=str(NOW - 60), end=str(NOW),
                      step="30s")
    assert [v for _, v in body["data"]["result"][0]["values"]] == ["0.1", "0.1", "0.1"]


@pytest.mark.parametrize("params, message", [
    ({"query": "up"}, 'invalid parameter "start": cannot parse "" to a valid timestamp'),
    ({"query": "up", "start": "x", "end": "1", "step": "1"}, 'invalid parameter "start": cannot parse "x" to a valid timestamp'),
    ({"query": "up", "start": "10", "end": "5", "step": "1"}, 'invalid parameter "end": end timestamp must not be before start time'),
    ({"query": "up", "start": "0", "end": "5", "step": "0"}, 'invalid parameter "step": zero or negative query resolution step widths are not accepted. Try a positive integer'),
    ({"query": "up", "start": "0", "end": "5", "step": "fast"}, 'invalid parameter "step": cannot parse "fast" to a valid duration'),
    ({"query": "up", "start": "0", "end": "86400", "step": "1"}, "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"),
    ({"query": "up[5m]", "start": "0", "end": "5", "step": "1"}, 'invalid parameter "query": invalid expression type "range vector" for range query, must be Scalar or instant Vector'),
])
def test_range_query_bad_data(api, params, message):
    status, body = api.get("/api/v1/query_range", **params)
    assert status == 400
    assert body == {"status": "error", "errorType": "bad_data", "error": message}


# ---- errors ------------------------------------------------------------------------------------------------

def test_parse_error_is_bad_data(api):
    status, body = api.get("/api/v1/query", query="rate(up)")
    assert status == 400
    assert body["errorType"] == "bad_data"
    assert body["error"] == ('invalid parameter "query": parse error: expected type range vector in call to '
                             'function "rate", got instant vector')


def test_empty_query_is_bad_data(api):
    status, body = api.get("/api/v1/query")
    assert (status, body["error"]) == (400, 'invalid parameter "query": parse error: no expression found in input')


def test_bad_time_and_limit(api):
    status, body = api.get("/api/v1/query", query="up", time="yesterday")
    assert (status, body["error"]) == (400, 'invalid parameter "time": invalid time value for \'time\': '
                                            'cannot parse "yesterday" to a valid timestamp')
    status, body = api.get("/api/v1/query", query="up", limit="-1")
    assert (status, body["error"]) == (400, 'invalid parameter "limit": limit must be non-negative')


def test_execution_error_is_422(api):
    status, body = api.get("/api/v1/query", query='label_join(label_join(up, "job", "", "x"), "instance", "", "x")')
    assert status == 422
    assert body == {"status": "error", "errorType": "execution",
                    "error": "vector cannot contain metrics with the same labelset"}
    status, body = api.get("/api/v1/query", query="up / on() up")
    assert status == 422
    assert body["errorType"] == "execution"
    assert body["error"].startswith("found duplicate series for the match group {} on the right hand-side")


def test_timeout_is_503(api):
    status, body = api.get("/api/v1/query", query="up", timeout="0.000000001")
    assert status == 503
    assert body == {"status": "error", "errorType": "timeout", "error": "query timed out in expression evaluation"}


def test_unknown_path_and_method(api):
    assert api.get("/api/v1/nope")[0] == 404
    assert api.request("PUT", "/api/v1/query")[0] == 405


# ---- series, labels, values, metadata ----------------------------------------------------------------------

def test_series(api):
    status, body = api.get("/api/v1/series", **{"match[]": "up"})
    assert status == 200
    assert body["data"] == [{"__name__": "up", "instance": "a:80", "job": "api"},
                            {"__name__": "up", "instance": "b:5432", "job": "db"}]
    _, body = api.request("GET", "/api/v1/series", params=[("match[]", 'up{job="db"}'), ("match[]", "temperature")])
    assert body["data"] == [{"__name__": "temperature", "room": "1"},
                            {"__name__": "up", "instance": "b:5432", "job": "db"}]


def test_series_time_range_and_limit(api):
    _, body = api.get("/api/v1/series", **{"match[]": "up", "start": str(NOW + 3600)})
    assert body["data"] == []
    _, body = api.get("/api/v1/series", **{"match[]": "up", "limit": "1"})
    assert len(body["data"]) == 1 and body["warnings"] == ["results truncated due to limit"]


def test_series_errors(api):
    status, body = api.get("/api/v1/series")
    assert (status, body["error"]) == (400, "no match[] parameter provided")
    status, body = api.get("/api/v1/series", **{"match[]": "up{"})
    assert status == 400 and body["error"].startswith('invalid parameter "match[]": parse error')


def test_labels(api):
    _, body = api.get("/api/v1/labels")
    assert body["data"] == ["__name__", "instance", "job", "room", "service"]
    _, body = api.post("/api/v1/labels", **{"match[]": "temperature"})
    assert body["data"] == ["__name__", "room"]


def test_label_values(api):
    _, body = api.get("/api/v1/label/job/values")
    assert body == {"status": "success", "data": ["api", "db"]}
    _, body = api.get("/api/v1/label/__name__/values")
    assert body["data"] == ["errors_total", "temperature", "up"]
    _, body = api.get("/api/v1/label/job/values", **{"match[]": 'up{instance="b:5432"}'})
    assert body["data"] == ["db"]
    _, body = api.get("/api/v1/label/nothing/values")
    assert body["data"] == []


def test_metadata(api):
    _, body = api.get("/api/v1/metadata")
    assert body["data"] == {"up": [{"type": "gauge", "help": "Whether the target is up.", "unit": ""}],
                            "errors_total": [{"type": "counter", "help": "Errors served.", "unit": ""}]}
    _, body = api.get("/api/v1/metadata", metric="errors_total")
    assert list(body["data"]) == ["errors_total"]
    _, body = api.get("/api/v1/metadata", limit="1")
    assert len(body["data"]) == 1
    status, body = api.get("/api/v1/metadata", limit="many")
    assert (status, body["error"]) == (400, "limit must be a number")


# ---- rules, alerts, status ---------------------------------------------------------------------------------

def test_rules(api):
    _, body = api.get("/api/v1/rules")
    group = body["data"]["groups"][0]
    assert group["name"] == "sre" and group["interval"] == 15.0
    assert group["lastEvaluation"] == "2023-11-14T22:13:05Z"
    alerting, recording = group["rules"]
    assert alerting["type"] == "alerting" and alerting["state"] == "firing" and alerting["duration"] == 60.0
    assert alerting["alerts"][0] == {"labels": {"alertname": "HighErrorRate", "service": "cart",
                                                "severity": "critical"},
                                     "annotations": {"summary": "cart errors"}, "state": "firing",
                                     "activeAt": "2023-11-14T22:08:20Z", "value": "2.5e-01"}
    assert recording == {"name": "service:errors:rate5m", "query": "sum by (service) (rate(errors_total[5m]))",
                         "labels": {}, "health": "ok", "evaluationTime": 0.0,
                         "lastEvaluation": "2023-11-14T22:13:05Z", "type": "recording"}
    _, body = api.get("/api/v1/rules", type="record")
    assert [r["type"] for r in body["data"]["groups"][0]["rules"]] == ["recording"]
    _, body = api.get("/api/v1/rules", exclude_alerts="true", type="alert")
    assert body["data"]["groups"][0]["rules"][0]["alerts"] is None
    status, body = api.get("/api/v1/rules", type="silly")
    assert (status, body["error"]) == (400, 'invalid parameter "type": not supported value "silly"')


def test_alerts(api):
    _, body = api.get("/api/v1/alerts")
    assert [a["labels"]["alertname"] for a in body["data"]["alerts"]] == ["HighErrorRate"]


def test_rules_without_a_provider(tsdb):
    client = API(create_app(tsdb, Engine(tsdb), now=lambda: NOW))
    try:
        assert client.get("/api/v1/rules")[1]["data"] == {"groups": []}
        assert client.get("/api/v1/alerts")[1]["data"] == {"alerts": []}
    finally:
        client.close()


def test_buildinfo_and_health(api):
    _, body = api.get("/api/v1/status/buildinfo")
    assert body["data"]["version"].startswith("3.")
    assert api.get("/-/healthy") == (200, "Prometheus Server is Healthy.\n")
    assert api.get("/-/ready") == (200, "Prometheus Server is Ready.\n")
    assert api.request("HEAD", "/-/ready")[0] == 200


def test_rfc3339():
    assert rfc3339(None) == "0001-01-01T00:00:00Z"
    assert rfc3339(1.25) == "1970-01-01T00:00:01.25Z"
