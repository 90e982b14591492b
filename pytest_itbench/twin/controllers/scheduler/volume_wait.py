"""Binding a pod's volumes before the pod: the VolumeBinding plugin's Reserve and PreBind.

Once a node is chosen, the scheduler reserves each chosen volume for its
claim (the volume's ``claimRef``) and marks each claim to provision with the
node (``volume.kubernetes.io/selected-node``); the PV controller and the
provisioner take it from there. The pod is bound only when all its claims
are bound, within ten minutes (upstream's bind timeout).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...store import clone
from ..volume_matching import ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE, claim_reference, fully_bound
from .plugins.volume_binding import CLAIMS, VOLUMES, VolumePlan
from .queue import QueuedPod

BIND_TIMEOUT = 600.0
TIMED_OUT = 'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'


@dataclass
class VolumeWait:
    queued: QueuedPod
    uid: str
    node: str
    claims: list[str]
    deadline: float


def write_plan(store_get, update, plan: VolumePlan, node: str) -> list[str]:
    """Reserve the chosen volumes and mark the claims to provision; the names of the claims to wait for.

    ``store_get(bucket, namespace, name)`` reads the current object, ``update(bucket, obj)`` writes it.
    """
    waiting = []
    for volume, claim in plan.static:
        current = store_get(VOLUMES, "", volume["metadata"]["name"])
        if current is not None and not (current.get("spec") or {}).get("claimRef"):
            updated = clone(current)
            updated["spec"]["claimRef"] = claim_reference(claim)
            updated["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
            update(VOLUMES, updated)
        waiting.append(claim["metadata"]["name"])
    for claim in plan.provision:
        meta = claim["metadata"]
        current = store_get(CLAIMS, meta["namespace"], meta["name"])
        if current is not None and (current["metadata"].get("annotations") or {}).get(ANN_SELECTED_NODE) != node:
            updated = clone(current)
            updated["metadata"].setdefault("annotations", {})[ANN_SELECTED_NODE] = node
            update(CLAIMS, updated)
        waiting.append(meta["name"])
    return waiting


def claims_bound(store_get, namespace: str, claims: list[str]) -> bool:
    """Every claim is bound by the PV controller to a volume that exists."""
    for name in claims:
        claim = store_get(CLAIMS, namespace, name)
        if claim is None or not fully_bound(claim):
            return False
        if store_get(VOLUMES, "", claim["spec"]["volumeName"]) is None:
            return False
    return True
