"""Rule evaluation on the simulated clock: alert states, ALERTS series, templating, recording rules, reloads."""

from __future__ import annotations

import math

import pytest

from pytest_itbench.twin.telemetry import create_app
from pytest_itbench.twin.telemetry.rules import RESOLVED_RETENTION, RuleFileError, expression_text, parse_rule_file
from pytest_itbench.twin.telemetry.rules.group import Group
from pytest_itbench.twin.telemetry.rules.group_hash import group_hash, xxh64

from .rule_harness import START, RuleHarness
from .test_prometheus_api import API

ERRORS = """
groups:
  - name: sre
    rules:
      - alert: HighErrorRate
        expr: errors > 0
        for: 1m
        labels:
          severity: critical
          team: "{{ $labels.service }}-team"
        annotations:
          summary: "{{ $labels.service }} fails {{ $value | humanize }} times"
"""


def test_pending_then_firing_after_for_then_resolved():
    h = RuleHarness(ERRORS)
    h.set(3.0, __name__="errors", service="cart")
    h.warp(20)
    rule = h.rule("HighErrorRate")
    assert rule.state == "pending" and rule.health == "ok"
    [alert] = rule.alerts
    active_at = alert.active_at
    assert alert.labels == {"alertname": "HighErrorRate", "service": "cart", "severity": "critical",
                            "team": "cart-team"}
    assert alert.annotations == {"summary": "cart fails 3 times"}
    assert [s.labels for s in h.query("ALERTS").samples] == [
        (("__name__", "ALERTS"), ("alertname", "HighErrorRate"), ("alertstate", "pending"), ("service", "cart"),
         ("severity", "critical"), ("team", "cart-team"))]
    assert h.query("ALERTS_FOR_STATE").samples[0].value == math.floor(active_at)

    h.warp(active_at + 60 - h.clock.now() - 1)  # just short of `for`
    assert h.state("HighErrorRate") == "pending"
    h.warp(16)
    assert h.state("HighErrorRate") == "firing"
    assert h.rule("HighErrorRate").alerts[0].active_at == active_at
    assert {s.labels[2] for s in h.query("ALERTS").samples} == {("alertstate", "firing")}
    assert h.query('ALERTS{alertstate="pending"}').samples == []  # the pending series went stale

    h.set(None, __name__="errors", service="cart")
    h.warp(30)
    rule = h.rule("HighErrorRate")
    assert rule.state == "inactive" and rule.alerts == []  # resolved alerts are not listed
    assert h.query("ALERTS").samples == []


def test_an_alert_drops_the_metric_name_even_when_a_label_sorts_before_it():
    h = RuleHarness(ERRORS)
    h.set(2.0, __name__="errors", __address__="10.0.0.7:8080", service="cart")
    h.warp(20)
    [alert] = h.rule("HighErrorRate").alerts
    assert "__name__" not in alert.labels and alert.labels["__address__"] == "10.0.0.7:8080"


def test_a_pending_alert_that_clears_is_dropped_without_firing():
    h = RuleHarness(ERRORS)
    h.set(1.0, __name__="errors", service="cart")
    h.warp(30)
    assert h.state("HighErrorRate") == "pending"
    h.set(0.0, __name__="errors", service="cart")
    h.warp(30)
    assert h.state("HighErrorRate") == "inactive"
    assert h.alertmanager.alerts() == []  # pending alerts are never sent


def test_resolved_alerts_are_kept_fifteen_minutes_and_sent_resolved():
    h = RuleHarness(ERRORS)
    h.set(1.0, __name__="errors", service="cart")
    h.warp(120)
    [view] = h.alertmanager.alerts()
    assert view.alert.ends_at > h.clock.now()
    h.set(0.0, __name__="errors", service="cart")
    h.warp(30)
    assert h.alertmanager.alerts() == []  # Alertmanager heard it resolved
    group = h.manager.groups[0]
    assert len(group.rules[0].active) == 1  # ... and Prometheus keeps it for a while
    h.warp(RESOLVED_RETENTION + 30)
    assert group.rules[0].active == {}


