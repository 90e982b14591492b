"""Jaeger's query API over the trace store: routes, parameters, the envelope, span JSON and error answers."""

from __future__ import annotations

import asyncio
import base64
import json
from urllib.parse import quote

import pytest
from aiohttp.test_utils import TestClient, TestServer

from pytest_itbench.twin.telemetry.jaeger_api import create_jaeger_app
from pytest_itbench.twin.telemetry.traces import TraceStore
from tests.telemetry.trace_fixtures import T0, checkout_trace, span, trace, trace_id

NOW = T0 + 600
US = 1_000_000


class Client:
    """A started test server answering (status, content type, body) from synchronous tests."""

    def __init__(self, app):
        self.loop = asyncio.new_event_loop()
        self.client = TestClient(TestServer(app), loop=self.loop)
        self.loop.run_until_complete(self.client.start_server())

    def raw(self, path: str) -> tuple[int, str, bytes]:
        async def go():
            resp = await self.client.get(path)
            return resp.status, resp.headers.get("Content-Type", ""), await resp.read()

        return self.loop.run_until_complete(go())

    def get(self, path: str) -> tuple[int, dict]:
        status, _, body = self.raw(path)
        return status, json.loads(body)

    def close(self):
        self.loop.run_until_complete(self.client.close())
        self.loop.close()


@pytest.fixture
def store():
    s = TraceStore(lambda: NOW)
    s.add([checkout_trace(1, T0, payment_fails=True), checkout_trace(2, T0 + 60), checkout_trace(3, T0 + 120)])
    return s


@pytest.fixture
def api(store):
    client = Client(create_jaeger_app(store, now=lambda: NOW))
    yield client
    client.close()


def ok(data, total=0, errors=None) -> dict:
    return {"data": data, "total": total, "limit": 0, "offset": 0, "errors": errors}


def refused(code: int, msg: str) -> dict:
    return {"data": None, "total": 0, "limit": 0, "offset": 0, "errors": [{"code": code, "msg": msg}]}


def numbers(body: dict) -> list[int]:
    return [int(t["traceID"], 16) & 0xFFFF for t in body["data"]]


def tags(query: dict) -> str:
    return quote(json.dumps(query))


# ---- services and operations ------------------------------------------------------------------------------

def test_services(api):
    assert api.get("/api/services") == (200, ok(["checkout", "frontend", "payment"], 3))


def test_empty_store_lists_no_services():
    client = Client(create_jaeger_app(TraceStore(lambda: NOW), now=lambda: NOW))
    try:
        assert client.get("/api/services") == (200, ok([], 0))
    finally:
        client.close()


def test_operations_of_a_service(api):
    assert api.get("/api/services/frontend/operations") == (
        200, ok(["POST /api/checkout", "oteldemo.CheckoutService/PlaceOrder"], 2))
    assert api.get("/api/services/nobody/operations") == (200, ok(None, 0))  # Go's nil slice
    assert api.get("/api/operations?service=frontend") == (200, ok(
        [{"name": "POST /api/checkout", "spanKind": "server"},
         {"name": "oteldemo.CheckoutService/PlaceOrder", "spanKind": "client"}], 2))
    assert api.get("/api/operations?service=frontend&spanKind=client") == (200, ok(
        [{"name": "oteldemo.CheckoutService/PlaceOrder", "spanKind": "client"}], 1))


def test_service_in_the_path_is_query_unescaped_again():
    store = TraceStore(lambda: NOW)
    store.add([trace(1, span(1, 1, "web shop", "GET /", T0))])
    client = Client(create_jaeger_app(store, now=lambda: NOW))
    try:
        assert client.get("/api/services/web%20shop/operations") == (200, ok(["GET /"], 1))
        assert client.get("/api/services/web+shop/operations") == (200, ok(["GET /"], 1))  # "+" is a space
        assert client.get("/api/services/web%25zz/operations") == (200, ok(None, 0))  # "%zz" fails: no service
    finally:
        client.close()


def test_operations_need_a_service(api):
    status, content_type, body = api.raw("/api/operations")
    assert (status, content_type) == (400, "text/plain; charset=utf-8")
    assert body.endswith(b"}\n")  # http.Error's newline
    assert json.loads(body) == refused(400, "parameter 'service' is required")


# ---- the span JSON -------------------------------------------------------------------------------------------

def _tag(key, value, kind="string"):
    return {"key": key, "type": kind, "value": value}


