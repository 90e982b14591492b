"""Claims and volumes: classes, binding state and matching, shared by the PV binder and the scheduler.

Follows pkg/controller/volume/persistentvolume/util and
component-helpers/storage: a claim matches an Available volume of its class
with enough capacity, every access mode it asks for, the same volume mode and
labels its selector accepts; of those, the smallest wins. A volume already
reserved for the claim (its claimRef names it) is taken first.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Iterable, Mapping

from .. import quantity
from ..selectors import LabelSelector, SelectorError
from .scheduler.node_selector import selector_matches

ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

GetClass = Callable[[str], "dict | None"]


def claim_class(claim: dict) -> str:
    annotations = claim["metadata"].get("annotations") or {}
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    return (claim.get("spec") or {}).get("storageClassName") or ""


def volume_class(volume: dict) -> str:
    annotations = volume["metadata"].get("annotations") or {}
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    return (volume.get("spec") or {}).get("storageClassName") or ""


def fully_bound(claim: dict) -> bool:
    """The PV controller finished binding: the claim names its volume and carries bind-completed."""
    return bool((claim.get("spec") or {}).get("volumeName")) and \
        ANN_BIND_COMPLETED in (claim["metadata"].get("annotations") or {})


def bound_to_claim(volume: dict, claim: dict) -> bool:
    """The volume's claimRef names this claim (and its uid, when the reference has one)."""
    ref = (volume.get("spec") or {}).get("claimRef")
    if not ref:
        return False
    meta = claim["metadata"]
    if ref.get("name") != meta["name"] or ref.get("namespace") != meta.get("namespace"):
        return False
    return not ref.get("uid") or ref["uid"] == meta.get("uid")


def delay_binding(claim: dict, get_class: GetClass) -> bool:
    """The claim's class binds on first consumer (a missing class binds immediately, as upstream)."""
    name = claim_class(claim)
    if not name:
        return False
    storage_class = get_class(name)
    return storage_class is not None and storage_class.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER


def node_affinity_matches(volume: dict, labels: Mapping[str, str], node_name: str) -> bool:
    required = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    return required is None or selector_matches(required, labels, node_name)


def requested_storage(claim: dict) -> Fraction:
    storage = (((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    return quantity.value(storage) if storage is not None else Fraction(0)


def capacity(volume: dict) -> Fraction:
    storage = ((volume.get("spec") or {}).get("capacity") or {}).get("storage")
    return quantity.value(storage) if storage is not None else Fraction(0)


def access_modes_ok(claim: dict, volume: dict) -> bool:
    offered = set((volume.get("spec") or {}).get("accessModes") or ())
    return all(mode in offered for mode in (claim.get("spec") or {}).get("accessModes") or ())


def _volume_mode(spec: dict) -> str:
    return spec.get("volumeMode") or "Filesystem"


def find_matching_volume(claim: dict, volumes: Iterable[dict], *, node: tuple[Mapping[str, str], str] | None = None,
                         excluded: set[str] = frozenset(), delay: bool = False) -> dict | None:
    """FindMatchingVolume: the volume reserved for ``claim``, else the smallest fitting Available one.

    ``node`` (labels, name) is the scheduler's view: the volume must be usable there. Without a node (the
    PV controller), claims that wait for their first consumer only take a volume reserved for them.
    """
    wanted = requested_storage(claim)
    wanted_class = claim_class(claim)
    raw_selector = (claim.get("spec") or {}).get("selector")
    try:
        selector = LabelSelector.from_object(raw_selector) if raw_selector is not None else None
    except SelectorError:
        return None
    best, best_size = None, None
    for volume in volumes:
        meta, spec = volume["metadata"], volume.get("spec") or {}
        if meta["name"] in excluded:
            continue
        reserved = bound_to_claim(volume, claim)
        if spec.get("claimRef") and not reserved:
            continue
        size = capacity(volume)
        if size < wanted or _volume_mode(spec) != _volume_mode(claim.get("spec") or {}):
            continue
        if meta.get("deletionTimestamp"):
            continue
        usable_here = node is None or node_affinity_matches(volume, *node)
        if reserved:
            return volume if usable_here else None
        if node is None and delay:
            continue
        if (volume.get("status") or {}).get("phase") != "Available":
            continue
        if selector is not None and not selector.matches(meta.get("labels")):
            continue
        if volume_class(volume) != wanted_class or not usable_here:
            continue
        if node is not None and not access_modes_ok(claim, volume):
            continue
        if best is None or size < best_size:
            best, best_size = volume, size
    return best


def claim_reference(claim: dict) -> dict:
    meta = claim["metadata"]
    return {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace", ""), "name": meta["name"],
            "uid": meta.get("uid", ""), "apiVersion": "v1", "resourceVersion": meta.get("resourceVersion", "")}
