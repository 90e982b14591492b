"""The controller machinery: work queue, manager rounds and the event recorder."""

from pytest_itbench.twin import Twin
from pytest_itbench.twin.controllers.events import EventSource
from pytest_itbench.twin.controllers.manager import Controller
from pytest_itbench.twin.controllers.queue import WorkQueue


def test_queue_keeps_one_entry_per_key_and_hands_out_due_keys_in_order():
    q = WorkQueue()
    q.add("b", 5)
    q.add("a", 5)
    q.add("b", 9)  # later: ignored, the earlier stays
    q.add("c", 3)
    q.add("a", 1)  # earlier: replaces
    assert q.pop_due(4) == ["a", "c"]
    assert q.pop_due(4) == []
    assert q.next_due() == 5 and "b" in q
    assert q.pop_due(100) == ["b"] and len(q) == 0


class Mirror(Controller):
    """A toy controller: every ConfigMap labelled mirror=yes gets a copy named <name>-copy."""

    name = "mirror"
    watches = ("configmaps",)

    def keys_for(self, change):
        meta = change.obj["metadata"]
        if (meta.get("labels") or {}).get("mirror") == "yes":
            yield meta["namespace"], meta["name"]

    def reconcile(self, key, now):
        ns, name = key
        cms = self.resource("", "v1", "configmaps")
        source = self.get(cms, ns, name)
        if source is None:
            self.delete(cms, ns, f"{name}-copy")
            return None
        if self.get(cms, ns, f"{name}-copy") is None:
            self.create(cms, {"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": f"{name}-copy", "namespace": ns}, "data": source.get("data")})
        return None


def _cm(twin, name, labels=None):
    cms = twin.api.catalog.lookup("", "v1", "configmaps")
    twin.api.create(cms, "default", {"metadata": {"name": name, "labels": labels or {}}, "data": {"k": "v"}},
                    twin.admin_ctx)


def test_controllers_act_on_the_next_tick_and_see_objects_that_existed_before_them():
    with Twin(start_time=0) as twin:
        _cm(twin, "early", {"mirror": "yes"})
        twin.controllers.add(Mirror(twin.controllers))
        _cm(twin, "late", {"mirror": "yes"})
        _cm(twin, "ignored")
        assert twin.store.get("configmaps", "default", "late-copy") is None  # no tick yet
        twin.warp(1)
        names = {o["metadata"]["name"] for o in twin.store.list("configmaps", "default")[0]}
        assert {"early-copy", "late-copy"} <= names and "ignored-copy" not in names
        copy = twin.store.get("configmaps", "default", "late-copy")
        assert copy["metadata"]["managedFields"][0]["manager"] == "kube-controller-manager"


class Broken(Controller):
    name = "broken"
    watches = ("configmaps",)

    def keys_for(self, change):
        yield "always"

    def reconcile(self, key, now):
        raise RuntimeError("boom")


def test_a_failing_controller_is_retried_later_and_does_not_stop_the_others():
    with Twin(start_time=0) as twin:
        broken = twin.controllers.add(Broken(twin.controllers))
        twin.controllers.add(Mirror(twin.controllers))
        _cm(twin, "x", {"mirror": "yes"})
        twin.warp(1)
        assert twin.store.get("configmaps", "default", "x-copy") is not None
        assert broken.queue.next_due() == 1 + 5.0


def _events(twin, name=None):
    items = twin.store.list("events", "default")[0]
    return [e for e in items if name is None or e["involvedObject"]["name"] == name]


def test_repeated_events_are_counted_on_one_event():
    with Twin(start_time=1_000) as twin:
        _cm(twin, "subject")
        obj = twin.api.get(twin.api.catalog.lookup("", "v1", "configmaps"), "default", "subject")
        source = EventSource("kubelet", "itbench-worker")
        twin.events.record(obj, "Warning", "BackOff", "Back-off restarting failed container", source)
        twin.warp(30)
        twin.events.record(obj, "Warning", "BackOff", "Back-off restarting failed container", source)
        twin.events.record(obj, "Normal", "Pulled", "Container image pulled", source)
        events = sorted(_events(twin, "subject"), key=lambda e: e["reason"])
        assert [(e["reason"], e["count"]) for e in events] == [("BackOff", 2), ("Pulled", 1)]
        backoff = events[0]
        assert backoff["source"] == {"component": "kubelet", "host": "itbench-worker"}
        assert backoff["firstTimestamp"] != backoff["lastTimestamp"]
        assert backoff["metadata"]["name"].startswith("subject.")


def test_many_messages_with_one_reason_are_combined_and_spam_is_dropped():
    with Twin(start_time=1_000) as twin:
        _cm(twin, "noisy")
        obj = twin.api.get(twin.api.catalog.lookup("", "v1", "configmaps"), "default", "noisy")
        source = EventSource("kubelet", "n1")
        for i in range(12):
            twin.events.record(obj, "Warning", "Failed", f"failure {i}", source)
        combined = [e for e in _events(twin, "noisy") if e["message"].startswith("(combined")]
        assert [(e["message"], e["count"]) for e in combined] == [("(combined from similar events): failure 11", 2)]
        for i in range(40):
            twin.events.record(obj, "Normal", "Tick", f"tick {i}", source)
        assert len(_events(twin, "noisy")) <= 25


def test_scheduler_style_events_use_series_and_events_expire_after_an_hour():
    with Twin(start_time=1_000) as twin:
        _cm(twin, "pending")
        obj = twin.api.get(twin.api.catalog.lookup("", "v1", "configmaps"), "default", "pending")
        source = EventSource("default-scheduler", new_api=True, action="Scheduling")
        twin.events.record(obj, "Warning", "FailedScheduling", "0/3 nodes are available", source)
        twin.events.record(obj, "Warning", "FailedScheduling", "0/3 nodes are available", source)
        (event,) = _events(twin, "pending")
        assert event["reportingComponent"] == "default-scheduler" and event["action"] == "Scheduling"
        assert event["series"]["count"] == 2 and "count" not in event
        twin.warp(3700)
        assert _events(twin, "pending") == []
