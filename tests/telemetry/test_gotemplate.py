"""Go's text/template and fmt as alert templates use them: outputs and error wording as Go produces them."""

from __future__ import annotations

import math

import pytest

from pytest_itbench.twin.telemetry.gotemplate import Template, TemplateExecError, TemplateParseError
from pytest_itbench.twin.telemetry.gotemplate.gofmt import sprint, sprintf
from pytest_itbench.twin.telemetry.rules.template_functions import (AlertTemplateData, humanize, humanize_1024,
                                                                     humanize_duration, humanize_percentage,
                                                                     humanize_timestamp)
from pytest_itbench.twin.telemetry.rules.templates import check_template, expand

DATA = AlertTemplateData({"pod": "cart-1", "namespace": "shop", "job": "api"}, {"cluster": "twin"},
                         "http://prometheus:9090", 0.25)


def run(text: str, data=DATA) -> str:
    return Template.parse("t", text, ()).execute(data, {})


def error_of(text: str) -> str:
    with pytest.raises((TemplateExecError, TemplateParseError)) as info:
        run(text)
    return str(info.value)


@pytest.mark.parametrize("text, expected", [
    ("{{ .Labels.pod }}/{{ .Labels.namespace }}", "cart-1/shop"),
    ("[{{ .Labels.missing }}]", "[]"),  # missingkey=zero: the zero string
    ("{{ .Value }}", "0.25"),
    ("{{ .Labels }}", "map[job:api namespace:shop pod:cart-1]"),
    ("{{ if gt .Value 0.1 }}high{{ else }}low{{ end }}", "high"),
    ("{{ if lt .Value 0.1 }}a{{ else if lt .Value 0.3 }}b{{ else }}c{{ end }}", "b"),
    ("{{ range $k, $v := .Labels }}{{ $k }}={{ $v }},{{ end }}", "job=api,namespace=shop,pod=cart-1,"),
    ("{{ with .Labels.pod }}pod {{ . }}{{ end }}", "pod cart-1"),
    ("{{ with .Labels.missing }}x{{ else }}none{{ end }}", "none"),
    ("a  {{- 1 -}}  b", "a1b"),
    ("{{/* a comment */}}x", "x"),
    ("{{ $x := 1 }}{{ $x = 2 }}{{ $x }}", "2"),
    ("{{ len .Labels }} {{ index .Labels \"job\" }}", "3 api"),
    ("{{ and 1 0 }} {{ or 0 \"\" \"z\" }} {{ not 0 }}", "0 z true"),
    ("{{ eq .Labels.job \"db\" \"api\" }} {{ ne 1 2 }}", "true true"),
    ("{{ print 1 2 \"a\" 3 \"b\" }}", "1 2a3b"),
    ("{{ 3 | printf \"%d-%d\" 4 }}", "4-3"),
    ("{{ range $i, $e := .Labels }}{{ if eq $i \"namespace\" }}{{ break }}{{ end }}{{ $e }}{{ end }}", "api"),
    ("{{ html \"<a href='x'>\" }} {{ urlquery \"a b&c\" }} {{ js \"it's\" }}",
     "&lt;a href=&#39;x&#39;&gt; a+b%26c it\\'s"),
])
def test_execution(text, expected):
    assert run(text) == expected


@pytest.mark.parametrize("format, args, expected", [
    ("%.2f", [0.125], "0.12"),
    ("%.2f", [0.135], "0.14"),
    ("%d", [0.5], "%!d(float64=0.5)"),
    ("%s", [1.5], "%!s(float64=1.5)"),
    ("%d %s", [3], "3 %!s(MISSING)"),
    ("%d", [3, "x"], "3%!(EXTRA string=x)"),
    ("%v %v %v", [1e6, 123456.0, 1e-5], "1e+06 123456 1e-05"),
    ("%g %e %E", [1234.5678, 1234.5678, 0.0], "1234.5678 1.234568e+03 0.000000E+00"),
    ("%5.1f|%-6s|%06d|%+d|%x|%X|%o|%q", [3.14159, "ab", 42, 7, 255, "hi", 8, "a\"b"],
     "  3.1|ab    |000042|+7|ff|6869|10|\"a\\\"b\""),
    ("%t %v %T %T", [True, None, 1.0, {"a": "b"}], "true <nil> float64 map[string]string"),
    ("%v %f", [math.inf, math.nan], "+Inf NaN"),
    ("%%", [], "%"),
    ("%", [], "%!(NOVERB)"),
])
def test_sprintf_is_go_fmt(format, args, expected):
    assert sprintf(format, args) == expected


def test_sprint_spaces_only_between_non_strings():
    assert sprint([1, 2, "a", "b", 3]) == "1 2ab3"


