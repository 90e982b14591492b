"""Benchmark of the twin's metrics store and PromQL engine (run by hand, not in CI).

    python benchmarks/promql.py [--services 20] [--operations 10] [--codes 3] [--buckets 12]
                                [--memory-series 50000] [--repeat 5]

Prints the figures docs record. Targets (issue 4): ``sum by (service)
(rate(...[5m]))`` over a 1-hour range at 15 s step answers in under 100 ms on
a realistic store; a 1-hour run with ~50,000 active series at 15 s scrape
fits comfortably under 300 MB with the rest of the twin.

The store is filled the way the twin's scraper fills it: every 15 simulated
seconds, one sample for every series (OpenTelemetry span metrics: calls and
a duration histogram per service, operation and status code).
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
import tracemalloc

from pytest_itbench.twin.telemetry.promql import Engine
from pytest_itbench.twin.telemetry.tsdb import TSDB

SCRAPE = 15.0
START = 1_700_000_000.0
BOUNDS = ("2", "5", "10", "25", "50", "100", "250", "500", "1000", "2500", "5000", "+Inf")


def span_metric_refs(db: TSDB, services: int, operations: int, codes: int, buckets: int) -> list[tuple[int, float]]:
    """Series refs with a per-scrape increment: calls, duration buckets, sum and count."""
    rng = random.Random(4)
    status_codes = ("STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR")[:codes]
    refs: list[tuple[int, float]] = []
    for s in range(services):
        for o in range(operations):
            for code in status_codes:
                base = {"service_name": f"service-{s:02d}", "span_name": f"oteldemo.Service/Op{o}",
                        "span_kind": "SPAN_KIND_SERVER", "status_code": code}
                rate = rng.uniform(0.5, 20.0) * SCRAPE
                refs.append((db.ref({"__name__": "traces_span_metrics_calls_total", **base}), rate))
                for i, le in enumerate(BOUNDS[-buckets:]):
                    share = min(1.0, (i + 1) / buckets * 1.2)
                    refs.append((db.ref({"__name__": "traces_span_metrics_duration_milliseconds_bucket",
                                         **base, "le": le}), rate * share))
                refs.append((db.ref({"__name__": "traces_span_metrics_duration_milliseconds_count", **base}), rate))
                refs.append((db.ref({"__name__": "traces_span_metrics_duration_milliseconds_sum", **base}),
                             rate * 42.0))
    return refs


def fill(db: TSDB, refs: list[tuple[int, float]], scrapes: int) -> float:
    """Append ``scrapes`` scrapes of every series; returns wall seconds."""
    values = [0.0] * len(refs)
    jitter = random.Random(5)
    began = time.perf_counter()
    for k in range(scrapes):
        t = START + k * SCRAPE
        for i, (_, increment) in enumerate(refs):
            values[i] += increment * (0.9 + 0.2 * jitter.random())
        db.append_many(t, ((ref, values[i]) for i, (ref, _) in enumerate(refs)))
    return time.perf_counter() - began


def timed(fn, repeat: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds of ``fn()``; CPU time shows the cost when other processes share the cores."""
    result = None
    wall, cpu = [], []
    for _ in range(repeat):
        began, began_cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall.append(time.perf_counter() - began)
        cpu.append(time.process_time() - began_cpu)
    return statistics.median(wall), statistics.median(cpu), result


def query_figures(args: argparse.Namespace) -> None:
    db = TSDB()
    refs = span_metric_refs(db, args.services, args.operations, args.codes, args.buckets)
    scrapes = int(3900 / SCRAPE) + 1  # an hour of range plus the 5m window before it
    seconds = fill(db, refs, scrapes)
    samples = len(refs) * scrapes
    print(f"store: {len(refs)} series, {samples} samples")
    print(f"append: {samples / seconds:,.0f} samples/s ({seconds * 1e6 / samples:.2f} us per sample, "
          f"one scrape of {len(refs)} series in {seconds / scrapes * 1000:.1f} ms)")
    engine = Engine(db)
    end = START + (scrapes - 1) * SCRAPE
    start = end - 3600
    cases = [
        ("sum by (service_name) (rate(traces_span_metrics_calls_total[5m]))", "range 1h/15s"),
        ('sum by (service_name) (rate(traces_span_metrics_calls_total{status_code="STATUS_CODE_ERROR"}[5m]))'
         " / sum by (service_name) (rate(traces_span_metrics_calls_total[5m]))", "range 1h/15s"),
        ("histogram_quantile(0.95, sum by (service_name, le) "
         "(rate(traces_span_metrics_duration_milliseconds_bucket[5m])))", "range 1h/15s"),
        ("histogram_quantile(0.95, sum by (service_name, le) "
         "(rate(traces_span_metrics_duration_milliseconds_bucket[5m])))", "instant"),
        ("sum by (service_name) (rate(traces_span_metrics_calls_total[5m]))", "instant"),
    ]
    for query, kind in cases:
        if kind == "instant":
            wall, cpu, result = timed(lambda: engine.instant_query(query, end), args.repeat)
            size = len(result.value.samples)
        else:
            wall, cpu, result = timed(lambda: engine.range_query(query, start, end, SCRAPE), args.repeat)
            size = len(result.value.series)
        print(f"{kind:>13}: {wall * 1000:7.1f} ms wall {cpu * 1000:7.1f} ms cpu  {size:3d} series  {query}")


def memory_figures(args: argparse.Namespace) -> None:
    """Bytes per sample for ``--memory-series`` series over an hour at 15 s, by tracemalloc."""
    gc.collect()
    tracemalloc.start()
    db = TSDB()
    rng = random.Random(6)
    refs = []
    for i in range(args.memory_series):
        labels = {"__name__": f"metric_{i % 300}", "namespace": f"ns-{i % 7}", "pod": f"pod-{i // 10}",
                  "container": f"c-{i % 10}", "instance": f"10.0.{i % 250}.{i % 200}:8080"}
        refs.append((db.ref(labels), rng.uniform(0, 100)))
    scrapes = int(3600 / SCRAPE)
    before_samples, _ = tracemalloc.get_traced_memory()
    values = [0.0] * len(refs)
    for k in range(scrapes):
        for i, (_, increment) in enumerate(refs):
            values[i] += increment
        db.append_many(START + k * SCRAPE, ((ref, values[i]) for i, (ref, _) in enumerate(refs)))
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    samples = len(refs) * scrapes
    series_bytes = before_samples
    sample_bytes = current - before_samples
    print(f"memory: {args.memory_series} series x {scrapes} scrapes = {samples:,} samples: "
          f"{current / 2 ** 20:.0f} MiB in all, {series_bytes / args.memory_series:.0f} B per series (labels, "
          f"index), {sample_bytes / samples:.2f} B per sample")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--services", type=int, default=20)
    parser.add_argument("--operations", type=int, default=10)
    parser.add_argument("--codes", type=int, default=3)
    parser.add_argument("--buckets", type=int, default=12)
    parser.add_argument("--memory-series", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    query_figures(args)
    memory_figures(args)


if __name__ == "__main__":
    main()
