"""The metrics store: appends, timestamp runs, matchers and the index, staleness, resets, retention, memory."""

from __future__ import annotations

import math
import threading
import tracemalloc

import pytest

from pytest_itbench.twin.telemetry import labels as lbl
from pytest_itbench.twin.telemetry.labels import Matcher, MatchType
from pytest_itbench.twin.telemetry.tsdb import STALE_NAN, TSDB, DuplicateSample, OutOfOrderSample, is_stale

UP = {"__name__": "up", "job": "api"}


def m(name: str, op: str, value: str) -> Matcher:
    return Matcher(MatchType(op), name, value)


def samples(db: TSDB, matchers, mint=0, maxt=10 ** 12):
    return [(dict(s.labels), list(s.timestamps), list(s.values)) for s in db.select(matchers, mint, maxt)]


def test_append_and_select_a_range():
    db = TSDB()
    for i in range(10):
        db.append(UP, 100 + i * 15, float(i))
    [(labels, ts, vs)] = samples(db, [m("__name__", "=", "up")], 130_000, 160_000)
    assert labels == UP
    assert ts == [130_000, 145_000, 160_000]
    assert vs == [2.0, 3.0, 4.0]


def test_regular_timestamps_are_one_run():
    db = TSDB()
    for i in range(1000):
        db.append(UP, i * 15, 1.0)
    [s] = db.select([m("job", "=", "api")], 0, 10 ** 9)
    assert isinstance(s.timestamps, range)
    assert len(db._series[1].runs) == 3  # (start, step, first index)


def test_gaps_and_irregular_times_make_new_runs():
    db = TSDB()
    times = [0, 15, 30, 45, 120, 135, 150, 151, 300]
    for t in times:
        db.append(UP, t, t)
    series = db._series[1]
    assert len(series.runs) // 3 == 3  # [0..45], [120..150], [151, 300]
    [(_, ts, vs)] = samples(db, [m("job", "=", "api")])
    assert ts == [t * 1000 for t in times]
    assert vs == [float(t) for t in times]
    assert series.index_at_or_before(149_999) == 5
    assert series.index_at_or_before(150_500) == 6
    assert series.index_at_or_before(10 ** 9) == 8
    assert series.index_at_or_before(-1) == -1
    [(_, ts, _)] = samples(db, [m("job", "=", "api")], 40_000, 151_000)
    assert ts == [45_000, 120_000, 135_000, 150_000, 151_000]


def test_times_are_milliseconds():
    db = TSDB()
    db.append(UP, 1.0004, 1)
    db.append(UP, 1.0016, 2)
    assert samples(db, [m("job", "=", "api")])[0][1] == [1000, 1002]


def test_out_of_order_and_duplicates():
    db = TSDB()
    db.append(UP, 10, 1.0)
    db.append(UP, 10, 1.0)  # the same sample again is accepted silently, as Prometheus does
    with pytest.raises(DuplicateSample):
        db.append(UP, 10, 2.0)
    with pytest.raises(OutOfOrderSample):
        db.append(UP, 5, 1.0)
    assert samples(db, [m("job", "=", "api")])[0][2] == [1.0]


def test_labels_from_mappings_drop_empty_values():
    db = TSDB()
    db.append({"__name__": "up", "job": "api", "zone": ""}, 0, 1)
    assert db.series([[m("job", "=", "api")]]) == [(("__name__", "up"), ("job", "api"))]


@pytest.fixture
def fleet():
    db = TSDB()
    for job, instance, method in [("api", "0", "GET"), ("api", "1", "POST"), ("web", "0", ""), ("web-canary", "0", "")]:
        db.append({"__name__": "http_requests_total", "job": job, "instance": instance, "method": method}, 0, 1)
    db.append({"__name__": "node_load1", "instance": "0"}, 0, 1)
    return db


@pytest.mark.parametrize("matchers, jobs", [
    ([("job", "=", "api")], ["api", "api"]),
    ([("__name__", "=", "http_requests_total"), ("job", "!=", "api")], ["web", "web-canary"]),
    ([("job", "=~", "web")], ["web"]),  # anchored
    ([("job", "=~", "web.*")], ["web", "web-canary"]),
    ([("__name__", "=", "http_requests_total"), ("job", "!~", "web.*")], ["api", "api"]),
    ([("__name__", "=", "http_requests_total"), ("method", "=", "")], ["web", "web-canary"]),
    ([("__name__", "=", "http_requests_total"), ("method", "=~", "GET|")], ["api", "web", "web-canary"]),
    ([("job", "=~", ".+"), ("instance", "=", "1")], ["api"]),
    ([("__name__", "=~", "node_.*"), ("job", "=", "")], [""]),
    ([("job", "=", "nope")], []),
])
def test_matchers(fleet, matchers, jobs):
    found = fleet.select([m(*spec) for spec in matchers], 0, 0)
    assert sorted(lbl.get(s.labels, "job") for s in found) == jobs