def test_keep_firing_for_holds_a_firing_alert_after_the_condition_clears():
    rules = ERRORS.replace("for: 1m", "for: 0s\n        keep_firing_for: 2m")
    h = RuleHarness(rules)
    h.set(1.0, __name__="errors", service="cart")
    h.warp(30)
    assert h.state("HighErrorRate") == "firing"
    h.set(0.0, __name__="errors", service="cart")
    h.warp(30)
    [alert] = h.rule("HighErrorRate").alerts
    assert alert.state == "firing" and alert.keep_firing_since is not None
    h.warp(120)
    assert h.state("HighErrorRate") == "inactive"


def test_alerts_reach_alertmanager_as_prometheus_sends_them():
    h = RuleHarness(ERRORS, external_labels={"cluster": "twin", "severity": "ignored"})
    h.set(1.0, __name__="errors", service="cart")
    h.warp(90)
    [view] = h.alertmanager.alerts()
    alert = view.alert
    rule = h.manager.groups[0].rules[0]
    [state] = rule.active.values()
    assert alert.starts_at == state.fired_at
    assert alert.ends_at == state.valid_until == state.last_sent_at + 4 * 60  # 4 x max(interval, resend delay)
    assert alert.labels["cluster"] == "twin" and alert.labels["severity"] == "critical"
    assert alert.generator_url == "http://prometheus:9090/graph?g0.expr=errors+%3E+0&g0.tab=1"
    assert view.receivers == ("null",)


def test_an_alert_no_longer_sent_resolves_at_its_end_time():
    """Deleting the rules does not clear the alert at once; Alertmanager resolves it when it is not re-sent."""
    h = RuleHarness(ERRORS)
    h.set(1.0, __name__="errors", service="cart")
    h.warp(120)
    [view] = h.alertmanager.alerts()
    h.load("groups: []")
    h.warp(view.alert.ends_at - h.clock.now() - 1)
    assert len(h.alertmanager.alerts()) == 1
    h.warp(2)
    assert h.alertmanager.alerts() == []
    assert h.query("ALERTS").samples == []  # the removed group's series went stale


def test_evaluation_slots_are_spread_by_the_group_hash():
    h = RuleHarness(ERRORS, interval=30.0)
    group = h.manager.groups[0]
    offset_ms = group_hash("rules.yaml", "sre") % 30_000_000_000 // 1_000_000
    slot = group.eval_timestamp_ms(START + 100)
    assert slot % 30_000 == offset_ms % 30_000 and START * 1000 + 100_000 - 30_000 < slot <= START * 1000 + 100_000
    h.set(1.0, __name__="errors", service="cart")
    h.warp(95)
    status = h.manager.rule_groups()[0]
    assert status.interval == 30.0
    assert status.last_evaluation is not None and status.last_evaluation - 1 < (group.next_slot_ms - 30_000) / 1000
    [alert] = status.rules[0].alerts
    assert round(alert.active_at * 1000) % 30_000 == offset_ms % 30_000  # alerts start at slot times


def test_xxh64_matches_the_reference():
    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh64(b"abc") == 0x44BC2CF5AD770999
    assert xxh64(b"Nobody inspects the spammish repetition") == 0xFBCEA83C8A378BF1


def test_missed_slots_are_skipped_not_replayed():
    group = Group("g", "f", 15.0, [])
    group.start(START)
    first = group.next_slot_ms
    assert group.due_slot_ms(first / 1000 - 0.001) is None
    assert group.due_slot_ms(first / 1000 + 50) == first + 45_000


def test_templating_failures_become_error_texts():
    rules = ERRORS.replace('summary: "{{ $labels.service }} fails {{ $value | humanize }} times"',
                           'summary: "{{ if gt $value 1 }}many{{ end }}"')
    h = RuleHarness(rules)
    h.set(2.0, __name__="errors", service="cart")
    h.warp(20)
    summary = h.rule("HighErrorRate").alerts[0].annotations["summary"]
    assert summary.startswith("<error expanding template: error executing template __alert_HighErrorRate: "
                              "template: __alert_HighErrorRate:1:")
    assert summary.endswith('executing "__alert_HighErrorRate" at <gt $value 1>: error calling gt: incompatible '
                            "types for comparison>")


