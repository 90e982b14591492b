"""Benchmark of an hour of the astronomy shop: memory, and a 1-hour range query in the process and over HTTP.

    python -m benchmarks.shop_hour [--minutes 60] [--repeat 5]

A twin with three nodes and every controller (telemetry and the traffic engine included) applies the
shop's manifests and warps ``--minutes`` simulated minutes. The figures: the process's peak RSS
(``ru_maxrss``, so the interpreter and the libraries count too), the RSS before the manifests are
applied, what the stores hold at the end (TSDB series and samples, traces and spans, log lines and
bytes), then ``sum by (service_name) (rate(traces_span_metrics_calls_total[5m]))`` over the last hour
at a 15 s step: CPU and wall time in the engine (median over ``--repeat``), and wall time of the same
query through the twin's Prometheus HTTP API (``/api/v1/query_range``, JSON included).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
import urllib.parse
import urllib.request

from pytest_itbench.apps import application
from pytest_itbench.twin import Twin

START = 1_800_000_000.0
QUERY = "sum by (service_name) (rate(traces_span_metrics_calls_total[5m]))"


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def store_sizes(twin: Twin) -> dict:
    tsdb = twin.tsdb.stats()
    traces = twin.traces
    lines = nbytes = 0
    for container in twin.logs._containers.values():  # read only, for the figures
        for instance in (container.current, container.previous):
            if instance is not None:
                lines += len(instance.lines)
                nbytes += sum(len(line.text) for line in instance.lines)
    return {"series": tsdb["series"], "samples": tsdb["samples"], "traces": len(traces._traces),
            "spans": traces._span_count, "log_lines": lines, "log_bytes": nbytes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    base = rss_mb()
    shop = application("astronomy-shop")
    with Twin(seed=1, nodes=3, start_time=START) as twin:
        for doc in shop.documents():
            res = twin.api.catalog.for_api_version(doc["apiVersion"], doc["kind"])
            twin.api.create(res, doc["metadata"].get("namespace"), doc, twin.admin_ctx)
        started, cpu = time.perf_counter(), time.process_time()
        twin.warp(args.minutes * 60)
        warp, warp_cpu = time.perf_counter() - started, time.process_time() - cpu
        sizes = store_sizes(twin)
        print(f"warp {args.minutes:g} min: {warp:.2f} s ({warp_cpu:.2f} s CPU); RSS {base:.0f} MB before the "
              f"shop, {rss_mb():.0f} MB now, peak {peak_rss_mb():.0f} MB")
        print("  stores: " + ", ".join(f"{k} {v:,}" for k, v in sizes.items()))

        end = twin.clock.now()
        start = end - 3600
        engine = twin.monitoring.engine
        cpu_times, walls = [], []
        for _ in range(args.repeat):
            w, c = time.perf_counter(), time.process_time()
            result = engine.range_query(QUERY, start, end, 15)
            walls.append(time.perf_counter() - w)
            cpu_times.append(time.process_time() - c)
        series = result.value.series
        print(f"  {QUERY}, 1 h at 15 s: {len(series)} series x {max(len(s.points) for s in series)} steps; "
              f"engine {statistics.median(cpu_times) * 1000:.1f} ms CPU, {statistics.median(walls) * 1000:.1f} ms "
              "wall (median)")
        url = twin.prometheus_url + "/api/v1/query_range?" + urllib.parse.urlencode(
            {"query": QUERY, "start": start, "end": end, "step": "15s"})
        http = []
        for _ in range(args.repeat):
            w = time.perf_counter()
            with urllib.request.urlopen(url) as response:
                body = json.load(response)
            http.append(time.perf_counter() - w)
        assert body["status"] == "success", body
        print(f"  over HTTP (/api/v1/query_range): {statistics.median(http) * 1000:.1f} ms wall (median), "
              f"{len(body['data']['result'])} series")


if __name__ == "__main__":
    main()
