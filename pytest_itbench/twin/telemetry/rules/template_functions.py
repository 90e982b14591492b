"""Prometheus' template functions (``humanize``, ``query``, ``first``, ``toTime``, ...) and the values they use.

Each function has the Go signature Prometheus gives it, so wrong arguments
fail as they do in Prometheus; conversions go through ``ConvertToFloat``
(float, string, int, duration) with its error messages.
"""

from __future__ import annotations

import ipaddress
import math
import re
import urllib.parse
from typing import Any, Callable, ClassVar, Mapping

from ..gotemplate import Function, GoDuration, GoError, GoMap, GoStruct, GoTime, GoValue, SafeHTML, go_type_name
from ..gotemplate.gofmt import sprintf
from ..gotemplate.lexer import go_quote
from ..promql.label_functions import go_expand
from ..durations import parse_duration

# A query runs PromQL at the template's evaluation time: (labels, value) per sample.
TemplateQuery = Callable[[str], list[tuple[dict[str, str], float]]]


class QuerySample(GoStruct):
    """``*template.sample``: one element of a ``query`` result."""

    go_type = "*template.sample"
    field_names = ("Labels", "Value")

    def __init__(self, labels: dict[str, str], value: float):
        self.labels = labels
        self.value = value


class QueryResult(list, GoValue):
    """``template.queryResult``: what ``query`` returns."""

    go_type = "template.queryResult"


class AlertTemplateData(GoStruct):
    """The data an alert's labels and annotations are expanded with (``template.AlertTemplateData``)."""

    go_type: ClassVar[str] = ("struct { Labels map[string]string; ExternalLabels map[string]string; "
                              "ExternalURL string; Value interface {} }")
    field_names = ("Labels", "ExternalLabels", "ExternalURL", "Value")

    def __init__(self, labels: dict[str, str], external_labels: dict[str, str], external_url: str, value: float):
        self.labels = labels
        self.external_labels = external_labels
        self.external_url = external_url
        self.value = value


def convert_to_float(value: Any) -> float:
    """``templates.ConvertToFloat``."""
    if isinstance(value, float):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, GoDuration):
        return value.nanoseconds / 1e9
    if isinstance(value, str):
        return _parse_float(value)
    raise GoError(f"can't convert {go_type_name(value)} to float")


_GO_FLOAT = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.IGNORECASE)


def _parse_float(text: str) -> float:
    if _GO_FLOAT.fullmatch(text) is None:
        raise GoError(f"strconv.ParseFloat: parsing {go_quote(text)}: invalid syntax")
    value = float(text)
    if math.isinf(value) and "inf" not in text.lower():
        raise GoError(f"strconv.ParseFloat: parsing {go_quote(text)}: value out of range")
    return value


def _scaled(value: float, prefixes: tuple[str, ...], factor: float, up: bool) -> tuple[float, str]:
    prefix = ""
    for p in prefixes:
        if (abs(value) < factor) if up else (abs(value) >= 1):
            break
        prefix = p
        value = value / factor if up else value * factor
    return value, prefix


def humanize(raw: Any) -> str:
    v = convert_to_float(raw)
    if v == 0 or math.isnan(v) or math.isinf(v):
        return sprintf("%.4g", [v])
    if abs(v) >= 1:
        v, prefix = _scaled(v, ("k", "M", "G", "T", "P", "E", "Z", "Y"), 1000, up=True)
    else:
        v, prefix = _scaled(v, ("m", "u", "n", "p", "f", "a", "z", "y"), 1000, up=False)
    return sprintf("%.4g", [v]) + prefix


def humanize_1024(raw: Any) -> str:
    v = convert_to_float(raw)
    if abs(v) <= 1 or math.isnan(v) or math.isinf(v):
        return sprintf("%.4g", [v])
    v, prefix = _scaled(v, ("ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"), 1024, up=True)
    return sprintf("%.4g", [v]) + prefix


def humanize_duration(raw: Any) -> str:
    v = convert_to_float(raw)
    if math.isnan(v) or math.isinf(v):
        return sprintf("%.4g", [v])
    if v == 0:
        return sprintf("%.4gs", [v])
    if abs(v) >= 1:
        sign = "-" if v < 0 else ""
        v = abs(v)
        whole = int(v)
        seconds, minutes, hours, days = whole % 60, whole // 60 % 60, whole // 3600 % 24, whole // 86400
        if days:
            return f"{sign}{days}d {hours}h {minutes}m {seconds}s"
        if hours:
            return f"{sign}{hours}h {minutes}m {seconds}s"
        if minutes:
            return f"{sign}{minutes}m {seconds}s"
        return sprintf("%s%.4gs", [sign, v])
    v, prefix = _scaled(v, ("m", "u", "n", "p", "f", "a", "z", "y"), 1000, up=False)
    return sprintf("%.4g%ss", [v, prefix])


def humanize_percentage(raw: Any) -> str:
    return sprintf("%.4g%%", [convert_to_float(raw) * 100])


def to_time(raw: Any) -> GoTime:
    v = convert_to_float(raw)
    if math.isnan(v) or math.isinf(v):
        raise GoError("value is NaN or Inf")
    if abs(v * 1e9) > 2 ** 63:
        raise GoError(f"{sprintf('%v', [v])} cannot be represented as a nanoseconds timestamp since it overflows "
                      "int64")
    return GoTime(v)