def test_template_queries_run_at_the_evaluation_time():
    rules = ERRORS.replace('summary: "{{ $labels.service }} fails {{ $value | humanize }} times"',
                           'summary: "{{ with query \\"sum(errors)\\" }}{{ . | first | value }}{{ end }}"\n'
                           '          bad: "{{ query \\"sum(\\" }}"')
    h = RuleHarness(rules)
    h.set(2.0, __name__="errors", service="cart")
    h.set(5.0, __name__="errors", service="ad")
    h.warp(20)
    annotations = h.rule("HighErrorRate").alerts[0].annotations
    assert annotations["summary"] == "7"
    assert annotations["bad"].startswith("<error expanding template: ") and "error calling query: parse error" in (
        annotations["bad"])


def test_duplicate_label_sets_fail_the_rule():
    rules = ERRORS.replace("expr: errors > 0", "expr: '{__name__=~\"errors|errors2\"} > 0'")
    h = RuleHarness(rules)
    h.set(1.0, __name__="errors", service="cart")
    h.set(1.0, __name__="errors2", service="cart")
    h.warp(20)
    rule = h.rule("HighErrorRate")
    assert rule.health == "err"
    assert rule.last_error == "vector contains metrics with the same labelset after applying alert labels"


def test_limit_and_result_types():
    rules = """
groups:
  - name: limited
    limit: 1
    rules:
      - alert: Many
        expr: up == 0
  - name: kinds
    rules:
      - alert: Scalar
        expr: vector(1) > 0
      - alert: Scalar2
        expr: scalar(up)
      - record: text
        expr: '"hello"'
"""
    h = RuleHarness(rules)
    h.set(0.0, __name__="up", job="a")
    h.set(0.0, __name__="up", job="b")
    h.warp(20)
    assert h.rule("Many").last_error == "exceeded limit of 1 with 2 alerts"
    assert h.rule("Scalar", 1).alerts[0].labels == {"alertname": "Scalar"}
    assert h.rule("Scalar2", 1).health == "ok"
    assert h.rule("text", 1).last_error == "rule result is not a vector or scalar"


def test_recording_rules_write_series_and_mark_them_stale():
    rules = """
groups:
  - name: rec
    labels:
      source: rules
    rules:
      - record: service:errors:sum
        expr: sum by (service) (errors)
        labels:
          tier: backend
      - record: clash
        expr: errors
        labels:
          service: same
"""
    h = RuleHarness(rules)
    h.set(2.0, __name__="errors", service="cart")
    h.set(3.0, __name__="errors", service="ad")
    h.warp(20)
    samples = sorted(h.query("service:errors:sum").samples, key=lambda s: s.labels)
    assert [(dict(s.labels)["service"], s.value) for s in samples] == [("ad", 3.0), ("cart", 2.0)]
    assert dict(samples[0].labels)["tier"] == "backend" and dict(samples[0].labels)["source"] == "rules"
    assert h.rule("clash").last_error == ("vector contains metrics with the same labelset after applying rule "
                                          "labels")
    h.set(None, __name__="errors", service="ad")
    h.warp(15)
    assert [dict(s.labels)["service"] for s in h.query("service:errors:sum").samples] == ["cart"]


def test_reload_keeps_unchanged_groups_and_carries_alert_state_over_changes():
    h = RuleHarness(ERRORS)
    h.set(1.0, __name__="errors", service="cart")
    h.warp(90)
    group = h.manager.groups[0]
    h.load(ERRORS)
    assert h.manager.groups[0] is group  # identical: untouched
    h.load(ERRORS.replace("summary:", "description:"))
    assert h.manager.groups[0] is not group
    [alert] = h.rule("HighErrorRate").alerts
    assert alert.state == "firing"  # state carried over to the changed group
    h.load(ERRORS.replace("for: 1m", "for: 1h"))
    h.warp(15)
    assert h.state("HighErrorRate") == "pending"  # a longer `for` sends the alert back to pending


def test_rules_and_alerts_through_the_prometheus_api():
    h = RuleHarness(ERRORS)
    h.set(1.0, __name__="errors", service="cart")
    h.warp(90)
    api = API(create_app(h.tsdb, h.engine, now=h.clock.now, rules=h.manager))
    try:
        _, body = api.get("/api/v1/rules")
        [group] = body["data"]["groups"]
        assert group["name"] == "sre" and group["file"] == "rules.yaml" and group["interval"] == 15
        [rule] = group["rules"]
        assert rule["query"] == "errors > 0" and rule["duration"] == 60 and rule["state"] == "firing"
        assert rule["labels"] == {"severity": "critical", "team": "{{ $labels.service }}-team"}
        _, body = api.get("/api/v1/alerts")
        [alert] = body["data"]["alerts"]
        assert alert["state"] == "firing" and alert["value"] == "1e+00"
        assert alert["labels"]["team"] == "cart-team"
    finally:
        api.close()


