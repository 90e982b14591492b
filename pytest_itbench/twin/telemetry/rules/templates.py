"""Expanding alert labels and annotations as Prometheus does (``template.Expander`` in text mode).

The text is prefixed with Prometheus' convenience variables (``$labels``,
``$externalLabels``, ``$externalURL``, ``$value``) and named
``__alert_<rule>``. A template that fails does not fail the rule: the
label or annotation becomes ``<error expanding template: ...>``, as in
Prometheus. Parsed templates are cached; each expansion binds the
functions to its evaluation (``query`` and ``now`` use its time).
"""

from __future__ import annotations

import functools
import logging
from typing import Optional

from ..gotemplate import Template, TemplateExecError, TemplateParseError
from .template_functions import FUNCTION_NAMES, AlertTemplateData, TemplateQuery, prometheus_functions

log = logging.getLogger(__name__)

DEFINITIONS = ("{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}"
               "{{$value := .Value}}")


@functools.lru_cache(maxsize=4096)
def _parsed(name: str, text: str) -> Template | TemplateParseError:
    try:
        return Template.parse(name, DEFINITIONS + text, FUNCTION_NAMES)
    except TemplateParseError as exc:
        return exc


def template_name(rule_name: str) -> str:
    return "__alert_" + rule_name


def check_template(rule_name: str, text: str) -> Optional[str]:
    """The parse error of a label or annotation template, as ``promtool check rules`` reports it."""
    parsed = _parsed(template_name(rule_name), text)
    return str(parsed) if isinstance(parsed, TemplateParseError) else None


def expand(rule_name: str, text: str, data: AlertTemplateData, query: TemplateQuery, timestamp: float,
           external_url: str) -> str:
    """The expansion of ``text`` for one alert; failures become Prometheus' ``<error expanding template: ...>``."""
    name = template_name(rule_name)
    parsed = _parsed(name, text)
    if isinstance(parsed, TemplateParseError):
        error = f"error parsing template {name}: {parsed}"
    else:
        try:
            return parsed.execute(data, prometheus_functions(query, timestamp, external_url))
        except TemplateExecError as exc:
            error = f"error executing template {name}: {exc}"
    log.warning("Expanding alert template failed: %s", error)
    return f"<error expanding template: {error}>"
