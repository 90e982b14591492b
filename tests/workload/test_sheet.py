"""Behaviour sheets load into typed objects, and a mistake in one is reported at its file and line, naming the field."""

from __future__ import annotations

import pytest

from pytest_itbench.twin.workload import SheetError, shipped_sheets
from pytest_itbench.twin.workload.sheet import parse_sheet

MINIMAL = """\
application: demo
clients:
  go:
    refused: r
    no_such_host: n
    dns_timeout: d
    unreachable: u
    deadline: t
    reset: e
    status: s
    protocol: p
services:
  front:
    pods: {labels: {app: front}, container: front}
    runtime: go
    client: go
    operations:
      Get:
        span: GET /
        latency: {median: 2ms, spread: 0.5}
        calls:
          - {to: back.Read, address: {env: BACK_ADDR}, timeout: 1.5s}
  back:
    pods: {labels: {app: back}, container: back}
    runtime: go
    memory: 60Mi
    cpu: 5m
    operations:
      Read: {span: Read}
"""


def test_the_shipped_astronomy_shop_sheet_loads():
    (sheet,) = [s for s in shipped_sheets() if s.application == "astronomy-shop"]
    assert {"frontend-proxy", "frontend", "ad", "cart", "valkey-cart", "checkout", "currency", "email", "payment",
            "product-catalog", "quote", "recommendation", "shipping", "fraud-detection", "accounting", "kafka",
            "flagd", "image-provider", "postgresql", "load-generator"} <= set(sheet.services)
    flags = {effect.flag for service in sheet.services.values() for effect in service.flags}
    assert {"adFailure", "adHighCpu", "adManualGc", "cartFailure", "paymentFailure", "paymentUnreachable",
            "productCatalogFailure", "recommendationCacheFailure", "imageSlowLoad", "kafkaQueueProblems",
            "loadGeneratorFloodHomepage"} <= flags
    cart = sheet.services["cart"]
    assert cart.operations["GetCart"].span == "oteldemo.CartService/GetCart"
    assert cart.operations["GetCart"].calls[0].address.env == "VALKEY_ADDR"
    assert sheet.load.service == "load-generator" and sheet.load.tasks["user_browse_product"] == 10


def test_units_are_read_as_go_and_kubernetes_write_them():
    sheet = parse_sheet(MINIMAL)
    op = sheet.services["front"].operations["Get"]
    assert op.latency.median == pytest.approx(0.002)
    assert op.calls[0].timeout == pytest.approx(1.5)
    assert sheet.services["back"].memory == 60 * 1024 * 1024
    assert sheet.services["back"].cpu == pytest.approx(0.005)
    assert op.calls[0].service == "back" and op.calls[0].operation == "Read"


@pytest.mark.parametrize("change, message", [
    (("latency: {median: 2ms, spread: 0.5}", "latency: {median: 2 ms, spread: 0.5}"),
     'demo.yaml:20: services.front.operations.Get.latency.median: time: invalid duration "2 ms"'),
    (("latency: {median: 2ms, spread: 0.5}", "latency: {median: 2ms, spread: wide}"),
     "demo.yaml:20: services.front.operations.Get.latency.spread: expected a number, got a string 'wide'"),
    (("        span: GET /\n", "        span: GET /\n        colour: blue\n"),
     "demo.yaml:20: services.front.operations.Get: unknown field 'colour'"),
    (("    runtime: go\n    client: go\n", "    client: go\n"),
     "demo.yaml:14: services.front: missing field 'runtime'"),
    (("{to: back.Read,", "{to: back.Write,"), "demo.yaml:22: 'back.Write' names no operation of the sheet"),
    (("    client: go\n    operations", "    client: java\n    operations"),
     "demo.yaml:14: unknown client 'java' (clients: go)"),
    (("address: {env: BACK_ADDR}", "address: {env: BACK_ADDR, value: 'x:1'}"),
     "demo.yaml:22: services.front.operations.Get.calls[0].address: an address names exactly one of env, "
     "host_env (with port_env) or value"),
    (("      Read: {span: Read}", "      Read:\n        span: Read\n        calls: [{to: front.Get, address: {env: X}, "
      "client: go}]"), "demo.yaml:31: the call graph has a cycle through front.Get"),
    (("memory: 60Mi", "memory: sixty"), "demo.yaml:26: services.back.memory: quantities must match the regular "
                                        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    (("      Get:\n", "      Get:\n     bad: [\n"), "demo.yaml:19: expected <block end>"),
])
def test_a_bad_sheet_names_the_file_line_and_field(change, message):
    old, new = change
    assert old in MINIMAL
    with pytest.raises(SheetError) as caught:
        parse_sheet(MINIMAL.replace(old, new), "demo.yaml")
    assert str(caught.value).startswith(message)
