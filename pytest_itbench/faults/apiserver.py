"""A scanner that polls the Kubernetes API server without pause, as ITBench's ``workload-scanner``: a
ServiceAccount allowed to read workloads cluster-wide, a script in a ConfigMap, and a Deployment running it
(five replicas by default).

Each replica runs kubectl in a shell loop: list every kind it may read across all namespaces, sleep
``1/requestsPerSecond``, again. A kubectl run is a process start plus decoding every object it lists, about a
tenth of a CPU second on a small cluster, so a loop that hardly sleeps keeps close to one core busy. The
replicas request a quarter of a core (the Kubernetes documentation's example request) and set no CPU limit.
Where they want more CPU than their node has, the CFS divides it by CPU requests, and an application whose
containers request none (the astronomy shop's) is left a few millicores: its requests crawl and
``HighRequestLatency`` fires. On a kind cluster every node shares the host's cores, so a few replicas can
be enough; the embedded twin's nodes have eight cores each, so it takes enough replicas to outnumber them
(ten per node at the default pace). The twin reads each loop's CPU from the script's text and shares each
node as the CFS does; it does not model the API server's own CPU (it has no control-plane node). Deleting
the Deployment, or scaling it to zero, is the repair; taking its rights away is not (kubectl still starts,
and fails, as often).
"""

from __future__ import annotations

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from pydantic import BaseModel, ConfigDict, Field

from .base import Fault, FaultArgs, FaultError, FaultRecord

NAME = "workload-scanner"
LABELS = {"app.kubernetes.io/name": NAME}
READS = [
    {"apiGroups": [""], "resources": ["pods", "services", "nodes", "namespaces"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["apps"], "resources": ["deployments", "replicasets", "statefulsets"],
     "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": ["get", "list", "watch"]},
]
# Our own script: list every kind the scanner may read, across all namespaces, then pause; forever.
SCRIPT = """#!/bin/sh
# Inventory of every workload in the cluster, as often as INTERVAL allows.
while true; do
  kubectl get pods,services,deployments,replicasets,statefulsets,jobs,cronjobs -A -o name >/dev/null
  kubectl get nodes,namespaces -o name >/dev/null
  sleep "$INTERVAL"
done
"""
IMAGE = "bitnami/kubectl:1.31"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LoadOptions(_Model):
    requestsPerSecond: int = Field(ge=1)


class LoadGenerator(_Model):
    options: LoadOptions


class SurgeArgs(FaultArgs):
    loadGenerator: LoadGenerator  # ITBench's argument shape
    replicas: int = Field(default=5, ge=1)


class ApiServerRequestSurge(Fault):
    name = "kubernetes-api-server-request-surge"
    description = "Deploys a scanner whose kubectl loops poll the API server without pause."
    Args = SurgeArgs
    target_kinds = ("Namespace",)
    # On the application, once the scanner outnumbers the cores of its nodes (see the module's docstring).
    expected_alerts = ("HighRequestLatency",)

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        ns = record.target.name
        args: SurgeArgs = record.args
        core, rbac, apps = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api), client.AppsV1Api(api)
        role = f"{NAME}-{ns}"  # cluster-scoped: one per namespace the fault targets
        steps = [
            ("serviceaccount", lambda: core.create_namespaced_service_account(ns, {"metadata": {"name": NAME}})),
            ("clusterrole", lambda: rbac.create_cluster_role({"metadata": {"name": role, "labels": LABELS},
                                                              "rules": READS})),
            ("clusterrolebinding", lambda: rbac.create_cluster_role_binding({
                "metadata": {"name": role, "labels": LABELS},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": ns}]})),
            ("configmap", lambda: core.create_namespaced_config_map(ns, {
                "metadata": {"name": f"{NAME}-script"},
                "data": {"scan.sh": SCRIPT}})),
            ("deployment", lambda: apps.create_namespaced_deployment(ns, _deployment(args))),
        ]
        created = record.saved.setdefault("created", [])
        for kind, create in steps:
            if kind in created:
                continue
            try:
                create()
            except ApiException as exc:
                if exc.status != 409:
                    raise FaultError(f"cannot create the request surge's {kind} in {ns}: {exc.reason}") from None
                continue  # someone else's object of that name: left alone, and left on removal
            created.append(kind)

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        ns = record.target.name
        core, rbac, apps = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api), client.AppsV1Api(api)
        role = f"{NAME}-{ns}"
        deletes = {"deployment": lambda: apps.delete_namespaced_deployment(NAME, ns),
                   "configmap": lambda: core.delete_namespaced_config_map(f"{NAME}-script", ns),
                   "clusterrolebinding": lambda: rbac.delete_cluster_role_binding(role),
                   "clusterrole": lambda: rbac.delete_cluster_role(role),
                   "serviceaccount": lambda: core.delete_namespaced_service_account(NAME, ns)}
        created = record.saved.get("created", [])
        for kind in list(deletes):
            if kind not in created:
                continue
            try:
                deletes[kind]()
            except ApiException as exc:
                if exc.status != 404:
                    raise FaultError(f"cannot delete the request surge's {kind} in {ns}: {exc.reason}") from None
            created.remove(kind)


def _deployment(args: SurgeArgs) -> dict:
    interval = 1.0 / args.loadGenerator.options.requestsPerSecond
    return {
        "metadata": {"name": NAME, "labels": LABELS},
        "spec": {
            "replicas": args.replicas,
            "selector": {"matchLabels": LABELS},
            "template": {"metadata": {"labels": LABELS}, "spec": {
                "serviceAccountName": NAME,
                "containers": [{
                    "name": "scanner", "image": IMAGE,
                    "command": ["/bin/sh", "/opt/scan/scan.sh"],
                    "env": [{"name": "INTERVAL", "value": f"{interval:.3f}"}],
                    "volumeMounts": [{"name": "scan", "mountPath": "/opt/scan", "readOnly": True}],
                    # A request and no CPU limit, as a batch job written in a hurry has them.
                    "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}}],
                "volumes": [{"name": "scan", "configMap": {"name": f"{NAME}-script"}}]}}}}


FAULTS = (ApiServerRequestSurge(),)
