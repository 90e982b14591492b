"""Faults on a workload's pod template: init containers, a container's command, resources, image and volumes.

Each changes the Deployment's (or StatefulSet's) template through the API, so the controller rolls out pods that
carry the fault; the old pods are replaced only as the rollout strategy allows (a rolling update keeps the old pod
serving while the new one cannot become available). ``kubectl rollout undo`` is a repair for every one of them.
"""

from __future__ import annotations

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from .base import Fault, FaultArgs, FaultError, FaultRecord
from ._k8s import container_index, patch_workload, read_workload
from ._template import POD_SPEC, nodes, pod_spec, restore_container_field, set_container_field, set_field

WORKLOADS = ("Deployment", "StatefulSet")


class ContainerArgs(FaultArgs):
    container: str | None = None  # the first container when omitted


# ---- init containers ----------------------------------------------------------------------------------------------
class InitArgs(FaultArgs):
    name: str = "verify-config"  # the init container added
    image: str = "busybox:1.36"


class _AddedInitContainer(Fault):
    """Appends an init container (after the workload's own) that never lets the pod start."""

    Args = InitArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodNotReady", "KubeContainerWaiting")

    def command(self) -> list[str]:
        raise NotImplementedError

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        args: InitArgs = record.args
        spec = pod_spec(read_workload(api, record.target))
        current = spec.get("initContainers")
        if any(c["name"] == args.name for c in current or ()):
            if "initContainers" in record.saved:
                return
            raise FaultError(f"{record.target.kind} {record.target.namespace}/{record.target.name} already has an "
                             f"init container named {args.name!r}; give the fault another name")
        record.saved["initContainers"] = current
        added = {"name": args.name, "image": args.image, "command": self.command()}
        set_field(api, record.target, f"{POD_SPEC}/initContainers", [*(current or ()), added], current is not None)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "initContainers" not in record.saved:
            return
        spec = pod_spec(read_workload(api, record.target))
        set_field(api, record.target, f"{POD_SPEC}/initContainers", record.saved["initContainers"],
                  "initContainers" in spec)


class CrashingInitContainer(_AddedInitContainer):
    name = "crashing-kubernetes-workload-init-container"
    description = "Adds an init container that exits with an error (a configuration check that fails)."

    def command(self) -> list[str]:
        return ["sh", "-c", "echo 'verify-config: /etc/app/config.yaml: required key \"service.port\" is missing' >&2;"
                            " exit 1"]


class HangingInitContainer(_AddedInitContainer):
    name = "hanging-kubernetes-workload-init-container"
    description = "Adds an init container that never finishes (it sleeps forever), so the pod never starts."

    def command(self) -> list[str]:
        return ["sh", "-c", "echo 'waiting for the schema migration lock'; sleep infinity"]


# ---- the container's command --------------------------------------------------------------------------------------
class CommandArgs(ContainerArgs):
    command: list[str] = ["/app/server-does-not-exist"]  # a program the image does not hold


class InvalidCommand(Fault):
    name = "invalid-kubernetes-workload-container-command"
    description = "Replaces a container's command with one that cannot run, so the container crash-loops."
    Args = CommandArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodCrashLooping",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        set_container_field(api, record, "command", record.args.command)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        restore_container_field(api, record, "command")


# ---- resources ------------------------------------------------------------------------------------------------------
class ResourcesArgs(ContainerArgs):
    memory: str = "6Mi"  # a memory limit below what the process needs (above runc's own minimum of 4Mi)
    cpu: str | None = None  # a CPU limit as well, when given


class InsufficientResources(Fault):
    name = "insufficient-kubernetes-workload-container-resources"
    description = "Sets a container's memory limit below its working set, so it is OOMKilled and crash-loops."
    Args = ResourcesArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodCrashLooping",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        args: ResourcesArgs = record.args
        _, container = _container(api, record)
        resources = container.get("resources") or {}
        limits = dict(resources.get("limits") or {}, memory=args.memory)
        requests = dict(resources.get("requests") or {})
        if "memory" in requests:
            requests["memory"] = args.memory  # a request above the limit is invalid
        if args.cpu is not None:
            limits["cpu"] = args.cpu
            if "cpu" in requests:
                requests["cpu"] = args.cpu
        wanted = {**resources, "limits": limits, **({"requests": requests} if requests else {})}
        set_container_field(api, record, "resources", wanted)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        restore_container_field(api, record, "resources")