def humanize_timestamp(raw: Any) -> str:
    v = convert_to_float(raw)
    if math.isnan(v) or math.isinf(v):
        return sprintf("%.4g", [v])
    return to_time(v).string()


def to_duration(raw: Any) -> GoDuration:
    return GoDuration(int(convert_to_float(raw) * 1e9))


def parse_duration_allowing_negative(text: str) -> float:
    try:
        return -parse_duration(text[1:]) if text.startswith("-") else parse_duration(text)
    except ValueError as exc:
        raise GoError(str(exc).replace(f'"{text[1:]}"', f'"{text}"')) from None


def _compile(pattern: str) -> re.Pattern:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise GoError(f"error parsing regexp: {exc}: `{pattern}`") from None


def _re_replace_all(pattern: str, replacement: str, text: str) -> str:
    regex = _compile(pattern)
    return regex.sub(lambda m: go_expand(replacement, m), text)


def _split_host_port(host_port: str) -> tuple[str, str] | None:
    """``net.SplitHostPort``, or None where it fails."""
    if host_port.startswith("["):
        end = host_port.find("]")
        if end < 0 or not host_port[end + 1:].startswith(":") or ":" in host_port[end + 2:]:
            return None
        return host_port[1:end], host_port[end + 2:]
    if host_port.count(":") != 1:
        return None
    host, port = host_port.split(":")
    return host, port


def _strip_port(host_port: str) -> str:
    split = _split_host_port(host_port)
    return host_port if split is None else split[0]


def _strip_domain(host_port: str) -> str:
    split = _split_host_port(host_port)
    host, port = split if split is not None else (host_port, "")
    try:
        ipaddress.ip_address(host)
        return host_port
    except ValueError:
        pass
    host = host.split(".")[0]
    if port:
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return host


def _title(text: str) -> str:
    """``cases.Title(language.AmericanEnglish, cases.NoLower)``: each word's first letter upper-cased."""
    out = []
    previous = ""
    for ch in text:
        out.append(ch if previous.isalnum() or previous in ("'", "’") else ch.upper())
        previous = ch
    return "".join(out)


def _first(result: QueryResult) -> QuerySample:
    if not result:
        raise GoError("first() called on vector with no elements")
    return result[0]


def _sample_field(sample: QuerySample | None, read: Callable[[QuerySample], Any]) -> Any:
    if sample is None:
        raise GoError("runtime error: invalid memory address or nil pointer dereference")
    return read(sample)


def _sort_by_label(label: str, result: QueryResult) -> QueryResult:
    result[:] = sorted(result, key=lambda s: s.labels.get(label, ""))
    return result


def _link(expression: str, tab: int) -> str:
    return f"/graph?g0.expr={urllib.parse.quote_plus(expression, safe='')}&g0.tab={tab}"


def table_link(expression: str) -> str:
    """``strutil.TableLinkForExpression``, as alerts' generatorURL uses it."""
    return _link(expression, 1)


def prometheus_functions(query: TemplateQuery, timestamp: float, external_url: str) -> Mapping[str, Function]:
    """The functions Prometheus adds to alert templates, bound to an evaluation."""

    def run_query(text: str) -> QueryResult:
        return QueryResult(QuerySample(labels, value) for labels, value in query(text))

    path = urllib.parse.urlsplit(external_url).path
    return {
        "query": Function(run_query, ("string",)),
        "first": Function(_first, ("template.queryResult",)),
        "label": Function(lambda label, s: _sample_field(s, lambda x: x.labels.get(label, "")),
                          ("string", "*template.sample")),
        "value": Function(lambda s: _sample_field(s, lambda x: x.value), ("*template.sample",)),
        "strvalue": Function(lambda s: _sample_field(s, lambda x: x.labels.get("__value__", "")),
                             ("*template.sample",)),
        "args": Function(lambda *a: GoMap({f"arg{i}": v for i, v in enumerate(a)}), (), "any"),
        "reReplaceAll": Function(_re_replace_all, ("string", "string", "string")),
        "safeHtml": Function(SafeHTML, ("string",)),
        "match": Function(lambda pattern, text: _compile(pattern).search(text) is not None, ("string", "string")),
        "title": Function(_title, ("string",)),
        "toUpper": Function(str.upper, ("string",)),
        "toLower": Function(str.lower, ("string",)),
        "graphLink": Function(lambda e: _link(e, 0), ("string",)),
        "tableLink": Function(table_link, ("string",)),
        "sortByLabel": Function(_sort_by_label, ("string", "template.queryResult")),
        "stripPort": Function(_strip_port, ("string",)),
        "stripDomain": Function(_strip_domain, ("string",)),
        "humanize": Function(humanize, ("any",)),
        "humanize1024": Function(humanize_1024, ("any",)),
        "humanizeDuration": Function(humanize_duration, ("any",)),
        "humanizePercentage": Function(humanize_percentage, ("any",)),
        "humanizeTimestamp": Function(humanize_timestamp, ("any",)),
        "toTime": Function(to_time, ("any",)),
        "toDuration": Function(to_duration, ("any",)),
        "now": Function(lambda: timestamp),
        "pathPrefix": Function(lambda: path),
        "externalURL": Function(lambda: external_url),
        "parseDuration": Function(parse_duration_allowing_negative, ("string",)),
        "urlQueryEscape": Function(lambda s: urllib.parse.quote_plus(s, safe=""), ("string",)),
    }


FUNCTION_NAMES = frozenset(prometheus_functions(lambda q: [], 0.0, ""))
