"""Benchmark of the twin's rule evaluation: the shipped rules every 15 s against ~10,000 series (run by hand).

    python -m benchmarks.rules [--services 20] [--operations 10] [--pods 100] [--minutes 10] [--repeat 3]

The store holds what the shipped rules read: OpenTelemetry span metrics
(``--services`` x ``--operations`` x 3 status codes: calls, a 12-bucket
duration histogram, sum and count; the defaults make ~10,000 series in all,
several times the astronomy shop's) and kube-state-metrics for ``--pods`` pods with their deployments and
autoscalers, twenty minutes of history scraped every 15 s. The span metrics
are those of ``benchmarks/promql.py``, where every service has errors and a
slow tail, so HighRequestErrorRate and HighRequestLatency fire for each
service and alert templating is part of the cost. Then the clock
runs ``--minutes`` simulated minutes with scrapes and every rule group
evaluated every 15 s; the figure is the CPU time of the evaluations.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from benchmarks.promql import BOUNDS, SCRAPE, START, span_metric_refs
from pytest_itbench.apps.rules import rule_file_paths
from pytest_itbench.twin.telemetry.promql import Engine
from pytest_itbench.twin.telemetry.rules import RuleManager, load_rule_file
from pytest_itbench.twin.telemetry.tsdb import TSDB

PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")


def kube_state_refs(db: TSDB, pods: int) -> list[tuple[int, float]]:
    """Gauges of a healthy cluster: (series ref, value)."""
    ksm = {"job": "kube-state-metrics", "namespace": "otel-demo"}
    refs = []
    for p in range(pods):
        pod = {**ksm, "pod": f"svc-{p // 3}-{p:05d}"}
        for phase in PHASES:
            refs.append((db.ref({"__name__": "kube_pod_status_phase", **pod, "phase": phase}),
                         1.0 if phase == "Running" else 0.0))
        refs.append((db.ref({"__name__": "kube_pod_status_ready", **pod, "condition": "true"}), 1.0))
        refs.append((db.ref({"__name__": "kube_pod_owner", **pod, "owner_kind": "ReplicaSet",
                             "owner_name": f"svc-{p // 3}"}), 1.0))
        refs.append((db.ref({"__name__": "kube_pod_container_status_restarts_total", **pod, "container": "main"}),
                     0.0))
    for d in range(pods // 3):
        deployment = {**ksm, "deployment": f"svc-{d}"}
        for name in ("spec_replicas", "status_replicas_available", "status_replicas_updated"):
            refs.append((db.ref({"__name__": f"kube_deployment_{name}", **deployment}), 3.0))
    for a in range(10):
        hpa = {**ksm, "horizontalpodautoscaler": f"svc-{a}"}
        for name, value in (("status_current_replicas", 3.0), ("spec_max_replicas", 10.0),
                            ("spec_min_replicas", 1.0)):
            refs.append((db.ref({"__name__": f"kube_horizontalpodautoscaler_{name}", **hpa}), value))
    refs.append((db.ref({"__name__": "kafka_consumer_group_members", "group": "accounting",
                         "namespace": "otel-demo"}), 1.0))
    refs.append((db.ref({"__name__": "kafka_consumer_group_lag_sum_ratio", "group": "accounting", "topic": "orders",
                         "namespace": "otel-demo"}), 2.0))
    return refs


class Scraper:
    """Appends one scrape of every series: counters grow, gauges hold."""

    def __init__(self, db: TSDB, counters: list[tuple[int, float]], gauges: list[tuple[int, float]]):
        self.db = db
        self.counters = counters
        self.gauges = gauges
        self.values = [0.0] * len(counters)
        self.jitter = random.Random(5)

    def scrape(self, t: float) -> None:
        for i, (_, increment) in enumerate(self.counters):
            self.values[i] += increment * (0.9 + 0.2 * self.jitter.random())
        self.db.append_many(t, [*((ref, self.values[i]) for i, (ref, _) in enumerate(self.counters)), *self.gauges])


def run(args: argparse.Namespace) -> tuple[int, list[float], dict[str, list[float]], int]:
    db = TSDB()
    scraper = Scraper(db, span_metric_refs(db, args.services, args.operations, 3, len(BOUNDS)),
                      kube_state_refs(db, args.pods))
    history = int(20 * 60 / SCRAPE)
    for k in range(history):
        scraper.scrape(START + k * SCRAPE)
    series = db.stats()["series"]
    manager = RuleManager(db, Engine(db), default_interval=SCRAPE)
    now = START + (history - 1) * SCRAPE
    manager.load([load_rule_file(p) for p in rule_file_paths()], now)
    rounds: list[float] = []
    per_group: dict[str, list[float]] = {g.name: [] for g in manager.groups}
    for k in range(int(args.minutes * 60 / SCRAPE)):
        now += SCRAPE
        scraper.scrape(now)
        began = time.process_time()
        manager.tick(now)  # one slot of every group falls in each 15 s
        rounds.append(time.process_time() - began)
        for group in manager.groups:
            per_group[group.name].append(group.evaluation_time)
    alerts = sum(len(getattr(r, "alerts", ())) for g in manager.rule_groups() for r in g.rules)
    return series, rounds, per_group, alerts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--services", type=int, default=20)
    parser.add_argument("--operations", type=int, default=10)
    parser.add_argument("--pods", type=int, default=100)
    parser.add_argument("--minutes", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    medians = []
    for _ in range(args.repeat):
        series, rounds, per_group, alerts = run(args)
        medians.append(statistics.median(rounds))
    print(f"store: {series} series; {len(rounds)} evaluations of every group, one per 15 s of simulated time; "
          f"{alerts} alerts active at the end")
    print(f"all shipped groups, one evaluation: {statistics.median(medians) * 1000:.1f} ms CPU (median of "
          f"{args.repeat} runs; {statistics.median(medians) / SCRAPE * 100:.2f}% of the 15 s interval)")
    for name, times in sorted(per_group.items(), key=lambda item: -statistics.median(item[1])):
        print(f"  {name:45s} {statistics.median(times) * 1000:7.1f} ms wall")


if __name__ == "__main__":
    main()
