"""Objects the OpenCost tests create: the pricing ConfigMap, Deployments with known requests, volumes."""

from __future__ import annotations

import json

from pytest_itbench.twin import Twin

from .monitoring_helpers import create

GIB = 1024 ** 3
MIB = 1024 ** 2

# OpenCost's shipped default.json: what the twin prices with when there is no pricing ConfigMap.
DEFAULT_CPU = 0.031611  # per vCPU-hour
DEFAULT_RAM = 0.004237  # per GiB-hour
DEFAULT_GPU = 0.95  # per GPU-hour
DEFAULT_STORAGE = 0.00005479452  # per GiB-hour


def namespace(twin: Twin, name: str, labels: dict | None = None) -> dict:
    return create(twin, {"apiVersion": "v1", "kind": "Namespace",
                         "metadata": {"name": name, **({"labels": labels} if labels else {})}})


def pricing_configmap(twin: Twin, document: dict | str, *, create_namespace: bool = True) -> dict:
    """The OpenCost chart's custom pricing ConfigMap (``opencost/custom-pricing-model``, key ``default.json``)."""
    if create_namespace:
        namespace(twin, "opencost")
    text = document if isinstance(document, str) else json.dumps(document)
    return create(twin, {"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "custom-pricing-model", "namespace": "opencost"},
                         "data": {"default.json": text}})


def update_pricing(twin: Twin, document: dict) -> None:
    res = twin.api.catalog.for_api_version("v1", "ConfigMap")
    current = twin.api.get(res, "opencost", "custom-pricing-model")
    current["data"] = {"default.json": json.dumps(document)}
    twin.api.update(res, "opencost", "custom-pricing-model", current, twin.admin_ctx)


def deployment(name: str, *, namespace: str = "default", replicas: int = 1, requests: dict | None = None,
               labels: dict | None = None, claim: str | None = None) -> dict:
    container = {"name": name, "image": "nginx:1.27"}
    if requests:
        container["resources"] = {"requests": requests}
    spec: dict = {"containers": [container]}
    if claim:
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        container["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name, **(labels or {})}}, "spec": spec}}}


def volume(name: str, size: str) -> dict:
    """A statically provisioned volume whose disk is kept when its claim goes (reclaim policy Retain)."""
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                     "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "manual",
                     "hostPath": {"path": f"/data/{name}"}}}


def claim(name: str, size: str, volume_name: str, *, namespace: str = "default") -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "manual", "volumeName": volume_name,
                     "resources": {"requests": {"storage": size}}}}
