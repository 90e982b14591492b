"""Validation of PersistentVolumeClaims, PersistentVolumes and StorageClasses."""

from __future__ import annotations

from ... import errors
from ...errors import FieldError
from ... import quantity
from .. import gosyntax
from . import name_rules, objectmeta

ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
VOLUME_MODES = ["Block", "Filesystem"]
_PVC_IMMUTABLE = ("spec is immutable after creation except resources.requests and volumeAttributesClassName for "
                  "bound claims")


def persistent_volume_claim(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    return problems + claim_spec(obj.get("spec") or {}, "spec")


def claim_spec(spec: dict, path: str) -> list[FieldError]:
    """ValidatePersistentVolumeClaimSpec (also used for claim templates)."""
    problems: list[FieldError] = []
    modes = spec.get("accessModes") or []
    if not modes:
        problems.append(errors.required(f"{path}.accessModes", "at least 1 access mode is required"))
    problems += objectmeta.label_selector(spec.get("selector"), f"{path}.selector")
    for mode in modes:
        if mode not in ACCESS_MODES:
            problems.append(errors.not_supported(f"{path}.accessModes", mode, ACCESS_MODES))
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    at = f"{path}.resources[storage]"
    if storage is None:
        problems.append(errors.required(at))
    else:
        try:
            if quantity.parse(str(storage)).value <= 0:
                problems.append(errors.invalid(at, str(storage), "must be greater than zero"))
        except quantity.QuantityError:
            pass
    class_name = spec.get("storageClassName")
    if class_name:
        problems += [errors.invalid(f"{path}.storageClassName", class_name, m)
                     for m in name_rules.name_is_dns_subdomain(class_name, False)]
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        problems.append(errors.not_supported(f"{path}.volumeMode", mode, VOLUME_MODES))
    return problems


def persistent_volume_claim_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    problems += persistent_volume_claim(obj)
    spec, old_spec = dict(obj.get("spec") or {}), dict(old.get("spec") or {})
    if not old_spec.get("volumeName"):
        old_spec["volumeName"] = spec.get("volumeName")  # binding sets the volume name once
        if old_spec["volumeName"] is None:
            del old_spec["volumeName"]
    bound = (old.get("status") or {}).get("phase") == "Bound"
    new_size = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    old_size = ((old_spec.get("resources") or {}).get("requests") or {}).get("storage")
    if bound and new_size is not None:
        # A bound claim may ask for more storage: compare everything else.
        requests = dict((spec.get("resources") or {}).get("requests") or {}, storage=old_size)
        spec["resources"] = dict(spec.get("resources") or {}, requests=requests)
    if spec != old_spec:
        diff = gosyntax.struct_diff("core.PersistentVolumeClaimSpec", old_spec, spec)
        problems.append(errors.forbidden("spec", f"{_PVC_IMMUTABLE}\n{diff}"))
    if new_size is not None and old_size is not None and quantity.compare(str(new_size), str(old_size)) < 0:
        problems.append(errors.forbidden("spec.resources.requests.storage",
                                         "field can not be less than previous value"))
    return problems


def persistent_volume(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], False, name_rules.name_is_dns_subdomain)
    spec = obj.get("spec") or {}
    modes = spec.get("accessModes") or []
    if not modes:
        problems.append(errors.required("spec.accessModes"))
    for mode in modes:
        if mode not in ACCESS_MODES:
            problems.append(errors.not_supported("spec.accessModes", mode, ACCESS_MODES))
    capacity = spec.get("capacity") or {}
    if not capacity:
        problems.append(errors.required("spec.capacity"))
    elif "storage" not in capacity or len(capacity) > 1:
        problems.append(errors.not_supported("spec.capacity", gosyntax.string_map(capacity, "core.ResourceList"),
                                             ["storage"]))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy not in ("Retain", "Delete", "Recycle"):
        problems.append(errors.not_supported("spec.persistentVolumeReclaimPolicy", policy or "",
                                             ["Delete", "Recycle", "Retain"]))
    return problems


def storage_class(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], False, name_rules.name_is_dns_subdomain)
    provisioner = obj.get("provisioner") or ""
    if not provisioner:
        problems.append(errors.required("provisioner"))
    else:
        problems += [errors.invalid("provisioner", provisioner, m) for m in name_rules.is_qualified_name(
            provisioner.lower())]
    if obj.get("reclaimPolicy") not in (None, "Delete", "Retain"):
        problems.append(errors.not_supported("reclaimPolicy", obj["reclaimPolicy"], ["Delete", "Retain"]))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        problems.append(errors.required("volumeBindingMode"))
    elif mode not in ("Immediate", "WaitForFirstConsumer"):
        problems.append(errors.not_supported("volumeBindingMode", mode, ["Immediate", "WaitForFirstConsumer"]))
    return problems


def storage_class_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    for key, message in (("parameters", "updates to parameters are forbidden."),
                         ("provisioner", "updates to provisioner are forbidden."),
                         ("reclaimPolicy", "updates to reclaimPolicy are forbidden."),
                         ("volumeBindingMode", "field is immutable")):
        if obj.get(key) != old.get(key):
            problems.append(errors.forbidden(key, message) if key != "volumeBindingMode"
                            else errors.invalid(key, obj.get(key) or "", message))
    return problems
