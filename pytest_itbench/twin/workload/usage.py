"""How load turns into CPU and memory, and CPU saturation back into latency.

Each instance's CPU demand is its requests' CPU time plus what it burns in the background (idle
work, a flag's busy threads, stressors). Its capacity is what it can get: its CPU limit, else its
node's allocatable CPU, or on an oversubscribed node its share of it (:mod:`.contention`). Up to
its capacity it gets what it asks and requests wait a little longer the busier it is (a queueing
factor that stays near one at low utilisation and grows steeply near saturation). Beyond capacity
the background and the requests (the queued ones too: each waits on a runnable thread) share it,
so requests are served more slowly than they arrive: the backlog grows, and every request waits
for it, until the callers' deadlines cut them off; when demand falls again the backlog drains.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_WAIT = 600.0  # a queue this long means nothing gets served in any useful time


@dataclass
class InstanceState:
    """What the engine carries for one instance from step to step."""

    backlog: float = 0.0  # requests waiting for CPU
    leaked: float = 0.0  # bytes a flag's leak retains
    factor: float = 1.0
    wait: float = 0.0
    cpu: float = 0.0  # cores used in the last step
    per_request: float = 0.0  # CPU seconds a request took when requests last arrived
    speed: float = 1.0  # share of one core a request runs at while its node is oversubscribed (contention.py)
    # what the outcomes were last computed with (they are recomputed when these move enough)
    seen_factor: float = 1.0
    seen_speed: float = 1.0
    seen_wait: float = 0.0
    seen_leak_mib: float = 0.0


def saturate(state: InstanceState, arrivals: float, cpu_per_request: float, background: float, capacity: float,
             dt: float) -> None:
    """Advance ``state`` by ``dt`` seconds with ``arrivals`` requests per second."""
    if cpu_per_request > 0:
        state.per_request = cpu_per_request
    elif state.backlog > 0:
        cpu_per_request = state.per_request  # no new request this step: the queued ones still need their CPU
    demand = arrivals * cpu_per_request
    total = demand + background
    if total <= capacity:
        state.cpu = total
        served = (capacity - background) / cpu_per_request if cpu_per_request > 0 else float("inf")
    else:
        state.cpu = capacity
        # The requests waiting want the CPU as much as the new ones: the process's share grows with its queue.
        wanting = (arrivals + state.backlog / dt) * cpu_per_request
        share = capacity * wanting / (wanting + background) if wanting + background > 0 else 0.0
        served = share / cpu_per_request if cpu_per_request > 0 else float("inf")
    state.backlog = max(0.0, state.backlog + (arrivals - served) * dt) if served != float("inf") else 0.0
    utilisation = min(state.cpu / capacity, 0.99) if capacity > 0 else 0.99
    state.factor = 1.0 + utilisation ** 4 / (1.0 - utilisation)
    if state.backlog <= 0:
        state.wait = 0.0
    else:
        state.wait = min(state.backlog / served, MAX_WAIT) if served > 0 else MAX_WAIT


def outcomes_stale(state: InstanceState) -> bool:
    """Whether saturation or a leak moved enough since the outcomes were computed to recompute them."""
    leak_mib = state.leaked / (1024 * 1024)
    return (abs(state.factor - state.seen_factor) > 0.05 * state.seen_factor
            or abs(state.wait - state.seen_wait) > max(0.05, 0.1 * state.seen_wait)
            or abs(state.speed - state.seen_speed) > 0.05 * state.seen_speed
            or abs(leak_mib - state.seen_leak_mib) > max(1.0, 0.1 * state.seen_leak_mib))


def mark_seen(state: InstanceState) -> None:
    state.seen_factor, state.seen_wait, state.seen_speed = state.factor, state.wait, state.speed
    state.seen_leak_mib = state.leaked / (1024 * 1024)
