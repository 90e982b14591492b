"""The trace store: what a search finds (OpenSearch's semantics), in which order, what it keeps and drops."""

from __future__ import annotations

import pytest

from pytest_itbench.twin.telemetry.traces import DependencyLink, TraceQuery, TraceQueryError, TraceStore
from tests.telemetry.trace_fixtures import T0, checkout_trace, span, trace, trace_id

US = 1_000_000


class Clock:
    def __init__(self, t: float = T0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def store(*traces, **kw) -> TraceStore:
    s = TraceStore(Clock(T0 + 3600), **kw)
    s.add(traces)
    return s


def found(s: TraceStore, service: str, start: float = T0 - 3600, end: float = T0 + 3600, **kw) -> list[int]:
    """Numbers of the traces a search returns, in the returned order."""
    result = s.find(TraceQuery(service, int(start * US), int(end * US), **kw))
    return [t.key & 0xFFFF for t in result]


def test_search_by_service_and_operation_most_recent_first():
    s = store(checkout_trace(1, T0), checkout_trace(2, T0 + 20), checkout_trace(3, T0 + 10))
    assert found(s, "payment") == [2, 3, 1]
    assert found(s, "frontend", operation="oteldemo.CheckoutService/PlaceOrder") == [2, 3, 1]
    assert found(s, "frontend", operation="oteldemo.PaymentService/Charge") == []  # payment's operation
    assert found(s, "nobody") == []
    assert s.services() == ["checkout", "frontend", "payment"]


def test_order_is_by_the_latest_matching_span_then_trace_id():
    s = store(trace(5, span(5, 1, "a", "op", T0 + 1), span(5, 2, "a", "late", T0 + 30, parent=1)),
              trace(4, span(4, 1, "a", "op", T0 + 20)),
              trace(9, span(9, 1, "a", "op", T0 + 20)))
    assert found(s, "a") == [5, 4, 9]
    assert found(s, "a", operation="op") == [4, 9, 5]  # trace 5's "op" span is its early one


def test_every_condition_holds_on_one_span():
    s = store(checkout_trace(1, T0, payment_fails=True))
    # The payment span has the error; frontend's error spans are not the Charge operation.
    assert found(s, "payment", operation="oteldemo.PaymentService/Charge", tags={"error": "true"}) == [1]
    assert found(s, "frontend", tags={"error": "true", "http.route": "/api/checkout"}) == [1]
    assert found(s, "frontend", tags={"rpc.system": "grpc", "http.route": "/api/checkout"}) == []


@pytest.mark.parametrize("tags, expected", [
    ({"http.status_code": "500"}, [2]),                 # an int attribute, searched as text
    ({"http.status_code": "200"}, [1]),
    ({"http.status_code": "5.."}, [2]),                 # a regular expression over the whole value
    ({"http.status_code": "50"}, []),                    # ... the whole value, not a part of it
    ({"http.method": "POST|PUT"}, [2, 1]),
    ({"error": "true"}, [2]),                            # an ERROR status is stored as error=true
    ({"otel.status_code": "ERROR"}, []),                  # ... and not as otel.status_code (to_dbmodel.go)
    ({"span.kind": "client"}, [2, 1]),
    ({"k8s.pod.name": "frontend-7d9f"}, [2, 1]),         # a process (resource) tag
    ({"service.name": "frontend"}, []),                  # the process's name is not one of its tags
])
def test_tag_filters_on_frontend(tags, expected):
    s = store(checkout_trace(1, T0), checkout_trace(2, T0 + 10, payment_fails=True))
    assert found(s, "frontend", tags=tags) == expected


def test_tag_filters_on_typed_values_status_and_logs():
    s = store(checkout_trace(1, T0), checkout_trace(2, T0 + 10, payment_fails=True),
              trace(3, span(3, 1, "payment", "check", T0 + 20,
                            attributes={"cached": True, "ratio": 3.0, "share": 0.25, "url": "/cart?id=7"})))
    assert found(s, "payment", tags={"otel.status_code": "OK"}) == [1]
    assert found(s, "payment", tags={"otel.status_description": "Payment request failed. Invalid token."}) == [2]
    assert found(s, "payment", tags={"event": "exception"}) == [2]                      # a log field
    assert found(s, "payment", tags={"exception.message": "Invalid token.*"}) == [2]
    assert found(s, "payment", tags={"cached": "true"}) == [3]                         # a bool attribute
    assert found(s, "payment", tags={"ratio": "3"}) == [3]                              # Go writes 3.0 as 3
    assert found(s, "payment", tags={"share": "0.25"}) == [3]
    assert found(s, "payment", tags={"url": "/cart?id=7"}) == [3]        # equal to it, though "?" is an operator
    assert found(s, "payment", tags={"url": "/cart(id"}) == []                          # not an expression, not equal
    assert found(s, "payment", tags={"app.loyalty.level": "gold", "error": "true"}) == [2]


def test_durations_inclusive_in_microseconds():
    s = store(trace(1, span(1, 1, "a", "op", T0, 0.100)), trace(2, span(2, 1, "a", "op", T0 + 1, 0.2005)),
              trace(3, span(3, 1, "a", "op", T0 + 2, 90000.0)))
    assert found(s, "a", duration_min_us=100_000) == [2, 1]            # at most 24 h when only a minimum is given
    assert found(s, "a", duration_min_us=100_001) == [2]
    assert found(s, "a", duration_max_us=200_500) == [2, 1]
    assert found(s, "a", duration_max_us=200_499) == [1]
    assert found(s, "a", duration_min_us=150_000, duration_max_us=100_000 * US) == [3, 2]


def test_start_window_in_whole_milliseconds():
    s = store(trace(1, span(1, 1, "a", "op", T0 + 0.0005)), trace(2, span(2, 1, "a", "op", T0 + 0.001)),
              trace(3, span(3, 1, "a", "op", T0 - 0.001)))
    t0_us = int(T0 * US)
    assert found(s, "a", T0, T0) == [1]                                          # 500 µs is still millisecond 0
    assert [t.key & 0xFFFF for t in s.find(TraceQuery("a", t0_us + 999, t0_us + 999))] == [1]
    assert [t.key & 0xFFFF for t in s.find(TraceQuery("a", t0_us, t0_us + 1000))] == [2, 1]
    with pytest.raises(TraceQueryError, match="^start Time Minimum is above Maximum$"):
        s.find(TraceQuery("a", t0_us + 1, t0_us))


def test_limit_keeps_the_most_recent():
    s = store(*(trace(n, span(n, 1, "a", "op", T0 + n)) for n in range(1, 131)))
    assert found(s, "a", limit=3) == [130, 129, 128]
    assert len(found(s, "a", limit=0)) == 100  # Jaeger's default depth
    assert len(found(s, "a")) == 100


def test_a_trace_arriving_in_batches_is_one_trace():
    first = checkout_trace(1, T0)
    s = store(trace(1, *first.spans[2:]))
    s.add([trace(1, *first.spans[:2])])
    assert len(s) == 1 and s.span_count == 4
    got = s.get(int(trace_id(1), 16))
    assert [x.span_id for x in got.spans] == [f"{n:016x}" for n in (101, 102, 103, 104)]  # in start order
    assert s.get(int(trace_id(2), 16)) is None


def test_operations_with_kinds():
    s = store(checkout_trace(1, T0))
    assert s.operations("frontend") == [("POST /api/checkout", "server"),
                                        ("oteldemo.CheckoutService/PlaceOrder", "client")]
    assert s.operations("frontend", "client") == [("oteldemo.CheckoutService/PlaceOrder", "client")]
    assert s.operations("nobody") == []


def test_oldest_traces_go_when_over_the_span_cap():
    s = store(*(checkout_trace(n, T0 + n) for n in range(1, 6)), max_spans=10)
    assert len(s) == 2 and s.span_count == 8
    assert found(s, "payment") == [5, 4]
    s.add([trace(6, *(span(6, i, "solo", "op", T0 + 6) for i in range(3)))])
    assert found(s, "payment") == [5] and found(s, "solo") == [6] and s.span_count == 7
    s.add([trace(7, *(span(7, i, "solo", "op", T0 + 7) for i in range(9)))])
    assert found(s, "solo") == [7] and s.span_count == 9
    assert s.services() == ["solo"]  # every service of the evicted traces is gone with its last span
    assert s.operations("payment") == []


def test_traces_older_than_the_retention_go():
    clock = Clock(T0)
    s = TraceStore(clock, retention=600)
    s.add([checkout_trace(1, T0 - 700), checkout_trace(2, T0 - 100)])
    assert sorted(t.key & 0xFFFF for t in s.find(TraceQuery("payment", 0, int(T0 * US)))) == [2]
    clock.t = T0 + 550
    s.add([])
    assert len(s) == 0 and s.services() == []


def test_same_additions_same_answers():
    def build() -> list:
        s = store(*(checkout_trace(n, T0 + n % 7, payment_fails=n % 3 == 0) for n in range(40)), max_spans=100)
        result = s.find(TraceQuery("frontend", 0, int(T0 * US) + 10 * US))
        return [(t.key, [x.span_id for x in t.spans]) for t in result]

    first = build()
    assert first == build()
    assert len(first) == 25


def test_dependencies_from_parent_and_child_spans():
    s = store(checkout_trace(1, T0), checkout_trace(2, T0 + 100), checkout_trace(3, T0 + 5000))
    window = s.dependencies(int((T0 - 1) * US), int((T0 + 200) * US))
    # frontend's client span is the parent of checkout's server span; frontend -> frontend is not a dependency.
    assert window == [DependencyLink("checkout", "payment", 2), DependencyLink("frontend", "checkout", 2)]
    assert s.dependencies(int(T0 * US), int((T0 + 0.02) * US)) == [DependencyLink("checkout", "payment", 1),
                                                                    DependencyLink("frontend", "checkout", 1)]
    assert s.dependencies(int((T0 + 6000) * US), int((T0 + 7000) * US)) == []