def test_a_trace_in_jaeger_json(api):
    status, body = api.get("/api/traces/" + trace_id(1))
    assert status == 200
    tid = "abc00000000000010000000000000001"
    error = [_tag("otel.status_code", "ERROR"), _tag("error", True, "bool")]

    def one(span_id, parent, operation, start_us, duration_us, tag_list, process, logs=()):
        return {"traceID": tid, "spanID": f"{span_id:016x}", "operationName": operation,
                "references": [] if parent is None else [{"refType": "CHILD_OF", "traceID": tid,
                                                          "spanID": f"{parent:016x}"}],
                "startTime": 1_700_000_000_000_000 + start_us, "duration": duration_us, "tags": tag_list,
                "logs": list(logs), "processID": process, "warnings": None}

    def process(service, pod):
        return {"serviceName": service, "tags": [_tag("k8s.namespace.name", "shop"), _tag("k8s.pod.name", pod)]}

    assert body == ok([{
        "traceID": tid,
        "spans": [
            one(101, None, "POST /api/checkout", 0, 300_000,
                [_tag("http.method", "POST"), _tag("http.route", "/api/checkout"),
                 _tag("http.status_code", 500, "int64"), _tag("span.kind", "server"), *error], "p1"),
            one(102, 101, "oteldemo.CheckoutService/PlaceOrder", 10_000, 280_000,
                [_tag("rpc.system", "grpc"), _tag("span.kind", "client"), *error], "p1"),
            one(103, 102, "oteldemo.CheckoutService/PlaceOrder", 20_000, 250_000,
                [_tag("rpc.system", "grpc"), _tag("span.kind", "server"), *error], "p2"),
            one(104, 103, "oteldemo.PaymentService/Charge", 50_000, 100_000,
                [_tag("app.loyalty.level", "gold"), _tag("rpc.system", "grpc"), _tag("span.kind", "server"), *error,
                 _tag("otel.status_description", "Payment request failed. Invalid token.")], "p3",
                [{"timestamp": 1_700_000_000_140_000,
                  "fields": [_tag("event", "exception"),
                             _tag("exception.message", "Invalid token. app.loyalty.level=gold"),
                             _tag("exception.type", "Error")]}]),
        ],
        "processes": {"p1": process("frontend", "frontend-7d9f"), "p2": process("checkout", "checkout-5c4b"),
                      "p3": process("payment", "payment-6f8d")},
        "warnings": None,
    }])


def test_values_written_as_go_writes_them():
    store = TraceStore(lambda: NOW)
    store.add([trace(7, span(7, 1, "web", "GET /a?b=<c>&d", T0, attributes={
        "big": 2 ** 60, "whole": 3.0, "huge": 1e21, "tiny": 1e-7, "small": 1e-6, "list": ["a", 1], "raw": b"\x01\xff"}),
        span(7, 2, "web", "child", T0, status="STATUS_CODE_OK", parent=1, kind="SPAN_KIND_INTERNAL"))])
    client = Client(create_jaeger_app(store, now=lambda: NOW))
    try:
        _, _, body = client.raw("/api/traces/" + trace_id(7))
    finally:
        client.close()
    assert b'"operationName":"GET /a?b=\\u003cc\\u003e\\u0026d"' in body  # Go escapes HTML characters
    assert (b'"tags":[{"key":"big","type":"int64","value":"1152921504606846976"},'  # beyond JavaScript's integers
            b'{"key":"huge","type":"float64","value":1e+21},'
            b'{"key":"list","type":"string","value":"[\\"a\\",1]"},'
            b'{"key":"raw","type":"binary","value":"Af8="},'
            b'{"key":"small","type":"float64","value":0.000001},'
            b'{"key":"tiny","type":"float64","value":1e-7},'
            b'{"key":"whole","type":"float64","value":3},'
            b'{"key":"span.kind","type":"string","value":"server"}]') in body
    assert (b'"tags":[{"key":"span.kind","type":"string","value":"internal"},'
            b'{"key":"otel.status_code","type":"string","value":"OK"}]') in body


# ---- search ----------------------------------------------------------------------------------------------

def test_search_parameters(api):
    assert numbers(api.get("/api/traces?service=payment")[1]) == [3, 2, 1]
    assert api.get("/api/traces?service=payment")[1]["errors"] is None
    assert numbers(api.get("/api/traces?service=payment&limit=2")[1]) == [3, 2]
    assert numbers(api.get(f"/api/traces?service=payment&tags={tags({'error': 'true'})}")[1]) == [1]
    assert numbers(api.get("/api/traces?service=payment&tag=error:true")[1]) == [1]
    assert numbers(api.get(f"/api/traces?service=frontend&tags={tags({'http.status_code': '200'})}")[1]) == [3, 2]
    assert numbers(api.get("/api/traces?service=frontend&operation=POST%20/api/checkout&minDuration=300ms")[1]) == [
        3, 2, 1]
    assert numbers(api.get("/api/traces?service=frontend&operation=POST%20/api/checkout&minDuration=0.3001s")[1]) == []
    assert numbers(api.get("/api/traces?service=payment&maxDuration=99ms")[1]) == []
    assert numbers(api.get("/api/traces?service=payment&minDuration=100ms&maxDuration=1.2s")[1]) == [3, 2, 1]
    window = f"start={int((T0 + 30) * US)}&end={int((T0 + 90) * US)}"
    assert numbers(api.get(f"/api/traces?service=payment&{window}")[1]) == [2]
    assert numbers(api.get(f"/api/traces?service=payment&{window}&lookback=custom")[1]) == [2]  # the UI's own


