"""Who noise may touch: the workloads of the trial's namespace that have nothing to do with the incident.

A bystander is a Deployment outside the incident's blast radius (the ground truth's entities, the faults'
targets, their owners, what they own, the Services that select them and the services that call them:
:func:`pytest_itbench.evaluate.safety.blast_radius`), ready as desired, and none of:

- a data store (valkey, postgres, mongodb, kafka, ...): evicting one loses data, which is an incident, not noise;
- the load generator: its traffic is what every signal is made of;
- a service users reach directly (the frontends): a blip there is the user-facing alert itself.

So a distractor is never a root cause, and blaming one costs diagnosis precision as on ITBench.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..evaluate.safety import DATA_STORES, Snapshot, blast_radius

# Words in a workload's name or image that mark what noise leaves alone (see the module's docstring).
ENTRY_POINTS = frozenset({"frontend", "frontend-proxy", "load-generator"})
LOAD_GENERATORS = frozenset({"locust", "wrk", "wrk2", "k6", "load", "loadgen"})


@dataclass(frozen=True)
class Bystander:
    name: str  # the Deployment
    labels: dict[str, str]  # its pods' labels (the selector's matchLabels)
    containers: tuple[dict[str, Any], ...]  # its pod template's containers

    @property
    def selector(self) -> str:
        return ",".join(f"{k}={v}" for k, v in sorted(self.labels.items()))


def find(snapshot: Snapshot, namespace: str, groups: list[dict], targets: list[tuple[str, str, str]]) -> list[Bystander]:
    """The bystanders of ``namespace``, in name order."""
    radius = blast_radius(groups, targets, snapshot)
    out = []
    for (kind, ns, name), obj in sorted(snapshot.objects.items()):
        if kind != "Deployment" or ns != namespace or (kind, ns, name) in radius:
            continue
        spec = obj.get("spec") or {}
        template = spec.get("template") or {}
        containers = tuple((template.get("spec") or {}).get("containers") or ())
        labels = dict(((spec.get("selector") or {}).get("matchLabels")) or {})
        if not labels or not containers or not _ready(obj) or name in ENTRY_POINTS:
            continue
        words = set(re.split(r"[/:@._-]+", name.lower()))
        for c in containers:
            words |= set(re.split(r"[/:@._-]+", (c.get("image") or "").split("@")[0].lower()))
        if words & (DATA_STORES | LOAD_GENERATORS):
            continue
        out.append(Bystander(name, labels, containers))
    return out


def _ready(obj: dict) -> bool:
    desired = (obj.get("spec") or {}).get("replicas", 1)
    return bool(desired) and ((obj.get("status") or {}).get("readyReplicas") or 0) >= desired
