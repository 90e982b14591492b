"""The twin's simulation clock.

Everything in the twin that stamps time (creationTimestamp, events, samples,
spans) reads this clock, and everything that evolves over time (controllers,
the kubelet, telemetry) registers a tick handler on it.

The clock advances in fixed ticks. It has two modes:

* **warped** (the default): time stands still until someone calls
  :meth:`SimClock.warp`, which runs the ticks back to back as fast as the CPU
  allows. Phases with no agent (deploy, inject, await alerts, the stability
  window) run this way.
* **real time** (:meth:`SimClock.follow_wall_time`): a background thread runs
  each tick when wall time reaches it, and :meth:`now` interpolates between
  ticks, so an agent working against the twin sees time pass as on a cluster.
  ``follow_wall_time(scale=N)`` runs N simulated seconds per wall second
  (``python -m pytest_itbench.twin --time-scale N``): a twin standing in for a
  real cluster, whose harness waits instead of warping, then waits 1/N as long.

Handlers run one at a time, in registration order, on whichever thread drives
the clock; a handler that raises is logged and the others still run, so one
broken controller never stops the cluster.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

log = logging.getLogger(__name__)

TickHandler = Callable[[float], None]


@dataclass
class _Registration:
    name: str
    handler: TickHandler
    every: float  # seconds of simulated time between calls
    next_due: float = field(default=-math.inf)


class SimClock:
    """Simulated time in seconds since the Unix epoch, advanced in fixed ticks."""

    def __init__(self, start: float | None = None, tick: float = 1.0):
        if tick <= 0:
            raise ValueError(f"tick must be positive, got {tick!r}")
        # Whole seconds: Kubernetes timestamps have second precision, and a
        # start on a second boundary keeps every tick on one too.
        self._t = float(math.floor(time.time() if start is None else start))
        self.tick = float(tick)
        self._handlers: list[_Registration] = []
        self._lock = threading.RLock()  # held while ticks run
        self._realtime: _WallTimeFollower | None = None
        self.ticks_run = 0

    # ---- reading -----------------------------------------------------------
    def now(self) -> float:
        """Current simulated time. Between ticks in real-time mode it follows wall time."""
        follower = self._realtime
        if follower is not None:
            return follower.interpolate(self._t, self.tick)
        return self._t

    def now_datetime(self) -> datetime:
        return datetime.fromtimestamp(self.now(), tz=timezone.utc)

    def timestamp(self, t: float | None = None) -> str:
        """RFC 3339 with second precision, as Kubernetes writes metav1.Time."""
        return format_time(self.now() if t is None else t)

    def micro_timestamp(self, t: float | None = None) -> str:
        """RFC 3339 with microseconds, as Kubernetes writes metav1.MicroTime."""
        return format_micro_time(self.now() if t is None else t)

    # ---- handlers ----------------------------------------------------------
    def on_tick(self, handler: TickHandler, name: str | None = None, every: float | None = None) -> TickHandler:
        """Call ``handler(now)`` on every tick (or every ``every`` simulated seconds)."""
        with self._lock:
            self._handlers.append(
                _Registration(name or getattr(handler, "__qualname__", repr(handler)), handler, every or self.tick)
            )
        return handler

    def remove_handler(self, handler: TickHandler) -> None:
        with self._lock:
            # `!=`, not `is not`: a bound method is a new object at each attribute access, equal to the registered one.
            self._handlers = [r for r in self._handlers if r.handler != handler]

    # ---- advancing -----------------------------------------------------------
    def warp(self, seconds: float) -> None:
        """Run ``seconds`` of simulated time (rounded up to whole ticks) as fast as possible."""
        if seconds < 0:
            raise ValueError(f"cannot warp backwards ({seconds!r} s)")
        self.warp_until(self._t + seconds)

    def warp_until(self, t: float) -> None:
        """Run ticks until simulated time reaches ``t``."""
        with self._lock:
            while self._t + 1e-9 < t:
                self._step()
            if self._realtime is not None:
                # Keep following wall time from the point the warp reached.
                self._realtime.rebase(self._t)

    def _step(self) -> None:
        # Caller holds self._lock.
        self._t += self.tick
        self.ticks_run += 1
        now = self._t
        for reg in list(self._handlers):
            if now + 1e-9 < reg.next_due:
                continue
            reg.next_due = now + reg.every
            try:
                reg.handler(now)
            except Exception:  # a broken handler must not stop the clock
                log.exception("tick handler %s failed at t=%s", reg.name, now)

    # ---- real time -----------------------------------------------------------
    @property
    def following_wall_time(self) -> bool:
        return self._realtime is not None

    @property
    def scale(self) -> float:
        """Simulated seconds per wall second while following wall time (1 on a cluster-like clock)."""
        follower = self._realtime
        return follower.scale if follower is not None else 1.0

    def follow_wall_time(self, scale: float = 1.0) -> None:
        """Switch to real-time mode: a background thread ticks at wall-clock pace, ``scale`` simulated
        seconds per wall second."""
        if not scale > 0 or scale == float("inf"):
            raise ValueError(f"the time scale must be a positive number, got {scale!r}")
        with self._lock:
            if self._realtime is None:
                self._realtime = _WallTimeFollower(self, scale)
                self._realtime.start()

    def stop_following(self) -> None:
        """Back to warped mode; simulated time keeps the value it has reached."""
        follower = self._realtime
        if follower is None:
            return
        follower.stop()
        with self._lock:
            self._realtime = None

    def close(self) -> None:
        self.stop_following()


class _WallTimeFollower:
    """Runs the clock's ticks at wall-clock pace on a daemon thread."""

    def __init__(self, clock: SimClock, scale: float = 1.0):
        self._clock = clock
        self.scale = float(scale)
        self._stop = threading.Event()
        self._wall0 = time.monotonic()
        self._sim0 = clock._t
        self._thread = threading.Thread(target=self._run, name="twin-clock", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def rebase(self, sim_now: float) -> None:
        self._wall0 = time.monotonic()
        self._sim0 = sim_now

    def interpolate(self, last_tick: float, tick: float) -> float:
        wall = self._target()
        # Never behind the last tick run, never a full tick ahead of it.
        return min(max(wall, last_tick), last_tick + tick)

    def _target(self) -> float:
        """The simulated time wall time has reached."""
        return self._sim0 + (time.monotonic() - self._wall0) * self.scale

    def _run(self) -> None:
        clock = self._clock
        while not self._stop.is_set():
            target = self._target()
            with clock._lock:
                while clock._t + clock.tick <= target and not self._stop.is_set():
                    clock._step()
                next_due = clock._t + clock.tick
            wait = max(0.0, (next_due - self._target()) / self.scale)
            self._stop.wait(min(wait, 0.25))

    def stop(self) -> None:
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)


def format_time(t: float) -> str:
    return datetime.fromtimestamp(math.floor(t), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: str) -> float:
    """Parse an RFC 3339 timestamp as Kubernetes writes it (``Z`` or an offset)."""
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    return datetime.fromisoformat(text).timestamp()


def format_go_duration(seconds: float) -> str:
    """A duration as Go's ``time.Duration.String()`` writes it: ``15s``, ``1m0s``, ``1.5s``, ``250ms``."""
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 10 ** 9:
        for unit, size in (("ms", 10 ** 6), ("µs", 10 ** 3), ("ns", 1)):
            if nanos >= size:
                return sign + _trim(nanos, size) + unit
    hours, rest = divmod(nanos, 3600 * 10 ** 9)
    minutes, rest = divmod(rest, 60 * 10 ** 9)
    text = _trim(rest, 10 ** 9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _trim(amount: int, unit: int) -> str:
    whole, fraction = divmod(amount, unit)
    if not fraction:
        return str(whole)
    digits = str(fraction).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"
