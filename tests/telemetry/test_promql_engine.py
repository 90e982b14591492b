"""The engine's tables, value formatting, result JSON, and what the scripts cannot express."""

from __future__ import annotations

import math
import re

import pytest

from pytest_itbench.twin.telemetry.promql import (Engine, EvaluationError, ParseError, QueryTimeout, parse,
                                                  result_json)
from pytest_itbench.twin.telemetry.promql.ast import ValueType
from pytest_itbench.twin.telemetry.promql.functions import FUNCTIONS
from pytest_itbench.twin.telemetry.promql.label_functions import go_expand
from pytest_itbench.twin.telemetry.promql.signatures import SIGNATURES
from pytest_itbench.twin.telemetry.promql.values import format_exponent, format_g, format_value, json_time
from pytest_itbench.twin.telemetry.tsdb import TSDB


def test_every_stable_function_has_an_implementation_and_nothing_else_does():
    stable = {name for name, sig in SIGNATURES.items() if not sig.experimental}
    assert set(FUNCTIONS) == stable


def test_parse_types_the_tree():
    assert parse("rate(x[5m])").type is ValueType.VECTOR
    assert parse("scalar(x) + 1").type is ValueType.SCALAR
    assert parse("x[5m:1m]").type is ValueType.MATRIX
    assert parse('"s"').type is ValueType.STRING
    node = parse('x{a="b"} offset 1m @ 100')
    assert node.offset_ms == 60_000 and node.at.t_ms == 100_000
    assert [repr(m) for m in node.matchers] == ['__name__="x"', 'a="b"']


@pytest.mark.parametrize("query, message", [
    ("x @ -1", "timestamp out of bounds"),
    ("x + fill(0) y", "binop fill modifiers are experimental and not enabled"),
    ('x{a="b" or c="d"}', 'unexpected "or" in label matching'),
    ("info(x)", 'function "info" is not enabled'),
])
def test_what_prometheus_rejects_by_default(query, message):
    with pytest.raises(ParseError, match=re.escape(message)):
        parse(query)


@pytest.mark.parametrize("value, text", [
    (1.0, "1"), (-0.0, "-0"), (0.1, "0.1"), (1e21, "1000000000000000000000"), (1.5e-7, "0.00000015"),
    (2.0 ** 55, "36028797018963970"), (math.inf, "+Inf"), (-math.inf, "-Inf"), (math.nan, "NaN"),
    (123456.789, "123456.789"),
])
def test_values_are_written_as_go_writes_them(value, text):
    assert format_value(value) == text


def test_exponent_and_g_formats():
    assert format_exponent(0.25) == "2.5e-01"
    assert format_exponent(1.0) == "1e+00"
    assert format_exponent(123456.0) == "1.23456e+05"
    assert format_g(2.0) == "2" and format_g(1e6) == "1e+06" and format_g(0.00001) == "1e-05"


def test_times_are_unix_seconds():
    assert json_time(1_500_000) == 1500
    assert json_time(1_500_250) == 1500.25


@pytest.mark.parametrize("template, expanded", [
    ("$1", "a"), ("${1}", "a"), ("$1x", ""), ("${1}x", "ax"), ("$$1", "$1"), ("$name", "b"), ("${name}!", "b!"),
    ("$", "$"), ("${1", "${1"), ("$2-$1", "b-a"), ("$3", ""), ("$01", ""),
])
def test_replacement_expands_as_go_does(template, expanded):
    match = re.fullmatch(r"(a)-(?P<name>b)", "a-b")
    assert go_expand(template, match) == expanded


@pytest.fixture
def engine():
    db = TSDB()
    for i in range(11):
        db.append({"__name__": "up", "job": "api"}, i * 60, 1.0)
    return Engine(db)


def test_result_json_by_type(engine):
    assert result_json(engine.instant_query("1", 60).value) == {"resultType": "scalar", "result": [60, "1"]}
    assert result_json(engine.instant_query('"x"', 60).value) == {"resultType": "string", "result": [60, "x"]}
    assert result_json(engine.instant_query("up", 60).value) == {
        "resultType": "vector", "result": [{"metric": {"__name__": "up", "job": "api"}, "value": [60, "1"]}]}
    assert result_json(engine.instant_query("up[1m]", 60).value) == {
        "resultType": "matrix", "result": [{"metric": {"__name__": "up", "job": "api"}, "values": [[60, "1"]]}]}
    assert result_json(engine.range_query("up", 0, 60, 30).value) == {
        "resultType": "matrix",
        "result": [{"metric": {"__name__": "up", "job": "api"}, "values": [[0, "1"], [30, "1"], [60, "1"]]}]}


def test_lookback_delta_can_be_set_per_query(engine):
    assert len(engine.instant_query("up", 700).value.samples) == 1
    assert engine.instant_query("up", 700, lookback_delta=60).value.samples == []


def test_abort_stops_evaluation(engine):
    with pytest.raises(QueryTimeout, match="query timed out in expression evaluation"):
        engine.instant_query("sum(up)", 600, abort=lambda: True)


def test_evaluation_errors_carry_the_execution_type(engine):
    with pytest.raises(EvaluationError) as info:
        engine.instant_query("up / on() (up or vector(1))", 600)
    assert info.value.error_type == "execution"


def test_range_query_edges(engine):
    assert engine.range_query("up", 60, 0, 15).value.series == []
    points = engine.range_query("up", 0, 100, 45).value.series[0].points
    assert [t for t, _ in points] == [0, 45_000, 90_000]
