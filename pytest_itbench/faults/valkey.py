"""Faults on a Valkey workload, as ITBench makes them: a password its clients do not know, and a process
beside the server that fills its memory until the container's limit kills it."""

from __future__ import annotations

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from ._k8s import container_index, patch_workload, read_workload
from .base import Fault, FaultArgs, FaultError, FaultRecord

WORKLOADS = ("Deployment", "StatefulSet")
PASSWORD_SECRET = "valkey-credentials"
PASSWORD_KEY = "valkey-password"
SCRIPT_CONFIGMAP = "valkey-storage-script"
SCRIPT_DIR = "/data/scripts"
SCRIPT_FILE = "fill_storage.sh"
SCRIPT_VOLUME = "valkey-storage-script"

# Our own text: after the server has started, write a 1 MiB value under one of 10000 keys every second,
# in the background, then run the server in the foreground.
FILL_SCRIPT = """#!/bin/sh
set -eu

write_values() {
    sleep 20
    while true; do
        n=$(( $(date +%s%N) % 10000 + 1 ))
        head -c 1m /dev/urandom | valkey-cli -x SET "filler:$n" > /dev/null
        sleep 1
    done
}

write_values &
valkey-server
"""


class ContainerArgs(FaultArgs):
    container: str | None = None  # the first container when omitted


class PasswordArgs(ContainerArgs):
    password: str = "invalid_password"  # ITBench's value: the clients were never given it


def _save_container(record: FaultRecord, container: dict, *fields: str) -> None:
    if "container" not in record.saved:
        record.saved["container"] = {f: container.get(f) for f in fields}


def _restore_container(api: ApiClient, record: FaultRecord) -> None:
    workload = read_workload(api, record.target)
    index, container = container_index(workload, record.args.container, record.target)
    ops = []
    for field, value in record.saved["container"].items():
        path = f"/spec/template/spec/containers/{index}/{field}"
        if value is None:
            if field in container:
                ops.append({"op": "remove", "path": path})
        else:
            ops.append({"op": "replace" if field in container else "add", "path": path, "value": value})
    if ops:
        patch_workload(api, record.target, ops)


class ChangedPassword(Fault):
    name = "valkey-workload-changed-password"
    description = "Makes Valkey require a password (from a new Secret) that its clients do not present."
    Args = PasswordArgs
    target_kinds = WORKLOADS
    expected_alerts = ("HighRequestErrorRate", "HighRequestLatency")

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        args: PasswordArgs = record.args
        t = record.target
        core = client.CoreV1Api(api)
        secret = {"metadata": {"name": PASSWORD_SECRET, "namespace": t.namespace},
                  "stringData": {PASSWORD_KEY: args.password}}
        try:
            core.create_namespaced_secret(t.namespace, secret)
            record.saved["secret_created"] = True
        except ApiException as exc:
            if exc.status != 409:
                raise FaultError(f"cannot create Secret {t.namespace}/{PASSWORD_SECRET}: {exc.reason}") from None
            core.patch_namespaced_secret(PASSWORD_SECRET, t.namespace, {"stringData": {PASSWORD_KEY: args.password}})
        workload = read_workload(api, t)
        index, container = container_index(workload, args.container, t)
        if "--requirepass" in (container.get("args") or []) and "container" in record.saved:
            return
        _save_container(record, container, "command", "args", "env")
        env = [e for e in container.get("env") or [] if e.get("name") != "VALKEY_PASSWORD"]
        env.append({"name": "VALKEY_PASSWORD",
                    "valueFrom": {"secretKeyRef": {"name": PASSWORD_SECRET, "key": PASSWORD_KEY}}})
        base = f"/spec/template/spec/containers/{index}"
        patch_workload(api, t, [
            {"op": "add", "path": f"{base}/command", "value": ["valkey-server"]},
            {"op": "add", "path": f"{base}/args", "value": ["--requirepass", "$(VALKEY_PASSWORD)"]},
            {"op": "add", "path": f"{base}/env", "value": env}])

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "container" in record.saved:
            _restore_container(api, record)
        if record.saved.get("secret_created"):
            _delete(client.CoreV1Api(api).delete_namespaced_secret, PASSWORD_SECRET, record)


class OutOfMemory(Fault):
    name = "valkey-workload-out-of-memory"
    description = "Runs Valkey through a script that also fills its store with 1 MiB values every second."
    Args = ContainerArgs
    target_kinds = WORKLOADS
    expected_alerts = ("KubePodCrashLooping",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        t = record.target
        core = client.CoreV1Api(api)
        body = {"metadata": {"name": SCRIPT_CONFIGMAP, "namespace": t.namespace}, "data": {"script": FILL_SCRIPT}}
        try:
            core.create_namespaced_config_map(t.namespace, body)
            record.saved["configmap_created"] = True
        except ApiException as exc:
            if exc.status != 409:
                raise FaultError(f"cannot create ConfigMap {t.namespace}/{SCRIPT_CONFIGMAP}: {exc.reason}") from None
        workload = read_workload(api, t)
        index, container = container_index(workload, record.args.container, t)
        script = f"{SCRIPT_DIR}/{SCRIPT_FILE}"
        if script in (container.get("command") or []) and "container" in record.saved:
            return
        _save_container(record, container, "command", "args", "volumeMounts")
        pod_spec = workload["spec"]["template"]["spec"]
        record.saved.setdefault("volumes", pod_spec.get("volumes"))
        mounts = [m for m in container.get("volumeMounts") or [] if m.get("name") != SCRIPT_VOLUME]
        mounts.append({"name": SCRIPT_VOLUME, "mountPath": SCRIPT_DIR})
        volumes = [v for v in pod_spec.get("volumes") or [] if v.get("name") != SCRIPT_VOLUME]
        volumes.append({"name": SCRIPT_VOLUME, "configMap": {"name": SCRIPT_CONFIGMAP, "defaultMode": 0o755,
                                                             "items": [{"key": "script", "path": SCRIPT_FILE}]}})
        base = f"/spec/template/spec/containers/{index}"
        ops = [{"op": "add", "path": f"{base}/command", "value": ["/bin/sh", "-c", script]},
               {"op": "add", "path": f"{base}/volumeMounts", "value": mounts},
               {"op": "add", "path": "/spec/template/spec/volumes", "value": volumes}]
        if "args" in container:
            ops.append({"op": "remove", "path": f"{base}/args"})
        patch_workload(api, t, ops)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "container" in record.saved:
            _restore_container(api, record)
            workload = read_workload(api, record.target)
            original = record.saved.get("volumes")
            path = "/spec/template/spec/volumes"
            if original is not None:
                patch_workload(api, record.target, [{"op": "add", "path": path, "value": original}])
            elif "volumes" in workload["spec"]["template"]["spec"]:
                patch_workload(api, record.target, [{"op": "remove", "path": path}])
        if record.saved.get("configmap_created"):
            _delete(client.CoreV1Api(api).delete_namespaced_config_map, SCRIPT_CONFIGMAP, record)


def _delete(delete, name: str, record: FaultRecord) -> None:
    try:
        delete(name, record.target.namespace)
    except ApiException as exc:
        if exc.status != 404:
            raise FaultError(f"cannot delete {record.target.namespace}/{name}: {exc.reason}") from None


FAULTS = (ChangedPassword(), OutOfMemory())
