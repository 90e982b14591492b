"""Annotation positions and the text conversions parsing relies on, where scripts cannot go: queries over
several lines, non-ASCII text, a walk that loses its way, RE2 flags and Go's byte escapes."""

from __future__ import annotations

import promql_parser as pp
import pytest

from pytest_itbench.twin.telemetry import labels as lbl
from pytest_itbench.twin.telemetry.promql import Engine, parse
from pytest_itbench.twin.telemetry.promql import byte_escapes
from pytest_itbench.twin.telemetry.promql.positions import LostPosition, line_col, spans
from pytest_itbench.twin.telemetry.tsdb import TSDB


@pytest.fixture
def engine():
    db = TSDB()
    for t in range(0, 600, 60):
        db.append({"__name__": "temperature", "room": "küche"}, t, 20.0)
    return Engine(db)


def test_a_position_on_a_later_line_counts_lines_and_restarts_columns(engine):
    query = "sum(\n  # the kitchen\n  rate(temperature[5m])\n)"
    infos = engine.instant_query(query, 540).infos
    assert infos == ['PromQL info: metric might not be a counter, name does not end in '
                     '_total/_sum/_count/_bucket: "temperature" (3:8)']


def test_columns_count_bytes_as_go_does(engine):
    # "ü" is two bytes in UTF-8, so the argument after it starts one column further than its character index.
    query = 'label_replace(temperature, "küche", "", "", "") + on() group_left rate(temperature[5m])'
    infos = engine.instant_query(query, 540).infos
    assert infos[0].endswith(f"(1:{len(query[:query.index('temperature[5m]')].encode()) + 1})")
    assert line_col("é\nabc", 4) == "2:3"


def test_a_query_the_walk_cannot_follow_still_runs_without_positions(engine, monkeypatch):
    import sys
    parse_module = sys.modules["pytest_itbench.twin.telemetry.promql.parse"]

    def lost(query, tree):
        raise LostPosition("test")
    monkeypatch.setattr(parse_module, "spans", lost)
    parse_module.parse.cache_clear()
    assert engine.instant_query("rate(temperature[5m])", 540).infos == [
        'PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: "temperature"']
    parse_module.parse.cache_clear()  # no tree without positions outlives the test


@pytest.mark.parametrize("query", [
    "x", "-x", "- 2 ^ 3", "1 + -2", "(x)", "x offset -5m @ 10", "x[5m:1m] @ start() offset 1m",
    "sum by (a) (x)", "sum(x) without (a)", 'topk(3, x{a=~"b|c", "d.e"="f"})', "x and on(a) y",
    "a * on(b) group_left(c) d", "a == bool b", "a AND b", "time()", "0x1F + 1e3 + Inf + 1m",
    'label_join(x, "d", ",", "a", "b")', "rate(x[5m]) # trailing comment", "{__name__=\"x\"}",
    'x{a="}"}', "x[5m] offset 1m",
])
def test_the_walk_follows_every_kind_of_node_to_the_end(query):
    span = spans(query, pp.parse(query))
    assert span.start == 0


def test_inline_flags_become_scoped_groups():
    assert lbl.compile_anchored("((?i)PRO).*").fullmatch("production")
    assert not lbl.compile_anchored("((?i)pro)D.*").fullmatch("prod")
    assert lbl.compile_anchored("a(?i)b|c").fullmatch("C")
    assert not lbl.compile_anchored("a(?i)b|c").fullmatch("AB")
    assert lbl.compile_anchored(r"\((?i)A\)").fullmatch("(a)")  # an escaped parenthesis opens no group
    with pytest.raises(Exception):
        lbl.compile_anchored("(?U)a+")


@pytest.mark.parametrize("literal, decoded", [
    (r'"\xc3\xa9"', "é"), (r'"\303\251"', "é"), (r"'\xc3\xa9'", "é"), (r'"\x41\"\\"', 'A"\\'),
    (r'"\xff"', "\udcff"), (r'"a\xe9b"', "a\udce9b"), (r'"\u00e9\xc3\xa9"', "éé"),
])
def test_byte_escapes_decode_as_go_decodes_them(literal, decoded):
    assert parse(literal).value == decoded


def test_a_literal_without_byte_escapes_is_left_to_the_parser():
    query = r'x{a="\u00e9\n"} # "\xff" in a comment stays as it is'
    assert byte_escapes.rewrite(query) == query
    assert byte_escapes.rewrite(r'`\xff` + "\xff"').startswith(r"`\xff` + ")
