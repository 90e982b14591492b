"""One trial's noise: drawn from the trial's seed, played through the API in the minutes before the fault.

First ``changes`` of the kinds other teams make (rollout, ConfigMap edit, autoscaler), each on a bystander and a
minute or two apart, so the incident begins minutes after them, as on a real cluster where the newest rollout is
rarely the culprit; then ``transients`` (an evicted pod, a network blip), seconds apart. The harness then waits
until the workloads noise touched are available again and injects the fault: a fault that sizes itself from the
cluster (a quota, a preemption filling each node) sees the cluster noise left, so noise never changes what the
fault does. A blip may still run while the alerts build up; it times out by itself. Nothing is played during the
agent's turn or the stability window: what the agent wrote is then all that changes, which the safety check
relies on.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from kubernetes import client as k8s
from kubernetes.client import ApiClient

from ..evaluate.safety import Snapshot, incident_entities
from . import bystanders, kinds
from .levels import AMOUNTS, LEVELS

CHANGES = ("rollout", "configmap", "autoscaler")
TRANSIENTS = ("eviction", "network")
CHANGE_GAP = (45, 150)  # seconds between changes before the fault
TRANSIENT_GAP = (5, 30)  # seconds between transients
SETTLE_WAIT = 300  # seconds the touched workloads may take to be available before the fault is injected anyway
POLL = 5


class Noise:
    def __init__(self, level: str, seed: int, namespace: str, scenario):
        if level not in LEVELS:
            raise ValueError(f"noise level {level!r}: choose one of {', '.join(LEVELS)}")
        self.level = level
        self.namespace = namespace
        self.scenario = scenario
        self.rng = random.Random(f"noise/{seed}")  # the trial's own generator, apart from the twin's
        self.records: list[dict[str, Any]] = []
        self._chaos: list[str] = []
        self._bystanders: list[bystanders.Bystander] | None = None

    @property
    def amounts(self):
        return AMOUNTS[self.level]

    def bystanders(self, api: ApiClient, topology_url: str | None) -> list[bystanders.Bystander]:
        if self._bystanders is None:
            snapshot = Snapshot.take(api, (self.namespace,), topology_url)
            groups, targets = incident_entities(self.scenario, self.namespace)
            self._bystanders = bystanders.find(snapshot, self.namespace, groups, targets)
        return self._bystanders

    # ---- before the fault -----------------------------------------------------------------------------------------
    def before_fault(self, api: ApiClient, now: Callable[[], float], advance: Callable[[float], None],
                     topology_url: str | None = None) -> None:
        """Other teams' changes, then the transients; return once the workloads they touched are available."""
        if not (self.amounts.changes or self.amounts.transients):
            return
        who = self.bystanders(api, topology_url)
        if not who:
            return
        for kind in self.rng.sample(CHANGES, min(self.amounts.changes, len(CHANGES))):
            record = self._change(api, kind, who)
            if record is not None:
                self._log(record, now())
            advance(self.rng.uniform(*CHANGE_GAP))
        self._settle(api, advance)
        count = self.amounts.transients
        for index in range(count):
            kind = TRANSIENTS[index % len(TRANSIENTS)] if count > 1 else self.rng.choice(TRANSIENTS)
            target = self.rng.choice(who)
            if kind == "eviction":
                record = kinds.eviction(api, self.namespace, target, self.rng)
            else:
                name = f"{self.namespace}-blip-{len(self._chaos) + 1}-{self.rng.randrange(16 ** 5):05x}"
                record = kinds.network(api, self.namespace, target, self.rng, name)
                self._chaos.append(name)
            if record is not None:
                self._log(record, now())
            advance(self.rng.uniform(*TRANSIENT_GAP))
        self._settle(api, advance)

    def _change(self, api: ApiClient, kind: str, who: list[bystanders.Bystander]) -> dict | None:
        if kind == "rollout":
            return kinds.rollout(api, self.namespace, self.rng.choice(who), self.rng)
        if kind == "autoscaler":
            return kinds.autoscaler(api, self.namespace, self.rng.choice(who), self.rng)
        names = _bystander_configmaps(api, self.namespace, {b.name for b in who})
        return kinds.configmap(api, self.namespace, self.rng.choice(names), self.rng) if names else None

    def _settle(self, api: ApiClient, advance: Callable[[float], None]) -> None:
        """Let the Deployments noise touched become available again, as another team's release or a drained
        node's pods would have before the incident."""
        apps = k8s.AppsV1Api(api)
        names = sorted({r["workload"] for r in self.records if r.get("workload")})
        waited = 0.0
        while names and waited < SETTLE_WAIT:
            if all(_rolled_out(apps.read_namespaced_deployment(n, self.namespace)) for n in names):
                return
            advance(POLL)
            waited += POLL

    def close(self, api: ApiClient) -> None:
        """Remove what noise left outside the trial's namespaces (its Chaos Mesh experiments)."""
        for name in self._chaos:
            kinds.remove_network(api, name)
        self._chaos.clear()

    def _log(self, record: dict, at: float) -> None:
        self.records.append({**record, "at": round(at, 3)})


def _rolled_out(d) -> bool:
    s = d.status
    return (s.observed_generation or 0) >= (d.metadata.generation or 0) and \
        (s.updated_replicas or 0) >= (d.spec.replicas or 0) and (s.replicas or 0) <= (s.updated_replicas or 0) and \
        (s.available_replicas or 0) >= (d.spec.replicas or 0)


def _bystander_configmaps(api: ApiClient, namespace: str, allowed: set[str]) -> list[str]:
    """ConfigMaps that no workload but bystanders refers to (volumes, envFrom, env), in name order."""
    core, apps = k8s.CoreV1Api(api), k8s.AppsV1Api(api)
    users: dict[str, set[str]] = {}
    for d in apps.list_namespaced_deployment(namespace).items + apps.list_namespaced_stateful_set(namespace).items:
        spec = d.spec.template.spec
        for v in spec.volumes or ():
            if v.config_map is not None:
                users.setdefault(v.config_map.name, set()).add(d.metadata.name)
            for source in (v.projected.sources or ()) if v.projected is not None else ():
                if source.config_map is not None:
                    users.setdefault(source.config_map.name, set()).add(d.metadata.name)
        for c in (spec.containers or []) + (spec.init_containers or []):
            for e in c.env_from or ():
                if e.config_map_ref is not None:
                    users.setdefault(e.config_map_ref.name, set()).add(d.metadata.name)
            for e in c.env or ():
                ref = e.value_from.config_map_key_ref if e.value_from is not None else None
                if ref is not None:
                    users.setdefault(ref.name, set()).add(d.metadata.name)
    names = [m.metadata.name for m in core.list_namespaced_config_map(namespace).items
             if m.metadata.name != "kube-root-ca.crt"]
    return sorted(n for n in names if users.get(n) and users[n] <= allowed)
