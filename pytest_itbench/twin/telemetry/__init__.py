"""The twin's telemetry: a time-series store, a PromQL engine and the Prometheus HTTP API over them.

    tsdb = TSDB()
    tsdb.append_many(clock.now(), [({"__name__": "up", "job": "api"}, 1.0)])  # one scrape
    app = create_app(tsdb, Engine(tsdb), now=clock.now)                      # /api/v1/query, ...
"""

from .metadata import MetadataRegistry
from .prometheus_api import create_app
from .promql import Engine
from .rule_status import RulesProvider
from .tsdb import STALE_NAN, TSDB

__all__ = ["Engine", "MetadataRegistry", "RulesProvider", "STALE_NAN", "TSDB", "create_app"]
