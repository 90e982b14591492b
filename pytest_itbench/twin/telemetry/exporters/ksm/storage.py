"""kube-state-metrics' PersistentVolumeClaim and ResourceQuota families."""

from __future__ import annotations

from typing import Iterable

from .common import Row, conditions_by_type, family, flag, quantity_milli, quantity_value, timestamp_row

# ---- PersistentVolumeClaims (labels namespace, persistentvolumeclaim) ----------------------------------------------
PVC_INFO = family("kube_persistentvolumeclaim_info", "Information about persistent volume claim.", stable=True)
PVC_PHASE = family("kube_persistentvolumeclaim_status_phase", "The phase the persistent volume claim is currently in.",
                   stable=True)
PVC_REQUESTS = family("kube_persistentvolumeclaim_resource_requests_storage_bytes",
                      "The capacity of storage requested by the persistent volume claim.", stable=True)
PVC_ACCESS_MODE = family("kube_persistentvolumeclaim_access_mode",
                         "The access mode(s) specified by the persistent volume claim.", stable=True)
PVC_CONDITION = family("kube_persistentvolumeclaim_status_condition",
                       "Information about status of different conditions of persistent volume claim.")
PVC_CREATED = family("kube_persistentvolumeclaim_created", "Unix creation timestamp")
PVC_DELETION = family("kube_persistentvolumeclaim_deletion_timestamp", "Unix deletion timestamp")

PVC_FAMILIES = (PVC_INFO, PVC_PHASE, PVC_REQUESTS, PVC_ACCESS_MODE, PVC_CONDITION, PVC_CREATED, PVC_DELETION)


def pvc_labels(obj: dict) -> dict[str, str]:
    return {"namespace": obj["metadata"].get("namespace", ""), "persistentvolumeclaim": obj["metadata"]["name"]}


def pvc_rows(p: dict) -> Iterable[Row]:
    meta, spec, status = p["metadata"], p.get("spec") or {}, p.get("status") or {}
    # The beta annotation takes precedence over the field, as kube-state-metrics reads it.
    storage_class = (meta.get("annotations") or {}).get("volume.beta.kubernetes.io/storage-class",
                                                          spec.get("storageClassName") or "")
    yield PVC_INFO, {"storageclass": storage_class, "volumename": spec.get("volumeName", ""),
                     "volumemode": spec.get("volumeMode", "")}, 1.0
    phase = status.get("phase", "")
    if phase:
        for candidate in ("Lost", "Bound", "Pending"):
            yield PVC_PHASE, {"phase": candidate}, flag(phase == candidate)
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage is not None:
        yield PVC_REQUESTS, {}, quantity_value(storage)
    for mode in spec.get("accessModes") or ():
        yield PVC_ACCESS_MODE, {"access_mode": mode}, 1.0
    yield from conditions_by_type(PVC_CONDITION, status.get("conditions") or ())
    yield from timestamp_row(PVC_CREATED, meta.get("creationTimestamp"))
    yield from timestamp_row(PVC_DELETION, meta.get("deletionTimestamp"))


# ---- ResourceQuotas (labels namespace, resourcequota) -----------------------------------------------------------------
QUOTA_CREATED = family("kube_resourcequota_created", "Unix creation timestamp", stable=True)
QUOTA = family("kube_resourcequota", "Information about resource quota.", stable=True)

QUOTA_FAMILIES = (QUOTA_CREATED, QUOTA)


def quota_labels(obj: dict) -> dict[str, str]:
    return {"namespace": obj["metadata"].get("namespace", ""), "resourcequota": obj["metadata"]["name"]}


def quota_rows(q: dict) -> Iterable[Row]:
    status = q.get("status") or {}
    yield from timestamp_row(QUOTA_CREATED, q["metadata"].get("creationTimestamp"))
    for kind in ("hard", "used"):
        for resource, amount in (status.get(kind) or {}).items():
            yield QUOTA, {"resource": resource, "type": kind}, quantity_milli(amount)
