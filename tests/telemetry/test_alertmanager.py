"""Alertmanager API v2: envelopes, filters, groups, silences, inhibition, resolution by time."""

from __future__ import annotations

import random

import pytest

from pytest_itbench.twin.telemetry.alertmanager import (Alertmanager, MatcherError, PostableAlert, fingerprint,
                                                        parse_matcher)
from pytest_itbench.twin.telemetry.alertmanager_api import create_alertmanager_app, format_time

from .test_prometheus_api import API

NOW = 1_700_000_000.0


class Clock:
    def __init__(self) -> None:
        self.t = NOW

    def __call__(self) -> float:
        return self.t


def alert(name: str, severity: str = "warning", namespace: str = "shop", ends_in: float | None = 240.0,
          **labels: str) -> PostableAlert:
    return PostableAlert({"alertname": name, "severity": severity, "namespace": namespace, **labels},
                         {"summary": f"{name} fires"}, NOW - 60, None if ends_in is None else NOW + ends_in,
                         "http://prometheus:9090/graph?g0.expr=up&g0.tab=1")


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def am(clock):
    return Alertmanager(clock, random.Random(9))


@pytest.fixture
def api(am):
    client = API(create_alertmanager_app(am))
    yield client
    client.close()


def names(body) -> list[str]:
    return [a["labels"]["alertname"] for a in body]


def test_fingerprints_are_alertmanagers():
    assert fingerprint({"severity": "critical", "alertname": "alert1"}) == "0223b772b51c29e1"
    assert int(fingerprint({}), 16) == 14695981039346656037


def test_get_alerts_envelope(am, api):
    am.post_alerts([alert("KubePodNotReady", pod="cart-1")])
    status, body = api.get("/api/v2/alerts")
    assert status == 200
    [item] = body
    assert list(item) == ["annotations", "endsAt", "fingerprint", "receivers", "startsAt", "status", "updatedAt",
                          "generatorURL", "labels"]
    assert item["status"] == {"inhibitedBy": [], "silencedBy": [], "state": "active"}
    assert item["receivers"] == [{"name": "null"}]
    assert item["startsAt"] == "2023-11-14T22:12:20.000Z" and item["endsAt"] == "2023-11-14T22:17:20.000Z"
    assert item["updatedAt"] == format_time(NOW) == "2023-11-14T22:13:20.000Z"
    assert item["fingerprint"] == fingerprint(item["labels"])


def test_filters(am, api):
    am.post_alerts([alert("HighRequestErrorRate", "critical", service_name="frontend"),
                    alert("HighRequestLatency", "critical", service_name="cart"),
                    alert("KubePodNotReady", pod="cart-1")])
    _, body = api.get("/api/v2/alerts", filter='alertname=~"High.*"')
    assert sorted(names(body)) == ["HighRequestErrorRate", "HighRequestLatency"]
    _, body = api.request("GET", "/api/v2/alerts", params=[("filter", "severity=critical"),
                                                           ("filter", 'service_name!="cart"')])
    assert names(body) == ["HighRequestErrorRate"]
    _, body = api.get("/api/v2/alerts", filter='pod=""')  # an empty value also matches a missing label
    assert sorted(names(body)) == ["HighRequestErrorRate", "HighRequestLatency"]
    _, body = api.get("/api/v2/alerts", active="false")
    assert body == []
    _, body = api.get("/api/v2/alerts", receiver="nul.")
    assert len(body) == 3
    _, body = api.get("/api/v2/alerts", receiver="other")
    assert body == []
    _, body = api.get("/api/v2/alerts", unprocessed="false")
    assert len(body) == 3  # no effect in v0.27


@pytest.mark.parametrize("params, status, body", [
    ({"filter": "{alertname=x}"}, 400, "unexpected open or close brace: {alertname=x}"),
    ({"filter": "alertname"}, 400, "bad matcher format: alertname"),
    ({"active": "maybe"}, 422, {"code": 601, "message": 'active in query must be of type bool: "maybe"'}),
])
def test_bad_parameters(api, params, status, body):
    assert api.get("/api/v2/alerts", **params) == (status, body)


