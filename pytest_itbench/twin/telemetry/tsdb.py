"""The twin's time-series database: Prometheus' head block, in pure Python.

A series is identified by its label set. Samples are appended in time order
with float-second timestamps (kept as integer milliseconds, Prometheus'
precision) and float values. A series that disappears gets a staleness
marker: the NaN with Prometheus' bit pattern ``0x7ff0000000000002``
(:data:`STALE_NAN`), which the query engine treats as "no value from here".

Storage is built for the twin's load (tens of thousands of series scraped on
a fixed grid for an hour):

* values live in one ``array('d')`` per series: 8 bytes a sample;
* timestamps are not stored one by one: a series' timestamps are runs of
  evenly spaced points ``(start, step, first index)``, so a series scraped
  every 15 s costs 24 bytes of timestamps in total, and finding the sample at
  or before a time is arithmetic, not a search;
* counter resets and staleness markers are indexed as they are appended, so
  ``rate()`` over a long range never rescans the samples;
* an inverted index (label name -> value -> series refs) answers selectors
  without scanning every series.

Readers get :class:`SeriesSamples` snapshots copied under the lock, so the
clock thread may append while the API thread evaluates a query.
"""

from __future__ import annotations

import bisect
import struct
import threading
from array import array
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence, Union

from . import labels as lbl
from .labels import Labels, Matcher

STALE_NAN_BITS = 0x7FF0000000000002
STALE_NAN: float = struct.unpack("<d", struct.pack("<Q", STALE_NAN_BITS))[0]
_STALE_BYTES = struct.pack("<Q", STALE_NAN_BITS)

SeriesRef = int
LabelsLike = Union[Labels, Mapping[str, str], SeriesRef]


def is_stale(value: float) -> bool:
    """Whether ``value`` is Prometheus' staleness marker (not just any NaN)."""
    return value != value and struct.pack("<d", value) == _STALE_BYTES


def to_millis(t: float) -> int:
    return round(t * 1000)


class OutOfOrderSample(ValueError):
    def __init__(self, labels: Labels, t_ms: int, last_ms: int):
        super().__init__(f"out of order sample for {lbl.format_labels(labels)}: {t_ms} ms after {last_ms} ms")


class DuplicateSample(ValueError):
    def __init__(self, labels: Labels, t_ms: int):
        super().__init__(f"duplicate sample for timestamp {t_ms} ms of {lbl.format_labels(labels)}")


@dataclass(slots=True)
class SeriesSamples:
    """A copy of one series' samples within a time range, for the query engine.

    ``stale`` and ``resets`` index into ``timestamps``/``values``: where the
    staleness markers are, and where a value is below the previous
    non-stale value (a counter reset).
    """

    labels: Labels
    timestamps: Sequence[int]  # milliseconds, ascending
    values: Sequence[float]
    stale: Sequence[int]
    resets: Sequence[int]