class UnassignedLimits(Fault):
    name = "unassigned-kubernetes-workload-container-resource-limits"
    description = ("Removes a container's resource limits, so nothing bounds what it takes under load "
                   "(ITBench combines it with a stress experiment).")
    Args = ContainerArgs
    target_kinds = WORKLOADS
    # On its own nothing alerts: under a memory stressor the node runs short and the kubelet evicts pods.
    expected_alerts = ("FailedPodsDetected",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        _, container = _container(api, record)
        resources = container.get("resources") or {}
        if "limits" not in resources and "resources" in record.saved:
            return
        if "limits" not in resources:
            raise FaultError(f"{record.target.kind} {record.target.namespace}/{record.target.name}: container "
                             f"{container['name']} has no resource limits to remove")
        wanted = {k: v for k, v in resources.items() if k != "limits"}
        set_container_field(api, record, "resources", wanted)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        restore_container_field(api, record, "resources")


# ---- image ----------------------------------------------------------------------------------------------------------
# Docker Hub's per-architecture repositories: an image built for one architecture only.
FOREIGN_IMAGES = {"arm64": "docker.io/arm64v8/nginx:1.27", "amd64": "docker.io/amd64/nginx:1.27"}


class ArchitectureArgs(ContainerArgs):
    image: str | None = None  # default: a single-architecture image for an architecture no node has


class UnsupportedArchitectureImage(Fault):
    name = "unsupported-architecture-kubernetes-workload-container-image"
    description = ("Points a container at an image built for another CPU architecture than the nodes': it is "
                   "pulled, and its entrypoint fails with 'exec format error'.")
    Args = ArchitectureArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodNotReady", "KubePodCrashLooping")

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        image = record.args.image or record.saved.get("foreign") or _foreign_image(api)
        record.saved.setdefault("foreign", image)
        set_container_field(api, record, "image", image)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        restore_container_field(api, record, "image")


def _foreign_image(api: ApiClient) -> str:
    architectures = {(n.get("status") or {}).get("nodeInfo", {}).get("architecture") for n in nodes(api)}
    for arch, image in FOREIGN_IMAGES.items():
        if arch not in architectures:
            return image
    raise FaultError(f"the nodes run both {' and '.join(sorted(FOREIGN_IMAGES))}: no architecture is unsupported; "
                     f"give the fault an image argument")


# ---- volumes --------------------------------------------------------------------------------------------------------
class ClaimArgs(ContainerArgs):
    claim: str | None = None  # default: <workload>-data
    volume: str = "data"
    mount_path: str = "/var/lib/data"


class NonexistentClaim(Fault):
    name = "nonexistent-kubernetes-workload-persistent-volume-claim"
    description = "Mounts a PersistentVolumeClaim that does not exist, so new pods cannot be scheduled."
    Args = ClaimArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodNotReady",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        args: ClaimArgs = record.args
        t = record.target
        claim = args.claim or f"{t.name}-data"
        workload = read_workload(api, t)
        spec = pod_spec(workload)
        index, container = container_index(workload, args.container, t)
        if any(v["name"] == args.volume for v in spec.get("volumes") or ()):
            if "volumes" in record.saved:
                return
            raise FaultError(f"{t.kind} {t.namespace}/{t.name} already has a volume named {args.volume!r}")
        try:
            client.CoreV1Api(api).read_namespaced_persistent_volume_claim(claim, t.namespace)
            raise FaultError(f"PersistentVolumeClaim {t.namespace}/{claim} exists; name one that does not")
        except ApiException as exc:
            if exc.status != 404:
                raise FaultError(f"cannot look up PersistentVolumeClaim {t.namespace}/{claim}: {exc.reason}") from None
        record.saved["volumes"] = spec.get("volumes")
        record.saved["volumeMounts"] = container.get("volumeMounts")
        volume = {"name": args.volume, "persistentVolumeClaim": {"claimName": claim}}
        mount = {"name": args.volume, "mountPath": args.mount_path}
        patch_workload(api, t, [
            {"op": "add", "path": f"{POD_SPEC}/volumes", "value": [*(spec.get("volumes") or ()), volume]},
            {"op": "add", "path": f"{POD_SPEC}/containers/{index}/volumeMounts",
             "value": [*(container.get("volumeMounts") or ()), mount]}])

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "volumes" not in record.saved:
            return
        workload = read_workload(api, record.target)
        index, container = container_index(workload, record.args.container, record.target)
        set_field(api, record.target, f"{POD_SPEC}/containers/{index}/volumeMounts", record.saved["volumeMounts"],
                  "volumeMounts" in container)
        set_field(api, record.target, f"{POD_SPEC}/volumes", record.saved["volumes"],
                  "volumes" in pod_spec(workload))


# ---- one field of one container -------------------------------------------------------------------------------------
def _container(api: ApiClient, record: FaultRecord) -> tuple[int, dict]:
    return container_index(read_workload(api, record.target), record.args.container, record.target)


FAULTS = (CrashingInitContainer(), HangingInitContainer(), InvalidCommand(), InsufficientResources(),
          UnassignedLimits(), UnsupportedArchitectureImage(), NonexistentClaim())
