"""The Prometheus Operator's rule selection, on the twin's clock: PrometheusRule objects become rule files.

    sync = PrometheusRuleSync(store, rule_manager, static_files=shipped)
    sync.attach(clock)       # before the rule manager's own attach: a reload precedes the tick's evaluations

On a real cluster the Operator lists the PrometheusRules its Prometheus selects, renders each into a
file of the ``rulefiles`` ConfigMaps, and the config reloader has Prometheus reload when they change.
Here a write to a PrometheusRule (or a Namespace, whose labels the namespace selector reads) marks the
selection stale; at the next tick the selection is rendered again and, if a file appeared, changed or
went away, the rule manager loads the static files plus the rendered ones. That load is a Prometheus
reload: groups whose definition is unchanged (all of the shipped files') go on with their alert state,
a changed group takes over its predecessor's alerts rule by rule (name and labels), a removed group's
series go stale and its alerts, no longer re-sent, resolve in Alertmanager at their ``endsAt``.

Selection is ITBench's kube-prometheus-stack configuration: ``ruleSelectorNilUsesHelmValues: false``,
so the rule selector is ``{}`` (every PrometheusRule, whatever its labels; the chart's default would
require ``release: prometheus``), and the namespace selector ``{}`` (every namespace). ITBench narrows
the latter to namespaces labelled ``it-bench/monitoring: "true"`` and labels its applications'
namespaces so; the twin's applications carry no such label, so the twin keeps the chart's ``{}``.
Both selectors are parameters (a ``metav1.LabelSelector`` dict; ``None`` selects nothing, as the
Operator's nil rule selector does).

An object that does not render into a valid rule file is skipped, as the Operator skips it (with a
warning here in the log; on a cluster, also an ``InvalidConfiguration`` event). With the admission
webhook (``webhook.py``) such an object cannot be written through the API in the first place.
"""

from __future__ import annotations

import logging
from typing import Mapping, Optional, Sequence

from ...clock import SimClock
from ...selectors import LabelSelector
from ...store import Change, Store
from ..rules import RuleFile, RuleFileError, RuleManager
from . import render
from .webhook import BUCKET

log = logging.getLogger(__name__)

EVERYTHING: Mapping = {}  # the empty metav1.LabelSelector


class PrometheusRuleSync:
    def __init__(self, store: Store, rules: RuleManager, static_files: Sequence[RuleFile] = (), *,
                 rule_selector: Optional[Mapping] = EVERYTHING, namespace_selector: Optional[Mapping] = EVERYTHING):
        self.store = store
        self.rules = rules
        self.static_files = list(static_files)
        self.rule_selector = LabelSelector.from_object(rule_selector)
        self.namespace_selector = LabelSelector.from_object(namespace_selector)
        self.loaded: dict[str, RuleFile] = {}  # path -> the rendered file in the rule manager's set
        self.rejected: dict[str, str] = {}  # "namespace/name" -> why its file was not loaded
        self._texts: dict[str, str] = {}  # path -> rendered text, so an unchanged object is not parsed again
        self._clock: Optional[SimClock] = None
        with store.lock:
            self._stale = store.count(BUCKET) > 0
            store.on_write(self._on_write)

    def _on_write(self, change: Change) -> None:
        # Under the store lock, on whichever thread wrote: only note it; the clock thread does the work.
        if change.bucket == BUCKET or (change.bucket == "namespaces" and not self._selects_every_namespace):
            self._stale = True

    @property
    def _selects_every_namespace(self) -> bool:
        return self.namespace_selector is not None and self.namespace_selector.empty

    # ---- on the clock -----------------------------------------------------------------------------
    def attach(self, clock: SimClock) -> None:
        self._clock = clock
        clock.on_tick(self.tick, name="prometheus operator rule sync")

    def detach(self) -> None:
        if self._clock is not None:
            self._clock.remove_handler(self.tick)
            self._clock = None

    def tick(self, now: float) -> None:
        if self._stale:
            self._stale = False  # before reading: a write while this runs marks it again
            self.sync(now)

    def sync(self, now: float) -> None:
        """Render the selected objects and reload the rule manager if the set of files changed."""
        files: dict[str, RuleFile] = {}
        texts: dict[str, str] = {}
        rejected: dict[str, str] = {}
        for obj in self._selected():
            meta = obj["metadata"]
            path = render.rule_file_path(obj)
            text = render.render(obj.get("spec"))
            if self._texts.get(path) == text and path in self.loaded:
                files[path], texts[path] = self.loaded[path], text
                continue
            try:
                files[path] = render.load(obj)
            except RuleFileError as exc:
                key = f"{meta.get('namespace', '')}/{meta['name']}"
                rejected[key] = str(exc)
                if self.rejected.get(key) != str(exc):
                    log.warning("skipping prometheusrule %s: invalid rule: %s", key, exc)
                continue
            texts[path] = text
        self.rejected = rejected
        if texts == self._texts:
            return
        self.loaded, self._texts = files, texts
        # Prometheus reads the rule-file glob in name order; the shipped files share the directory.
        every = sorted([*self.static_files, *files.values()], key=lambda f: f.path)
        self.rules.load(every, now=now)

    def _selected(self) -> list[dict]:
        if self.rule_selector is None or self.namespace_selector is None:
            return []
        with self.store.lock:
            objects, _ = self.store.list(BUCKET)
            namespaces = {}
            if not self.namespace_selector.empty:
                for obj in objects:
                    ns = obj["metadata"].get("namespace", "")
                    if ns not in namespaces:
                        found = self.store.get("namespaces", "", ns)
                        namespaces[ns] = found is not None and self.namespace_selector.matches(
                            found["metadata"].get("labels"))
        # In the store's key order (namespace, name): the same selection renders in the same order every run.
        return [obj for obj in objects
                if self.rule_selector.matches(obj["metadata"].get("labels"))
                and (self.namespace_selector.empty or namespaces[obj["metadata"].get("namespace", "")])]
