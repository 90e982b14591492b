"""A load generator that hammers the Kubernetes API server with list requests, as ITBench's
``workload-scanner``: a ServiceAccount allowed to read workloads cluster-wide, a script in a ConfigMap, and a
Deployment of five replicas running it.

On a real cluster the surge slows the API server and, through it, whatever depends on it. The embedded twin
does not model the API server's own latency under load (it answers every request at once and exports no
``apiserver_request_duration_seconds``), so on the twin this fault creates its objects and shows no symptom.
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
# Our own script: list every kind it may read, across all namespaces, at RPS requests a second.
SCRIPT = """import os, time
from kubernetes import client, config

config.load_incluster_config()
core, apps, batch = client.CoreV1Api(), client.AppsV1Api(), client.BatchV1Api()
calls = [core.list_pod_for_all_namespaces, core.list_service_for_all_namespaces, core.list_node,
         core.list_namespace, apps.list_deployment_for_all_namespaces, apps.list_replica_set_for_all_namespaces,
         apps.list_stateful_set_for_all_namespaces, batch.list_job_for_all_namespaces]
rps = float(os.environ["RPS"])
end = time.time() + float(os.environ["DURATION"])
n = 0
while time.time() < end:
    started = time.time()
    try:
        calls[n % len(calls)](_request_timeout=10)
    except Exception as exc:
        print(f"request failed: {exc}", flush=True)
    n += 1
    time.sleep(max(0.0, 1.0 / rps - (time.time() - started)))
"""


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
    description = "Deploys a load generator that floods the API server with list requests."
    Args = SurgeArgs
    target_kinds = ("Namespace",)
    # ITBench's expectation on a real cluster; the twin cannot show it (see the module's docstring).
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
                "data": {"requirements.txt": "kubernetes\n", "generate_load.py": SCRIPT}})),
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
    return {
        "metadata": {"name": NAME, "labels": LABELS},
        "spec": {
            "replicas": args.replicas,
            "selector": {"matchLabels": LABELS},
            "template": {"metadata": {"labels": LABELS}, "spec": {
                "serviceAccountName": NAME,
                "containers": [{
                    "name": "load-generator", "image": "python:3.12-slim",
                    "command": ["/bin/sh", "-c",
                                "pip install -r /opt/load/requirements.txt && python3 /opt/load/generate_load.py"],
                    "env": [{"name": "RPS", "value": str(args.loadGenerator.options.requestsPerSecond)},
                            {"name": "DURATION", "value": "3600"}],
                    "volumeMounts": [{"name": "load", "mountPath": "/opt/load", "readOnly": True}],
                    "resources": {"requests": {"cpu": "50m", "memory": "64Mi"},
                                  "limits": {"cpu": "200m", "memory": "128Mi"}}}],
                "volumes": [{"name": "load", "configMap": {"name": f"{NAME}-script"}}]}}}}


FAULTS = (ApiServerRequestSurge(),)
