"""The load generator: how many users each replica runs and how often they run each task.

Each running replica of the generator is a Locust process: it reads its users and spawn rate from
its environment when it starts, spawns users at that rate once it starts serving (when it starts
at all: autostart), and each user picks a task by weight, runs it and waits (uniformly between
the sheet's bounds). So the task rate per user is one over the wait plus the task's own duration:
when the shop slows down, the users slow down with it. Browser users, when enabled, take an equal
share of the users and run their page loads back to back with a short pause.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .instances import Instance
from .sheet import EnvNumber, EnvSwitch, LoadGenerator


@dataclass(frozen=True)
class Users:
    http: float
    browser: float


def users(spec: LoadGenerator, instance: Instance, now: float) -> Users:
    """Users running at ``now`` in one generator instance (ramping up at the spawn rate)."""
    if not _switch(spec.autostart, instance.env):
        return Users(0.0, 0.0)
    wanted = max(_number(spec.users, instance.env), 0.0)
    rate = _number(spec.spawn_rate, instance.env)
    elapsed = max(now - instance.listening_from, 0.0)
    running = min(wanted, rate * elapsed) if rate > 0 else wanted
    if spec.browser is not None and _switch(spec.browser.enabled, instance.env):
        browser = running // 2
        return Users(running - browser, float(browser))
    return Users(running, 0.0)


def task_rates(spec: LoadGenerator, crowd: Users, duration: Callable[[str], float]) -> dict[str, float]:
    """Executions per second of each task, given each task's mean duration in seconds."""
    out: dict[str, float] = {}
    _spread(out, spec.tasks, crowd.http, (spec.wait.min + spec.wait.max) / 2, duration)
    if spec.browser is not None and crowd.browser:
        _spread(out, spec.browser.tasks, crowd.browser, spec.browser.pause, duration)
    return out


def _spread(out: dict[str, float], weights: dict[str, int], count: float, pause: float,
            duration: Callable[[str], float]) -> None:
    total = sum(weights.values())
    if count <= 0 or total <= 0:
        return
    cycle = pause + sum(w / total * duration(task) for task, w in weights.items())
    for task, weight in weights.items():
        out[task] = out.get(task, 0.0) + count * weight / total / cycle


def _number(setting: EnvNumber, env: dict[str, str]) -> float:
    try:
        return float(env.get(setting.env, setting.default))
    except ValueError:
        return setting.default


def _switch(setting: EnvSwitch, env: dict[str, str]) -> bool:
    text = env.get(setting.env)
    if text is None:
        return setting.default
    return text.strip().lower() in ("true", "1", "yes", "on")
