"""Faults on workloads: replicas, images, probes, environment."""

from __future__ import annotations

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from .base import Fault, FaultArgs, FaultError, FaultRecord
from ._k8s import container_index, patch_workload, read_workload

WORKLOADS = ("Deployment", "StatefulSet")


class ContainerArgs(FaultArgs):
    container: str | None = None  # the first container when omitted


class ScaledToZero(Fault):
    name = "scaled-to-zero-kubernetes-workload"
    description = "Scales the workload to zero replicas."
    target_kinds = WORKLOADS
    expected_alerts = ("NoRequestsReceived", "HighRequestErrorRate")

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        replicas = read_workload(api, record.target)["spec"].get("replicas", 1)
        if replicas == 0 and "replicas" in record.saved:
            return
        record.saved.setdefault("replicas", replicas)
        _scale(api, record, 0)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "replicas" in record.saved:
            _scale(api, record, record.saved["replicas"])


def _scale(api: ApiClient, record: FaultRecord, replicas: int) -> None:
    apps = client.AppsV1Api(api)
    t = record.target
    patch = {"spec": {"replicas": replicas}}
    try:
        if t.kind == "Deployment":
            apps.patch_namespaced_deployment_scale(t.name, t.namespace, patch)
        else:
            apps.patch_namespaced_stateful_set_scale(t.name, t.namespace, patch)
    except ApiException as exc:
        raise FaultError(f"cannot scale {t.kind} {t.namespace}/{t.name}: {exc.reason}") from None


class ImageArgs(ContainerArgs):
    image: str | None = None  # the reference to set; by default the same repository with a tag that does not exist


class NonexistentImage(Fault):
    name = "nonexistent-kubernetes-workload-container-image"
    description = "Points a container at an image the registry does not hold."
    Args = ImageArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodNotReady", "KubeContainerWaiting")

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        args: ImageArgs = record.args
        workload = read_workload(api, record.target)
        index, container = container_index(workload, args.container, record.target)
        bad = args.image or _nonexistent(container["image"])
        if container["image"] == bad:
            return
        record.saved.setdefault("image", container["image"])
        patch_workload(api, record.target, [{"op": "replace",
                                             "path": f"/spec/template/spec/containers/{index}/image",
                                             "value": bad}])

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "image" not in record.saved:
            return
        workload = read_workload(api, record.target)
        index, _ = container_index(workload, record.args.container, record.target)
        patch_workload(api, record.target, [{"op": "replace",
                                             "path": f"/spec/template/spec/containers/{index}/image",
                                             "value": record.saved["image"]}])


def _nonexistent(image: str) -> str:
    repository = image.split("@", 1)[0]
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    return f"{repository}:0.0.0-does-not-exist"


class ProbeArgs(ContainerArgs):
    path: str = "/healthz-unreachable"  # an HTTP path the container does not serve


class FailingReadinessProbe(Fault):
    name = "misconfigured-kubernetes-workload-container-readiness-probe"
    description = "Gives a container a readiness probe that cannot pass (a path it does not serve)."
    Args = ProbeArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodNotReady",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        args: ProbeArgs = record.args
        workload = read_workload(api, record.target)
        index, container = container_index(workload, args.container, record.target)
        current = container.get("readinessProbe")
        port = _probe_port(container, current, record)
        wanted = {"httpGet": {"path": args.path, "port": port}, "periodSeconds": 5, "failureThreshold": 3}
        if current is not None and (current.get("httpGet") or {}).get("path") == args.path:
            return
        record.saved.setdefault("readinessProbe", current)
        op = "replace" if current is not None else "add"
        patch_workload(api, record.target, [{"op": op,
                                             "path": f"/spec/template/spec/containers/{index}/readinessProbe",
                                             "value": wanted}])

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "readinessProbe" not in record.saved:
            return
        workload = read_workload(api, record.target)
        index, container = container_index(workload, record.args.container, record.target)
        path = f"/spec/template/spec/containers/{index}/readinessProbe"
        original = record.saved["readinessProbe"]
        if original is None:
            if "readinessProbe" in container:
                patch_workload(api, record.target, [{"op": "remove", "path": path}])
        else:
            patch_workload(api, record.target, [{"op": "replace", "path": path, "value": original}])


def _probe_port(container: dict, probe: dict | None, record: FaultRecord):
    for kind in ("httpGet", "tcpSocket", "grpc"):
        if probe and probe.get(kind, {}).get("port") is not None:
            return probe[kind]["port"]
    ports = container.get("ports") or []
    if not ports:
        raise FaultError(f"{record.target.kind} {record.target.namespace}/{record.target.name}: container "
                         f"{container['name']} declares no port to probe")
    return ports[0]["containerPort"]


class EnvVar(FaultArgs):
    name: str
    value: str


class EnvArgs(ContainerArgs):
    env: EnvVar


class ModifiedEnvironmentVariable(Fault):
    name = "modified-kubernetes-workload-container-environment-variable"
    description = "Overwrites one environment variable of a container (a wrong address, port or credential)."
    Args = EnvArgs
    target_kinds = WORKLOADS
    expected_alerts = ("HighRequestErrorRate",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        args: EnvArgs = record.args
        workload = read_workload(api, record.target)
        index, container = container_index(workload, args.container, record.target)
        env = list(container.get("env") or [])
        position = next((i for i, e in enumerate(env) if e["name"] == args.env.name), None)
        if position is not None and env[position] == {"name": args.env.name, "value": args.env.value}:
            return
        record.saved.setdefault("env", container.get("env"))
        wanted = {"name": args.env.name, "value": args.env.value}
        if position is None:
            env.append(wanted)
        else:
            env[position] = wanted
        _set_env(api, record, index, env, replace="env" in container)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "env" not in record.saved:
            return
        workload = read_workload(api, record.target)
        index, container = container_index(workload, record.args.container, record.target)
        original = record.saved["env"]
        if original is None:
            if "env" in container:
                patch_workload(api, record.target, [{"op": "remove",
                                                     "path": f"/spec/template/spec/containers/{index}/env"}])
        else:
            _set_env(api, record, index, original, replace=True)


def _set_env(api: ApiClient, record: FaultRecord, index: int, env: list[dict], replace: bool) -> None:
    patch_workload(api, record.target, [{"op": "replace" if replace else "add",
                                         "path": f"/spec/template/spec/containers/{index}/env", "value": env}])


FAULTS = (ScaledToZero(), NonexistentImage(), FailingReadinessProbe(), ModifiedEnvironmentVariable())
