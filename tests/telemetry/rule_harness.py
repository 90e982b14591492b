"""A Prometheus in miniature for rule tests: a clock, a store scraped every 15 s, rules, an Alertmanager."""

from __future__ import annotations

import random
from typing import Mapping, Optional

from pytest_itbench.twin.clock import SimClock
from pytest_itbench.twin.telemetry import TSDB, Engine
from pytest_itbench.twin.telemetry.alertmanager import Alertmanager
from pytest_itbench.twin.telemetry.rules import RuleManager, parse_rule_file

START = 1_700_000_000.0
SCRAPE = 15.0


class RuleHarness:
    """Series set with :meth:`set` (gauges) or :meth:`count` (counters growing at a rate) are scraped every
    15 simulated seconds until removed (then marked stale)."""

    def __init__(self, rules: str, *, interval: float = 15.0, path: str = "rules.yaml",
                 external_labels: Optional[Mapping[str, str]] = None):
        self.clock = SimClock(start=START, tick=1.0)
        self.tsdb = TSDB()
        self.engine = Engine(self.tsdb)
        self.alertmanager = Alertmanager(self.clock.now, random.Random(3))
        self.manager = RuleManager(self.tsdb, self.engine, send=self.alertmanager.post_alerts,
                                   default_interval=interval, external_labels=external_labels,
                                   external_url="http://prometheus:9090")
        self.series: dict[tuple, float] = {}
        self.rates: dict[tuple, float] = {}  # counters: increase per second
        self.clock.on_tick(self._scrape, name="scrape", every=SCRAPE)
        self.load(rules, path)
        self.manager.attach(self.clock)

    def load(self, rules: str, path: str = "rules.yaml") -> None:
        self.manager.load([parse_rule_file(path, rules)], self.clock.now())

    def set(self, value: Optional[float], **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        if value is None:
            self.series.pop(key, None)
            self.tsdb.mark_stale(dict(key), self.clock.now())
        else:
            self.series[key] = value

    def count(self, per_second: float, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        self.series.setdefault(key, 0.0)
        self.rates[key] = per_second

    def _scrape(self, now: float) -> None:
        for key, rate in self.rates.items():
            if key in self.series:
                self.series[key] += rate * SCRAPE
        self.tsdb.append_many(now, [(dict(key), value) for key, value in self.series.items()])

    def warp(self, seconds: float) -> None:
        self.clock.warp(seconds)

    def rule(self, name: str, group: int = 0):
        return next(r for r in self.manager.rule_groups()[group].rules if r.name == name)

    def state(self, name: str, group: int = 0) -> str:
        return self.rule(name, group).state

    def query(self, text: str, at: Optional[float] = None):
        return self.engine.instant_query(text, self.clock.now() if at is None else at).value
