"""What an operation of a running instance makes of its requests: how many succeed, how fast, and how the
others fail; and, for each call it makes, how many attempts go where and what comes back.

Computed from the bottom of the call graph up: an operation's outcome is its own processing
(latency scaled by its CPU saturation, flag and chaos effects, its own failures) followed by its
calls in order, each call's outcome being the mix of its route's hops (connection failures as the
client words them, or the callee's own outcome plus the network's delay and loss), cut at the
call's deadline and repeated by its retries. A request stops at the first call it needs that
fails and answers with the operation's error wording around that call's error; optional calls
only add their latency. The outcome of each (instance, operation) is computed once per refresh
and shared by all its callers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

from . import flags as flag_values
from .chaos.faults import HttpFault, Injected, IoFault, JvmFault
from .errors import CAUSE_CODES, ErrorText, client_error, client_view, server_error
from .instances import Instance
from .latency import ZERO, Mixture
from .routing import Hop, Route, Router
from .sheet import Address, Call, ClientWording, ErrorSpec, FlagEffect, Operation

NETWORK_RTT = 0.0003  # a round trip inside the cluster
RETRANSMIT = 0.2  # TCP's initial retransmission timeout
PACKETS_PER_CALL = 4  # packets of a call that can each be lost
LOSS_FAILS_AFTER = 6  # a packet lost this many times in a row ends the connection
MiB = 1024 * 1024
ERRNO_TEXT = {1: "operation not permitted", 2: "no such file or directory", 5: "input/output error",
              13: "permission denied", 28: "no space left on device", 30: "read-only file system"}


@dataclass(frozen=True)
class Failed:
    share: float
    latency: Mixture
    error: ErrorText


@dataclass
class Conditions:
    """What an instance is going through, besides its routes: flags, saturation, leaks, chaos."""

    flags: flag_values.FlagValues = field(default_factory=dict)
    factor: float = 1.0  # CPU saturation's effect on processing time
    wait: float = 0.0  # time a request queues for CPU
    speed: float = 1.0  # share of one core a request's CPU work runs at (below 1 on an oversubscribed node)
    leaked: float = 0.0  # bytes a flag's leak has retained
    jvm: list[JvmFault] = field(default_factory=list)
    io: list[IoFault] = field(default_factory=list)
    floor: float = 1.0  # this period's factor on the sheet's background floor (drawn by the engine)


@dataclass
class CallPlan:
    """One call of one operation, per request of that operation."""

    caller: Instance
    call: Call
    wording: ClientWording
    route: Route
    attempts: float  # client spans per request of the calling operation
    deliveries: list[tuple[Instance, float]]  # share of attempts that reach each callee's handler
    ok: float  # share of attempts that succeed
    ok_latency: Mixture
    failures: list[Failed]  # the other attempts, in the client's words
    count: float = 1.0  # calls per request that makes the call
    messages: float = 1.0  # producers: messages written per successful attempt


@dataclass
class Outcome:
    instance: Instance
    op_name: str
    op: Operation
    ok: float
    ok_latency: Mixture
    failures: list[Failed]
    calls: list[CallPlan]
    effects: list[FlagEffect]  # the flag effects active on it (their log lines)
    own_latency: Mixture = ZERO  # its own processing
    own_failures: list[tuple[float, ErrorText]] = field(default_factory=list)  # failing before any call
    intercepted: float = 0.0  # HTTPChaos: share of requests aborted before the handler
    response_faults: list[tuple[float, str, int | None]] = field(default_factory=list)  # (share, kind, code)
    client_delay: float = 0.0  # HTTPChaos: delay the proxy adds

    @functools.cached_property
    def latency(self) -> Mixture:
        """Of every request, failed or not (read once the outcome is complete)."""
        return Mixture.mix([(self.ok, self.ok_latency), *((f.share, f.latency) for f in self.failures)])


class Outcomes:
    def __init__(self, router: Router, chaos: Injected, conditions: Callable[[Instance], Conditions]):
        self.router = router
        self.chaos = chaos
        self.conditions = conditions
        self._memo: dict[tuple[Instance, str], Outcome] = {}

    def of(self, instance: Instance, op_name: str) -> Outcome:
        key = (instance, op_name)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._compute(instance, op_name)
        return found

    # ---- one operation ------------------------------------------------------------------------------------------
    def _compute(self, instance: Instance, op_name: str) -> Outcome:
        op = instance.service.operations[op_name]
        cond = self.conditions(instance)
        effects = [e for e in instance.service.flags if flag_values.active(cond.flags.get(e.flag))
                   and e.operation in (None, op_name)]
        own = self._own_latency(instance, op, cond, effects)
        own_errors = self._own_errors(instance, op, op_name, cond, effects)
        floor = instance.sheet.background.floor.get(f"{instance.service_name}.{op_name}")
        if floor is not None:
            own, own_errors = _floor(floor, cond.floor, own, own_errors)
        outcome = Outcome(instance, op_name, op, 1.0, own, [], [], effects, own_latency=own)
        self._http_chaos(instance, op, outcome, own_errors)
        failing = 0.0
        for share, error in own_errors:
            share = min(share, 1.0 - failing)
            if share > 0:
                outcome.failures.append(Failed(share, own, error))
                outcome.own_failures.append((share, error))
                failing += share
        reach = 1.0 - failing
        latency = own
        for call in op.calls:
            plan = self._plan(instance, op_name, call, cond.flags, reach)
            outcome.calls.append(plan)
            block_ok, block_latency, block_failures = _block(call, plan)
            if call.optional:
                latency = latency.plus(Mixture.mix([(block_ok, block_latency),
                                                    *((f.share, f.latency) for f in block_failures)]))
                continue
            for failed in block_failures:
                error = wrap_error(op, call, failed.error)
                outcome.failures.append(Failed(reach * failed.share, latency.plus(failed.latency), error))
            latency = latency.plus(block_latency)
            reach *= block_ok
        outcome.ok = reach
        outcome.ok_latency = latency
        outcome.failures = _merge(outcome.failures)
        return outcome

    def _own_latency(self, instance: Instance, op: Operation, cond: Conditions,
                     effects: list[FlagEffect]) -> Mixture:
        # On an oversubscribed node the request's own CPU time is spread over the slices the scheduler gives it.
        stretch = op.cpu * (1.0 / cond.speed - 1.0) if cond.speed < 1.0 else 0.0
        own = Mixture.lognormal(op.latency.median * cond.factor, op.latency.spread).shift(cond.wait + stretch)
        leak_latency = sum(e.latency_per_mib for e in instance.service.flags
                           if e.latency_per_mib and flag_values.active(cond.flags.get(e.flag)))
        own = own.shift(leak_latency * cond.leaked / MiB)
        for effect in effects:
            if effect.delay_ms is not None:
                delay = _number(effect.delay_ms, cond.flags.get(effect.flag)) / 1000
                own = Mixture.mix([(1 - effect.fraction, own), (effect.fraction, own.shift(delay))])
            if effect.consumer_delay is not None:
                own = own.shift(effect.consumer_delay)
        for fault in cond.jvm:
            if _jvm_applies(fault, op):
                if fault.action == "latency":
                    own = own.shift(fault.latency)
                elif fault.action == "gc":
                    own = Mixture.mix([(0.8, own), (0.2, own.shift(fault.latency))])
        for fault in cond.io:
            if _io_applies(fault, op) and fault.delay:
                share = fault.percent / 100
                own = Mixture.mix([(1 - share, own), (share, own.shift(fault.delay))])
        return own

    def _own_errors(self, instance: Instance, op: Operation, op_name: str, cond: Conditions,
                    effects: list[FlagEffect]) -> list[tuple[float, ErrorText]]:
        out = []
        for effect in effects:
            if effect.error_rate is not None and effect.call is None:
                rate = min(max(_number(effect.error_rate, cond.flags.get(effect.flag)), 0.0), 1.0)
                out.append((rate, server_error(effect.error, "", "flag")))
        for fault in cond.jvm:
            if not _jvm_applies(fault, op):
                continue
            if fault.action == "exception":
                out.append((1.0, _answer(op, fault.exception, "exception")))
            elif fault.action == "return" and fault.exception:
                out.append((1.0, _answer(op, fault.exception, "exception")))
            elif fault.action == "stress" and fault.heap:
                out.append((0.5, _answer(op, "java.lang.OutOfMemoryError: Java heap space", "exception")))
        for fault in cond.io:
            if _io_applies(fault, op) and fault.errno:
                text = f"{op.disk}: {ERRNO_TEXT.get(fault.errno, f'errno {fault.errno}')}"
                out.append((fault.percent / 100, _answer(op, text, "io")))
        return out

    def _http_chaos(self, instance: Instance, op: Operation, outcome: Outcome,
                    own_errors: list[tuple[float, ErrorText]]) -> None:
        if op.method is None:
            return
        faults: list[HttpFault] = []
        for port, protocol in instance.ports.items():
            if protocol == "http":
                faults += self.chaos.http_faults((instance.namespace, instance.pod), port, op.method, op.path)
        for fault in faults:
            outcome.client_delay += fault.delay
            if fault.target == "Request":
                if fault.abort:
                    outcome.intercepted = 1.0
                if fault.tamper_body and op.malformed is not None:
                    own_errors.insert(0, (1.0, server_error(op.malformed, "", "malformed")))
            else:
                if fault.abort:
                    outcome.response_faults.append((1.0, "abort", None))
                elif fault.replace_code is not None and fault.replace_code >= 400:
                    outcome.response_faults.append((1.0, "code", fault.replace_code))
                elif fault.tamper_body:
                    outcome.response_faults.append((1.0, "body", None))

    # ---- one call --------------------------------------------------------------------------------------------------
    def _count(self, instance: Instance, op_name: str, call: Call, values: dict) -> float:
        effect = _call_effect(instance, op_name, call, values, "count")
        return call.count if effect is None else _number(effect.count, values.get(effect.flag))

    def _plan(self, instance: Instance, op_name: str, call: Call, values: dict, reach: float) -> CallPlan:
        sheet = instance.sheet
        wording = sheet.clients[call.client or instance.service.client]
        redirect = _call_effect(instance, op_name, call, values, "address")
        address = Address(value=redirect.address) if redirect is not None else call.address
        route = self.router.route(instance, call, address, wording, call.service)
        extra = _call_effect(instance, op_name, call, values, "messages")
        messages = 1.0 + (_number(extra.messages, values.get(extra.flag)) if extra is not None else 0.0)
        ok_parts: list[tuple[float, Mixture]] = []
        failures: list[Failed] = []
        deliveries: list[tuple[Instance, float]] = []
        for hop in route.hops:
            self._hop(hop, call, wording, route, ok_parts, failures, deliveries)
        ok = sum(w for w, _ in ok_parts)
        ok_latency = Mixture.mix(ok_parts) if ok > 0 else ZERO
        if call.timeout is not None:
            ok, ok_latency, failures = _deadline(call.timeout, ok, ok_latency, failures,
                                                 client_error(wording, "deadline", {"host": route.peer}))
        ok, ok_latency, failures, attempts = _retry(call.retries, ok, ok_latency, failures)
        count = self._count(instance, op_name, call, values)
        per_request = reach * call.chance * count * attempts
        return CallPlan(instance, call, wording, route, per_request, deliveries, ok, ok_latency, _merge(failures),
                        count, messages)

    def _hop(self, hop: Hop, call: Call, wording: ClientWording, route: Route, ok_parts: list, failures: list,
             deliveries: list) -> None:
        weight = hop.weight
        if hop.failure is not None:
            failures.append(Failed(weight, Mixture.point(hop.failure_latency), hop.failure))
            return
        callee = self.of(hop.instance, call.operation)
        fields = peer_fields(route, callee.op)
        loss = hop.net.loss
        lost = 1.0 if loss >= 0.999 else loss ** LOSS_FAILS_AFTER
        if lost > 0:
            failures.append(Failed(weight * lost, Mixture.point(wording.connect_timeout),
                                   client_error(wording, "unreachable", fields)))
        live = weight * (1 - lost)
        if live <= 0:
            return
        penalty = min(PACKETS_PER_CALL * RETRANSMIT * loss / (1 - loss), 10.0) if loss < 0.999 else 0.0
        delay = NETWORK_RTT + hop.net.delay + penalty + callee.client_delay
        if callee.intercepted:
            failures.append(Failed(live * callee.intercepted, Mixture.point(delay),
                                   client_error(wording, "reset", fields)))
        handled = live * (1 - callee.intercepted)
        if handled <= 0:
            return
        deliveries.append((hop.instance, handled))
        ok_share = handled * callee.ok
        for share, kind, code in callee.response_faults:
            moved = ok_share * share
            ok_share -= moved
            if kind == "abort":
                error = client_error(wording, "reset", fields)
            elif kind == "code":
                error = client_view(wording, ErrorText("", "status", http=code), fields)
            else:
                error = client_error(wording, "protocol", fields)
            failures.append(Failed(moved, callee.ok_latency.shift(delay), error))
        if ok_share > 0:
            ok_parts.append((ok_share, callee.ok_latency.shift(delay)))
        for failed in callee.failures:
            failures.append(Failed(handled * failed.share, failed.latency.shift(delay),
                                   client_view(wording, failed.error, fields)))


def _floor(floor, factor: float, own: Mixture,
           own_errors: list[tuple[float, ErrorText]]) -> tuple[Mixture, list[tuple[float, ErrorText]]]:
    """The background floor on top of an operation's own processing: a slow tail and a share of client errors."""
    if floor.slow is not None:
        slow = min(floor.slow.fraction * factor, 0.5)
        own = Mixture.mix([(1 - slow, own), (slow, own.shift(floor.slow.delay))])
    if floor.error is not None:
        own_errors = [*own_errors, (min(floor.share * factor, 0.5), server_error(floor.error, "", "floor"))]
    return own, own_errors


