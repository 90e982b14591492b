"""The twin's object store: versioned objects with optimistic concurrency and watch fan-out.

This plays etcd's part and nothing more: it knows buckets (one per stored
group-resource, named as Kubernetes names them, e.g. ``deployments.apps``),
keys (namespace, name), a global ``resourceVersion`` counter, ``uid`` and
``creationTimestamp`` assignment, and the event history that watches resume
from. What an object *means* (defaults, validation, generation, status) lives
in the API server's resource logic above it.

Stored objects are never mutated in place: every write stores a new dict, so
readers may hold references without copying. Callers must :func:`clone` an
object before changing it.
"""

from __future__ import annotations

import random
import threading
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable

import orjson

from .clock import SimClock
from .errors import AlreadyExists, Conflict, Gone, NotFound, StatusError


def clone(obj):
    """Deep copy of JSON data (faster than copy.deepcopy for dicts of plain values)."""
    return orjson.loads(orjson.dumps(obj))


Key = tuple[str, str]  # (namespace or "", name)


@dataclass(frozen=True)
class Change:
    """One write, as recorded in the history and delivered to watches."""

    rv: int
    bucket: str
    type: str  # ADDED, MODIFIED, DELETED
    obj: dict
    old: dict | None


class Watch:
    """A subscription to one bucket. ``sink`` receives (type, object) pairs.

    ``matches`` decides which objects the watcher sees; an object that stops
    matching arrives as DELETED and one that starts matching as ADDED, as the
    API server's watch cache does for selector-filtered watches.
    """

    def __init__(self, store: "Store", bucket: str, sink: Callable[[str, dict], None],
                 matches: Callable[[dict], bool]):
        self._store = store
        self.bucket = bucket
        self._sink = sink
        self._matches = matches
        self.closed = False

    def deliver(self, change: Change) -> None:
        now = self._matches(change.obj)
        if change.type == "ADDED":
            if now:
                self._sink("ADDED", change.obj)
        elif change.type == "DELETED":
            if now:
                self._sink("DELETED", change.obj)
        else:
            before = change.old is not None and self._matches(change.old)
            if before and now:
                self._sink("MODIFIED", change.obj)
            elif now:
                self._sink("ADDED", change.obj)
            elif before:
                self._sink("DELETED", change.obj)

    def stop(self) -> None:
        if not self.closed:
            self.closed = True
            self._store._unsubscribe(self)


