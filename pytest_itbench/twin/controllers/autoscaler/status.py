"""The ``kube-system/cluster-autoscaler-status`` ConfigMap, in the YAML shape cluster-autoscaler (1.30 and
later) writes under its ``status`` key (``clusterstate/api`` ``ClusterAutoscalerStatus``):

.. code-block:: yaml

    time: 2023-11-14 22:13:20 +0000 UTC
    autoscalerStatus: Running
    clusterWide:
      health: {status: Healthy, nodeCounts: {registered: {total, ready, notStarted, unready}, longUnregistered,
               unregistered}, lastProbeTime, lastTransitionTime}
      scaleUp: {status: NoActivity | InProgress, ...}
      scaleDown: {status: NoCandidates | CandidatesPresent, candidates, ...}
    nodeGroups:
    - name: general
      health: {status, nodeCounts, cloudProviderTarget, minSize, maxSize, ...}
      scaleUp: {status, ...}
      scaleDown: {status, candidates, ...}

A ``message`` holds what is wrong with the node-group configuration, one problem a line, each naming the
group and the field; the ConfigMap's ``cluster-autoscaler.kubernetes.io/last-updated`` annotation the time.
Health is Unhealthy when more than 3 nodes and more than 45% of them are not Ready (``--ok-total-unready-count``,
``--max-total-unready-percentage``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import yaml

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when present: written at every loop
NAME = "cluster-autoscaler-status"
LAST_UPDATED = "cluster-autoscaler.kubernetes.io/last-updated"
OK_UNREADY_COUNT = 3
MAX_UNREADY_FRACTION = 0.45


@dataclass
class Counts:
    ready: int = 0
    unready: int = 0
    being_deleted: int = 0
    unregistered: int = 0

    def add(self, other: "Counts") -> None:
        self.ready += other.ready
        self.unready += other.unready
        self.being_deleted += other.being_deleted
        self.unregistered += other.unregistered

    def as_yaml(self) -> dict:
        registered: dict = {"total": self.ready + self.unready, "ready": self.ready, "notStarted": 0}
        if self.being_deleted:
            registered["beingDeleted"] = self.being_deleted
        registered["unready"] = {"total": self.unready, "resourceUnready": 0}
        return {"registered": registered, "longUnregistered": 0, "unregistered": self.unregistered}

    @property
    def healthy(self) -> bool:
        total = self.ready + self.unready
        return not (self.unready > OK_UNREADY_COUNT and self.unready > MAX_UNREADY_FRACTION * total)


@dataclass
class GroupStatus:
    name: str
    counts: Counts
    target: int
    min_size: int
    max_size: int
    scaling_up: bool
    candidates: int


def go_time(t: float) -> str:
    """time.Time.String() of a UTC time: ``2023-11-14 22:13:20.5 +0000 UTC``, the fraction's zeros trimmed."""
    moment = datetime.fromtimestamp(t, tz=timezone.utc)
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    if moment.microsecond:
        text += "." + f"{moment.microsecond:06d}".rstrip("0")
    return text + " +0000 UTC"


class StatusWriter:
    """Renders the status, remembering since when each condition has had its status."""

    def __init__(self, timestamp):
        self._timestamp = timestamp  # the clock's RFC 3339 formatter (metav1.Time)
        self._since: dict[tuple, tuple[str, float]] = {}

    def _condition(self, key: tuple, status: str, now: float, **extra) -> dict:
        previous = self._since.get(key)
        if previous is None or previous[0] != status:
            self._since[key] = (status, now)
        out: dict = {"status": status, **extra}
        out["lastProbeTime"] = self._timestamp(now)
        out["lastTransitionTime"] = self._timestamp(self._since[key][1])
        return out

    def render(self, now: float, groups: list[GroupStatus], cluster: Counts, errors: list[str]) -> str:
        scaling_up = any(g.scaling_up for g in groups)
        candidates = sum(g.candidates for g in groups)
        status: dict = {"time": go_time(now), "autoscalerStatus": "Running"}
        if errors:
            status["message"] = "\n".join(errors)
        status["clusterWide"] = {
            "health": self._condition(("cluster", "health"), "Healthy" if cluster.healthy else "Unhealthy", now,
                                      nodeCounts=cluster.as_yaml()),
            "scaleUp": self._condition(("cluster", "scaleUp"), "InProgress" if scaling_up else "NoActivity", now),
            "scaleDown": self._scale_down(("cluster", "scaleDown"), candidates, now),
        }
        status["nodeGroups"] = [{
            "name": g.name,
            "health": self._condition((g.name, "health"), "Healthy" if g.counts.healthy else "Unhealthy", now,
                                      nodeCounts=g.counts.as_yaml(), cloudProviderTarget=g.target,
                                      minSize=g.min_size, maxSize=g.max_size),
            "scaleUp": self._condition((g.name, "scaleUp"), "InProgress" if g.scaling_up else "NoActivity", now),
            "scaleDown": self._scale_down((g.name, "scaleDown"), g.candidates, now),
        } for g in groups]
        return yaml.dump(status, Dumper=_Dumper, sort_keys=False, width=1000)

    def _scale_down(self, key: tuple, candidates: int, now: float) -> dict:
        if candidates:
            return self._condition(key, "CandidatesPresent", now, candidates=candidates)
        return self._condition(key, "NoCandidates", now)
