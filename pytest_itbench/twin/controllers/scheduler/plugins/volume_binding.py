"""VolumeBinding: a pod's PersistentVolumeClaims must exist, and be bound or bindable on the node.

PreFilter rejects the pod outright when a claim is missing, lost, being
deleted, or unbound in Immediate mode (the PV controller binds those, not the
scheduler). For a claim that waits for its first consumer, Filter looks for
an Available volume usable on the node, else for a class that can provision
one there. The plan per node (which volume each claim takes, which claims
to provision) is what the scheduler carries out once it has picked a node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...volume_matching import (
    ANN_SELECTED_NODE, NO_PROVISIONER, claim_class, delay_binding, find_matching_volume, fully_bound,
    node_affinity_matches, requested_storage, volume_class,
)
from ..cache import NodeInfo
from ..framework import CycleState, Plugin, SKIP, Status, unresolvable

CLAIMS = "persistentvolumeclaims"
VOLUMES = "persistentvolumes"
CLASSES = "storageclasses.storage.k8s.io"

NODE_CONFLICT = "node(s) had volume node affinity conflict"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass
class VolumePlan:
    """What binding the pod's claims on one node takes."""

    static: list[tuple[dict, dict]] = field(default_factory=list)  # (volume, claim) pairs to bind
    provision: list[dict] = field(default_factory=list)  # claims to provision on the node


@dataclass
class _State:
    bound: list[tuple[dict, dict | None]]  # (claim, its volume or None when the volume is gone)
    delayed: list[dict]  # unbound claims waiting for their first consumer, smallest request first
    volumes_by_class: dict[str, list[dict]]
    plans: dict[str, VolumePlan] = field(default_factory=dict)


def pod_claim_names(pod: dict) -> list[tuple[str, bool]]:
    """(claim name, whether it is a generic ephemeral volume's claim) for each claim volume of the pod."""
    out = []
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if volume.get("persistentVolumeClaim"):
            out.append((volume["persistentVolumeClaim"].get("claimName", ""), False))
        elif volume.get("ephemeral"):
            out.append((f"{pod['metadata']['name']}-{volume.get('name', '')}", True))
    return out


class VolumeBinding(Plugin):
    name = "VolumeBinding"

    def pre_filter(self, state: CycleState) -> Status | None:
        pod = state.pod
        names = pod_claim_names(pod.obj)
        if not names:
            return SKIP
        cluster = state.cluster
        claims = []
        for name, ephemeral in names:
            claim = cluster.get(CLAIMS, pod.namespace, name)
            if claim is None:
                if ephemeral:
                    return unresolvable(f'waiting for ephemeral volume controller to create the '
                                        f'persistentvolumeclaim "{name}"')
                return unresolvable(f'persistentvolumeclaim "{name}" not found')
            status, spec = claim.get("status") or {}, claim.get("spec") or {}
            if status.get("phase") == "Lost":
                return unresolvable(f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                                    f'"{spec.get("volumeName", "")}"')
            if claim["metadata"].get("deletionTimestamp"):
                return unresolvable(f'persistentvolumeclaim "{name}" is being deleted')
            if ephemeral and not _owned_by(claim, pod.uid):
                return unresolvable(f"PVC {pod.namespace}/{name} was not created for pod "
                                    f"{pod.namespace}/{pod.key[1]} (pod is not owner)")
            claims.append(claim)
        get_class = lambda n: cluster.get(CLASSES, "", n)  # noqa: E731
        bound, delayed = [], []
        for claim in claims:
            if fully_bound(claim):
                bound.append((claim, cluster.get(VOLUMES, "", claim["spec"]["volumeName"])))
            elif delay_binding(claim, get_class):
                delayed.append(claim)
            else:
                return unresolvable(UNBOUND_IMMEDIATE)
        by_class: dict[str, list[dict]] = {}
        if delayed:
            for volume in cluster.list(VOLUMES):
                by_class.setdefault(volume_class(volume), []).append(volume)
        delayed.sort(key=requested_storage)
        state.data[self.name] = _State(bound, delayed, by_class)
        return None

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        data: _State = state.data[self.name]
        volume_missing = any(volume is None for _, volume in data.bound)
        node_conflict = any(volume is not None and not node_affinity_matches(volume, node.labels, node.name)
                            for _, volume in data.bound)
        plan = self._plan(state, data, node)
        # Upstream's order of reasons; one node can have several.
        reasons = [reason for reason, failed in ((NODE_CONFLICT, node_conflict), (BIND_CONFLICT, plan is None),
                                                 (PV_NOT_EXIST, volume_missing)) if failed]
        if reasons:
            return unresolvable(*reasons)
        data.plans[node.name] = plan
        return None

    def _plan(self, state: CycleState, data: _State, node: NodeInfo) -> VolumePlan | None:
        plan = VolumePlan()
        chosen: set[str] = set()
        for claim in data.delayed:
            selected = (claim["metadata"].get("annotations") or {}).get(ANN_SELECTED_NODE)
            if selected:
                if selected != node.name:
                    return None
                plan.provision.append(claim)
                continue
            volume = find_matching_volume(claim, data.volumes_by_class.get(claim_class(claim), ()),
                                          node=(node.labels, node.name), excluded=chosen)
            if volume is not None:
                chosen.add(volume["metadata"]["name"])
                plan.static.append((volume, claim))
            else:
                plan.provision.append(claim)
        for claim in plan.provision:
            storage_class = state.cluster.get(CLASSES, "", claim_class(claim))
            provisioner = (storage_class or {}).get("provisioner") or ""
            if not provisioner or provisioner == NO_PROVISIONER:
                return None
            if not _allowed_topology(storage_class, node):
                return None
        return plan

    def plan_for(self, state: CycleState, node_name: str) -> VolumePlan | None:
        """The binding plan Filter made for the chosen node (None when the pod has no unbound claims)."""
        data: _State | None = state.data.get(self.name)
        return data.plans.get(node_name) if data is not None else None


def _owned_by(claim: dict, pod_uid: str) -> bool:
    return any(ref.get("controller") and ref.get("uid") == pod_uid
               for ref in claim["metadata"].get("ownerReferences") or ())


def _allowed_topology(storage_class: dict | None, node: NodeInfo) -> bool:
    """A class's allowedTopologies (ORed terms of ANDed label expressions) must admit the node."""
    terms = (storage_class or {}).get("allowedTopologies") or []
    if not terms:
        return True
    for term in terms:
        if all(node.labels.get(e.get("key", "")) in (e.get("values") or ())
               for e in term.get("matchLabelExpressions") or ()):
            return True
    return False
