"""OpenCost's inputs, read as OpenCost reads them: the custom pricing file, windows, durations, and the
allocation JSON's rounding and derived figures."""

from __future__ import annotations

import json

import pytest

from pytest_itbench.twin.telemetry.opencost.aggregate import AggregateError, parse_aggregate
from pytest_itbench.twin.telemetry.opencost.model import Allocation, Properties
from pytest_itbench.twin.telemetry.opencost.pricing import DEFAULTS, parse
from pytest_itbench.twin.telemetry.opencost.window import WindowError, format_rfc3339, parse_duration, parse_window

NOW = 1_800_001_234.0  # 2027-01-15T08:20:34Z, a Friday


def test_a_chart_pricing_file_sets_every_price():
    pricing, problems = parse(json.dumps({
        "provider": "custom", "description": "Modified prices based on your internal pricing", "CPU": "1.25",
        "spotCPU": "0.006655", "RAM": "0.5", "spotRAM": "0.000892", "GPU": "0.95", "storage": "0.25",
        "zoneNetworkEgress": "0.01", "regionNetworkEgress": "0.01", "internetNetworkEgress": "0.12",
        "spotLabel": "lifecycle", "spotLabelValue": "spot"}))
    assert problems == []
    assert (pricing.cpu, pricing.ram, pricing.storage, pricing.spot_cpu) == (1.25, 0.5, 0.25, 0.006655)
    assert (pricing.spot_label, pricing.spot_label_value) == ("lifecycle", "spot")
    assert pricing.gpu == 0.95 and pricing.spot_gpu == DEFAULTS.spot_gpu  # absent: the default


def test_keys_match_case_insensitively_as_go_decodes_them():
    pricing, problems = parse('{"cpu": "0.5", "ram": "0.1", "RAM": "0.2"}')
    assert problems == [] and pricing.cpu == 0.5 and pricing.ram == 0.2  # the exact key wins


def test_a_price_that_is_not_a_number_keeps_its_default_and_is_reported_by_name():
    pricing, problems = parse('{"CPU": "cheap", "RAM": "0.01", "storage": "-1"}')
    assert pricing.cpu == DEFAULTS.cpu and pricing.ram == 0.01 and pricing.storage == DEFAULTS.storage
    assert len(problems) == 2
    assert "'CPU'" in problems[0] and "'cheap'" in problems[0] and "0.031611" in problems[0]
    assert "'storage'" in problems[1]


@pytest.mark.parametrize("text, named", [
    ('{"CPU": 0.05, "RAM": "0.01"}', "'CPU'"),  # a JSON number where OpenCost decodes a string
    ('{"CPU": "0.05",', "not valid JSON"),
    ('["CPU", "0.05"]', "array"),
])
def test_a_file_opencost_cannot_decode_leaves_every_default(text, named):
    pricing, problems = parse(text)
    assert pricing == DEFAULTS
    assert len(problems) == 1 and named in problems[0] and "default prices" in problems[0]


@pytest.mark.parametrize("window, start, end", [
    ("1h", "2027-01-15T08:00:00Z", "2027-01-15T09:00:00Z"),  # the current hour, aligned
    ("24h", "2027-01-14T09:00:00Z", "2027-01-15T09:00:00Z"),
    ("2d", "2027-01-14T00:00:00Z", "2027-01-16T00:00:00Z"),
    ("today", "2027-01-15T00:00:00Z", "2027-01-16T00:00:00Z"),
    ("yesterday", "2027-01-14T00:00:00Z", "2027-01-15T00:00:00Z"),
    ("lastweek", "2027-01-03T00:00:00Z", "2027-01-10T00:00:00Z"),  # Sunday to Sunday
    ("week", "2027-01-10T00:00:00Z", "2027-01-15T08:20:34Z"),
    ("45m offset 15m", "2027-01-15T07:20:34Z", "2027-01-15T08:05:34Z"),
    ("1800000000,1800003600", "2027-01-15T08:00:00Z", "2027-01-15T09:00:00Z"),
    ("1800000000-1800003600", "2027-01-15T08:00:00Z", "2027-01-15T09:00:00Z"),
    ("2027-01-15T07:00:00Z,2027-01-15T08:00:00Z", "2027-01-15T07:00:00Z", "2027-01-15T08:00:00Z"),
])
def test_windows_are_parsed_as_opencost_parses_them(window, start, end):
    got = parse_window(window, NOW)
    assert (format_rfc3339(got[0]), format_rfc3339(got[1])) == (start, end)


