"""Sampled traces: a few whole requests per step, walked through the same routes and outcomes as the metrics.

Each step, a handful of root requests (a load generator's task, a consumer's message) are drawn
in proportion to their counts, with a preference for a failing one when anything fails, so an
agent looking for the failing span finds it. A walk decides at every step what the aggregate
model gives as probabilities: the operation's own failure, each call's count, the hop taken, the
callee's outcome (recursively), the network's loss and delay, the deadline. Spans carry the
attributes the demo's instrumentations set and the pod's Kubernetes resource attributes.
"""

from __future__ import annotations

import math
import random
import weakref

from ..telemetry.spans import Span, Trace, TraceSink
from .errors import ErrorText, client_error, client_view
from .instances import Instance
from .outcomes import LOSS_FAILS_AFTER, NETWORK_RTT, CallPlan, Outcome, Outcomes, peer_fields, wrap_error
from .sheet import GRPC_CODES

KINDS = {"server": "SPAN_KIND_SERVER", "consumer": "SPAN_KIND_CONSUMER", "internal": "SPAN_KIND_INTERNAL",
         "client": "SPAN_KIND_CLIENT", "producer": "SPAN_KIND_PRODUCER"}
FAILURE_TRIES = 12


class TraceSampler:
    def __init__(self, sink: TraceSink, rng: random.Random, per_step: int = 1):
        self.sink = sink
        self.rng = rng
        self.per_step = per_step  # plus one failing request, when requests fail
        self._resources: weakref.WeakKeyDictionary[Instance, dict] = weakref.WeakKeyDictionary()

    def sample(self, roots: list[tuple[Outcome, float]], outcomes: Outcomes, start: float, end: float) -> None:
        roots = [(o, n) for o, n in roots if n > 0]
        if not roots:
            return
        traces = []
        for _ in range(self.per_step):
            traces.append(self._trace(self._pick(roots), outcomes, self._when(start, end))[0])
        # Requests whose trace holds an error span: failed ones, and those whose optional calls failed (an
        # EmptyCart that checkout ignores), anywhere down the call graph.
        memo: dict[int, float] = {}
        failing = [(o, n * w) for o, n in roots if (w := _erring(o, outcomes, memo)) > 0]
        if sum(w for _, w in failing) > 0:
            at = self._when(start, end)
            for _ in range(FAILURE_TRIES):  # draw until the walk fails, so the failure has a trace
                trace, error = self._trace(self._pick(failing), outcomes, at)
                if error is not None or any(s.status_code == "STATUS_CODE_ERROR" for s in trace.spans):
                    traces.append(trace)
                    break
        self.sink.add(traces)

    def _when(self, start: float, end: float) -> float:
        return start + (end - start) * self.rng.random()

    def _pick(self, weighted: list[tuple[Outcome, float]]) -> Outcome:
        total = sum(w for _, w in weighted)
        pick = self.rng.random() * total
        for outcome, weight in weighted:
            pick -= weight
            if pick <= 0:
                return outcome
        return weighted[-1][0]

    def _trace(self, root: Outcome, outcomes: Outcomes, at: float) -> tuple[Trace, ErrorText | None]:
        walk = _Walk(self.rng, outcomes, f"{self.rng.getrandbits(128):032x}", self._resources)
        _, error = walk.operation(root, at, None)
        walk.spans.sort(key=lambda s: s.start)
        return Trace(walk.trace_id, walk.spans), error


def _erring(outcome: Outcome, outcomes: Outcomes, memo: dict[int, float]) -> float:
    """Roughly, the share of an operation's requests whose trace holds an error span (a weight, capped at 1)."""
    found = memo.get(id(outcome))
    if found is not None:
        return found
    memo[id(outcome)] = 0.0  # a cycle adds nothing
    share = 1.0 - outcome.ok
    for plan in outcome.calls:
        failing = 1.0 - plan.ok
        for callee, delivered in plan.deliveries:
            failing += delivered * _erring(outcomes.of(callee, plan.call.operation), outcomes, memo)
        share += plan.attempts * failing
    memo[id(outcome)] = share = min(share, 1.0)
    return share


