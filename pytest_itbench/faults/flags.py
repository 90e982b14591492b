"""The OpenTelemetry Demo's feature flags: a flag turned to a variant in the flagd ConfigMap."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from pydantic import BaseModel, ConfigDict

from .base import Fault, FaultArgs, FaultError, FaultRecord

FLAG_FILE = "demo.flagd.json"


class Flag(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    state: str = "on"  # the variant to make the default ("on", or e.g. "100%" for paymentFailure)


class FlagArgs(FaultArgs):
    flag: Flag
    # flagd reads a copy of the ConfigMap made when its pod starts (the demo's init container), so a changed
    # flag takes effect once flagd restarts: ITBench restarts it, as `kubectl rollout restart` does.
    restart: str | None = "flagd"


class FeatureFlag(Fault):
    name = "opentelemetry-demo-feature-flag"
    description = "Turns one of the astronomy shop's built-in failure flags to a variant in flagd's ConfigMap."
    Args = FlagArgs
    target_kinds = ("ConfigMap",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        flags = _read_flags(api, record)
        flag = _flag(flags, record)
        variant = record.args.flag.state
        if variant not in (flag.get("variants") or {}):
            raise FaultError(f"flag {record.args.flag.name} has no variant {variant!r} "
                             f"(it has {', '.join(flag.get('variants') or {})})")
        if flag.get("defaultVariant") == variant and "defaultVariant" in record.saved:
            return
        record.saved.setdefault("defaultVariant", flag.get("defaultVariant"))
        flag["defaultVariant"] = variant
        _write_flags(api, record, flags)
        _restart(api, record)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "defaultVariant" not in record.saved:
            return
        flags = _read_flags(api, record)
        _flag(flags, record)["defaultVariant"] = record.saved["defaultVariant"]
        _write_flags(api, record, flags)
        _restart(api, record)


def _read_flags(api: ApiClient, record: FaultRecord) -> dict:
    t = record.target
    try:
        cm = client.CoreV1Api(api).read_namespaced_config_map(t.name, t.namespace)
    except ApiException as exc:
        raise FaultError(f"cannot read ConfigMap {t.namespace}/{t.name}: {exc.reason}") from None
    text = (cm.data or {}).get(FLAG_FILE)
    if text is None:
        raise FaultError(f"ConfigMap {t.namespace}/{t.name} has no {FLAG_FILE}")
    return json.loads(text)


def _flag(flags: dict, record: FaultRecord) -> dict:
    name = record.args.flag.name
    found = (flags.get("flags") or {}).get(name)
    if found is None:
        raise FaultError(f"flagd has no flag {name!r} (it has {', '.join(sorted(flags.get('flags') or {}))})")
    return found


def _write_flags(api: ApiClient, record: FaultRecord, flags: dict) -> None:
    t = record.target
    try:
        client.CoreV1Api(api).patch_namespaced_config_map(
            t.name, t.namespace, {"data": {FLAG_FILE: json.dumps(flags, indent=2)}})
    except ApiException as exc:
        raise FaultError(f"cannot patch ConfigMap {t.namespace}/{t.name}: {exc.reason}") from None


def _restart(api: ApiClient, record: FaultRecord) -> None:
    """What `kubectl rollout restart deployment/NAME` does: a new template annotation, so new pods."""
    name = record.args.restart
    if not name:
        return
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}}
    try:
        client.AppsV1Api(api).patch_namespaced_deployment(name, record.target.namespace, body)
    except ApiException as exc:
        raise FaultError(f"cannot restart Deployment {record.target.namespace}/{name} so it rereads its flags: "
                         f"{exc.reason}") from None


FAULTS = (FeatureFlag(),)
