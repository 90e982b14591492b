"""The twin's Alertmanager (v0.27): alerts from the rule evaluator, silences, inhibition, routing and grouping.

``model.py`` holds the state; ``alertmanager_api.py`` (beside this package)
serves it as Alertmanager's API v2.
"""

from .alerts import Alert, PostableAlert, fingerprint
from .config import AlertmanagerConfig, kube_prometheus_stack_config
from .matchers import Matcher, MatcherError, MatchType, parse_matcher
from .model import AlertGroupView, Alertmanager, AlertStatus, AlertView
from .routing import InhibitRule, Route
from .silences import InvalidSilence, Silence, SilenceNotFound

__all__ = ["Alert", "AlertGroupView", "AlertStatus", "AlertView", "Alertmanager", "AlertmanagerConfig",
           "InhibitRule", "InvalidSilence", "MatchType", "Matcher", "MatcherError", "PostableAlert", "Route",
           "Silence", "SilenceNotFound", "fingerprint", "kube_prometheus_stack_config", "parse_matcher"]