# ---- composing ---------------------------------------------------------------------------------------------------------

def peer_fields(route: Route, callee: Operation) -> dict[str, str]:
    """What a client's error wording may name about the peer it called."""
    host, sep, port = route.peer.rpartition(":")
    return {"host": host if sep else route.peer, "port": port if sep else "", "address": route.peer,
            "path": callee.path or ""}


def _block(call: Call, plan: CallPlan) -> tuple[float, Mixture, list[Failed]]:
    """A request's calls of one kind as one block: its success, latency and failures."""
    count = plan.count
    if count <= 0 or call.chance <= 0:
        return 1.0, ZERO, []
    ok = plan.ok ** count
    if call.parallel:
        ok_latency, before_failure = plan.ok_latency, ZERO
    else:
        ok_latency = plan.ok_latency.times(count)
        before_failure = plan.ok_latency.times((count - 1) / 2) if count > 1 else ZERO
    failing = 1.0 - ok
    total = sum(f.share for f in plan.failures) or 1.0
    failures = [Failed(call.chance * failing * f.share / total, before_failure.plus(f.latency), f.error)
                for f in plan.failures if failing > 0]
    if call.chance < 1:
        ok_latency = Mixture.mix([(1 - call.chance, ZERO), (call.chance * ok, ok_latency)])
        ok = 1 - call.chance + call.chance * ok
    return ok, ok_latency, failures


