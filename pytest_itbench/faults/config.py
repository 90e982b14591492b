"""Faults on configuration objects: a Secret whose credentials are replaced with invalid ones."""

from __future__ import annotations

import base64
import hashlib
from datetime import datetime, timezone

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from .base import Fault, FaultArgs, FaultError, FaultRecord


class SecretArgs(FaultArgs):
    # Deployments that read the Secret, restarted after the change so they pick it up (a Secret read into the
    # environment is read when the container starts). ITBench waits on the same: its scenario deletes the
    # consumer's pods after corrupting the Secret.
    restart: tuple[str, ...] = ()


class CorruptedSecretCredentials(Fault):
    name = "corrupted-kubernetes-secret-credentials"
    description = "Replaces every value of a Secret with a random-looking credential nobody accepts."
    Args = SecretArgs
    target_kinds = ("Secret",)
    expected_alerts = ("HighRequestErrorRate",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        data = _read(api, record)
        corrupted = {key: _invalid(record, key) for key in data}
        if not corrupted:
            t = record.target
            raise FaultError(f"Secret {t.namespace}/{t.name} holds no data to corrupt")
        if data == corrupted and "data" in record.saved:
            return
        record.saved.setdefault("data", data)
        _write(api, record, corrupted)
        _restart(api, record)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "data" not in record.saved:
            return
        _write(api, record, record.saved["data"])
        _restart(api, record)


def _invalid(record: FaultRecord, key: str) -> str:
    """24 lowercase letters and digits (ITBench's alphabet and length), derived from the Secret's name and key,
    so that a run is reproducible."""
    t = record.target
    digest = hashlib.sha256(f"{t.namespace}/{t.name}/{key}".encode()).hexdigest()[:24]
    return base64.b64encode(digest.encode()).decode()


def _read(api: ApiClient, record: FaultRecord) -> dict[str, str]:
    t = record.target
    try:
        secret = client.CoreV1Api(api).read_namespaced_secret(t.name, t.namespace)
    except ApiException as exc:
        raise FaultError(f"cannot read Secret {t.namespace}/{t.name}: {exc.reason}") from None
    return dict(secret.data or {})


def _write(api: ApiClient, record: FaultRecord, data: dict[str, str]) -> None:
    t = record.target
    try:
        client.CoreV1Api(api).patch_namespaced_secret(
            t.name, t.namespace, [{"op": "replace", "path": "/data", "value": data}])
    except ApiException as exc:
        raise FaultError(f"cannot patch Secret {t.namespace}/{t.name}: {exc.reason}") from None


def _restart(api: ApiClient, record: FaultRecord) -> None:
    """What `kubectl rollout restart deployment/NAME` does, for each consumer named."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    body = {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}}
    for name in record.args.restart:
        try:
            client.AppsV1Api(api).patch_namespaced_deployment(name, record.target.namespace, body)
        except ApiException as exc:
            raise FaultError(f"cannot restart Deployment {record.target.namespace}/{name} so it rereads Secret "
                             f"{record.target.name}: {exc.reason}") from None


FAULTS = (CorruptedSecretCredentials(),)
