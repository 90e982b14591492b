import random
import threading

import pytest

from pytest_itbench.twin.clock import SimClock
from pytest_itbench.twin.errors import AlreadyExists, Conflict, Gone, NotFound
from pytest_itbench.twin.store import Store, clone


@pytest.fixture
def store():
    return Store(SimClock(start=1_700_000_000), random.Random(1), history=5)


def cm(name, ns="default", **data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data}


def test_create_assigns_identity_and_versions(store):
    obj = store.create("configmaps", cm("a"))
    meta = obj["metadata"]
    assert meta["resourceVersion"] == "2" and meta["creationTimestamp"] == "2023-11-14T22:13:20Z"
    assert len(meta["uid"]) == 36
    with pytest.raises(AlreadyExists, match='configmaps "a" already exists'):
        store.create("configmaps", cm("a"))


def test_same_seed_same_uids():
    a = Store(SimClock(start=0), random.Random(5)).create("configmaps", cm("x"))
    b = Store(SimClock(start=0), random.Random(5)).create("configmaps", cm("x"))
    assert a["metadata"]["uid"] == b["metadata"]["uid"]


def test_optimistic_concurrency_and_noop_updates(store):
    first = store.create("configmaps", cm("a", k="1"))
    stale = clone(first)
    changed = clone(first)
    changed["data"]["k"] = "2"
    second = store.update("configmaps", changed)
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    stale["data"]["k"] = "3"
    with pytest.raises(Conflict, match="the object has been modified"):
        store.update("configmaps", stale)
    same = store.update("configmaps", clone(second))
    assert same["metadata"]["resourceVersion"] == second["metadata"]["resourceVersion"]
    with pytest.raises(NotFound, match='configmaps "zz" not found'):
        store.update("configmaps", cm("zz"))


def test_list_is_in_key_order_and_filters_namespace(store):
    for ns, name in [("b", "2"), ("a", "9"), ("a", "1")]:
        store.create("configmaps", cm(name, ns))
    items, rv = store.list("configmaps")
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in items] == [("a", "1"), ("a", "9"),
                                                                                    ("b", "2")]
    assert [o["metadata"]["name"] for o in store.list("configmaps", "a")[0]] == ["1", "9"]
    assert rv == store.resource_version


def test_watch_from_now_replays_current_state_then_streams(store):
    store.create("configmaps", cm("a"))
    events = []
    w = store.watch("configmaps", lambda t, o: events.append((t, o["metadata"]["name"])), lambda o: True, None)
    store.create("configmaps", cm("b"))
    store.delete("configmaps", "default", "a")
    w.stop()
    store.create("configmaps", cm("c"))
    assert events == [("ADDED", "a"), ("ADDED", "b"), ("DELETED", "a")]


def test_watch_from_a_resource_version_sees_only_later_events(store):
    store.create("configmaps", cm("a"))
    rv = store.resource_version
    store.create("configmaps", cm("b"))
    events = []
    store.watch("configmaps", lambda t, o: events.append((t, o["metadata"]["name"])), lambda o: True, rv)
    assert events == [("ADDED", "b")]


def test_selector_filtered_watch_turns_transitions_into_added_and_deleted(store):
    obj = store.create("configmaps", cm("a", k="x"))
    events = []
    store.watch("configmaps", lambda t, o: events.append(t), lambda o: (o.get("data") or {}).get("k") == "y", None)
    for value in ("y", "y2", "y"):
        obj = clone(obj)
        obj["data"]["k"] = value
        obj = store.update("configmaps", obj)
    assert events == ["ADDED", "DELETED", "ADDED"]


def test_compacted_history_is_gone(store):
    start = store.resource_version
    for i in range(10):
        store.create("configmaps", cm(f"n{i}"))
    with pytest.raises(Gone, match="too old resource version"):
        store.watch("configmaps", lambda *a: None, lambda o: True, start)
    store.compact()
    with pytest.raises(Gone):
        store.watch("configmaps", lambda *a: None, lambda o: True, store.resource_version - 1)


def test_concurrent_writers_never_lose_an_update(store):
    store.create("configmaps", cm("counter", n="0"))

    def bump():
        for _ in range(200):
            while True:
                cur = clone(store.get("configmaps", "default", "counter"))
                cur["data"]["n"] = str(int(cur["data"]["n"]) + 1)
                try:
                    store.update("configmaps", cur)
                    break
                except Conflict:
                    continue

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get("configmaps", "default", "counter")["data"]["n"] == "800"