class _Series:
    """One series of the head. ``runs`` holds (start ms, step ms, first index) triples."""

    __slots__ = ("ref", "labels", "values", "runs", "stale", "resets", "last_ms", "last_value")

    def __init__(self, ref: SeriesRef, labels: Labels):
        self.ref = ref
        self.labels = labels
        self.values = array("d")
        self.runs = array("q")
        self.stale: array | None = None  # most series are never marked stale
        self.resets: array | None = None  # most counters never reset
        self.last_ms = 0
        self.last_value = float("nan")  # last non-stale value, for reset detection

    def append(self, t_ms: int, value: float) -> None:
        values = self.values
        n = len(values)
        if n:
            if t_ms <= self.last_ms:
                if t_ms == self.last_ms and struct.pack("<d", values[-1]) == struct.pack("<d", value):
                    return  # Prometheus accepts a repeated sample silently
                if t_ms == self.last_ms:
                    raise DuplicateSample(self.labels, t_ms)
                raise OutOfOrderSample(self.labels, t_ms, self.last_ms)
            runs = self.runs
            r = len(runs) - 3
            if n - runs[r + 2] == 1:
                runs[r + 1] = t_ms - runs[r]  # a run's second sample fixes its step
            elif t_ms - self.last_ms != runs[r + 1]:
                runs.extend((t_ms, 0, n))
        else:
            self.runs.extend((t_ms, 0, 0))
        values.append(value)
        self.last_ms = t_ms
        if value != value and struct.pack("<d", value) == _STALE_BYTES:
            if self.stale is None:
                self.stale = array("q")
            self.stale.append(n)
            return
        if value < self.last_value:
            if self.resets is None:
                self.resets = array("q")
            self.resets.append(n)
        self.last_value = value

    def first_ms(self) -> int:
        return self.runs[0]

    def index_at_or_before(self, t_ms: int) -> int:
        """Index of the last sample with timestamp <= ``t_ms``, or -1."""
        runs = self.runs
        nruns = len(runs) // 3
        lo, hi = 0, nruns
        while lo < hi:  # the last run starting at or before t_ms
            mid = (lo + hi) // 2
            if runs[3 * mid] <= t_ms:
                lo = mid + 1
            else:
                hi = mid
        r = lo - 1
        if r < 0:
            return -1
        start, step, first = runs[3 * r], runs[3 * r + 1], runs[3 * r + 2]
        count = (runs[3 * r + 5] if r + 1 < nruns else len(self.values)) - first
        if step == 0:
            return first
        return first + min((t_ms - start) // step, count - 1)

    def timestamps(self, lo: int, hi: int) -> Sequence[int]:
        """Timestamps of samples ``lo`` to ``hi - 1``: a ``range`` when they share one run."""
        runs = self.runs
        nruns = len(runs) // 3
        n = len(self.values)
        parts: list[Sequence[int]] = []
        for r in range(nruns):
            start, step, first = runs[3 * r], runs[3 * r + 1], runs[3 * r + 2]
            end = runs[3 * r + 5] if r + 1 < nruns else n
            a, b = max(lo, first), min(hi, end)
            if a >= b:
                continue
            if step == 0:
                parts.append((start,))
            else:
                parts.append(range(start + step * (a - first), start + step * (b - first), step))
        if len(parts) == 1:
            return parts[0]
        return [t for part in parts for t in part]

    def drop_before(self, k: int) -> None:
        """Forget the first ``k`` samples (retention)."""
        del self.values[:k]
        runs = self.runs
        kept = array("q")
        nruns = len(runs) // 3
        n = len(self.values) + k
        for r in range(nruns):
            start, step, first = runs[3 * r], runs[3 * r + 1], runs[3 * r + 2]
            end = runs[3 * r + 5] if r + 1 < nruns else n
            if end <= k:
                continue
            if first < k:
                start, first = start + step * (k - first), k
            kept.extend((start, step, first - k))
        self.runs = kept
        self.stale = _shift(self.stale, k)
        self.resets = _shift(self.resets, k)


def _shift(indexes: array | None, k: int) -> array | None:
    if indexes is None:
        return None
    kept = array("q", (i - k for i in indexes if i >= k))
    return kept or None


def _slice_indexes(indexes: array | None, lo: int, hi: int) -> Sequence[int]:
    if indexes is None:
        return ()
    a = bisect.bisect_left(indexes, lo)
    b = bisect.bisect_left(indexes, hi)
    return [i - lo for i in indexes[a:b]]


class TSDB:
    """Series and their samples, with a label index; safe to share between threads.

    ``retention`` (seconds) bounds how far back samples are kept; old samples
    are dropped by :meth:`apply_retention` in batches, as Prometheus drops
    whole blocks, so up to ``retention_slack`` more is kept between batches.
    """

    def __init__(self, retention: float = 6 * 3600.0, retention_slack: float = 600.0):
        self.retention_ms = to_millis(retention)
        self.retention_slack_ms = to_millis(retention_slack)
        self._lock = threading.Lock()
        self._series: dict[SeriesRef, _Series] = {}
        self._by_labels: dict[Labels, _Series] = {}
        # name -> value -> refs in creation order (refs only grow, so the lists stay sorted)
        self._postings: dict[str, dict[str, list[SeriesRef]]] = {}
        self._pairs: dict[tuple[str, str], tuple[str, str]] = {}  # interned label pairs
        self._next_ref = 1
        self._min_ms: int | None = None
        self.samples_appended = 0

    # ---- writing -----------------------------------------------------------------------------
    def ref(self, labels: Labels | Mapping[str, str]) -> SeriesRef:
        """The reference of a series (created if new): appending by reference skips the label lookup."""
        with self._lock:
            return self._get_or_create(labels).ref

    def append(self, labels: LabelsLike, t: float, value: float) -> None:
        """Append one sample. Raises :class:`OutOfOrderSample` or :class:`DuplicateSample`."""
        t_ms = to_millis(t)
        with self._lock:
            self._get_or_create(labels).append(t_ms, value)
            self._note_time(t_ms)
            self.samples_appended += 1

    def append_many(self, t: float, samples: Iterable[tuple[LabelsLike, float]]) -> None:
        """Append one scrape: many series at the same timestamp, under one lock."""
        t_ms = to_millis(t)
        with self._lock:
            count = 0
            by_ref, get_or_create = self._series, self._get_or_create
            for labels, value in samples:
                # Scrapes append by reference: the lookup is written out rather than called.
                (by_ref[labels] if type(labels) is int else get_or_create(labels)).append(t_ms, value)
                count += 1
            if count:
                self._note_time(t_ms)
                self.samples_appended += count

    def mark_stale(self, labels: LabelsLike, t: float) -> None:
        """Write a staleness marker, as Prometheus does when a series vanishes from its target."""
        self.append(labels, t, STALE_NAN)

    def _note_time(self, t_ms: int) -> None:
        if self._min_ms is None or t_ms < self._min_ms:
            self._min_ms = t_ms

    def _get_or_create(self, labels: LabelsLike) -> _Series:
        if isinstance(labels, int):
            return self._series[labels]
        if not isinstance(labels, tuple):
            labels = lbl.from_mapping(labels)
        series = self._by_labels.get(labels)
        if series is not None:
            return series
        pairs = self._pairs
        labels = tuple(pairs.setdefault(pair, pair) for pair in labels)
        series = _Series(self._next_ref, labels)
        self._next_ref += 1
        self._series[series.ref] = series
        self._by_labels[labels] = series
        for name, value in labels:
            self._postings.setdefault(name, {}).setdefault(value, []).append(series.ref)
        return series

    # ---- retention -------------------------------------------------------------------------------
    def apply_retention(self, now: float) -> int:
        """Drop samples older than the retention window; returns how many series vanished entirely."""
        cutoff = to_millis(now) - self.retention_ms
        with self._lock:
            if self._min_ms is None or self._min_ms >= cutoff - self.retention_slack_ms:
                return 0
            gone: list[_Series] = []
            new_min: int | None = None
            for series in self._series.values():
                k = series.index_at_or_before(cutoff - 1) + 1
                if k >= len(series.values):
                    gone.append(series)
                    continue
                if k:
                    series.drop_before(k)
                first = series.first_ms()
                new_min = first if new_min is None or first < new_min else new_min
            self._min_ms = new_min
            self._forget(gone)
            return len(gone)

    def _forget(self, gone: list[_Series]) -> None:
        if not gone:
            return
        refs = {s.ref for s in gone}
        touched: set[tuple[str, str]] = set()
        for series in gone:
            del self._series[series.ref]
            del self._by_labels[series.labels]
            touched.update(series.labels)
        for name, value in touched:
            values = self._postings[name]
            kept = [r for r in values[value] if r not in refs]
            if kept:
                values[value] = kept
            else:
                del values[value]
                self._pairs.pop((name, value), None)
                if not values:
                    del self._postings[name]

    # ---- reading ---------------------------------------------------------------------------------
    def select(self, matchers: Sequence[Matcher], mint_ms: int, maxt_ms: int) -> list[SeriesSamples]:
        """Series matching all ``matchers`` with samples in [mint_ms, maxt_ms], in creation order
        (as Prometheus' head returns them)."""
        out: list[SeriesSamples] = []
        # Series scraped together share their run: its bounds are computed once, and they share
        # one ``range`` of timestamps, which lets the engine share per-timestamps work by identity.
        bounds: dict[tuple[int, int, int], tuple[int, int, range]] = {}
        with self._lock:
            for series in self._matching(matchers):
                runs = series.runs
                if len(runs) == 3 and runs[1]:
                    # One evenly spaced run (the common case): bounds by arithmetic.
                    key = (runs[0], runs[1], len(series.values))
                    found = bounds.get(key)
                    if found is None:
                        start, step, n = key
                        lo = 0 if mint_ms <= start else min(n, -((start - mint_ms) // step))
                        hi = 0 if maxt_ms < start else min(n, (maxt_ms - start) // step + 1)
                        found = bounds[key] = (lo, hi, range(start + lo * step, start + hi * step, step))
                    lo, hi, timestamps = found
                    if lo >= hi:
                        continue
                else:
                    lo = series.index_at_or_before(mint_ms - 1) + 1
                    hi = series.index_at_or_before(maxt_ms) + 1
                    if lo >= hi:
                        continue
                    timestamps: Sequence[int] = series.timestamps(lo, hi)
                stale, resets = series.stale, series.resets
                out.append(SeriesSamples(series.labels, timestamps, series.values[lo:hi],
                                         () if stale is None else _slice_indexes(stale, lo, hi),
                                         () if resets is None else _slice_indexes(resets, lo, hi)))
        return out

    def series(self, matcher_sets: Sequence[Sequence[Matcher]], mint_ms: int | None = None,
               maxt_ms: int | None = None) -> list[Labels]:
        """Label sets of series matching any of the matcher sets, with samples in the range (if given)."""
        found: dict[Labels, None] = {}
        with self._lock:
            for matchers in matcher_sets:
                for series in self._matching(matchers):
                    if self._in_range(series, mint_ms, maxt_ms):
                        found[series.labels] = None
        return sorted(found)

    def label_names(self, matcher_sets: Sequence[Sequence[Matcher]] = (), mint_ms: int | None = None,
                    maxt_ms: int | None = None) -> list[str]:
        names: set[str] = set()
        with self._lock:
            for series in self._candidates(matcher_sets, mint_ms, maxt_ms):
                names.update(name for name, _ in series.labels)
        return sorted(names)

    def label_values(self, name: str, matcher_sets: Sequence[Sequence[Matcher]] = (),
                     mint_ms: int | None = None, maxt_ms: int | None = None) -> list[str]:
        values: set[str] = set()
        with self._lock:
            if not matcher_sets and mint_ms is None and maxt_ms is None:
                return sorted(self._postings.get(name, {}))
            for series in self._candidates(matcher_sets, mint_ms, maxt_ms):
                value = lbl.get(series.labels, name)
                if value:
                    values.add(value)
        return sorted(values)

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"series": len(self._series), "samples": sum(len(s.values) for s in self._series.values())}

    def _candidates(self, matcher_sets: Sequence[Sequence[Matcher]], mint_ms: int | None,
                    maxt_ms: int | None) -> Iterator[_Series]:
        if matcher_sets:
            seen: set[SeriesRef] = set()
            pool: list[_Series] = []
            for matchers in matcher_sets:
                for series in self._matching(matchers):
                    if series.ref not in seen:
                        seen.add(series.ref)
                        pool.append(series)
        else:
            pool = list(self._series.values())
        return (s for s in pool if self._in_range(s, mint_ms, maxt_ms))

    @staticmethod
    def _in_range(series: _Series, mint_ms: int | None, maxt_ms: int | None) -> bool:
        if mint_ms is not None and series.last_ms < mint_ms:
            return False
        if maxt_ms is not None and series.first_ms() > maxt_ms:
            return False
        return True

    def _matching(self, matchers: Sequence[Matcher]) -> list[_Series]:
        """Series whose labels satisfy every matcher, found through the index."""
        candidates: set[SeriesRef] | None = None
        # Matchers that reject the empty value select through the postings; the most
        # selective (equality) ones first, so the intersection shrinks early.
        selecting = sorted((m for m in matchers if not m.matches("")),
                           key=lambda m: m.type is not lbl.MatchType.EQUAL)
        for m in selecting:
            refs = self._refs_matching(m)
            candidates = refs if candidates is None else candidates & refs
            if not candidates:
                return []
        for m in matchers:
            if not m.matches(""):
                continue
            # A matcher that accepts "" also accepts series without the label: exclude only
            # those carrying a value it rejects.
            values = self._postings.get(m.name)
            if candidates is None:
                candidates = set(self._series)
            if values:
                for value, refs in values.items():
                    if not m.matches(value):
                        candidates.difference_update(refs)
        if candidates is None:
            candidates = set(self._series)
        return [self._series[r] for r in sorted(candidates)]

    def _refs_matching(self, m: Matcher) -> set[SeriesRef]:
        values = self._postings.get(m.name)
        if not values:
            return set()
        if m.type is lbl.MatchType.EQUAL:
            return set(values.get(m.value, ()))
        out: set[SeriesRef] = set()
        for value, refs in values.items():
            if m.matches(value):
                out.update(refs)
        return out
