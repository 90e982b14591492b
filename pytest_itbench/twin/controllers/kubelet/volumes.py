"""Whether a pod's volumes can be set up, with the volume manager's words when they cannot.

The kubelet mounts every volume before it creates the pod's sandbox. A
ConfigMap or Secret that does not exist (and is not optional), a key an
``items`` list names that the object lacks, or a claim that is missing or
not bound keeps the pod in ``ContainerCreating``; the volume manager retries
with its own exponential back-off and records ``FailedMount`` each time.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...store import Store

# The operation executor's retry schedule for a failing mount (exponentialbackoff: 500 ms doubling to 2m2s).
MOUNT_RETRY_INITIAL = 0.5
MOUNT_RETRY_MAX = 122.0
# How long a pod worker waits for its volumes before reporting the timeout (podAttachAndMountTimeout).
ATTACH_AND_MOUNT_TIMEOUT = 123.0


@dataclass(frozen=True)
class MountProblem:
    volume: str
    message: str  # the SetUp failure, or "" when the volume cannot even be processed (a claim)
    unprocessed: bool = False


def mount_problems(store: Store, pod: dict) -> list[MountProblem]:
    namespace = pod["metadata"].get("namespace", "")
    problems = []
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        name = volume.get("name", "")
        problem = _problem(store, namespace, volume)
        if problem is not None:
            problems.append(MountProblem(name, *problem))
    return problems


def _problem(store: Store, namespace: str, volume: dict) -> tuple[str, bool] | None:
    name = volume.get("name", "")
    setup = f'MountVolume.SetUp failed for volume "{name}" : '
    if "configMap" in volume:
        return _keyed(store, namespace, volume["configMap"], "configmaps", "configmap", "name", setup)
    if "secret" in volume:
        return _keyed(store, namespace, volume["secret"], "secrets", "secret", "secretName", setup)
    if "projected" in volume:
        for source in volume["projected"].get("sources") or ():
            for kind, bucket, singular in (("configMap", "configmaps", "configmap"), ("secret", "secrets", "secret")):
                if kind in source:
                    problem = _keyed(store, namespace, source[kind], bucket, singular, "name", setup)
                    if problem is not None:
                        return problem
        return None
    if "persistentVolumeClaim" in volume:
        claim_name = volume["persistentVolumeClaim"].get("claimName", "")
        claim = store.get("persistentvolumeclaims", namespace, claim_name)
        # The volume manager cannot even add such a volume; only the pod worker's timeout reports it.
        if claim is None or (claim.get("status") or {}).get("phase") != "Bound":
            return "", True
    return None


def _keyed(store: Store, namespace: str, source: dict, bucket: str, singular: str, name_field: str,
           setup: str) -> tuple[str, bool] | None:
    obj = store.get(bucket, namespace, source.get(name_field, ""))
    optional = bool(source.get("optional"))
    if obj is None:
        return None if optional else (f'{setup}{singular} "{source.get(name_field, "")}" not found', False)
    keys = set(obj.get("data") or {}) | set(obj.get("binaryData") or {})
    for item in source.get("items") or ():
        if item.get("key") not in keys and not optional:
            what = "config" if singular == "configmap" else "secret"
            return f"{setup}{singular} references non-existent {what} key: {item.get('key')}", False
    return None


def timeout_message(problems: list[MountProblem]) -> str:
    """What the pod worker reports when its volumes are still not mounted after the timeout."""
    unmounted = " ".join(p.volume for p in problems)
    unprocessed = " ".join(p.volume for p in problems if p.unprocessed)
    return (f"Unable to attach or mount volumes: unmounted volumes=[{unmounted}], unattached volumes=[], "
            f"failed to process volumes=[{unprocessed}]: context deadline exceeded")