def test_matcher_parsing():
    assert str(parse_matcher('severity = "critical"')) == 'severity="critical"'
    assert parse_matcher("a=~b|c").matches("c") and not parse_matcher("a=~b|c").matches("bc")
    assert parse_matcher(r'msg="say \"hi\"\n"').value == 'say "hi"\n'
    with pytest.raises(MatcherError, match="unescaped double quote"):
        parse_matcher('a="b"c"')


def test_inhibition_of_warnings_by_criticals(am, api):
    am.post_alerts([alert("HighRequestLatency", "critical"), alert("HighRequestLatency", "warning"),
                    alert("HighRequestLatency", "warning", namespace="other")])
    _, body = api.get("/api/v2/alerts")
    by_key = {(a["labels"]["severity"], a["labels"]["namespace"]): a["status"] for a in body}
    critical = fingerprint(alert("HighRequestLatency", "critical").labels)
    assert by_key[("warning", "shop")] == {"inhibitedBy": [critical], "silencedBy": [], "state": "suppressed"}
    assert by_key[("warning", "other")]["state"] == "active"
    _, body = api.get("/api/v2/alerts", inhibited="false")
    assert len(body) == 2


def test_silences_create_list_expire(am, api, clock):
    am.post_alerts([alert("KubePodCrashLooping", pod="cart-1"), alert("KubePodCrashLooping", pod="ad-1")])
    silence = {"matchers": [{"name": "pod", "value": "cart-.*", "isRegex": True}], "startsAt": "2023-11-14T22:00:00Z",
               "endsAt": "2023-11-14T23:13:20Z", "createdBy": "agent", "comment": "fixing"}
    status, body = api.request("POST", "/api/v2/silences", json=silence)
    assert status == 200
    silence_id = body["silenceID"]
    _, body = api.get("/api/v2/alerts")
    silenced = {a["labels"]["pod"]: a["status"] for a in body}
    assert silenced["cart-1"] == {"inhibitedBy": [], "silencedBy": [silence_id], "state": "suppressed"}
    assert silenced["ad-1"]["state"] == "active"
    _, body = api.get("/api/v2/alerts", silenced="false")
    assert [a["labels"]["pod"] for a in body] == ["ad-1"]

    status, body = api.get(f"/api/v2/silence/{silence_id}")
    assert status == 200 and list(body) == ["id", "status", "updatedAt", "comment", "createdBy", "endsAt", "matchers",
                                            "startsAt"]
    assert body["startsAt"] == "2023-11-14T22:13:20.000Z"  # a start in the past becomes now
    assert body["matchers"] == [{"isEqual": True, "isRegex": True, "name": "pod", "value": "cart-.*"}]
    assert body["status"] == {"state": "active"}
    _, listed = api.get("/api/v2/silences", filter='pod=~"cart-.*"')
    assert [s["id"] for s in listed] == [silence_id]
    _, listed = api.get("/api/v2/silences", filter='pod="cart-.*"')
    assert listed == []

    clock.t += 60
    assert api.request("DELETE", f"/api/v2/silence/{silence_id}")[0] == 200
    _, body = api.get(f"/api/v2/silence/{silence_id}")
    assert body["status"] == {"state": "expired"} and body["endsAt"] == "2023-11-14T22:14:20.000Z"
    _, body = api.get("/api/v2/alerts", silenced="false")
    assert len(body) == 2
    missing = "00000000-0000-4000-8000-000000000000"
    assert api.request("DELETE", f"/api/v2/silence/{missing}")[0] == 404
    assert api.get("/api/v2/silence/nope") == (422, {"code": 601, "message": 'silenceID in path must be of type '
                                                                             'strfmt.UUID: "nope"'})


@pytest.mark.parametrize("change, status, body", [
    ({"comment": None}, 422, {"code": 602, "message": "comment in body is required"}),
    ({"matchers": []}, 422, {"code": 612, "message": "matchers in body should have at least 1 items"}),
    ({"endsAt": "2023-11-14T22:00:00Z"}, 400, "Failed to create silence: start time must be before end time"),
    ({"startsAt": "2023-11-14T20:00:00Z", "endsAt": "2023-11-14T21:00:00Z"}, 400,
     "Failed to create silence: end time can't be in the past"),
    ({"matchers": [{"name": "pod", "value": "", "isRegex": False}]}, 400,
     "silence invalid: at least one matcher must not match the empty string"),
    ({"id": "00000000-0000-4000-8000-000000000000"}, 404, "silence not found"),
])
def test_silence_validation(api, change, status, body):
    silence = {"matchers": [{"name": "pod", "value": "x", "isRegex": False}], "startsAt": "2023-11-14T22:13:20Z",
               "endsAt": "2023-11-14T23:13:20Z", "createdBy": "agent", "comment": "c"}
    silence.update(change)
    silence = {k: v for k, v in silence.items() if v is not None}
    assert api.request("POST", "/api/v2/silences", json=silence) == (status, body)


