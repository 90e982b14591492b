"""Storage printers: persistent volumes, persistent volume claims and storage classes."""

from __future__ import annotations

from .core import Column, age, age_column, api_doc, name_column, register
from .formatting import access_modes
from ...quantity import printable as canonical

BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")


def _storage(resources: dict | None) -> str:
    """The ``storage`` entry of a resource list; a missing one prints as Go's zero Quantity, ``0``."""
    return canonical(str((resources or {}).get("storage", "0")))


def _storage_class(obj: dict, spec: dict) -> str:
    """The beta annotation wins over spec.storageClassName, as helper.GetPersistentVolume(Claim)Class has it."""
    annotations = obj["metadata"].get("annotations") or {}
    if BETA_CLASS_ANNOTATION in annotations:
        return annotations[BETA_CLASS_ANNOTATION]
    return spec.get("storageClassName") or ""


def persistent_volume_row(pv: dict, now: float) -> list:
    spec, status = pv.get("spec") or {}, pv.get("status") or {}
    claim = spec.get("claimRef")
    phase = "Terminating" if pv["metadata"].get("deletionTimestamp") else status.get("phase", "")
    return [pv["metadata"].get("name", ""), _storage(spec.get("capacity")), access_modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy", ""), phase,
            f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else "", _storage_class(pv, spec),
            spec.get("volumeAttributesClassName") or "<unset>", status.get("reason", ""), age(pv, now),
            spec.get("volumeMode") or "<unset>"]


register("", "PersistentVolume", [
    name_column(),
    Column("Capacity", description=api_doc("core.v1.PersistentVolumeSpec", "capacity")),
    Column("Access Modes", description=api_doc("core.v1.PersistentVolumeSpec", "accessModes")),
    Column("Reclaim Policy", description=api_doc("core.v1.PersistentVolumeSpec", "persistentVolumeReclaimPolicy")),
    Column("Status", description=api_doc("core.v1.PersistentVolumeStatus", "phase")),
    Column("Claim", description=api_doc("core.v1.PersistentVolumeSpec", "claimRef")),
    Column("StorageClass", description="StorageClass of the pv"),
    Column("VolumeAttributesClass", description="VolumeAttributesClass of the pv"),
    Column("Reason", description=api_doc("core.v1.PersistentVolumeStatus", "reason")),
    age_column(),
    Column("VolumeMode", description=api_doc("core.v1.PersistentVolumeSpec", "volumeMode"), priority=1),
], persistent_volume_row)


def persistent_volume_claim_row(pvc: dict, now: float) -> list:
    spec, status = pvc.get("spec") or {}, pvc.get("status") or {}
    phase = "Terminating" if pvc["metadata"].get("deletionTimestamp") else status.get("phase", "")
    # Capacity and access modes are the bound volume's, so they show only once a volume is bound.
    bound = bool(spec.get("volumeName"))
    return [pvc["metadata"].get("name", ""), phase, spec.get("volumeName", ""),
            _storage(status.get("capacity")) if bound else "",
            access_modes(status.get("accessModes")) if bound else "", _storage_class(pvc, spec),
            spec.get("volumeAttributesClassName") or "<unset>", age(pvc, now), spec.get("volumeMode") or "<unset>"]


register("", "PersistentVolumeClaim", [
    name_column(),
    Column("Status", description=api_doc("core.v1.PersistentVolumeClaimStatus", "phase")),
    Column("Volume", description=api_doc("core.v1.PersistentVolumeClaimSpec", "volumeName")),
    Column("Capacity", description=api_doc("core.v1.PersistentVolumeClaimStatus", "capacity")),
    Column("Access Modes", description=api_doc("core.v1.PersistentVolumeClaimStatus", "accessModes")),
    Column("StorageClass", description="StorageClass of the pvc"),
    Column("VolumeAttributesClass", description="VolumeAttributesClass of the pvc"),
    age_column(),
    Column("VolumeMode", description=api_doc("core.v1.PersistentVolumeClaimSpec", "volumeMode"), priority=1),
], persistent_volume_claim_row)


def storage_class_row(obj: dict, now: float) -> list:
    annotations = obj["metadata"].get("annotations") or {}
    name = obj["metadata"].get("name", "")
    if any(annotations.get(a) == "true" for a in DEFAULT_CLASS_ANNOTATIONS):
        name += " (default)"
    return [name, obj.get("provisioner", ""), obj.get("reclaimPolicy") or "Delete",
            obj.get("volumeBindingMode") or "Immediate", bool(obj.get("allowVolumeExpansion")), age(obj, now)]


register("storage.k8s.io", "StorageClass", [
    name_column(),
    Column("Provisioner", description=api_doc("storage.v1.StorageClass", "provisioner")),
    Column("ReclaimPolicy", description=api_doc("storage.v1.StorageClass", "reclaimPolicy")),
    Column("VolumeBindingMode", description=api_doc("storage.v1.StorageClass", "volumeBindingMode")),
    Column("AllowVolumeExpansion", description=api_doc("storage.v1.StorageClass", "allowVolumeExpansion")),
    age_column(),
], storage_class_row)
