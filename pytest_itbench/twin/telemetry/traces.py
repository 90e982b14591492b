"""The twin's trace store: what Jaeger's storage holds, fed by the traffic engine's sampler.

    store = TraceStore(now=clock.now)
    store.add(traces)                                   # the TraceSink the engine writes to
    store.find(TraceQuery("frontend", start_min_us, start_max_us, tags={"error": "true"}))

Search follows Jaeger's OpenSearch backend (what ITBench runs): a trace matches
when one of its spans satisfies every condition at once (service, operation,
start time at millisecond granularity, duration in microseconds, each tag);
matching traces come most recent first (by the latest start of a matching
span), at most ``limit`` of them. A tag value matches a stored value equal to
it, or one it matches whole as a regular expression (OpenSearch runs a
``regexp`` query on the keyword).

Spans are indexed by service and by (service, operation), each index sorted by
start time, so a search reads only the spans of its service inside its window.
Traces are kept in arrival order; the oldest go first when the store holds more
than ``max_spans`` spans or when their last span ended more than ``retention``
seconds before ``now()``. Spans of a trace that arrive in several batches join
the trace they belong to. Everything is ordered, so the same additions give the
same answers.
"""

from __future__ import annotations

import bisect
import math
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterable, Mapping

from .jaeger_model import micros, span_kind, stored_tags, trace_key
from .spans import Span, Trace

DEFAULT_RETENTION = 6 * 3600.0  # seconds; the TSDB's default, so traces and metrics cover the same past
DEFAULT_MAX_SPANS = 50_000
DEFAULT_LIMIT = 100  # Jaeger's search depth when a query gives none
MAX_DURATION_US = 24 * 3600 * 1_000_000  # OpenSearch's upper duration bound when only a minimum is given


class TraceQueryError(ValueError):
    """A search the storage refuses (Jaeger answers it with 500 and this message)."""


@dataclass(frozen=True)
class TraceQuery:
    """A trace search: spans of ``service`` starting within [start_min_us, start_max_us] (Unix microseconds);
    durations in microseconds, 0 meaning "not given"."""

    service: str
    start_min_us: int
    start_max_us: int
    operation: str = ""
    duration_min_us: int = 0
    duration_max_us: int = 0
    tags: Mapping[str, str] = field(default_factory=dict)
    limit: int = DEFAULT_LIMIT


@dataclass(frozen=True)
class DependencyLink:
    parent: str
    child: str
    call_count: int


@dataclass(eq=False)
class _Entry:
    """One stored span and what its indexes sort by."""

    span: Span
    trace: "_StoredTrace"
    seq: int
    start_us: int
    duration_us: int

    @property
    def sort_key(self) -> tuple[int, int]:
        return self.start_us, self.seq


@dataclass(eq=False)
class _StoredTrace:
    key: int
    entries: list[_Entry] = field(default_factory=list)
    last_end: float = -math.inf  # simulated seconds; retention counts from here

    def spans(self) -> list[Span]:
        return [e.span for e in sorted(self.entries, key=lambda e: e.sort_key)]


@dataclass(frozen=True)
class StoredTrace:
    """A trace as the store returns it: its 128-bit id and its spans in start order."""

    key: int
    spans: tuple[Span, ...]


Index = list[tuple[int, int, _Entry]]  # (start_us, seq, entry), sorted


