"""Hand-built spans and traces for the trace store and Jaeger API tests."""

from __future__ import annotations

from pytest_itbench.twin.telemetry.spans import Span, Trace

T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z, a whole second


def trace_id(n: int) -> str:
    """A 32-digit id whose high half is not zero (Jaeger prints those with all 32 digits)."""
    return f"{0xabc0000000000000 + n:016x}{n:016x}"


def span(trace: int, span_id: int, service: str, operation: str, start: float, duration: float = 0.01, *,
         parent: int | None = None, kind: str = "SPAN_KIND_SERVER", status: str = "STATUS_CODE_UNSET",
         message: str = "", attributes: dict | None = None, resource: dict | None = None,
         events: list | None = None) -> Span:
    return Span(trace_id(trace), f"{span_id:016x}", None if parent is None else f"{parent:016x}", service, operation,
                kind, start, duration, status, message, dict(attributes or {}),
                {"service.name": service, **(resource or {})}, list(events or ()))


def trace(n: int, *spans: Span) -> Trace:
    return Trace(trace_id(n), list(spans))


def checkout_trace(n: int, start: float, *, payment_fails: bool = False) -> Trace:
    """frontend -> checkout -> payment, with client spans on the caller's side, as the OpenTelemetry Demo traces."""
    base = n * 100
    error = "STATUS_CODE_ERROR" if payment_fails else "STATUS_CODE_UNSET"
    return trace(
        n,
        span(n, base + 1, "frontend", "POST /api/checkout", start, 0.30, status=error,
             attributes={"http.method": "POST", "http.route": "/api/checkout",
                         "http.status_code": 500 if payment_fails else 200},
             resource={"k8s.pod.name": "frontend-7d9f", "k8s.namespace.name": "shop"}),
        span(n, base + 2, "frontend", "oteldemo.CheckoutService/PlaceOrder", start + 0.01, 0.28, parent=base + 1,
             kind="SPAN_KIND_CLIENT", status=error, attributes={"rpc.system": "grpc"},
             resource={"k8s.pod.name": "frontend-7d9f", "k8s.namespace.name": "shop"}),
        span(n, base + 3, "checkout", "oteldemo.CheckoutService/PlaceOrder", start + 0.02, 0.25, parent=base + 2,
             status=error, attributes={"rpc.system": "grpc"},
             resource={"k8s.pod.name": "checkout-5c4b", "k8s.namespace.name": "shop"}),
        span(n, base + 4, "payment", "oteldemo.PaymentService/Charge", start + 0.05, 0.10, parent=base + 3,
             status="STATUS_CODE_ERROR" if payment_fails else "STATUS_CODE_OK",
             message="Payment request failed. Invalid token." if payment_fails else "",
             attributes={"rpc.system": "grpc", "app.loyalty.level": "gold"},
             resource={"k8s.pod.name": "payment-6f8d", "k8s.namespace.name": "shop"},
             events=[{"name": "exception", "time": start + 0.14,
                      "attributes": {"exception.type": "Error",
                                     "exception.message": "Invalid token. app.loyalty.level=gold"}}]
             if payment_fails else []),
    )
