"""The twin's monitoring stack: Prometheus (store, scrape loop, rules) and Alertmanager, on the twin's clock.

    monitoring = Monitoring(clock, store, metrics, seed=1)
    monitoring.collector.add_spans(traffic)          # the traffic engine's span metrics
    apps = monitoring.apps()                          # {"prometheus": ..., "alertmanager": ...} to serve

What ITBench installs on a real cluster, as the twin plays it: kube-prometheus-stack's Prometheus
scraping kube-state-metrics, the kubelets' cAdvisor and the applications' OpenTelemetry Collectors
every 15 s, evaluating the shipped rule files (:mod:`pytest_itbench.apps.rules`), and sending its
alerts to an Alertmanager.
"""

from __future__ import annotations

import random

from aiohttp import web

from ...apps.rules import rule_file_paths
from ..clock import SimClock
from ..metrics import Metrics
from ..store import Store
from .alertmanager import Alertmanager
from .alertmanager_api import create_alertmanager_app
from .exporters import Cadvisor, KubeStateMetrics, OtelCollector, targets
from .metadata import MetadataRegistry
from .opencost import OpenCost
from .prometheus_api import create_app
from .prometheus_rules import PrometheusRuleSync
from .promql import Engine
from .rules import RuleFile, RuleManager, parse_rule_file
from .scrape import DEFAULT_INTERVAL, ScrapeLoop
from .tsdb import TSDB

DEFAULT_RETENTION = 6 * 3600.0  # seconds; longer than any trial, short enough to bound memory


class Monitoring:
    def __init__(self, clock: SimClock, store: Store, metrics: Metrics, *, seed: int,
                 scrape_interval: float = DEFAULT_INTERVAL, retention: float = DEFAULT_RETENTION):
        self.clock = clock
        # A generator of its own: turning monitoring on or off leaves the cluster's random draws unchanged.
        rng = random.Random(f"monitoring:{seed}")
        self.tsdb = TSDB(retention=retention)
        self.engine = Engine(self.tsdb)
        self.metadata = MetadataRegistry()
        self.alertmanager = Alertmanager(clock.now, rng)
        self.rules = RuleManager(self.tsdb, self.engine, send=self.alertmanager.post_alerts,
                                 external_labels=targets.EXTERNAL_LABELS, external_url=targets.EXTERNAL_URL)
        self.scrape = ScrapeLoop(self.tsdb, self.metadata, interval=scrape_interval)
        self.kube_state_metrics = self.scrape.add(KubeStateMetrics(store, targets.kube_state_metrics(rng)))
        self.cadvisor = self.scrape.add(Cadvisor(store, metrics))
        self.collector = self.scrape.add(OtelCollector())
        # OpenCost (job "opencost"), scraped last: its emitter reads back what the others exposed before.
        self.opencost = OpenCost(store, self.engine, clock.now, seed=seed)
        self.scrape.add(self.opencost.exporter)
        shipped = shipped_rule_files()
        self.rules.load(shipped, now=clock.now())
        # PrometheusRule objects, loaded beside the shipped files as the Operator has Prometheus load them.
        self.prometheus_rules = PrometheusRuleSync(store, self.rules, shipped)
        # Scrapes run before rule evaluations within a tick, so a rule sees the samples of its own moment,
        # and so does a reload of changed PrometheusRules.
        self.scrape.attach(clock)
        self.prometheus_rules.attach(clock)
        self.rules.attach(clock)

    def apps(self) -> dict[str, web.Application]:
        """The Prometheus, Alertmanager and OpenCost HTTP APIs, to be served."""
        return {"prometheus": create_app(self.tsdb, self.engine, self.clock.now, metadata=self.metadata,
                                         rules=self.rules),
                "alertmanager": create_alertmanager_app(self.alertmanager),
                "opencost": self.opencost.app()}

    def detach(self) -> None:
        """Stop scraping and evaluating (the clock may go on)."""
        self.scrape.detach()
        self.prometheus_rules.detach()
        self.rules.detach()


def shipped_rule_files() -> list[RuleFile]:
    """The shipped rule files, under the paths the Prometheus Operator mounts rule files at."""
    return [parse_rule_file(f"{targets.RULE_FILE_DIR}/{targets.MONITORING_NAMESPACE}-{path.stem}.yaml",
                            path.read_text()) for path in rule_file_paths()]
