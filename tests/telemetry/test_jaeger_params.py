"""Jaeger's query parameters parsed as its Go code parses them: values accepted, and Go's words for the rest."""

from __future__ import annotations

import base64

import pytest

from pytest_itbench.twin.telemetry.jaeger_params import (ParamError, parse_bool, parse_duration, parse_int, parse_tags,
                                                         trace_id_from_hex, trace_id_from_path)

MS = 1_000_000
S = 1_000_000_000


@pytest.mark.parametrize("text, nanos", [
    ("100ms", 100 * MS), ("1.2s", 1200 * MS), ("1h2m3s", (3600 + 120 + 3) * S), ("-1.5m", -90 * S), ("+2s", 2 * S),
    ("0", 0), ("-0", 0), ("300us", 300_000), ("300\u00b5s", 300_000), ("300\u03bcs", 300_000), ("7ns", 7),
    (".5s", S // 2), ("1.s", S), ("2562047h", 2562047 * 3600 * S), ("0.1h", 360 * S),
    ("-9223372036854775808ns", -(1 << 63)), ("1.00000000000000000000001s", S),
])
def test_go_durations(text, nanos):
    assert parse_duration(text) == nanos


@pytest.mark.parametrize("text, message", [
    ("", 'time: invalid duration ""'),
    ("100", 'time: missing unit in duration "100"'),
    ("1x", 'time: unknown unit "x" in duration "1x"'),
    ("1 s", 'time: unknown unit " s" in duration "1 s"'),
    ("abc", 'time: invalid duration "abc"'),
    ("-", 'time: invalid duration "-"'),
    (".s", 'time: invalid duration ".s"'),
    ("1\u00e9", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
    ("2562048h", 'time: invalid duration "2562048h"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
])
def test_go_duration_errors(text, message):
    with pytest.raises(ParamError) as caught:
        parse_duration(text)
    assert str(caught.value) == message


def test_go_integers():
    assert parse_int("1700000000000000") == 1_700_000_000_000_000
    assert parse_int("+5") == 5 and parse_int("-5") == -5
    assert parse_int("2147483647", 32) == 2147483647
    for text, message in [("abc", 'strconv.ParseInt: parsing "abc": invalid syntax'),
                          ("1.5", 'strconv.ParseInt: parsing "1.5": invalid syntax'),
                          ("1_000", 'strconv.ParseInt: parsing "1_000": invalid syntax'),
                          (" 1", 'strconv.ParseInt: parsing " 1": invalid syntax')]:
        with pytest.raises(ParamError, match="^" + message.replace(".", r"\.") + "$"):
            parse_int(text)
    with pytest.raises(ParamError) as caught:
        parse_int("2147483648", 32)
    assert str(caught.value) == 'strconv.ParseInt: parsing "2147483648": value out of range'


def test_go_booleans():
    assert [parse_bool(t) for t in ("1", "t", "T", "TRUE", "true", "True")] == [True] * 6
    assert [parse_bool(t) for t in ("0", "f", "F", "FALSE", "false", "False")] == [False] * 6
    with pytest.raises(ParamError) as caught:
        parse_bool("yes")
    assert str(caught.value) == 'strconv.ParseBool: parsing "yes": invalid syntax'


def test_tags_from_both_forms_json_last():
    assert parse_tags(["http.status_code:500", "url:http://x:8080/a"], ['{"error": "true", "url": "b"}']) == {
        "http.status_code": "500", "url": "b", "error": "true"}
    assert parse_tags([], ['{"a": null}', "null"]) == {"a": ""}


@pytest.mark.parametrize("simple, as_json, message", [
    (["error"], [], "malformed 'tag' parameter, expecting key:value, received: error"),
    ([], ['{"error": true}'], "malformed 'tags' parameter, cannot unmarshal JSON: json: cannot unmarshal bool into "
                              "Go value of type string"),
    ([], ['{"code": 500}'], "malformed 'tags' parameter, cannot unmarshal JSON: json: cannot unmarshal number into "
                            "Go value of type string"),
    ([], ['["a"]'], "malformed 'tags' parameter, cannot unmarshal JSON: json: cannot unmarshal array into Go value "
                    "of type map[string]string"),
    ([], ["{error:1}"], "malformed 'tags' parameter, cannot unmarshal JSON: invalid character 'e' looking for "
                        "beginning of object key string"),
    ([], ['{"a":"b"'], "malformed 'tags' parameter, cannot unmarshal JSON: unexpected end of JSON input"),
])
def test_tag_errors(simple, as_json, message):
    with pytest.raises(ParamError) as caught:
        parse_tags(simple, as_json)
    assert str(caught.value) == message


def test_trace_ids_in_hex():
    assert trace_id_from_hex("0af7651916cd43dd8448eb211c80319c") == 0x0af7651916cd43dd8448eb211c80319c
    assert trace_id_from_hex("AF") == 0xAF
    assert trace_id_from_hex("1" + "0" * 16) == 1 << 64
    with pytest.raises(ParamError, match="^TraceID cannot be longer than 32 hex characters: " + "a" * 33 + "$"):
        trace_id_from_hex("a" * 33)
    with pytest.raises(ParamError) as caught:
        trace_id_from_hex("zz" + "0" * 16)
    assert str(caught.value) == 'strconv.ParseUint: parsing "zz": invalid syntax'
    with pytest.raises(ParamError) as caught:
        trace_id_from_hex("0x12")
    assert str(caught.value) == 'strconv.ParseUint: parsing "0x12": invalid syntax'


def test_trace_ids_in_a_path_may_be_base64():
    raw = bytes(range(1, 17))
    expected = int.from_bytes(raw, "big")
    for text in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode(),
                 base64.b64encode(raw).decode().rstrip("=")):
        assert trace_id_from_path(text) == expected
    assert trace_id_from_path("00000000000000ff") == 0xFF  # hex wins when it parses
    with pytest.raises(ParamError, match="^invalid length for TraceID$"):
        trace_id_from_path("nothex")  # base64 of 4 bytes
    with pytest.raises(ParamError) as caught:
        trace_id_from_path("not-hex!")  # neither
    assert str(caught.value) == 'strconv.ParseUint: parsing "not-hex!": invalid syntax'
