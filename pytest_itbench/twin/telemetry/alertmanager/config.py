"""Alertmanager's configuration: the kube-prometheus-stack default, and its text as ``/api/v2/status`` shows it.

The default routes everything to the ``null`` receiver grouped by
namespace, and inhibits ``warning``/``info`` alerts while a ``critical`` one
with the same ``alertname`` and ``namespace`` fires (and ``info`` under
``warning``), as the chart configures Alertmanager.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..durations import format_duration
from .matchers import Matcher, parse_matcher
from .routing import InhibitRule, Route

# Alertmanager's global defaults, printed in this order (config.GlobalConfig's YAML fields).
_GLOBAL_DEFAULTS = """\
  http_config:
    follow_redirects: true
    enable_http2: true
  smtp_hello: localhost
  smtp_require_tls: true
  pagerduty_url: https://events.pagerduty.com/v2/enqueue
  opsgenie_api_url: https://api.opsgenie.com/
  wechat_api_url: https://qyapi.weixin.qq.com/cgi-bin/
  victorops_api_url: https://alert.victorops.com/integrations/generic/20131114/alert/
  telegram_api_url: https://api.telegram.org
  webex_api_url: https://webexapis.com/v1/messages
"""


@dataclass
class AlertmanagerConfig:
    route: Route
    inhibit_rules: list[InhibitRule] = field(default_factory=list)
    receivers: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    resolve_timeout: float = 300.0

    def text(self) -> str:
        """The configuration as Alertmanager marshals it (``Config.String()``)."""
        lines = ["global:", f"  resolve_timeout: {format_duration(self.resolve_timeout)}"]
        text = "\n".join(lines) + "\n" + _GLOBAL_DEFAULTS + "route:\n" + _route_text(self.route, "  ")
        if self.inhibit_rules:
            text += "inhibit_rules:\n" + "".join(_inhibit_text(r) for r in self.inhibit_rules)
        if self.receivers:
            text += "receivers:\n" + "".join(f"- name: {_scalar(name)}\n" for name in self.receivers)
        text += "templates:" + ("".join(f"\n- {_scalar(t)}" for t in self.templates) + "\n" if self.templates
                                else " []\n")
        return text


def _scalar(text: str) -> str:
    """A YAML scalar as go-yaml writes it: plain when unambiguous, else double-quoted."""
    if text in ("", "null", "true", "false", "~", "yes", "no", "on", "off") or text[0] in "-?:,[]{}#&*!|>'\"%@`":
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def _list(key: str, items: list[str], indent: str) -> str:
    return f"{indent}{key}:\n" + "".join(f"{indent}- {_scalar(item)}\n" for item in items) if items else ""


def _route_text(route: Route, indent: str) -> str:
    text = f"{indent}receiver: {_scalar(route.receiver)}\n" if route.receiver is not None else ""
    text += _list("group_by", list(route.group_by or ()), indent)
    text += _list("matchers", [str(m) for m in route.matchers], indent)
    text += f"{indent}continue: {'true' if route.continue_ else 'false'}\n"
    if route.routes:
        text += f"{indent}routes:\n"
        for child in route.routes:
            child_text = _route_text(child, indent + "  ")
            text += indent + "- " + child_text[len(indent) + 2:]
    for key, value in (("group_wait", route.group_wait), ("group_interval", route.group_interval),
                       ("repeat_interval", route.repeat_interval)):
        if value is not None:
            text += f"{indent}{key}: {format_duration(value)}\n"
    return text


def _inhibit_text(rule: InhibitRule) -> str:
    body = (_list("source_matchers", [str(m) for m in rule.source_matchers], "  ")
            + _list("target_matchers", [str(m) for m in rule.target_matchers], "  ")
            + _list("equal", list(rule.equal), "  "))
    return "- " + body[2:]


def _matchers(*texts: str) -> list[Matcher]:
    return [parse_matcher(t) for t in texts]


def kube_prometheus_stack_config() -> AlertmanagerConfig:
    """The Alertmanager configuration kube-prometheus-stack installs by default."""
    route = Route(receiver="null", group_by=("namespace",), group_wait=30.0, group_interval=300.0,
                  repeat_interval=12 * 3600.0,
                  routes=[Route(receiver="null", matchers=_matchers('alertname="Watchdog"'))])
    inhibit_rules = [
        InhibitRule(_matchers('severity="critical"'), _matchers('severity=~"warning|info"'),
                    ("namespace", "alertname")),
        InhibitRule(_matchers('severity="warning"'), _matchers('severity="info"'), ("namespace", "alertname")),
        InhibitRule(_matchers('alertname="InfoInhibitor"'), _matchers('severity="info"'), ("namespace",)),
        InhibitRule([], _matchers('alertname="InfoInhibitor"'), ()),
    ]
    return AlertmanagerConfig(route, inhibit_rules, receivers=["null"],
                              templates=["/etc/alertmanager/config/*.tmpl"])
