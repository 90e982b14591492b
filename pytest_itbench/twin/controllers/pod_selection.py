"""Which pods each selecting object (a Service, a PodDisruptionBudget) selects, kept current from store changes.

Controllers that act on "the pods a selector picks" must not rescan the
pods of a namespace on every pod change, nor test every selector of the
namespace against every changed pod. This index holds, per namespace, the
selecting objects by one ``key=value`` requirement of their selector (a pod
can only match selectors filed under one of its own labels), the names of
the pods each selects and, for each pod, the objects that select it. A pod
change is tested against those candidates only, and tells the controller
which selecting objects it concerns.

Every update is idempotent (a pod's membership is set from its current
labels, not toggled), so replaying a change, as the manager does for the
objects that exist when a controller starts, is harmless.
"""

from __future__ import annotations

from typing import Callable

from ..selectors import LabelSelector
from ..store import Change, Store

SelectorOf = Callable[[dict], "LabelSelector | None"]
Key = tuple[str, str]  # (namespace, name) of the selecting object
_ANY = ("", "")  # where selectors without an equality requirement are filed: tested against every pod


class SelectorIndex:
    def __init__(self, store: Store, selector_of: SelectorOf, pods_bucket: str = "pods"):
        self.store = store
        self.selector_of = selector_of  # None: the object selects nothing
        self.pods_bucket = pods_bucket
        self._selectors: dict[str, dict[str, LabelSelector]] = {}  # namespace -> name -> selector
        self._filed: dict[str, dict[tuple[str, str], set[str]]] = {}  # namespace -> (key, value) -> names
        self._members: dict[Key, set[str]] = {}  # selecting object -> pod names
        self._selected_by: dict[Key, set[str]] = {}  # (namespace, pod) -> names of the objects selecting it

    # ---- keeping current ------------------------------------------------------------------------
    def selector_changed(self, change: Change) -> bool:
        """Record a selecting object's change; True when what it selects may have changed."""
        meta = change.obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        selector = None if change.type == "DELETED" else self.selector_of(change.obj)
        current = self._selectors.get(namespace, {}).get(name)
        if current is not None and selector is not None and current.requirements == selector.requirements:
            return False
        if current is None and selector is None:
            return False
        if current is not None:
            self._forget(namespace, name, current)
        if selector is not None:
            self._selectors.setdefault(namespace, {})[name] = selector
            self._filed.setdefault(namespace, {}).setdefault(_filing(selector), set()).add(name)
            members = self._members[(namespace, name)] = set()
            for pod in self.store.list(self.pods_bucket, namespace)[0]:
                if selector.matches(pod["metadata"].get("labels")):
                    members.add(pod["metadata"]["name"])
                    self._selected_by.setdefault((namespace, pod["metadata"]["name"]), set()).add(name)
        return True

    def _forget(self, namespace: str, name: str, selector: LabelSelector) -> None:
        spaces = self._selectors[namespace]
        del spaces[name]
        if not spaces:
            del self._selectors[namespace]
        filed = self._filed[namespace]
        names = filed[_filing(selector)]
        names.discard(name)
        if not names:
            del filed[_filing(selector)]
        for pod in self._members.pop((namespace, name), ()):
            owners = self._selected_by.get((namespace, pod))
            if owners is not None:
                owners.discard(name)
                if not owners:
                    del self._selected_by[(namespace, pod)]

    def pod_changed(self, change: Change) -> list[Key]:
        """Record a pod's change; the selecting objects that selected it before or select it now, by name."""
        meta = change.obj["metadata"]
        namespace = meta.get("namespace", "")
        filed = self._filed.get(namespace)
        if not filed:
            return []
        pod = meta["name"]
        labels = None if change.type == "DELETED" else meta.get("labels") or {}
        candidates = set(self._selected_by.get((namespace, pod), ()))
        candidates |= filed.get(_ANY, set())
        for pair in (labels or {}).items():
            candidates |= filed.get(pair, set())
        if not candidates:
            return []
        selectors = self._selectors[namespace]
        owners = self._selected_by.setdefault((namespace, pod), set())
        touched = []
        for name in sorted(candidates):
            members = self._members[(namespace, name)]
            was = pod in members
            now = labels is not None and selectors[name].matches(labels)
            if now:
                members.add(pod)
                owners.add(name)
            elif was:
                members.discard(pod)
                owners.discard(name)
            if was or now:
                touched.append((namespace, name))
        if not owners:
            del self._selected_by[(namespace, pod)]
        return touched

    # ---- reading ----------------------------------------------------------------------------------
    def selects(self, namespace: str, name: str) -> bool:
        return (namespace, name) in self._members

    def members(self, namespace: str, name: str) -> list[dict]:
        """The stored pods the object selects (read only), by name."""
        out = []
        for pod in sorted(self._members.get((namespace, name), ())):
            obj = self.store.get(self.pods_bucket, namespace, pod)
            if obj is not None:
                out.append(obj)
        return out

    def in_namespace(self, namespace: str) -> list[Key]:
        """Every selecting object of a namespace, by name."""
        return [(namespace, name) for name in sorted(self._selectors.get(namespace, ()))]


def _filing(selector: LabelSelector) -> tuple[str, str]:
    """The label a pod must carry to match: the selector's first ``key=value`` requirement."""
    for requirement in selector.requirements:
        if requirement.op in ("=", "in") and len(requirement.values) == 1:
            return requirement.key, requirement.values[0]
    return _ANY