@pytest.mark.parametrize("window", ["", "1y", "last hour", "1h,2h", "2027-01-15T07:00:00+01:00,2027-01-15T08:00:00Z"])
def test_other_windows_are_illegal(window):
    with pytest.raises(WindowError) as refused:
        parse_window(window, NOW)
    assert str(refused.value) == f"illegal window: {window}"


def test_durations_take_opencost_day_and_week_units():
    assert parse_duration("30m") == 1800 and parse_duration("1h30m") == 5400
    assert parse_duration("1d") == 86400 and parse_duration("1w") == 7 * 86400
    with pytest.raises(ValueError):
        parse_duration("1y")


def test_aggregate_properties_and_labels():
    assert parse_aggregate(None) == ["cluster", "node", "namespace", "pod", "container"]
    assert parse_aggregate(["all"]) == []
    assert parse_aggregate(["namespace", "ControllerKind", "label:app", "namespace"]) == [
        "namespace", "controllerKind", "label:app"]
    with pytest.raises(AggregateError, match="'nmespace'"):
        parse_aggregate(["nmespace"])


def test_json_figures_are_derived_and_rounded_as_opencost_writes_them():
    alloc = Allocation(name="a", properties=Properties(cluster="c", namespace="n"), window=(0.0, 3600.0),
                       start=0.0, end=1800.0, cpu_core_hours=0.125, cpu_core_request_average=0.25,
                       cpu_core_usage_average=0.05, cpu_cost=0.123456789, ram_byte_hours=2 ** 30,
                       ram_bytes_request_average=2 ** 31, ram_bytes_usage_average=2 ** 30, ram_cost=0.5)
    body = alloc.to_json()
    assert body["minutes"] == 30 and body["cpuCores"] == 0.25  # core-hours over half an hour
    assert body["ramBytes"] == 2 ** 31
    assert body["cpuCost"] == 0.12346  # five decimals
    assert body["cpuEfficiency"] == 0.2 and body["ramEfficiency"] == 0.5
    # Cost-weighted: (0.2 x 0.123456789 + 0.5 x 0.5) / (0.123456789 + 0.5)
    assert body["totalEfficiency"] == pytest.approx((0.2 * 0.123456789 + 0.5 * 0.5) / 0.623456789, abs=1e-5)
    assert body["totalCost"] == 0.62346
    assert list(body)[:6] == ["name", "properties", "window", "start", "end", "minutes"]
    assert body["window"] == {"start": "1970-01-01T00:00:00Z", "end": "1970-01-01T01:00:00Z"}


def test_efficiency_without_request_is_one_when_used_and_paid_for():
    alloc = Allocation(name="a", properties=Properties(), window=(0.0, 3600.0), start=0.0, end=3600.0,
                       cpu_core_usage_average=0.1, cpu_cost=0.01)
    assert alloc.cpu_efficiency == 1.0
    alloc.cpu_cost = 0.0
    assert alloc.cpu_efficiency == 0.0


def test_adding_allocations_weights_averages_by_minutes():
    a = Allocation(name="x", properties=Properties(cluster="c", namespace="n", pod="p", container="a"),
                   window=(0.0, 3600.0), start=0.0, end=3600.0, cpu_core_hours=1.0, cpu_core_request_average=1.0)
    b = Allocation(name="y", properties=Properties(cluster="c", namespace="n", pod="q", container="a"),
                   window=(0.0, 3600.0), start=1800.0, end=3600.0, cpu_core_hours=1.5, cpu_core_request_average=3.0)
    a.add(b)
    assert a.cpu_core_hours == 2.5 and a.minutes == 60
    assert a.cpu_core_request_average == pytest.approx((1.0 * 60 + 3.0 * 30) / 60)
    assert a.properties.namespace == "n" and a.properties.container == "a" and a.properties.pod == ""
