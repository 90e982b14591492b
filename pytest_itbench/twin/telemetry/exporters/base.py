"""What an exporter hands to the scrape loop: metric families, series grouped by what they describe, targets.

An exporter plays one real exporter (kube-state-metrics, the kubelet's cAdvisor, the OpenTelemetry
Collector) together with the service discovery that finds it: on each scrape it returns its
targets, each with the label set Prometheus gives that target and the series it exposes.

Series come in :class:`SeriesGroup` s, one per thing described (a pod's kube-state-metrics, a
container's cAdvisor counters, a span key's calls and histogram). A group's label sets are fixed
for its lifetime, so the scrape loop resolves them to store references once; when what it describes
changes its labels, the exporter builds a new group. Values may change in place between scrapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Protocol, Sequence

from .. import labels as lbl
from ..labels import Labels

METRIC_NAME = lbl.METRIC_NAME


@dataclass(frozen=True)
class MetricFamily:
    """A metric family as its exporter declares it (``# HELP`` and ``# TYPE``), for ``/api/v1/metadata``."""

    name: str
    type: str  # counter, gauge, histogram, ...
    help: str
    unit: str = ""


class SeriesGroup:
    """Series that appear and vanish together, with their store references (resolved by the scrape loop)."""

    __slots__ = ("labels", "values", "refs", "generation")

    def __init__(self, labels: Sequence[Labels], values: list[float]):
        if len(labels) != len(values):
            raise ValueError(f"{len(labels)} label sets for {len(values)} values")
        self.labels = labels
        self.values = values
        self.refs: list[int] = []
        self.generation = -1  # the store generation the refs belong to; -1: not resolved yet


@dataclass
class TargetScrape:
    """One target's exposition at one scrape: its identity, whether it answered, and its series."""

    key: tuple  # identifies the target across scrapes (staleness is tracked per target)
    labels: Labels  # the target's labels after relabelling: what ``up`` and friends carry
    groups: Sequence[SeriesGroup] = field(default_factory=list)
    up: bool = True


class Exporter(Protocol):
    job: str
    families: Sequence[MetricFamily]

    def scrape(self, now: float) -> Iterable[TargetScrape]:
        """Every target of this job as a scrape at ``now`` finds it."""


def target_series_labels(target: Labels, exposed: Mapping[str, str], honor_labels: bool) -> Labels:
    """A scraped series' labels once Prometheus attaches the target's labels.

    With ``honor_labels`` the exposed value wins a conflict; without it the exposed label is kept as
    ``exported_<name>`` and the target's value is used, as Prometheus' scrape loop resolves them.
    Labels with an empty value are dropped, as Prometheus never stores them.
    """
    merged = dict(exposed)
    for name, value in target:
        if name not in merged:
            merged[name] = value
        elif not honor_labels:
            exported = "exported_" + name
            while exported in merged:  # Prometheus prefixes again until the name is free
                exported = "exported_" + exported
            merged[exported] = merged[name]
            merged[name] = value
    return lbl.from_mapping(merged)
