"""Prometheus' rule evaluation for the twin: rule files, alerting and recording rules, alert templating.

    rule_file = load_rule_file("kubernetes.yaml")       # validated as promtool validates it
    manager = RuleManager(tsdb, engine, send=alertmanager.post_alerts)
    manager.load([rule_file], now=clock.now())
    manager.attach(clock)
"""

from .alerting import RESOLVED_RETENTION, AlertState
from .expr_text import expression_text
from .manager import DEFAULT_INTERVAL, RuleManager
from .rule_file import Rule, RuleFile, RuleFileError, RuleGroup, load_rule_file, parse_rule_file

__all__ = ["AlertState", "DEFAULT_INTERVAL", "RESOLVED_RETENTION", "Rule", "RuleFile", "RuleFileError", "RuleGroup",
           "RuleManager", "expression_text", "load_rule_file", "parse_rule_file"]
