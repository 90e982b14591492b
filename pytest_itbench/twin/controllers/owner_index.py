"""Objects grouped by their controller, as a controller's informer indexer keeps them.

A workload controller looks at its own pods (or revisions) on every sync;
listing the whole namespace each time would cost O(pods) per sync. The index
is fed every change of its bucket (from the controller's ``keys_for``) and
answers "which objects does the owner with this uid control" and "which
objects in this namespace have no controller" (candidates for adoption).
"""

from __future__ import annotations

from ..store import Change
from .controller_ref import controller_of

Key = tuple[str, str]  # namespace, name


class OwnerIndex:
    def __init__(self, kind: str):
        self.kind = kind  # only controllers of this kind are indexed
        self._owned: dict[str, set[Key]] = {}
        self._orphans: dict[str, set[str]] = {}
        self._where: dict[Key, str] = {}  # object -> owner uid, or "" for an orphan

    def observe(self, change: Change) -> None:
        meta = change.obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        self._forget(key)
        if change.type == "DELETED":
            return
        controller = controller_of(change.obj)
        if controller is None:
            self._where[key] = ""
            self._orphans.setdefault(key[0], set()).add(key[1])
        elif controller.get("kind") == self.kind and controller.get("uid"):
            self._where[key] = controller["uid"]
            self._owned.setdefault(controller["uid"], set()).add(key)

    def owned(self, uid: str) -> list[Key]:
        return sorted(self._owned.get(uid, ()))

    def orphans(self, namespace: str) -> list[str]:
        return sorted(self._orphans.get(namespace, ()))

    def _forget(self, key: Key) -> None:
        where = self._where.pop(key, None)
        if where is None:
            return
        group = self._orphans.get(key[0]) if where == "" else self._owned.get(where)
        if group is None:
            return
        group.discard(key[1] if where == "" else key)
        if not group:
            if where == "":
                del self._orphans[key[0]]
            else:
                del self._owned[where]