def _deadline(timeout: float, ok: float, ok_latency: Mixture, failures: list[Failed],
              expired: ErrorText) -> tuple[float, Mixture, list[Failed]]:
    late, ok_latency = ok_latency.split_at(timeout)
    out = []
    expired_share = ok * late
    for failed in failures:
        slow, kept = failed.latency.split_at(timeout)
        if slow < 1:
            out.append(Failed(failed.share * (1 - slow), kept, failed.error))
        expired_share += failed.share * slow
    if expired_share > 0:
        out.append(Failed(expired_share, Mixture.point(timeout), expired))
    return ok * (1 - late), ok_latency, out


def _retry(retries: int, ok: float, ok_latency: Mixture, failures: list[Failed]) -> tuple[float, Mixture,
                                                                                          list[Failed], float]:
    """Outcome after up to ``retries`` more attempts, and the attempts made per call on average."""
    fail = 1.0 - ok
    if retries <= 0 or fail <= 0 or ok <= 0:
        return ok, ok_latency, failures, 1.0
    wasted = Mixture.mix([(f.share, f.latency) for f in failures]).mean
    parts = [(ok * fail ** k, ok_latency.shift(k * wasted)) for k in range(retries + 1)]
    attempts = sum(fail ** k for k in range(retries + 1))
    final = fail ** retries
    kept = [Failed(f.share * final, f.latency.shift(retries * wasted), f.error) for f in failures]
    return 1.0 - fail ** (retries + 1), Mixture.mix(parts), kept, attempts