@pytest.mark.parametrize("text, message", [
    ("{{ if gt .Value 1 }}x{{ end }}",
     'template: t:1:6: executing "t" at <gt .Value 1>: error calling gt: incompatible types for comparison'),
    ("{{ .Nope }}", 'template: t:1:3: executing "t" at <.Nope>: can\'t evaluate field Nope in type struct { Labels '
                    'map[string]string; ExternalLabels map[string]string; ExternalURL string; Value interface {} }'),
    ("{{ .Labels.pod.x }}", 'template: t:1:10: executing "t" at <.Labels.pod.x>: can\'t evaluate field x in type '
                            'string'),
    ("{{ index .Labels 1 }}",
     'template: t:1:3: executing "t" at <index .Labels 1>: error calling index: value has type int; should be string'),
    ("{{ len 3 }}", 'template: t:1:3: executing "t" at <len 3>: error calling len: len of type int'),
    ("{{ nope }}", 'template: t:1: function "nope" not defined'),
    ("{{ .Value ", "template: t:1: unclosed action"),
    ("{{ if 1 }}", "template: t:1: unexpected EOF"),
    ("{{ end }}", "template: t:1: unexpected {{end}}"),
    ("{{ $x }}", 'template: t:1: undefined variable "$x"'),
    ("{{ 1 | 2 }}", "template: t:1: non executable command in pipeline stage 2"),
    ("{{ \"a }}", "template: t:1: unterminated quoted string"),
    ("{{ @ }}", 'template: t:1: unexpected "@" in command'),
])
def test_errors_are_worded_as_go(text, message):
    assert error_of(text) == message


@pytest.mark.parametrize("function, value, expected", [
    (humanize, 0.1234567, "123.5m"), (humanize, 1234567.0, "1.235M"), (humanize, 0.0, "0"), (humanize, 1.0, "1"),
    (humanize, math.inf, "+Inf"), (humanize, "2048", "2.048k"), (humanize, 1e-9, "1n"),
    (humanize_1024, 2048.0, "2ki"), (humanize_1024, 1.0, "1"), (humanize_1024, 1073741824.0, "1Gi"),
    (humanize_duration, 3725.0, "1h 2m 5s"), (humanize_duration, 90061.0, "1d 1h 1m 1s"),
    (humanize_duration, 0.002, "2ms"), (humanize_duration, 1.5, "1.5s"), (humanize_duration, 0.0, "0s"),
    (humanize_duration, -65.0, "-1m 5s"),
    (humanize_percentage, 0.1234567, "12.35%"), (humanize_percentage, 1.0, "100%"),
    (humanize_timestamp, 1700000000.5, "2023-11-14 22:13:20.5 +0000 UTC"),
])
def test_humanize_family(function, value, expected):
    assert function(value) == expected


def test_prometheus_variables_and_functions():
    def query(text):
        assert text == "up"
        return [({"__name__": "up", "job": "b"}, 0.0), ({"__name__": "up", "job": "a"}, 1.0)]

    text = ("{{ $labels.pod }} {{ $value | humanizePercentage }} {{ $externalLabels.cluster }} {{ $externalURL }} "
            "{{ range query \"up\" | sortByLabel \"job\" }}{{ .Labels.job }}={{ .Value }};{{ end }} "
            "{{ with query \"up\" }}{{ . | first | label \"job\" }}{{ end }} {{ reReplaceAll \"(.*)-(\\\\d)\" \"$2\" "
            "$labels.pod }} {{ stripPort \"host:80\" }} {{ title \"hello world\" }} {{ toUpper \"x\" }} "
            "{{ now | humanizeTimestamp }} {{ 90 | toDuration }} {{ parseDuration \"1m30s\" }} "
            "{{ tableLink \"up\" }} {{ args 1 \"x\" }}")
    assert expand("A", text, DATA, query, 1700000000.0, "http://prometheus:9090") == (
        "cart-1 25% twin http://prometheus:9090 a=1;b=0; b 1 host Hello World X "
        "2023-11-14 22:13:20 +0000 UTC 1m30s 90 /graph?g0.expr=up&g0.tab=1 map[arg0:1 arg1:x]")


def test_a_failing_template_becomes_an_error_text():
    out = expand("HighErrors", "{{ humanize \"abc\" }}", DATA, lambda q: [], 0.0, "")
    assert out == ('<error expanding template: error executing template __alert_HighErrors: template: '
                   '__alert_HighErrors:1:115: executing "__alert_HighErrors" at <humanize "abc">: error calling '
                   'humanize: strconv.ParseFloat: parsing "abc": invalid syntax>')
    assert expand("X", "{{ first (query \"up\") }}", DATA, lambda q: [], 0.0, "").endswith(
        "error calling first: first() called on vector with no elements>")
    assert expand("X", "{{ .Value", DATA, lambda q: [], 0.0, "") == (
        "<error expanding template: error parsing template __alert_X: template: __alert_X:1: unclosed action>")


def test_check_template_reports_parse_errors_only():
    assert check_template("X", "{{ $labels.pod }} {{ $value | humanize }}") is None
    assert check_template("X", "{{ humanize \"abc\" }}") is None  # fails only when executed
    assert check_template("X", "{{ nope }}") == 'template: __alert_X:1: function "nope" not defined'
