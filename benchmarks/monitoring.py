"""Benchmark of the twin's monitoring: scrape cost and a 10-minute warp of the astronomy shop (run by hand).

    python -m benchmarks.monitoring [--minutes 10] [--repeat 3] [--extra-operations 0]

A twin with three nodes and every controller applies the astronomy shop's manifests and runs for
ten simulated minutes, so the traffic engine (``twin.workload``) has made every span series the shop
makes. ``--extra-operations N`` adds a stand-in source of span metrics on top: each Deployment
serving N more server spans and making two more client calls, each with an unset and an error
status series (the error ones without calls), for a heavier load than the engine gives. The figures: series per job, the wall time of one scrape (median and maximum over the run),
and the wall and CPU time of warping ``--minutes`` simulated minutes of the whole twin (controllers,
kubelet, traffic, scrapes, rules), with the wall and CPU time spent in scrapes and in rule evaluations
(CPU time is the figure to read when other processes share the cores).
Each repetition runs in a fresh twin.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Mapping

from pytest_itbench.apps import application
from pytest_itbench.twin import Twin
from pytest_itbench.twin.telemetry.spans import DURATION_BUCKETS_MS, SpanKey, SpanSeries

START = 1_800_000_000.0


class ExtraSpans:
    """Span series whose totals grow with simulated time, computed when scraped (the source costs nothing)."""

    def __init__(self, clock, namespace: str, services: list[str], operations: int):
        self.clock = clock
        self.since = clock.now()
        self.rates: dict[SpanKey, float] = {}
        for s, service in enumerate(services):
            spans = [(f"extra.{service}/Op{i}", "SPAN_KIND_SERVER") for i in range(operations)]
            spans += [(f"extra-{service}-call-{j}", "SPAN_KIND_CLIENT") for j in range(2)]
            for name, kind in spans:
                self.rates[SpanKey(service, name, kind, "STATUS_CODE_UNSET", namespace)] = 2.0 + s % 5
                self.rates[SpanKey(service, name, kind, "STATUS_CODE_ERROR", namespace)] = 0.0

    def span_series(self) -> Mapping[SpanKey, SpanSeries]:
        elapsed = self.clock.now() - self.since
        out = {}
        for key, rate in self.rates.items():
            counts = [0.0] * (len(DURATION_BUCKETS_MS) + 1)
            counts[6] = rate * elapsed  # within 100 ms
            out[key] = SpanSeries(rate * elapsed, rate * elapsed * 80.0, counts)
        return out


def timed(fn: Callable, log: list[float], cpu_log: list[float]) -> Callable:
    def run(*args, **kw):
        started, cpu_started = time.perf_counter(), time.process_time()
        try:
            return fn(*args, **kw)
        finally:
            log.append(time.perf_counter() - started)
            cpu_log.append(time.process_time() - cpu_started)
    return run


def run_once(minutes: float, extra_operations: int) -> dict:
    shop = application("astronomy-shop")
    twin = Twin(seed=1, nodes=3, start_time=START)
    for doc in shop.documents():
        res = twin.api.catalog.for_api_version(doc["apiVersion"], doc["kind"])
        twin.api.create(res, doc["metadata"].get("namespace"), doc, twin.admin_ctx)
    if extra_operations:
        services = sorted(d["metadata"]["name"] for d in twin.store.list("deployments.apps", shop.namespace)[0])
        twin.monitoring.collector.add_spans(ExtraSpans(twin.clock, shop.namespace, services, extra_operations))
    twin.warp(600)  # settled, with traffic

    scrapes: list[float] = []
    rules: list[float] = []
    scrapes_cpu: list[float] = []
    rules_cpu: list[float] = []
    loop, manager = twin.monitoring.scrape, twin.monitoring.rules
    loop.scrape = timed(loop.scrape, scrapes, scrapes_cpu)
    manager.detach()  # re-attached with its evaluation timed
    manager.tick = timed(manager.tick, rules, rules_cpu)
    manager.attach(twin.clock)
    started, cpu_started = time.perf_counter(), time.process_time()
    twin.warp(minutes * 60)
    warp, warp_cpu = time.perf_counter() - started, time.process_time() - cpu_started

    per_job = twin.monitoring.engine.instant_query("count by (job) ({__name__=~'.+'})", twin.clock.now()).value
    series = {dict(s.labels).get("job", ""): int(s.value) for s in per_job.samples}
    firing = twin.monitoring.engine.instant_query('ALERTS{alertstate="firing"}', twin.clock.now()).value
    twin.stop()
    return {"series": series, "scrape_median": statistics.median(scrapes), "scrape_max": max(scrapes),
            "scrapes": len(scrapes), "warp": warp, "warp_cpu": warp_cpu, "scrape_total": sum(scrapes),
            "rules_total": sum(rules), "scrape_cpu": sum(scrapes_cpu), "rules_cpu": sum(rules_cpu),
            "firing": sorted(dict(s.labels)["alertname"] for s in firing.samples)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--extra-operations", type=int, default=0)
    args = parser.parse_args()
    for _ in range(args.repeat):
        r = run_once(args.minutes, args.extra_operations)
        print(f"series by job {r['series']} (total {sum(r['series'].values())}); firing: {r['firing'] or 'none'}")
        print(f"  scrape median {r['scrape_median'] * 1000:.2f} ms, max {r['scrape_max'] * 1000:.2f} ms "
              f"({r['scrapes']} scrapes); warp {args.minutes:g} min: {r['warp']:.3f} s ({r['warp_cpu']:.3f} s CPU): "
              f"scrapes {r['scrape_total']:.3f} s ({r['scrape_cpu']:.3f} s CPU), "
              f"rules {r['rules_total']:.3f} s ({r['rules_cpu']:.3f} s CPU)")


if __name__ == "__main__":
    main()
