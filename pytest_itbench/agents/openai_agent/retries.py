"""Requests to the model endpoint, retried on transient errors with exponential back-off and jitter.

Our own loop instead of the client's: the client's jitter comes from the global random generator, and
its waits ignore the task's deadline. Here the jitter comes from a generator seeded by the settings (a
rerun waits the same), a wait is cut short when the task is cancelled, and no wait outlasts the
deadline. Transient: 408, 409, 429, any 5xx, a timeout, a connection refused or dropped. Anything else
(400, 401, 404, ...) would fail the same way again, so it ends the agent at once.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Callable, TypeVar

from ..errors import AgentFailure

T = TypeVar("T")

MAX_DELAY = 30.0  # seconds: no single wait is longer, whatever Retry-After asks


class EndpointFailed(AgentFailure):
    """The model endpoint could not be used: unreachable after every retry, or it refused the request."""

    reason = "endpoint-failed"


@dataclass(frozen=True)
class EndpointError:
    """What went wrong with one request, as :func:`call_with_retries` needs to know it."""

    transient: bool
    description: str  # one line: the status or exception and the endpoint's message
    retry_after: float | None = None  # seconds the endpoint asked to wait (Retry-After)


class DeadlineNear(Exception):
    """No time is left for another request: the caller hands in what it has."""


@dataclass(frozen=True)
class Backoff:
    retries: int  # further attempts after the first
    first_delay: float
    max_delay: float = MAX_DELAY

    def delay(self, retry: int, rng: random.Random, asked: float | None = None) -> float:
        """Seconds before retry number ``retry`` (0-based): first_delay x 2^retry, jittered to 50-150 %,
        at most max_delay; a Retry-After the endpoint sent wins when it is longer."""
        base = min(self.first_delay * (2 ** retry), self.max_delay)
        delay = base * (0.5 + rng.random())
        if asked is not None:
            delay = max(delay, asked)
        return min(delay, self.max_delay)


def call_with_retries(request: Callable[[float], T], *, classify: Callable[[BaseException], EndpointError | None],
                      backoff: Backoff, rng: random.Random, time_left: Callable[[], float],
                      cancelled: threading.Event, endpoint: str, model: str,
                      redact: Callable[[str], str] = lambda text: text) -> tuple[T, list[str]]:
    """``request(timeout)``'s answer, and the transient errors met on the way (one line each).

    ``time_left()`` is the time the loop may still spend (the deadline less its margin to hand in).
    Raises EndpointFailed when the endpoint refuses the request or stays unreachable; DeadlineNear when
    the time runs out before any error happened (nothing is wrong with the endpoint then).
    An exception ``classify`` returns None for is not the endpoint's: it propagates.
    """
    met: list[str] = []
    attempts = backoff.retries + 1
    for attempt in range(attempts):
        timeout = time_left()
        if cancelled.is_set() or timeout <= 0:
            if met:
                raise _failed(endpoint, model, met, f"the deadline came while retrying, after {attempt} attempts")
            raise DeadlineNear()
        try:
            return request(timeout), met
        except Exception as exc:  # what the client raised is classified; anything else is a bug: re-raised
            error = classify(exc)
            if error is None:
                raise
        met.append(redact(error.description))
        if not error.transient:
            raise _failed(endpoint, model, met, "it refused the request")
        if attempt + 1 == attempts:
            break
        delay = backoff.delay(attempt, rng, error.retry_after)
        if delay >= time_left():
            raise _failed(endpoint, model, met, f"after {attempt + 1} attempts, the next would come after the "
                                                f"deadline")
        if cancelled.wait(delay):
            raise _failed(endpoint, model, met, f"the task was cancelled while waiting to retry, after "
                                                f"{attempt + 1} attempts")
    raise _failed(endpoint, model, met, f"it failed {attempts} times in a row")


def _failed(endpoint: str, model: str, met: list[str], why: str) -> EndpointFailed:
    last = met[-1] if met else "none"
    return EndpointFailed(
        f"the model endpoint {endpoint} failed: {why}; last error: {last}",
        evidence={"endpoint": endpoint, "model": model, "errors": "\n".join(met[-10:])},
        advice="Check that the endpoint runs and that --itbench-openai-base-url, --itbench-openai-model and the API "
               "key are right (see docs/agents.md, 'The openai agent').")
