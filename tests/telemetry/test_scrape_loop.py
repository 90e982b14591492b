"""The scrape loop: scrape times on the clock, what Prometheus records about each scrape, staleness of vanished
series and targets, metadata, honor_labels."""

from __future__ import annotations

import math

from pytest_itbench.twin.clock import SimClock
from pytest_itbench.twin.telemetry import MetadataRegistry, TSDB, labels as lbl
from pytest_itbench.twin.telemetry.exporters.base import (MetricFamily, SeriesGroup, TargetScrape,
                                                          target_series_labels)
from pytest_itbench.twin.telemetry.promql import Engine
from pytest_itbench.twin.telemetry.scrape import ScrapeLoop
from pytest_itbench.twin.telemetry.tsdb import is_stale

START = 1_800_000_007.0  # not on the 15 s grid


class Exporter:
    """Targets named by the test; each exposes gauges set by name."""

    job = "demo"

    def __init__(self) -> None:
        self.families = [MetricFamily("demo_items", "gauge", "Items in the demo.")]
        self.targets: dict[str, dict[str, float]] = {}
        self.down: set[str] = set()
        self.scrape_times: list[float] = []
        self._groups: dict[tuple[str, str], SeriesGroup] = {}

    def scrape(self, now: float):
        self.scrape_times.append(now)
        out = []
        for name, series in self.targets.items():
            target = lbl.from_mapping({"job": self.job, "instance": f"{name}:9100"})
            groups = []
            for item, value in series.items():
                group = self._groups.get((name, item))
                if group is None:
                    labels = target_series_labels(target, {"__name__": "demo_items", "item": item}, True)
                    group = self._groups[(name, item)] = SeriesGroup([labels], [0.0])
                group.values[0] = value
                groups.append(group)
            out.append(TargetScrape((name,), target, groups, up=name not in self.down))
        return out


def setup():
    clock = SimClock(start=START, tick=1.0)
    tsdb = TSDB()
    loop = ScrapeLoop(tsdb, MetadataRegistry())
    exporter = loop.add(Exporter())
    loop.attach(clock)
    return clock, tsdb, loop, exporter


def values(tsdb: TSDB, name: str, **match: str) -> list[float]:
    matchers = [lbl.equal("__name__", name), *(lbl.equal(k, v) for k, v in match.items())]
    series = tsdb.select(matchers, 0, 2 ** 62)
    assert len(series) == 1, series
    return list(series[0].values)


def test_scrapes_fall_on_multiples_of_the_interval():
    clock, _, _, exporter = setup()
    clock.warp(50)
    assert exporter.scrape_times == [1_800_000_015.0, 1_800_000_030.0, 1_800_000_045.0]


def test_each_scrape_records_up_and_the_scrape_series():
    clock, tsdb, _, exporter = setup()
    exporter.targets["a"] = {"x": 1.0, "y": 2.0}
    clock.warp(20)
    exporter.targets["a"]["z"] = 3.0
    clock.warp(15)
    assert values(tsdb, "up", instance="a:9100") == [1.0, 1.0]
    assert values(tsdb, "scrape_samples_scraped", instance="a:9100") == [2.0, 3.0]
    assert values(tsdb, "scrape_samples_post_metric_relabeling", instance="a:9100") == [2.0, 3.0]
    assert values(tsdb, "scrape_series_added", instance="a:9100") == [2.0, 1.0]
    durations = values(tsdb, "scrape_duration_seconds", instance="a:9100")
    assert 0 < durations[0] < durations[1] < 0.1
    assert values(tsdb, "demo_items", item="x") == [1.0, 1.0]


def test_series_and_targets_that_vanish_get_staleness_markers():
    clock, tsdb, _, exporter = setup()
    exporter.targets["a"] = {"x": 1.0, "y": 2.0}
    exporter.targets["b"] = {"x": 5.0}
    clock.warp(20)
    del exporter.targets["a"]["y"]
    del exporter.targets["b"]
    clock.warp(15)
    y = values(tsdb, "demo_items", instance="a:9100", item="y")
    assert y[0] == 2.0 and is_stale(y[1])
    assert is_stale(values(tsdb, "demo_items", instance="b:9100")[1])
    assert is_stale(values(tsdb, "up", instance="b:9100")[1])
    assert values(tsdb, "demo_items", instance="a:9100", item="x") == [1.0, 1.0]
    engine = Engine(tsdb)
    assert engine.instant_query("count(demo_items)", clock.now()).value.samples[0].value == 1


def test_a_target_that_stops_answering():
    clock, tsdb, _, exporter = setup()
    exporter.targets["a"] = {"x": 1.0}
    clock.warp(20)
    exporter.down.add("a")
    clock.warp(15)
    assert values(tsdb, "up", instance="a:9100") == [1.0, 0.0]
    assert values(tsdb, "scrape_samples_scraped", instance="a:9100") == [1.0, 0.0]
    assert is_stale(values(tsdb, "demo_items", instance="a:9100")[1])
    exporter.down.clear()
    clock.warp(15)
    assert values(tsdb, "demo_items", instance="a:9100")[2] == 1.0


def test_families_are_registered_including_those_that_appear_later():
    clock, _, loop, exporter = setup()
    assert loop.metadata.families()["demo_items"][0].help == "Items in the demo."
    exporter.families.append(MetricFamily("demo_errors_total", "counter", "Errors."))
    clock.warp(20)
    assert loop.metadata.families()["demo_errors_total"][0].type == "counter"


def test_retention_drops_old_samples_and_forgotten_series_come_back():
    clock = SimClock(start=START, tick=5.0)
    tsdb = TSDB(retention=60.0, retention_slack=15.0)
    loop = ScrapeLoop(tsdb, MetadataRegistry())
    exporter = loop.add(Exporter())
    loop.attach(clock)
    exporter.targets["a"] = {"x": 1.0, "gone": 4.0}
    clock.warp(20)
    del exporter.targets["a"]["gone"]
    clock.warp(200)  # "gone" has had no sample for longer than the retention: the store forgets it
    assert tsdb.series([[lbl.equal("item", "gone")]]) == []
    assert len(values(tsdb, "demo_items", item="x")) <= math.ceil((60 + 15) / 15) + 1
    exporter.targets["a"]["gone"] = 7.0
    clock.warp(15)
    assert values(tsdb, "demo_items", item="gone") == [7.0]


def test_honor_labels_and_exported_labels():
    target = lbl.from_mapping({"job": "otel-collector", "namespace": "shop", "instance": "c:8888"})
    honored = target_series_labels(target, {"__name__": "m", "namespace": "other", "job": "cart"}, True)
    assert dict(honored) == {"__name__": "m", "namespace": "other", "job": "cart", "instance": "c:8888"}
    exported = target_series_labels(target, {"__name__": "m", "namespace": "other", "job": "cart", "empty": ""},
                                    False)
    assert dict(exported) == {"__name__": "m", "namespace": "shop", "exported_namespace": "other",
                              "job": "otel-collector", "exported_job": "cart", "instance": "c:8888"}