def _merge(failures: list[Failed]) -> list[Failed]:
    """One entry per distinct error, their latencies mixed."""
    grouped: dict[ErrorText, list[Failed]] = {}
    for failed in failures:
        if failed.share > 1e-9:
            grouped.setdefault(failed.error, []).append(failed)
    out = []
    for error, group in grouped.items():
        share = sum(f.share for f in group)
        out.append(Failed(share, Mixture.mix([(f.share, f.latency) for f in group]), error))
    return out


def wrap_error(op: Operation, call: Call, error: ErrorText) -> ErrorText:
    """The operation's answer when ``call`` failed with ``error``."""
    text = call.error.replace("{error}", error.message)
    if op.relays_status and error.http is not None:
        return server_error(ErrorSpec(http=error.http), text, error.cause)
    spec = op.failures.get(error.cause, op.failure)
    if spec is not None:
        return server_error(spec, text, error.cause)
    return _answer(op, text, error.cause)


def _answer(op: Operation, text: str, cause: str) -> ErrorText:
    """An operation's error answer when the sheet gives no wording: gRPC's code for the cause, or HTTP 500."""
    if op.kind != "server":
        return ErrorText(text, cause)
    if op.method is not None:
        return server_error(ErrorSpec(http=500), text, cause)
    return server_error(ErrorSpec(grpc=CAUSE_CODES.get(cause, "UNKNOWN")), text, cause)


def _call_effect(instance: Instance, op_name: str, call: Call, values: dict, what: str) -> FlagEffect | None:
    for effect in instance.service.flags:
        if effect.operation == op_name and effect.call == call.to and getattr(effect, what) is not None \
                and flag_values.active(values.get(effect.flag)):
            return effect
    return None


def _number(setting, value: object) -> float:
    return flag_values.number(value) if setting == "value" else float(setting)


def _jvm_applies(fault: JvmFault, op: Operation) -> bool:
    if not op.java:
        return False
    return not fault.methods or bool(fault.methods & set(op.java))


def _io_applies(fault: IoFault, op: Operation) -> bool:
    if op.disk is None:
        return False
    volume = fault.volume.rstrip("/")
    return op.disk == volume or op.disk.startswith(volume + "/")
