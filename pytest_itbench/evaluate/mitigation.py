"""Whether the incident is over: the expected alerts clear and stay clear for the stability window while
the application serves its traffic as well as before the fault (ARCHITECTURE.md, rule 4: deleting the
rules or stopping the load generator is no repair, because health is read from the traffic itself).

Health is read per service too (:func:`service_problems`): a service that served before the fault must
serve again, at its rate and error ratio, so deleting a failing workload, or deleting the rules while a
low-traffic service still fails behind healthy namespace totals, is no repair either.

Time after the agent is the cluster's (warped on the twin). The alerts' history during the agent's turn
comes from Prometheus' ``ALERTS`` series, so a repair made early counts from when it took effect.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from .signals import Prometheus

STEP = 15.0  # the rules' evaluation interval
GRACE = 900.0  # cluster seconds past the window for alerts to clear (rate windows, `for`, resolve)
ERROR_RATIO_SLACK = 0.02  # how much worse than before the fault the error ratio may be
TRAFFIC_KEPT = 0.5  # share of the baseline request rate that must still flow
TRAFFIC_SIGMAS = 3.0  # Poisson deviations a service's calls may fall below TRAFFIC_KEPT of its baseline


RATE_WINDOW = 300.0  # seconds of the rate() windows health is read over
SERVES_FROM_CALLS = 10.0  # a service with this many calls in the window before the fault must serve after it
KEEPS_RATE_FROM_CALLS = 60.0  # ... and with this many, at least TRAFFIC_KEPT of its rate
ERROR_SIGMAS = 3.0  # allowance for chance in a service's error ratio, in binomial standard deviations


@dataclass(frozen=True)
class ServiceHealth:
    request_rate: float  # server spans per second of one service
    error_ratio: float

    def describe(self) -> str:
        return f"{self.request_rate:.2f} req/s, {100 * self.error_ratio:.1f}% errors"


@dataclass(frozen=True)
class Health:
    request_rate: float  # server spans per second in the application's namespace
    error_ratio: float
    services: dict[str, ServiceHealth] = field(default_factory=dict)  # by service_name

    def describe(self) -> str:
        return f"{self.request_rate:.1f} req/s, {100 * self.error_ratio:.1f}% errors"


@dataclass(frozen=True)
class Mitigation:
    passed: bool
    detail: str
    clear_since: float | None  # cluster time from which the expected alerts stayed clear


def health(prometheus: Prometheus, namespace: str, at: float) -> Health:
    calls = f'traces_span_metrics_calls_total{{namespace="{namespace}",span_kind="SPAN_KIND_SERVER"'
    window = f"{RATE_WINDOW:.0f}s"
    total = prometheus.scalar(f"sum(rate({calls}}}[{window}]))", at) or 0.0
    errors = prometheus.scalar(f'sum(rate({calls},status_code="STATUS_CODE_ERROR"}}[{window}]))', at) or 0.0

    def by_service(promql: str) -> dict[str, float]:
        return {r["metric"].get("service_name", ""): float(r["value"][1]) for r in prometheus.query(promql, at)}

    rates = by_service(f"sum by (service_name) (rate({calls}}}[{window}]))")
    failing = by_service(f'sum by (service_name) (rate({calls},status_code="STATUS_CODE_ERROR"}}[{window}]))')
    services = {name: ServiceHealth(rate, failing.get(name, 0.0) / rate if rate else 0.0)
                for name, rate in sorted(rates.items())}
    return Health(total, errors / total if total else 0.0, services)


def service_problems(current: Health, baseline: Health) -> list[str]:
    """The services that served before the fault and do not serve as well now.

    Every service with at least SERVES_FROM_CALLS calls in the rate window before the fault must serve
    again (a deleted or idle workload is no repair), at no less than TRAFFIC_KEPT of its rate when it had
    KEEPS_RATE_FROM_CALLS calls (less TRAFFIC_SIGMAS Poisson deviations); and its error ratio may exceed its own baseline by no more than
    ERROR_RATIO_SLACK plus ERROR_SIGMAS binomial deviations (``sqrt(max(p, 1/n) (1 - p) / n)``, n its
    calls now), so that one failing low-traffic service is not hidden by the namespace's totals.
    """
    problems = []
    for name, before in baseline.services.items():
        calls_before = before.request_rate * RATE_WINDOW
        if calls_before < SERVES_FROM_CALLS:
            continue
        now = current.services.get(name, ServiceHealth(0.0, 0.0))
        calls = now.request_rate * RATE_WINDOW
        if calls <= 0:
            problems.append(f"{name} serves no requests (before the fault: {before.describe()})")
            continue
        # Half the earlier calls, less three Poisson deviations: a low-rate service (a few orders a minute)
        # swings by half between 5-minute windows on its own, while a stopped or starved one falls far below.
        kept = TRAFFIC_KEPT * calls_before
        if calls_before >= KEEPS_RATE_FROM_CALLS and calls < kept - TRAFFIC_SIGMAS * math.sqrt(kept):
            problems.append(f"{name} serves {now.describe()} (before the fault: {before.describe()})")
            continue
        p = before.error_ratio
        allowance = ERROR_RATIO_SLACK + ERROR_SIGMAS * math.sqrt(max(p, 1 / calls) * (1 - p) / calls)
        if now.error_ratio > p + allowance:
            problems.append(f"{name} still fails: {now.describe()} (before the fault: {before.describe()})")
    return problems


def firing_query(alerts: tuple[str, ...], namespace: str) -> str:
    names = "|".join(alerts)
    return f'ALERTS{{alertstate="firing",alertname=~"{names}",namespace="{namespace}"}}'


def evaluate(prometheus: Prometheus, now: Callable[[], float], advance: Callable[[float], None], *,
             namespace: str, alerts: tuple[str, ...], window: float, agent_started: float,
             baseline: Health | None) -> Mitigation:
    query = firing_query(alerts, namespace) if alerts else None

    def firing_at(at: float) -> set[str]:
        return {s["metric"]["alertname"] for s in prometheus.query(query, at)} if query else set()

    start = now()
    clear_since: float | None = agent_started
    if query:
        # The clock moves in ticks: an agent that returned at once may end before the tick it started on.
        last = [float(t) for series in prometheus.query_range(query, min(agent_started, start), start, STEP)
                for t, _ in series["values"]]
        if firing_at(start):
            clear_since = None
        elif last:
            clear_since = max(last) + STEP
    deadline = start + window + GRACE
    while clear_since is None or now() - clear_since < window:
        if now() >= deadline:
            still = sorted(firing_at(now()))
            return Mitigation(False, f"still firing {window + GRACE:.0f} s after the agent: {', '.join(still)}"
                              if still else f"the alerts did not stay clear for {window:.0f} s", None)
        advance(STEP)
        if firing_at(now()):
            clear_since = None
        elif clear_since is None:
            clear_since = now()
    current = health(prometheus, namespace, now())
    if baseline is not None:
        if current.request_rate < TRAFFIC_KEPT * baseline.request_rate:
            return Mitigation(False, f"alerts clear, but traffic fell to {current.describe()} (before the fault: "
                                     f"{baseline.describe()})", clear_since)
        if current.error_ratio > baseline.error_ratio + ERROR_RATIO_SLACK:
            return Mitigation(False, f"alerts clear, but the application still fails: {current.describe()} "
                                     f"(before the fault: {baseline.describe()})", clear_since)
        problems = service_problems(current, baseline)
        if problems:
            return Mitigation(False, f"alerts clear, but not every service serves as before the fault: "
                                     f"{'; '.join(problems)}", clear_since)
    cleared = ", ".join(alerts) if alerts else "no alert expected"
    return Mitigation(True, f"{cleared} clear for {now() - clear_since:.0f} s; {current.describe()}", clear_since)