class TraceStore:
    """Implements ``TraceSink``; thread-safe (the clock thread adds while the API reads)."""

    def __init__(self, now: Callable[[], float], *, retention: float = DEFAULT_RETENTION,
                 max_spans: int = DEFAULT_MAX_SPANS):
        if max_spans <= 0:
            raise ValueError(f"max_spans must be positive, got {max_spans}")
        self._now = now
        self.retention = retention
        self.max_spans = max_spans
        self._lock = threading.RLock()
        self._traces: OrderedDict[int, _StoredTrace] = OrderedDict()
        self._by_service: dict[str, Index] = {}
        self._by_operation: dict[tuple[str, str], Index] = {}
        self._operations: dict[str, Counter[tuple[str, str]]] = {}  # service -> (name, kind) -> spans
        self._span_count = 0
        self._seq = 0

    # ---- writing ----------------------------------------------------------------------------------------
    def add(self, traces: Iterable[Trace]) -> None:
        with self._lock:
            for trace in traces:
                key = trace_key(trace.trace_id)
                stored = self._traces.get(key)
                if stored is None:
                    stored = self._traces[key] = _StoredTrace(key)
                for span in trace.spans:
                    self._index(stored, span)
            self._evict()

    def _index(self, stored: _StoredTrace, span: Span) -> None:
        self._seq += 1
        entry = _Entry(span, stored, self._seq, micros(span.start), micros(span.duration))
        stored.entries.append(entry)
        stored.last_end = max(stored.last_end, span.start + span.duration)
        item = (entry.start_us, entry.seq, entry)
        bisect.insort(self._by_service.setdefault(span.service_name, []), item)
        bisect.insort(self._by_operation.setdefault((span.service_name, span.operation_name), []), item)
        self._operations.setdefault(span.service_name, Counter())[(span.operation_name, span_kind(span))] += 1
        self._span_count += 1

    def _evict(self) -> None:
        cutoff = self._now() - self.retention
        while self._traces:
            oldest = next(iter(self._traces.values()))
            if self._span_count <= self.max_spans and oldest.last_end >= cutoff:
                return
            del self._traces[oldest.key]
            for entry in oldest.entries:
                self._unindex(entry)

    def _unindex(self, entry: _Entry) -> None:
        span = entry.span
        _remove(self._by_service, span.service_name, entry)
        _remove(self._by_operation, (span.service_name, span.operation_name), entry)
        counts, operation = self._operations[span.service_name], (span.operation_name, span_kind(span))
        counts[operation] -= 1
        if counts[operation] == 0:
            del counts[operation]
            if not counts:
                del self._operations[span.service_name]
        self._span_count -= 1

    # ---- reading ------------------------------------------------------------------------------------------
    @property
    def span_count(self) -> int:
        return self._span_count

    def __len__(self) -> int:
        return len(self._traces)

    def services(self) -> list[str]:
        with self._lock:
            return sorted(self._operations)

    def operations(self, service: str, kind: str = "") -> list[tuple[str, str]]:
        """(name, kind) pairs of a service's spans, sorted; ``kind`` (``server``, ...) filters them."""
        with self._lock:
            pairs = self._operations.get(service, {})
            return sorted(p for p in pairs if not kind or p[1] == kind)

    def get(self, key: int) -> StoredTrace | None:
        with self._lock:
            stored = self._traces.get(key)
            return None if stored is None else StoredTrace(key, tuple(stored.spans()))

    def find(self, query: TraceQuery) -> list[StoredTrace]:
        if query.start_max_us < query.start_min_us:
            raise TraceQueryError("start Time Minimum is above Maximum")
        matchers = [(key, _value_matcher(value)) for key, value in query.tags.items()]
        duration_bounds = None
        if query.duration_min_us or query.duration_max_us:
            duration_bounds = (query.duration_min_us, query.duration_max_us or MAX_DURATION_US)
        # OpenSearch compares start times in whole milliseconds (startTimeMillis).
        low = query.start_min_us // 1000 * 1000
        high = query.start_max_us // 1000 * 1000 + 999
        latest: dict[int, int] = {}
        with self._lock:
            index = (self._by_operation.get((query.service, query.operation), []) if query.operation
                     else self._by_service.get(query.service, []))
            first = bisect.bisect_left(index, (low,))
            last = bisect.bisect_right(index, (high, math.inf))
            for start_us, _, entry in index[first:last]:
                if duration_bounds and not duration_bounds[0] <= entry.duration_us <= duration_bounds[1]:
                    continue
                if matchers and not _tags_match(entry.span, matchers):
                    continue
                key = entry.trace.key
                if start_us > latest.get(key, -1):
                    latest[key] = start_us
            chosen = sorted(latest, key=lambda k: (-latest[k], k))[:query.limit if query.limit > 0 else DEFAULT_LIMIT]
            return [StoredTrace(k, tuple(self._traces[k].spans())) for k in chosen]

    def dependencies(self, start_us: int, end_us: int) -> list[DependencyLink]:
        """Calls between services in traces with a span starting inside (start, end), counted per child span
        whose parent belongs to another service (as Jaeger's in-memory storage and its Spark job count them)."""
        counts: Counter[tuple[str, str]] = Counter()
        with self._lock:
            for stored in self._traces.values():
                if not any(start_us < e.start_us < end_us for e in stored.entries):
                    continue
                service_of = {e.span.span_id: e.span.service_name for e in stored.entries}
                for entry in stored.entries:
                    parent = service_of.get(entry.span.parent_span_id or "")
                    if parent is not None and parent != entry.span.service_name:
                        counts[(parent, entry.span.service_name)] += 1
        return [DependencyLink(parent, child, n) for (parent, child), n in sorted(counts.items())]


def _remove(indexes: dict, name, entry: _Entry) -> None:
    index = indexes[name]
    position = bisect.bisect_left(index, entry.sort_key)
    del index[position]
    if not index:
        del indexes[name]


@lru_cache(maxsize=256)
def _value_matcher(value: str) -> Callable[[str], bool]:
    try:
        pattern = re.compile(value)
    except re.error:  # not a valid expression: OpenSearch would refuse it, a literal value still finds itself
        return value.__eq__
    return lambda text: text == value or pattern.fullmatch(text) is not None


def _tags_match(span: Span, matchers: list[tuple[str, Callable[[str], bool]]]) -> bool:
    values: dict[str, list[str]] = {}
    for key, text in stored_tags(span):
        values.setdefault(key, []).append(text)
    return all(any(match(text) for text in values.get(key, ())) for key, match in matchers)
