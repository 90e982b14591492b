"""The topology monitor's event log: each watched object's ADDED, MODIFIED and DELETED, as text records.

    events = TopologyEvents(twin.store, twin.api, now=twin.clock.now)   # records every write from now on
    events.today()                                                      # what /events serves

The monitor watches the kinds it collects and writes one record per watch event to a log file per
day, skipping Lease and Endpoints modifications; ``/events`` returns the current day's records.
Here a store write hook stands in for the watches, the day is the twin clock's (UTC), and the log is
bounded (the oldest records go first).
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from ..apiserver.registry import ResourceAPI
from ..store import Change, Store
from .topology import node_id
from .topology_monitor import watched_resources

DEFAULT_CAPACITY = 10_000
_QUIET_MODIFICATIONS = frozenset({"Lease", "Endpoints"})


@dataclass(frozen=True)
class TopologyEvent:
    time: float
    type: str
    kind: str
    group: str
    version: str
    namespace: str
    name: str
    uid: str
    owners: tuple[tuple[str, str, str], ...]  # (kind, name, uid)

    @property
    def id(self) -> str:
        return node_id(self.group, self.version, self.kind, self.namespace, self.name)

    def text(self) -> str:
        """The record as the monitor's EventLogger writes it (between its separator lines)."""
        stamp = datetime.fromtimestamp(self.time, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        lines = [f"Timestamp: {stamp}", f"Event Type: {self.type}", "Resource:", f"  Kind: {self.kind}",
                 f"  Group: {self.group}", f"  Version: {self.version}", f"  Namespace: {self.namespace}",
                 f"  Name: {self.name}", f"  ID: {self.id}", f"  UID: {self.uid}"]
        if self.owners:
            lines.append("Owners:")
            for number, (kind, name, uid) in enumerate(self.owners, start=1):
                lines += [f"  - Owner #{number}:", f"      Kind: {kind}", f"      Name: {name}", f"      UID: {uid}"]
            kind, name, _ = self.owners[0]
            lines += ["Owner (Primary):", f"  Kind: {kind}", f"  Name: {name}"]
        return "\n".join(lines)


class TopologyEvents:
    def __init__(self, store: Store, api: ResourceAPI, now: Callable[[], float], capacity: int = DEFAULT_CAPACITY):
        self._api = api
        self._now = now
        self._records: deque[TopologyEvent] = deque(maxlen=capacity)
        self._lock = threading.Lock()
        self._watched: dict[str, tuple[str, str, str]] = {}  # bucket -> (group, version, kind)
        self._catalog_generation = -1
        store.on_write(self._record)

    def _record(self, change: Change) -> None:
        # Runs under the store lock on every write: a lookup, and a small record for watched kinds.
        if self._catalog_generation != self._api.catalog.generation:
            self._catalog_generation = self._api.catalog.generation
            self._watched = {res.bucket: (res.group, res.version, res.kind) for res in watched_resources(self._api)}
        watched = self._watched.get(change.bucket)
        if watched is None or (change.type == "MODIFIED" and watched[2] in _QUIET_MODIFICATIONS):
            return
        meta = change.obj["metadata"]
        owners = tuple((ref.get("kind", ""), ref.get("name", ""), ref.get("uid", ""))
                       for ref in meta.get("ownerReferences") or ())
        event = TopologyEvent(self._now(), change.type, watched[2], watched[0], watched[1],
                              meta.get("namespace") or "", meta["name"], meta.get("uid", ""), owners)
        with self._lock:
            self._records.append(event)

    def today(self) -> list[str]:
        """The records of the clock's current day, oldest first."""
        day = datetime.fromtimestamp(self._now(), tz=timezone.utc).date()
        with self._lock:
            records = list(self._records)
        return [r.text() for r in records if datetime.fromtimestamp(r.time, tz=timezone.utc).date() == day]