def test_updating_a_silence_in_place_or_replacing_it(am, api, clock):
    silence = {"matchers": [{"name": "pod", "value": "x", "isRegex": False}], "startsAt": "2023-11-14T22:13:20Z",
               "endsAt": "2023-11-14T23:13:20Z", "createdBy": "agent", "comment": "c"}
    _, body = api.request("POST", "/api/v2/silences", json=silence)
    first = body["silenceID"]
    _, body = api.request("POST", "/api/v2/silences", json={**silence, "id": first, "endsAt": "2023-11-15T00:00:00Z"})
    assert body["silenceID"] == first  # a later end: updated in place
    _, body = api.request("POST", "/api/v2/silences",
                          json={**silence, "id": first, "matchers": [{"name": "pod", "value": "y", "isRegex": False}]})
    assert body["silenceID"] != first  # other matchers: the old silence expires, a new one replaces it
    assert am.get_silence(first).state(clock()) == "expired"


def test_post_alerts_and_resolution_timeout(am, api, clock):
    status, _ = api.request("POST", "/api/v2/alerts", json=[
        {"labels": {"alertname": "Manual", "empty": ""}, "annotations": {"a": "b"}}])
    assert status == 200
    [view] = am.alerts()
    assert view.alert.labels == {"alertname": "Manual"}  # empty labels are dropped
    assert view.alert.starts_at == NOW and view.alert.ends_at == NOW + 300  # resolve_timeout
    clock.t += 301
    assert am.alerts() == []
    assert api.request("POST", "/api/v2/alerts", json=[{"annotations": {}}]) == (
        422, {"code": 602, "message": "0.labels in body is required"})
    assert api.request("POST", "/api/v2/alerts", json=[{"labels": {}}]) == (400, "at least one label pair required")


def test_resolved_alerts_merge_and_disappear(am, clock):
    am.post_alerts([alert("X", ends_in=240)])
    clock.t += 30
    resolved = PostableAlert({"alertname": "X", "severity": "warning", "namespace": "shop"}, {}, NOW - 60, NOW + 10)
    am.post_alerts([resolved])
    assert am.alerts() == []
    [stored] = am.store.list(clock())
    assert stored.starts_at == NOW - 60 and stored.ends_at == NOW + 10


def test_alert_groups(am, api):
    am.post_alerts([alert("A", namespace="shop", job="b"), alert("B", namespace="shop", job="a"),
                    alert("C", namespace="hotel"), alert("Watchdog", namespace="")])
    _, body = api.get("/api/v2/alerts/groups")
    assert [(g["labels"], g["receiver"], [a["labels"]["alertname"] for a in g["alerts"]]) for g in body] == [
        ({}, {"name": "null"}, ["Watchdog"]),
        ({"namespace": "hotel"}, {"name": "null"}, ["C"]),
        ({"namespace": "shop"}, {"name": "null"}, ["B", "A"]),  # by job, then the labels
    ]
    assert list(body[0]) == ["alerts", "labels", "receiver"]
    _, body = api.get("/api/v2/alerts/groups", filter="alertname=C")
    assert [g["labels"] for g in body] == [{"namespace": "hotel"}]


def test_status_receivers_health(api, am):
    status, body = api.get("/api/v2/status")
    assert status == 200 and list(body) == ["cluster", "config", "uptime", "versionInfo"]
    assert body["cluster"] == {"peers": [], "status": "disabled"}
    assert body["versionInfo"]["version"] == "0.27.0"
    assert "route:\n  receiver: \"null\"\n  group_by:\n  - namespace\n" in body["config"]["original"]
    assert body["uptime"] == "2023-11-14T22:13:20.000Z"
    assert api.get("/api/v2/receivers") == (200, [{"name": "null"}])
    assert api.get("/-/healthy") == (200, "OK") and api.get("/-/ready") == (200, "OK")
