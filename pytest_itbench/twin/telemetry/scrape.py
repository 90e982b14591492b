"""Prometheus' scrape loop on the twin's clock: every exporter's targets appended to the store.

    loop = ScrapeLoop(tsdb, metadata)
    loop.add(KubeStateMetrics(api))
    loop.attach(clock)                  # scrapes at every multiple of the interval

Each scrape writes, per target, its series at the scrape time, then what Prometheus writes about
the scrape itself: ``up``, ``scrape_duration_seconds``, ``scrape_samples_scraped``,
``scrape_samples_post_metric_relabeling`` and ``scrape_series_added``, with the target's labels. A
series a target stops exposing, and every series of a target that went away or stopped answering,
gets a staleness marker, as Prometheus' scrape cache writes them. Exporters' metric families are
registered for ``/api/v1/metadata`` as a target's ``# HELP``/``# TYPE`` reach Prometheus (an
exporter's list of families may grow as it scrapes, when its sources report new ones).

All targets are scraped at the same moments, multiples of the interval on the twin's clock, which
keeps runs deterministic (Prometheus spreads targets over the interval by a hash of their labels).
"""

from __future__ import annotations

import math
import operator
from itertools import repeat
from dataclasses import dataclass
from typing import Sequence

from . import labels as lbl
from .exporters.base import Exporter, SeriesGroup, TargetScrape
from .labels import Labels
from .metadata import MetadataRegistry
from .tsdb import STALE_NAN, TSDB
from ..clock import SimClock

DEFAULT_INTERVAL = 15.0  # seconds; the scrape interval (kube-prometheus-stack's default is 30 s)

# scrape_duration_seconds is modelled, not measured, so that a run's telemetry is the same every time:
# a fixed cost for the request plus a cost per sample, about what a local exporter shows.
_SCRAPE_BASE_SECONDS = 0.002
_SCRAPE_SECONDS_PER_SAMPLE = 2e-6


@dataclass
class _TargetState:
    groups: Sequence[SeriesGroup]
    refs: frozenset[int]
    report_refs: tuple[int, ...]  # up, scrape_duration_seconds, ... of this target


class ScrapeLoop:
    def __init__(self, tsdb: TSDB, metadata: MetadataRegistry, *, interval: float = DEFAULT_INTERVAL):
        self.tsdb = tsdb
        self.metadata = metadata
        self.interval = interval
        self.exporters: list[Exporter] = []
        self._registered: dict[int, int] = {}  # id(exporter) -> how many of its families are registered
        self._targets: dict[tuple[str, tuple], _TargetState] = {}
        self._last_slot: float | None = None
        self._generation = 0  # bumped when retention forgets series: every group's refs must be resolved again
        self._clock: SimClock | None = None

    def add(self, exporter: Exporter) -> Exporter:
        self.exporters.append(exporter)
        self._register_families(exporter)
        return exporter

    def _register_families(self, exporter: Exporter) -> None:
        families = exporter.families
        done = self._registered.get(id(exporter), 0)
        for family in families[done:]:
            self.metadata.register(family.name, family.type, family.help, family.unit)
        self._registered[id(exporter)] = len(families)

    # ---- the clock -----------------------------------------------------------------------------------
    def attach(self, clock: SimClock) -> None:
        """Scrape on ``clock``: at the first multiple of the interval after now, then every interval."""
        self._clock = clock
        self._last_slot = self._slot(clock.now())
        clock.on_tick(self.tick, name="prometheus scrape loop")

    def detach(self) -> None:
        if self._clock is not None:
            self._clock.remove_handler(self.tick)
            self._clock = None

    def tick(self, now: float) -> None:
        slot = self._slot(now)
        if self._last_slot is not None and slot <= self._last_slot:
            return
        self._last_slot = slot
        self.scrape(now)

    def _slot(self, now: float) -> float:
        return math.floor(now / self.interval + 1e-9) * self.interval

    # ---- scraping ----------------------------------------------------------------------------------------
    def scrape(self, now: float) -> None:
        """Scrape every target of every exporter at ``now``."""
        # References and values in two flat lists, zipped only as the store consumes them: a scrape of a few
        # thousand series then allocates no pair per sample.
        refs: list[int] = []
        values: list[float] = []
        stale: list[int] = []
        seen: set[tuple[str, tuple]] = set()
        for exporter in self.exporters:
            for target in exporter.scrape(now):
                key = (exporter.job, target.key)
                seen.add(key)
                self._scrape_target(key, target, refs, values, stale)
            self._register_families(exporter)
        for key in [k for k in self._targets if k not in seen]:  # targets that went away
            gone = self._targets.pop(key)
            stale.extend(gone.refs)
            stale.extend(gone.report_refs)
        self.tsdb.append_many(now, zip(refs, values))
        if stale:
            self.tsdb.append_many(now, zip(stale, repeat(STALE_NAN)))
        if self.tsdb.apply_retention(now):
            self._generation += 1  # some series are gone from the store: references must be looked up again
            self._targets.clear()

    def _scrape_target(self, key: tuple[str, tuple], target: TargetScrape, refs: list[int], values: list[float],
                       stale: list[int]) -> None:
        state = self._targets.get(key)
        groups = target.groups if target.up else ()
        count = 0
        for group in groups:
            if group.generation != self._generation:
                group.refs = [self.tsdb.ref(labels) for labels in group.labels]
                group.generation = self._generation
            refs.extend(group.refs)
            values.extend(group.values)
            count += len(group.refs)
        added = 0
        if state is None or not _same_groups(state.groups, groups):
            current = frozenset(ref for group in groups for ref in group.refs)
            previous = state.refs if state is not None else frozenset()
            stale.extend(previous - current)
            added = len(current - previous)
            report_refs = state.report_refs if state is not None else self._report_refs(target.labels)
            state = _TargetState(groups, current, report_refs)
            self._targets[key] = state
        refs.extend(state.report_refs)  # up, scrape_duration_seconds, samples scraped, post relabeling, added
        values.extend((1.0 if target.up else 0.0, _SCRAPE_BASE_SECONDS + _SCRAPE_SECONDS_PER_SAMPLE * count,
                       float(count), float(count), float(added)))

    def _report_refs(self, target: Labels) -> tuple[int, ...]:
        names = ("up", "scrape_duration_seconds", "scrape_samples_scraped", "scrape_samples_post_metric_relabeling",
                 "scrape_series_added")
        return tuple(self.tsdb.ref(lbl.with_label(target, lbl.METRIC_NAME, name)) for name in names)


def _same_groups(a: Sequence[SeriesGroup], b: Sequence[SeriesGroup]) -> bool:
    return len(a) == len(b) and all(map(operator.is_, a, b))
