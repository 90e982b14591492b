"""The PersistentVolume controller (binder) of kube-controller-manager, and the external provisioners it waits for.

Claims and volumes go through upstream's phases:

* a Pending claim is bound to a matching Available volume (the smallest that
  fits), or to one reserved for it; a claim whose class waits for its first
  consumer is left to the scheduler, with ``WaitForFirstConsumer`` events,
  until the scheduler names a node (``volume.kubernetes.io/selected-node``);
* a claim with a class and no volume is handed to the class's provisioner
  (``ExternalProvisioning``); the twin plays every external provisioner,
  ``rancher.io/local-path`` (kind's default class ``standard``) with a
  hostPath volume pinned to the selected node, others with a CSI volume;
  ``kubernetes.io/no-provisioner`` provisions nothing;
* a volume whose claim is gone is Released, and removed when its reclaim
  policy is Delete.

Pending claims are looked at again every 15 seconds, the controller's resync
period, which is why their events repeat with a count.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Hashable, Iterable

from ..apiserver.access.authn import user_for
from ..apiserver.registry import Ctx
from ..errors import AlreadyExists
from ..store import Change
from .events import EventSource
from .manager import Controller
from .volume_matching import (
    ANN_BETA_STORAGE_PROVISIONER, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_PROVISIONED_BY, ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER, NO_PROVISIONER, WAIT_FOR_FIRST_CONSUMER, access_modes_ok, bound_to_claim, capacity,
    claim_class, claim_reference, delay_binding, find_matching_volume, requested_storage, volume_class,
)

RESYNC = 15.0
CONTROLLER = EventSource("persistentvolume-controller")
LOCAL_PATH = "rancher.io/local-path"
LOCAL_PATH_ROOT = "/var/local-path-provisioner"
ANN_LOCAL_PATH_NODE = "local.path.provisioner/selected-node"
HOSTNAME = "kubernetes.io/hostname"
CLASSES = "storageclasses.storage.k8s.io"


def _provisioner_source(provisioner: str) -> EventSource:
    """How an external provisioner signs its events: <name>_<its pod>_<its identity>."""
    digest = hashlib.sha256(provisioner.encode()).hexdigest()
    pod = f"{provisioner.split('/')[-1].replace('.', '-')}-provisioner-{digest[:10]}-{digest[10:15]}"
    return EventSource(f"{provisioner}_{pod}_{uuid.UUID(digest[:32])}")


def _claim_key(claim: dict) -> tuple[str, str, str]:
    meta = claim["metadata"]
    return "claim", meta.get("namespace", ""), meta["name"]


def _mismatch(volume: dict, claim: dict) -> str | None:
    """checkVolumeSatisfyClaim: why a volume the claim asks for by name cannot serve it."""
    if volume["metadata"].get("deletionTimestamp"):
        return f'the volume is marked for deletion "{volume["metadata"]["name"]}"'
    if capacity(volume) < requested_storage(claim):
        return "requested PV is too small"
    if volume_class(volume) != claim_class(claim):
        return "storageClassName does not match"
    if ((volume.get("spec") or {}).get("volumeMode") or "Filesystem") != \
            ((claim.get("spec") or {}).get("volumeMode") or "Filesystem"):
        return "incompatible volumeMode"
    if not access_modes_ok(claim, volume):
        return "incompatible accessMode"
    return None


class PersistentVolumeBinder(Controller):
    name = "persistentvolume-binder"
    watches = ("persistentvolumeclaims", "persistentvolumes", CLASSES)

    def __init__(self, manager):
        super().__init__(manager)
        self.claims = self.resource("", "v1", "persistentvolumeclaims")
        self.volumes = self.resource("", "v1", "persistentvolumes")
        self.pods = self.resource("", "v1", "pods")
        self.provisioner_ctx = Ctx(user=user_for("system:serviceaccount:local-path-storage:"
                                                 "local-path-provisioner-service-account"),
                                   field_manager="local-path-provisioner", trusted=True)

    def keys_for(self, change: Change) -> Iterable[Hashable]:
        obj = change.obj
        if change.bucket == "persistentvolumeclaims":
            yield _claim_key(obj)
            bound_to = (obj.get("spec") or {}).get("volumeName")
            if change.type == "DELETED" and bound_to:
                yield "volume", "", bound_to  # its volume is released now
        elif change.bucket == "persistentvolumes":
            yield "volume", "", obj["metadata"]["name"]
            ref = (obj.get("spec") or {}).get("claimRef")
            if ref:
                yield "claim", ref.get("namespace", ""), ref.get("name", "")
        else:  # a storage class appeared or changed: its pending claims may now provision
            name = obj["metadata"]["name"]
            for claim in self.store.list(self.claims.bucket)[0]:
                if claim_class(claim) == name and (claim.get("status") or {}).get("phase") == "Pending":
                    yield _claim_key(claim)

    def reconcile(self, key: Hashable, now: float) -> float | None:
        kind, namespace, name = key
        if kind == "volume":
            return self._sync_volume(name)
        claim = self.get(self.claims, namespace, name)
        if claim is None:
            return None
        if ANN_BIND_COMPLETED in (claim["metadata"].get("annotations") or {}):
            return self._sync_bound_claim(claim)
        return self._sync_unbound_claim(claim)

    # ---- claims ----------------------------------------------------------------------------------------------
    def _get_class(self, name: str) -> dict | None:
        return self.store.get(CLASSES, "", name)

    def _sync_unbound_claim(self, claim: dict) -> float | None:
        wanted = (claim.get("spec") or {}).get("volumeName")
        if not wanted:
            delay = delay_binding(claim, self._get_class)
            volume = self._best_match(claim, delay)
            if volume is not None:
                self._bind(volume, claim)
                return None
            if delay and ANN_SELECTED_NODE not in (claim["metadata"].get("annotations") or {}):
                self._wait_for_first_consumer(claim)
            elif claim_class(claim):
                self._provision(claim)
                return RESYNC
            else:
                self.events.record(claim, "Normal", "FailedBinding",
                                   "no persistent volumes available for this claim and no storage class is set",
                                   CONTROLLER)
            self._set_claim_phase(claim, "Pending")
            return RESYNC
        volume = self.get(self.volumes, None, wanted)
        if volume is None:
            self._set_claim_phase(claim, "Pending")
            return RESYNC
        if not (volume.get("spec") or {}).get("claimRef"):
            why = _mismatch(volume, claim)
            if why is None:
                self._bind(volume, claim)
                return None
            self.events.record(claim, "Warning", "VolumeMismatch", f'Cannot bind to requested volume "{wanted}": {why}',
                               CONTROLLER)
        elif bound_to_claim(volume, claim):
            self._bind(volume, claim)
            return None
        elif ANN_BOUND_BY_CONTROLLER not in (claim["metadata"].get("annotations") or {}):
            self.events.record(claim, "Warning", "FailedBinding",
                               f'volume "{wanted}" already bound to a different claim.', CONTROLLER)
        self._set_claim_phase(claim, "Pending")
        return RESYNC

    def _best_match(self, claim: dict, delay: bool) -> dict | None:
        """findBestMatchForClaim: volumes offering the claim's access modes, those with fewest modes first."""
        volumes = [v for v in self.store.list(self.volumes.bucket)[0] if access_modes_ok(claim, v)]
        for size in sorted({len((v.get("spec") or {}).get("accessModes") or ()) for v in volumes}):
            same = [v for v in volumes if len((v.get("spec") or {}).get("accessModes") or ()) == size]
            match = find_matching_volume(claim, same, delay=delay)
            if match is not None:
                return match
        return None

    def _wait_for_first_consumer(self, claim: dict) -> None:
        meta = claim["metadata"]
        waiting = sorted(
            p["metadata"]["name"] for p in self.store.list(self.pods.bucket, meta["namespace"])[0]
            if not (p.get("spec") or {}).get("nodeName") and any(
                (v.get("persistentVolumeClaim") or {}).get("claimName") == meta["name"]
                for v in (p.get("spec") or {}).get("volumes") or ()))
        if not waiting:
            reason, message = "WaitForFirstConsumer", "waiting for first consumer to be created before binding"
        elif len(waiting) == 1:
            reason, message = "WaitForPodScheduled", f"waiting for pod {waiting[0]} to be scheduled"
        else:
            reason, message = "WaitForPodScheduled", f"waiting for pods {','.join(waiting)} to be scheduled"
        self.events.record(claim, "Normal", reason, message, CONTROLLER)

    def _sync_bound_claim(self, claim: dict) -> float | None:
        wanted = (claim.get("spec") or {}).get("volumeName")
        if not wanted:
            return self._lose(claim, "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
        volume = self.get(self.volumes, None, wanted)
        if volume is None:
            return self._lose(claim, "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
        if not (volume.get("spec") or {}).get("claimRef") or bound_to_claim(volume, claim):
            self._bind(volume, claim)
            return None
        return self._lose(claim, "Two claims are bound to the same volume, this one is bound incorrectly")

    def _lose(self, claim: dict, message: str) -> None:
        if (claim.get("status") or {}).get("phase") != "Lost":
            self.events.record(claim, "Warning", "ClaimLost", message, CONTROLLER)
            self._set_claim_phase(claim, "Lost")
        return None

    def _set_claim_phase(self, claim: dict, phase: str) -> None:
        status = claim.setdefault("status", {})
        if status.get("phase") == phase:
            return
        status["phase"] = phase
        if phase != "Bound":
            status.pop("accessModes", None)
            status.pop("capacity", None)
        self.update_status(self.claims, claim)

    # ---- binding -------------------------------------------------------------------------------------------------
    def _bind(self, volume: dict, claim: dict) -> None:
        """Bind both ways: the volume's claimRef and phase, the claim's volumeName, annotations and status."""
        meta = claim["metadata"]
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        if (ref.get("name"), ref.get("namespace"), ref.get("uid")) != (meta["name"], meta.get("namespace"),
                                                                       meta.get("uid")):
            annotations = volume["metadata"].setdefault("annotations", {})
            if not bound_to_claim(volume, claim):
                annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
            volume["spec"]["claimRef"] = claim_reference(claim)
            volume = self.update(self.volumes, volume)
        self._set_volume_phase(volume, "Bound")
        annotations = meta.setdefault("annotations", {})
        changed = False
        if (claim.get("spec") or {}).get("volumeName") != volume["metadata"]["name"]:
            claim.setdefault("spec", {})["volumeName"] = volume["metadata"]["name"]
            annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
            changed = True
        if annotations.get(ANN_BIND_COMPLETED) != "yes":
            annotations[ANN_BIND_COMPLETED] = "yes"
            changed = True
        if changed:
            claim = self.update(self.claims, claim)
        spec = volume.get("spec") or {}
        status = claim.setdefault("status", {})
        bound = {"phase": "Bound", "accessModes": list(spec.get("accessModes") or ()),
                 "capacity": dict(spec.get("capacity") or {})}
        if any(status.get(k) != v for k, v in bound.items()):
            status.update(bound)
            self.update_status(self.claims, claim)

    def _set_volume_phase(self, volume: dict, phase: str) -> dict:
        status = volume.setdefault("status", {})
        if status.get("phase") == phase:
            return volume
        status["phase"] = phase
        status.pop("message", None)
        status["lastPhaseTransitionTime"] = self.clock.timestamp()
        return self.update_status(self.volumes, volume)

    # ---- volumes ---------------------------------------------------------------------------------------------------
    def _sync_volume(self, name: str) -> float | None:
        volume = self.get(self.volumes, None, name)
        if volume is None:
            return None
        ref = (volume.get("spec") or {}).get("claimRef")
        if not ref:
            self._set_volume_phase(volume, "Available")
            return None
        claim = self.get(self.claims, ref.get("namespace"), ref.get("name", ""))
        if not ref.get("uid"):
            # Reserved by its author for a claim that may not exist yet: the claim's sync binds it.
            if (volume.get("status") or {}).get("phase") in (None, "Pending"):
                self._set_volume_phase(volume, "Available")
            return None
        if claim is not None and claim["metadata"].get("uid") != ref["uid"]:
            claim = None
        if claim is None:
            self._release(volume)
            return None
        bound_name = (claim.get("spec") or {}).get("volumeName")
        if bound_name == name:
            self._set_volume_phase(volume, "Bound")
        elif bound_name and ANN_BOUND_BY_CONTROLLER in (volume["metadata"].get("annotations") or {}):
            # The claim took another volume: give this one back.
            volume["spec"].pop("claimRef", None)
            volume = self.update(self.volumes, volume)
            self._set_volume_phase(volume, "Available")
        return None

    def _release(self, volume: dict) -> None:
        if (volume.get("status") or {}).get("phase") != "Failed":  # a failure stays visible while reclaim retries
            volume = self._set_volume_phase(volume, "Released")
        if (volume.get("spec") or {}).get("persistentVolumeReclaimPolicy") == "Delete":
            meta = volume["metadata"]
            self.delete(self.volumes, None, meta["name"], uid=meta.get("uid"))

    # ---- provisioning ---------------------------------------------------------------------------------------------
    def _provision(self, claim: dict) -> None:
        class_name = claim_class(claim)
        storage_class = self._get_class(class_name)
        if storage_class is None:
            self.events.record(claim, "Warning", "ProvisioningFailed",
                               f'storageclass.storage.k8s.io "{class_name}" not found', CONTROLLER)
            return
        provisioner = storage_class.get("provisioner") or ""
        if provisioner == NO_PROVISIONER or not provisioner:
            self.events.record(claim, "Warning", "ProvisioningFailed",
                               f"no volume plugin matched name: {provisioner}", CONTROLLER)
            return
        annotations = claim["metadata"].setdefault("annotations", {})
        if annotations.get(ANN_STORAGE_PROVISIONER) != provisioner:
            annotations[ANN_STORAGE_PROVISIONER] = annotations[ANN_BETA_STORAGE_PROVISIONER] = provisioner
            claim = self.update(self.claims, claim)
        self.events.record(claim, "Normal", "ExternalProvisioning",
                           f"Waiting for a volume to be created either by the external provisioner '{provisioner}' "
                           f"or manually by the system administrator. If volume creation is delayed, please verify "
                           f"that the provisioner is running and correctly registered.", CONTROLLER)
        self._external_provisioner(claim, storage_class, provisioner)

    def _external_provisioner(self, claim: dict, storage_class: dict, provisioner: str) -> None:
        """What the class's provisioner (local-path-provisioner, a CSI external-provisioner) does with the claim."""
        meta = claim["metadata"]
        node = (meta.get("annotations") or {}).get(ANN_SELECTED_NODE)
        if storage_class.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER and not node:
            return
        source = _provisioner_source(provisioner)
        key = f"{meta['namespace']}/{meta['name']}"
        self.events.record(claim, "Normal", "Provisioning",
                           f'External provisioner is provisioning volume for claim "{key}"', source)
        problem = self._cannot_provision(claim, provisioner, node)
        if problem:
            self.events.record(claim, "Warning", "ProvisioningFailed",
                               f'failed to provision volume with StorageClass "{storage_class["metadata"]["name"]}": '
                               f"{problem}", source)
            return
        volume = self._volume_for(claim, storage_class, provisioner, node)
        try:
            self.api.create(self.volumes, None, volume, self.provisioner_ctx)
        except AlreadyExists:
            return
        self.events.record(claim, "Normal", "ProvisioningSucceeded",
                           f"Successfully provisioned volume {volume['metadata']['name']}", source)

    @staticmethod
    def _cannot_provision(claim: dict, provisioner: str, node: str | None) -> str | None:
        """What local-path-provisioner refuses (a volume on no node, or chosen by labels)."""
        if provisioner != LOCAL_PATH:
            return None
        if (claim.get("spec") or {}).get("selector") is not None:
            return "claim.Spec.Selector is not supported"
        if not node:
            return "configuration error, no node was specified"
        return None

    @staticmethod
    def _volume_for(claim: dict, storage_class: dict, provisioner: str, node: str | None) -> dict:
        meta, spec = claim["metadata"], claim.get("spec") or {}
        name = f"pvc-{meta['uid']}"
        annotations = {ANN_PROVISIONED_BY: provisioner}
        volume_spec: dict = {
            "accessModes": list(spec.get("accessModes") or ()),
            "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage")},
            "claimRef": claim_reference(claim),
            "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or "Delete",
            "storageClassName": storage_class["metadata"]["name"],
            "volumeMode": spec.get("volumeMode") or "Filesystem",
        }
        if storage_class.get("mountOptions"):
            volume_spec["mountOptions"] = list(storage_class["mountOptions"])
        if provisioner == LOCAL_PATH:
            annotations[ANN_LOCAL_PATH_NODE] = node
            volume_spec["hostPath"] = {"path": f"{LOCAL_PATH_ROOT}/{name}_{meta['namespace']}_{meta['name']}",
                                       "type": "DirectoryOrCreate"}
            volume_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": HOSTNAME, "operator": "In", "values": [node]}]}]}}
        else:
            volume_spec["csi"] = {"driver": provisioner, "volumeHandle": meta["uid"], "fsType": "ext4"}
        return {"apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": name, "annotations": annotations}, "spec": volume_spec}
