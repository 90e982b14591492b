"""The twin's telemetry: a time-series store, a PromQL engine, rules and alerts, and the Prometheus and
Alertmanager HTTP APIs over them.

    tsdb = TSDB()
    tsdb.append_many(clock.now(), [({"__name__": "up", "job": "api"}, 1.0)])  # one scrape
    alertmanager = Alertmanager(now=clock.now, rng=random.Random(seed))
    rules = RuleManager(tsdb, Engine(tsdb), send=alertmanager.post_alerts)
    rules.load([load_rule_file(p) for p in rule_file_paths()], now=clock.now())
    rules.attach(clock)
    app = create_app(tsdb, Engine(tsdb), now=clock.now, rules=rules)         # /api/v1/query, ...
    am_app = create_alertmanager_app(alertmanager)                           # /api/v2/alerts, ...
"""

from .alertmanager import Alertmanager
from .alertmanager_api import create_alertmanager_app
from .metadata import MetadataRegistry
from .prometheus_api import create_app
from .promql import Engine
from .rule_status import RulesProvider
from .rules import RuleFileError, RuleManager, load_rule_file
from .tsdb import STALE_NAN, TSDB

__all__ = ["Alertmanager", "Engine", "MetadataRegistry", "RuleFileError", "RuleManager", "RulesProvider", "STALE_NAN",
           "TSDB", "create_alertmanager_app", "create_app", "load_rule_file"]