def test_search_looks_back_two_days_on_the_clock():
    store = TraceStore(lambda: T0, retention=3 * 24 * 3600)
    store.add([trace(1, span(1, 1, "a", "op", T0 - 47 * 3600)), trace(2, span(2, 1, "a", "op", T0 - 49 * 3600)),
               trace(3, span(3, 1, "a", "op", T0 + 1))])
    client = Client(create_jaeger_app(store, now=lambda: T0))
    try:
        assert numbers(client.get("/api/traces?service=a")[1]) == [1]
    finally:
        client.close()


@pytest.mark.parametrize("query, status, message", [
    ("", 400, "parameter 'service' is required"),
    ("service=a&start=yesterday", 400, "unable to parse param 'start': strconv.ParseInt: parsing \"yesterday\": "
                                       "invalid syntax"),
    ("service=a&end=1.5", 400, "unable to parse param 'end': strconv.ParseInt: parsing \"1.5\": invalid syntax"),
    ("service=a&limit=ten", 400, "strconv.ParseInt: parsing \"ten\": invalid syntax"),
    ("service=a&limit=3000000000", 400, "strconv.ParseInt: parsing \"3000000000\": value out of range"),
    ("service=a&minDuration=100", 400, "unable to parse param 'minDuration': time: missing unit in duration \"100\""),
    ("service=a&maxDuration=1x", 400, "unable to parse param 'maxDuration': time: unknown unit \"x\" in duration "
                                      "\"1x\""),
    ("service=a&minDuration=2s&maxDuration=1s", 400, "'maxDuration' should be greater than 'minDuration'"),
    ("service=a&tag=error", 400, "malformed 'tag' parameter, expecting key:value, received: error"),
    ("service=a&tags=%7B%22error%22%3Atrue%7D", 400, "malformed 'tags' parameter, cannot unmarshal JSON: json: "
                                                     "cannot unmarshal bool into Go value of type string"),
    ("service=a&raw=yes", 400, "unable to parse param 'raw': strconv.ParseBool: parsing \"yes\": invalid syntax"),
    ("traceID=xyz", 400, "cannot parse traceID param: strconv.ParseUint: parsing \"xyz\": invalid syntax"),
    ("service=a&start=2000000&end=1000000", 500, "start Time Minimum is above Maximum"),
])
def test_search_refusals(api, query, status, message):
    assert api.get("/api/traces?" + query) == (status, refused(status, message))


def test_search_by_trace_ids(api):
    status, body = api.get(f"/api/traces?traceID={trace_id(2)}&traceID={trace_id(9)}&traceID={trace_id(2)}")
    assert status == 200
    assert numbers(body) == [2]
    assert body["errors"] == [{"msg": "trace not found", "traceID": trace_id(9)}]


# ---- one trace -------------------------------------------------------------------------------------------------

def test_trace_by_id_in_any_accepted_form(api):
    plain = trace_id(3)
    raw = bytes.fromhex(plain)
    for form in (plain, plain.upper(), base64.b64encode(raw).decode(),
                 base64.urlsafe_b64encode(raw).decode().rstrip("=")):
        status, body = api.get("/api/traces/" + quote(form, safe=""))
        assert status == 200 and numbers(body) == [3], form
    assert api.get(f"/api/traces/{plain}?start=1&end=2&raw=true")[0] == 200


def test_unknown_and_malformed_trace_ids(api):
    assert api.get("/api/traces/" + trace_id(9)) == (404, refused(404, "trace not found"))
    assert api.get("/api/traces/" + "a" * 33) == (400, refused(400, "TraceID cannot be longer than 32 hex characters: "
                                                                     + "a" * 33))
    assert api.get("/api/traces/nothex") == (400, refused(400, "invalid length for TraceID"))
    assert api.get(f"/api/traces/{trace_id(3)}?start=soon") == (
        400, refused(400, "unable to parse param 'start': strconv.ParseInt: parsing \"soon\": invalid syntax"))


# ---- dependencies ---------------------------------------------------------------------------------------------

def test_dependencies(api):
    links = [{"parent": "checkout", "child": "payment", "callCount": 3},
             {"parent": "frontend", "child": "checkout", "callCount": 3}]
    assert api.get("/api/dependencies") == (200, ok(links))  # the last day up to the clock's now
    end_ms = int((T0 + 90) * 1000)
    assert api.get(f"/api/dependencies?endTs={end_ms}&lookback=60000") == (200, ok(
        [{"parent": "checkout", "child": "payment", "callCount": 1},
         {"parent": "frontend", "child": "checkout", "callCount": 1}]))
    assert api.get("/api/dependencies?service=payment") == (200, ok(links[:1]))
    assert api.get("/api/dependencies?endTs=now") == (
        400, refused(400, "unable to parse param 'endTs': strconv.ParseInt: parsing \"now\": invalid syntax"))
    assert api.get("/api/dependencies?lookback=1h") == (
        400, refused(400, "unable to parse param 'lookback': strconv.ParseInt: parsing \"1h\": invalid syntax"))