@pytest.mark.parametrize("text, printed", [
    ("sum(rate(x[5m])) by (job) > 0", "sum by (job) (rate(x[5m])) > 0"),
    ('max_over_time(w{reason="A", job="k"}[5m]) >= 1', 'max_over_time(w{job="k",reason="A"}[5m]) >= 1'),
    ("a > bool on(x) group_left(y) b", "a > bool on (x) group_left (y) b"),
    ("topk by (a) (1, max by (a, b) (c))", "topk by (a) (1, max by (a, b) (c))"),
    ("x[1h30m:1m] offset 1d", "x[1h30m:1m] offset 1d"),
    ("-(a) unless on() b", "-(a) unless on () b"),
])
def test_expressions_print_as_prometheus_prints_them(text, printed):
    assert expression_text(text) == printed


# ---- rule files ------------------------------------------------------------------------------------------

def rule_file_errors(text: str) -> list[str]:
    with pytest.raises(RuleFileError) as info:
        parse_rule_file("app.yaml", text)
    return info.value.errors


def test_rule_file_errors_name_the_file_group_and_rule_as_promtool_does():
    text = """groups:
  - name: g
    rules:
      - alert: A
        expr: rate(x[5m])) > 0
        labels:
          severity: '{{ nope }}'
      - record: "a{b}"
        expr: up
        for: 1m
      - expr: up
      - alert: B
        record: b
        expr: ""
  - name: g
    rules: []
"""
    assert rule_file_errors(text) == [
        'app.yaml: 5:15: group "g", rule 1, "A": could not parse expression: parse error: unexpected right '
        "parenthesis ')'",
        'app.yaml: group "g", rule 1, "A": label "severity": template: __alert_A:1: function "nope" not defined',
        "app.yaml: 8:17: group \"g\", rule 2, \"a{b}\": invalid field 'for' in recording rule",
        'app.yaml: 8:17: group "g", rule 2, "a{b}": braces present in the recording rule name; should it be in '
        "expr?: a{b}",
        "app.yaml: 0:0: 0:0: group \"g\", rule 3, \"\": one of 'record' or 'alert' must be set",
        "app.yaml: 13:17: 12:16: group \"g\", rule 4, \"B\": only one of 'record' and 'alert' must be set",
        "app.yaml: 14:15: group \"g\", rule 4, \"B\": field 'expr' must be set in rule",
        'app.yaml: 15:5: groupname: "g" is repeated in the same file',
    ]


def test_rule_file_decoding_errors():
    assert rule_file_errors("groups:\n- name: x\n  rules:\n  - alert: A\n    expr: up\n    fro: 5m\n") == [
        "app.yaml: yaml: unmarshal errors:\n  line 6: field fro not found in type rulefmt.Rule"]
    assert rule_file_errors("groups:\n- name: x\n  limit: abc\n  rules: {}\n") == [
        "app.yaml: yaml: unmarshal errors:\n  line 3: cannot unmarshal !!str `abc` into int\n"
        "  line 4: cannot unmarshal !!map into []rulefmt.Rule"]
    assert rule_file_errors("groups:\n- name: x\n  rules:\n  - alert: A\n    expr: up\n    for: 5x\n") == [
        'app.yaml: not a valid duration string: "5x"']
    assert rule_file_errors("groups: [") == ["app.yaml: yaml: line 2: did not find expected node content"]


def test_rule_file_values():
    rule_file = parse_rule_file("app.yaml", """groups:
  - name: g
    interval: 1m
    query_offset: 30s
    limit: 5
    rules:
      - alert: A
        expr: up == 0
        for: 1h30m
        keep_firing_for: 5m
        labels: {priority: 1}
""")
    [group] = rule_file.groups
    assert (group.interval, group.query_offset, group.limit) == (60.0, 30.0, 5)
    [rule] = group.rules
    assert (rule.for_, rule.keep_firing_for, rule.labels) == (5400.0, 300.0, {"priority": "1"})
    assert parse_rule_file("empty.yaml", "").groups == ()
