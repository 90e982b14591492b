"""Deploying an application through the Kubernetes API, and waiting until it serves.

The same code deploys to the twin and to a real cluster (ARCHITECTURE.md, rule 1): each manifest
document is created with the official client's dynamic API, in the order the catalog gives, and the
workloads are then watched until every Deployment and StatefulSet is available. Time passes through
the caller's ``advance`` (warped on the twin, waited out on a real cluster).
"""

from __future__ import annotations

from typing import Callable, Iterable

from kubernetes import dynamic
from kubernetes.client import ApiClient
from kubernetes.dynamic.exceptions import ApiException, ResourceNotFoundError

from .catalog import Application

POLL = 10.0  # seconds of cluster time between looks at the workloads


class DeployError(RuntimeError):
    """The application could not be deployed or did not become available: an environment error."""


def apply(api: ApiClient, documents: Iterable[dict]) -> list[dict]:
    """Create every document; return what the server made of them."""
    client = dynamic.DynamicClient(api)
    created = []
    for doc in documents:
        where = f"{doc.get('kind')} {doc.get('metadata', {}).get('namespace', '')}/{doc.get('metadata', {}).get('name')}"
        try:
            resource = client.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
        except ResourceNotFoundError:
            raise DeployError(f"the cluster does not serve {doc['apiVersion']} {doc['kind']} (needed for {where}); "
                              f"is its CRD installed?") from None
        namespace = doc["metadata"].get("namespace") if resource.namespaced else None
        try:
            created.append(resource.create(body=doc, namespace=namespace).to_dict())
        except ApiException as exc:
            if exc.status == 409 and doc["kind"] == "Namespace":
                # On a shared cluster the trial claimed its namespace before deploying (backends/namespaces.py);
                # the manifest's labels and annotations still apply.
                meta = doc.get("metadata", {})
                patch = {"metadata": {k: meta[k] for k in ("labels", "annotations") if meta.get(k)}}
                created.append(resource.patch(body=patch, name=meta["name"],
                                              content_type="application/merge-patch+json").to_dict())
                continue
            raise DeployError(f"creating {where} failed: {exc.status} {exc.reason}: {_message(exc)}") from None
    return created


def not_available(api: ApiClient, namespace: str) -> list[str]:
    """The workloads of ``namespace`` that are not yet available, each with what it lacks."""
    client = dynamic.DynamicClient(api)
    waiting = []
    for kind in ("Deployment", "StatefulSet"):
        resource = client.resources.get(api_version="apps/v1", kind=kind)
        for obj in resource.get(namespace=namespace).to_dict().get("items", []):
            want = obj["spec"].get("replicas", 1)
            status = obj.get("status") or {}
            ready = status.get("availableReplicas" if kind == "Deployment" else "readyReplicas") or 0
            if ready < want:
                waiting.append(f"{kind} {obj['metadata']['name']}: {ready}/{want} ready")
    return waiting


def deploy(api: ApiClient, app: Application, advance: Callable[[float], None], timeout: float = 600.0) -> float:
    """Apply ``app`` and wait until it is available; return the cluster seconds it took.

    Raises DeployError naming the workloads still unavailable at ``timeout``.
    """
    apply(api, app.documents())
    waited = 0.0
    while True:
        waiting = not_available(api, app.namespace)
        if not waiting:
            return waited
        if waited >= timeout:
            raise DeployError(f"{app.name} was not available {timeout:.0f} s after it was applied: "
                              + "; ".join(waiting))
        advance(POLL)
        waited += POLL


def _message(exc: ApiException) -> str:
    import json
    try:
        return json.loads(exc.body).get("message", exc.body)
    except (TypeError, ValueError):
        return str(exc.body)