class _Walk:
    def __init__(self, rng: random.Random, outcomes: Outcomes, trace_id: str, resources: dict):
        self.rng = rng
        self.outcomes = outcomes
        self.trace_id = trace_id
        self.resources = resources  # instance -> its resource attributes, kept by the sampler
        self.spans: list[Span] = []

    def operation(self, outcome: Outcome, start: float, parent: str | None) -> tuple[float, ErrorText | None]:
        op, rng = outcome.op, self.rng
        span_id = self._id()
        own = outcome.own_latency.sample(rng)
        error = self._own_failure(outcome)
        cursor = start + own / 2
        if error is None:
            for plan in outcome.calls:
                cursor, failed = self._calls(plan, cursor, span_id if op.span else parent)
                if failed is not None and not plan.call.optional:
                    error = wrap_error(op, plan.call, failed)
                    break
        end = cursor + own / 2
        if op.span:
            self.spans.append(self._server_span(outcome, span_id, parent, start, end - start, error))
        return end - start, error

    def _own_failure(self, outcome: Outcome) -> ErrorText | None:
        pick = self.rng.random()
        for share, error in outcome.own_failures:
            pick -= share
            if pick < 0:
                return error
        return None

    def _calls(self, plan: CallPlan, cursor: float, parent: str | None) -> tuple[float, ErrorText | None]:
        call, rng = plan.call, self.rng
        if rng.random() >= call.chance or plan.attempts <= 0:
            return cursor, None
        longest, failure = 0.0, None
        for _ in range(_draw_count(rng, plan.count)):
            begin = cursor
            for _attempt in range(call.retries + 1):
                duration, failure = self._attempt(plan, begin, parent)
                begin += duration
                if failure is None:
                    break
            if call.parallel:
                longest = max(longest, begin - cursor)
            else:
                cursor = begin
            if failure is not None and not call.optional:
                break
        if call.parallel:
            cursor += longest
        return cursor, failure

    def _attempt(self, plan: CallPlan, start: float, parent: str | None) -> tuple[float, ErrorText | None]:
        call, rng = plan.call, self.rng
        hops = plan.route.hops
        if not hops:
            return 0.0, None
        hop = hops[-1]
        pick = rng.random()
        for candidate in hops:
            pick -= candidate.weight
            if pick <= 0:
                hop = candidate
                break
        span_id = self._id() if call.span else None
        error: ErrorText | None = None
        fields = peer_fields(plan.route, hop.instance.service.operations[call.operation]) if hop.instance else {}
        if hop.failure is not None:
            duration, error = hop.failure_latency, hop.failure
        else:
            callee = self.outcomes.of(hop.instance, call.operation)
            loss = hop.net.loss
            delay = NETWORK_RTT + hop.net.delay + callee.client_delay
            if loss >= 0.999 or rng.random() < loss ** LOSS_FAILS_AFTER:
                duration, error = plan.wording.connect_timeout, client_error(plan.wording, "unreachable", fields)
            elif rng.random() < callee.intercepted:
                duration, error = delay, client_error(plan.wording, "reset", fields)
            else:
                served, answer = self.operation(callee, start + delay / 2, span_id or parent)
                duration = served + delay
                if answer is not None:
                    error = client_view(plan.wording, answer, fields)
                elif callee.response_faults and rng.random() < callee.response_faults[0][0]:
                    _, kind, code = callee.response_faults[0]
                    error = client_error(plan.wording, "reset" if kind == "abort" else "protocol", fields) \
                        if kind != "code" else client_view(plan.wording, ErrorText("", "status", http=code), fields)
        if call.timeout is not None and duration > call.timeout:
            duration, error = call.timeout, client_error(plan.wording, "deadline",
                                                         fields or {"host": plan.route.peer})
        if span_id is not None:
            self.spans.append(self._client_span(plan, hop.instance, span_id, parent, start, duration, error))
        return duration, error

    # ---- spans -----------------------------------------------------------------------------------------------------
    def _server_span(self, outcome: Outcome, span_id: str, parent: str | None, start: float, duration: float,
                     error: ErrorText | None) -> Span:
        op = outcome.op
        attributes = dict(op.attributes)
        if op.method is not None:
            attributes["http.status_code"] = (error.http or 500) if error is not None else 200
        elif attributes.get("rpc.system") == "grpc":
            code = (error.grpc or "UNKNOWN") if error is not None else "OK"
            attributes["rpc.grpc.status_code"] = GRPC_CODES.index(code)
        status = error.status_code if error is not None else \
            ("STATUS_CODE_OK" if op.ok_status == "ok" else "STATUS_CODE_UNSET")
        return Span(self.trace_id, span_id, parent, outcome.instance.otel_name, op.span, KINDS[op.kind], start,
                    duration, status, error.message if error is not None and error.span_error else "", attributes,
                    self._resource(outcome.instance), _events(error, start + duration))

    def _client_span(self, plan: CallPlan, callee: Instance | None, span_id: str, parent: str | None, start: float,
                     duration: float, error: ErrorText | None) -> Span:
        caller = plan.caller
        call = plan.call
        attributes = dict(call.attributes)
        host, _, port = plan.route.peer.rpartition(":")
        attributes.setdefault("server.address", host or plan.route.peer)
        if port.isdigit():
            attributes.setdefault("server.port", int(port))
        if callee is not None:
            attributes.setdefault("network.peer.address", callee.pod)
        status = "STATUS_CODE_ERROR" if error is not None else "STATUS_CODE_UNSET"
        return Span(self.trace_id, span_id, parent, caller.otel_name, call.span, KINDS[call.kind], start, duration,
                    status, error.message if error is not None else "", attributes, self._resource(caller),
                    _events(error, start + duration))

    def _resource(self, instance: Instance) -> dict:
        found = self.resources.get(instance)
        if found is None:
            found = self.resources[instance] = _resource(instance)
        return found

    def _id(self) -> str:
        return f"{self.rng.getrandbits(64):016x}"


def _draw_count(rng: random.Random, mean: float) -> int:
    whole = math.floor(mean)
    return whole + (1 if rng.random() < mean - whole else 0)


def _resource(instance: Instance) -> dict:
    """The resource attributes of the instance's telemetry."""
    resource = {"service.name": instance.otel_name, "k8s.namespace.name": instance.namespace,
                "k8s.pod.name": instance.pod, "k8s.pod.uid": instance.pod_uid,
                "k8s.container.name": instance.container}
    for pair in (instance.env.get("OTEL_RESOURCE_ATTRIBUTES") or "").split(","):
        key, sep, value = pair.partition("=")
        if sep and key.strip() and "$(" not in value:
            resource.setdefault(key.strip(), value.strip())
    return resource


def _events(error: ErrorText | None, at: float) -> list[dict]:
    if error is None:
        return []
    return [{"name": "exception", "time": at, "attributes": {"exception.message": error.message}}]