class Store:
    """Versioned objects in buckets, with watch history for resumption."""

    def __init__(self, clock: SimClock, rng: random.Random, history: int = 20000):
        self.clock = clock
        self.rng = rng
        self.lock = threading.RLock()
        self._rv = 1
        # bucket -> namespace ("" for cluster-scoped) -> name -> object
        self._buckets: dict[str, dict[str, dict[str, dict]]] = {}
        self._history: deque[Change] = deque()
        self._history_limit = history
        self._compacted_rv = 0  # events at or before this rv are gone
        self._watches: dict[str, list[Watch]] = {}
        self._write_hooks: list[Callable[[Change], None]] = []

    # ---- reading -------------------------------------------------------------
    @property
    def resource_version(self) -> int:
        return self._rv

    def get(self, bucket: str, namespace: str, name: str) -> dict | None:
        return self._buckets.get(bucket, {}).get(namespace or "", {}).get(name)

    def must_get(self, bucket: str, namespace: str, name: str) -> dict:
        obj = self.get(bucket, namespace, name)
        if obj is None:
            raise NotFound(bucket, name)
        return obj

    def list(self, bucket: str, namespace: str | None = None) -> tuple[list[dict], int]:
        """Objects of a bucket in key order (namespace, then name), and the list's resourceVersion."""
        with self.lock:
            spaces = self._buckets.get(bucket, {})
            if namespace:
                names = spaces.get(namespace, {})
                return [names[n] for n in sorted(names)], self._rv
            out = []
            for ns in sorted(spaces):
                names = spaces[ns]
                out.extend(names[n] for n in sorted(names))
            return out, self._rv

    def keys(self, bucket: str) -> list[Key]:
        with self.lock:
            return [(ns, name) for ns, names in self._buckets.get(bucket, {}).items() for name in names]

    def count(self, bucket: str) -> int:
        return sum(len(names) for names in self._buckets.get(bucket, {}).values())

    def buckets(self) -> list[str]:
        return list(self._buckets)

    # ---- writing -------------------------------------------------------------
    def new_uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def create(self, bucket: str, obj: dict) -> dict:
        """Store a new object; assigns uid, creationTimestamp and resourceVersion."""
        meta = obj.setdefault("metadata", {})
        key = (meta.get("namespace") or "", meta["name"])
        with self.lock:
            items = self._buckets.setdefault(bucket, {}).setdefault(key[0], {})
            if key[1] in items:
                raise AlreadyExists(bucket, key[1])
            meta["uid"] = meta.get("uid") or self.new_uid()
            meta["creationTimestamp"] = meta.get("creationTimestamp") or self.clock.timestamp()
            self._rv += 1
            meta["resourceVersion"] = str(self._rv)
            items[key[1]] = obj
            self._record(Change(self._rv, bucket, "ADDED", obj, None))
            return obj

    def update(self, bucket: str, obj: dict, *, check_rv: bool = True) -> dict:
        """Replace an object. With ``check_rv``, a stale ``metadata.resourceVersion`` is a 409 Conflict.

        An update that changes nothing keeps the old resourceVersion and sends no
        watch event, as the API server does for a no-op write.
        """
        meta = obj["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        with self.lock:
            items = self._buckets.get(bucket, {}).get(key[0], {})
            old = items.get(key[1])
            if old is None:
                raise NotFound(bucket, key[1])
            old_meta = old["metadata"]
            want_rv = meta.get("resourceVersion")
            if check_rv and want_rv and want_rv != old_meta["resourceVersion"]:
                raise Conflict(bucket, key[1])
            if meta.get("uid") and meta["uid"] != old_meta["uid"]:
                raise Conflict(bucket, key[1], f"Precondition failed: UID in precondition: {meta['uid']}, "
                                                f"UID in object meta: {old_meta['uid']}")
            meta["uid"] = old_meta["uid"]
            meta["creationTimestamp"] = old_meta["creationTimestamp"]
            meta["resourceVersion"] = old_meta["resourceVersion"]
            if obj == old:
                return old
            self._rv += 1
            meta["resourceVersion"] = str(self._rv)
            items[key[1]] = obj
            self._record(Change(self._rv, bucket, "MODIFIED", obj, old))
            return obj

    def delete(self, bucket: str, namespace: str, name: str, *, uid: str | None = None,
               resource_version: str | None = None) -> dict:
        """Remove an object now (finalizers and grace are the resource logic's business)."""
        key = (namespace or "", name)
        with self.lock:
            spaces = self._buckets.get(bucket, {})
            items = spaces.get(key[0], {})
            old = items.get(name)
            if old is None:
                raise NotFound(bucket, name)
            if uid and uid != old["metadata"]["uid"]:
                raise Conflict(bucket, name, f"Precondition failed: UID in precondition: {uid}, "
                                             f"UID in object meta: {old['metadata']['uid']}")
            if resource_version and resource_version != old["metadata"]["resourceVersion"]:
                raise Conflict(bucket, name, "Precondition failed: ResourceVersion in precondition: "
                                             f"{resource_version}, ResourceVersion in object meta: "
                                             f"{old['metadata']['resourceVersion']}")
            del items[name]
            if not items:
                del spaces[key[0]]
            self._rv += 1
            # The DELETED event carries the object at a new resourceVersion, as etcd3 does.
            gone = dict(old)
            gone["metadata"] = dict(old["metadata"], resourceVersion=str(self._rv))
            self._record(Change(self._rv, bucket, "DELETED", gone, old))
            return gone

    def _record(self, change: Change) -> None:
        # Caller holds the lock.
        self._history.append(change)
        if len(self._history) > self._history_limit:
            self._compacted_rv = self._history.popleft().rv
        for watch in self._watches.get(change.bucket, ()):
            watch.deliver(change)
        for hook in self._write_hooks:
            hook(change)

    def on_write(self, hook: Callable[[Change], None]) -> None:
        """Call ``hook(change)`` after every write, under the store lock. Keep it cheap."""
        self._write_hooks.append(hook)

    # ---- watching ----------------------------------------------------------------
    def watch(self, bucket: str, sink: Callable[[str, dict], None], matches: Callable[[dict], bool],
              since: int | None) -> Watch:
        """Subscribe to a bucket.

        ``since=None`` first delivers an ADDED event for every current object that
        matches, then live events. ``since=N`` replays the recorded events after N
        and raises :class:`Gone` if N is older than the history kept.
        """
        watch = Watch(self, bucket, sink, matches)
        with self.lock:
            if since is None:
                for obj in self.list(bucket)[0]:
                    if matches(obj):
                        sink("ADDED", obj)
            else:
                if since < self._compacted_rv:
                    raise Gone(f"too old resource version: {since} ({self._compacted_rv + 1})")
                if since > self._rv:
                    # A future resourceVersion: a real server waits for it; we have
                    # nothing to replay and start live.
                    pass
                for change in self._history:
                    if change.rv > since and change.bucket == bucket:
                        watch.deliver(change)
            self._watches.setdefault(bucket, []).append(watch)
        return watch

    def _unsubscribe(self, watch: Watch) -> None:
        with self.lock:
            lst = self._watches.get(watch.bucket, [])
            if watch in lst:
                lst.remove(watch)

    def compact(self) -> None:
        """Forget the whole event history (as etcd compaction does); older watches get 410 Gone."""
        with self.lock:
            self._history.clear()
            self._compacted_rv = self._rv

    def watch_count(self) -> int:
        return sum(len(v) for v in self._watches.values())


def iter_all(store: Store, buckets: Iterable[str]):
    for bucket in buckets:
        items, _ = store.list(bucket)
        yield from items


__all__ = ["Store", "Watch", "Change", "clone", "StatusError"]