def test_regex_semantics():
    assert m("a", "=~", "a.b").matches("a\nb")  # . matches newlines
    assert not m("a", "=~", "b").matches("abc")  # anchored at both ends
    assert m("a", "=~", "[[:digit:]]+").matches("123")  # RE2's POSIX classes
    assert m("a", "!~", "x|y").matches("")


def test_select_without_samples_in_range(fleet):
    assert fleet.select([m("job", "=", "api")], 1000, 2000) == []


def test_staleness_markers_are_indexed():
    db = TSDB()
    for t, v in [(0, 1.0), (15, STALE_NAN), (30, math.nan), (45, 4.0)]:
        db.append(UP, t, v)
    [s] = db.select([m("job", "=", "api")], 0, 10 ** 9)
    assert list(s.stale) == [1]
    assert is_stale(s.values[1]) and not is_stale(s.values[2]) and math.isnan(s.values[2])
    db.mark_stale(UP, 60)
    [s] = db.select([m("job", "=", "api")], 50_000, 10 ** 9)
    assert list(s.timestamps) == [60_000] and list(s.stale) == [0]


def test_counter_resets_are_indexed_across_staleness_markers():
    db = TSDB()
    for t, v in enumerate([1.0, 5.0, 2.0, STALE_NAN, 1.0, 3.0, 0.5]):
        db.append(UP, t, v)
    [s] = db.select([m("job", "=", "api")], 0, 10 ** 9)
    assert list(s.resets) == [2, 4, 6]  # 2 < 5, 1 < 2 (past the marker), 0.5 < 3
    [s] = db.select([m("job", "=", "api")], 3000, 10 ** 9)
    assert list(s.resets) == [1, 3]


def test_refs_and_scrapes():
    db = TSDB()
    a = db.ref({"__name__": "a"})
    b = db.ref({"__name__": "b"})
    assert db.ref({"__name__": "a"}) == a
    db.append_many(0, [(a, 1.0), (b, 2.0), ({"__name__": "c"}, 3.0)])
    db.append(a, 15, 4.0)
    assert db.stats() == {"series": 3, "samples": 4}
    assert db.samples_appended == 4


def test_series_labels_and_values(fleet):
    assert fleet.label_names() == ["__name__", "instance", "job", "method"]
    assert fleet.label_names([[m("__name__", "=", "node_load1")]]) == ["__name__", "instance"]
    assert fleet.label_values("job") == ["api", "web", "web-canary"]
    assert fleet.label_values("method", [[m("job", "=", "api")]]) == ["GET", "POST"]
    assert fleet.label_values("job", mint_ms=1) == []
    assert len(fleet.series([[m("job", "=", "api")], [m("instance", "=", "1")]])) == 2


def test_retention_drops_old_samples_and_vanished_series():
    db = TSDB(retention=600, retention_slack=60)
    for t in range(0, 1200, 15):
        db.append(UP, t, float(t))
        if t < 300:
            db.append({"__name__": "gone", "pod": "old"}, t, 1.0)
    assert db.apply_retention(1200) == 1
    [(labels, ts, vs)] = samples(db, [m("__name__", "=~", ".+")])
    assert labels == UP
    assert ts[0] == 600_000 and vs[0] == 600.0 and len(ts) == 40
    assert db.label_values("__name__") == ["up"]
    assert db.label_names() == ["__name__", "job"]
    assert db.apply_retention(1210) == 0  # within the slack: nothing to do yet
    db.append(UP, 1200, 1.0)  # appending continues the run
    assert samples(db, [m("job", "=", "api")])[0][1][-2:] == [1_185_000, 1_200_000]


def test_retention_keeps_resets_and_staleness_aligned():
    db = TSDB(retention=60, retention_slack=0)
    for t, v in enumerate([5.0, 1.0, 2.0, STALE_NAN, 1.0] * 30):
        db.append(UP, t * 10, v)
    db.apply_retention(1490)
    [s] = db.select([m("job", "=", "api")], 0, 10 ** 9)
    for i in s.resets:
        before = [v for v in s.values[:i] if not is_stale(v)]
        assert not before or s.values[i] < before[-1]  # a reset at the snapshot's start has no predecessor
    assert all(is_stale(s.values[i]) for i in s.stale)


def test_concurrent_appends_and_selects():
    db = TSDB()
    errors = []

    def write():
        for i in range(2000):
            db.append_many(i * 15, [({"__name__": "x", "i": str(k)}, float(i)) for k in range(20)])

    def read():
        try:
            for _ in range(200):
                for s in db.select([m("__name__", "=", "x")], 0, 10 ** 12):
                    assert len(s.timestamps) == len(s.values)
        except AssertionError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write), threading.Thread(target=read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_bytes_per_sample():
    """A scraped series costs its values' 8 bytes per sample; timestamps cost nothing per sample."""
    tracemalloc.start()
    db = TSDB()
    refs = [db.ref({"__name__": "m", "pod": f"p{i}"}) for i in range(500)]
    before, _ = tracemalloc.get_traced_memory()
    for k in range(240):
        db.append_many(k * 15, ((ref, float(k)) for ref in refs))
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert (after - before) / (500 * 240) < 9.0
