"""The CISO steps of a trial: build the scenario's cluster, widen the agent's grant, swap in the compliant variant.

Everything goes through the Kubernetes API (ARCHITECTURE.md, rule 1): the harness creates the scenario's
namespaces, existing policies and manifests with its admin client; the evaluator swaps the violating
resources for their compliant variant the same way, and applies the agent's policies with the agent's
client. Files are named relative to the scenario's directory (docs/ciso.md).
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from typing import Callable, Iterable

import yaml
from kubernetes import client as k8s, dynamic
from kubernetes.client import ApiClient
from kubernetes.dynamic.exceptions import ApiException, ResourceNotFoundError

from .scenario.schema import HOSTS_CATEGORY, CisoGroundTruth, PolicyRef, ResourceRef, Scenario

SETTLE = 30.0  # cluster seconds after setup: pods scheduled, Kyverno's background scan has seen the resources
POLL = 5.0  # cluster seconds between looks while deleted objects go away
GONE_TIMEOUT = 300.0
KYVERNO = "kyverno.io/v1"

# Cluster-wide rights every CISO agent gets beside its namespaces: what a compliance engineer reads.
CLUSTER_READS = [
    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles", "clusterrolebindings"],
     "verbs": ["get", "list", "watch"]},
]
KYVERNO_RIGHTS = [
    {"apiGroups": ["kyverno.io"], "resources": ["clusterpolicies"], "verbs": ["*"]},
    {"apiGroups": ["wgpolicyk8s.io"], "resources": ["clusterpolicyreports"], "verbs": ["get", "list", "watch"]},
]


class SetupError(RuntimeError):
    """The scenario's cluster could not be built: an environment error."""


@dataclass
class CisoState:
    """What setup recorded for the evaluator."""

    namespaces: tuple[str, ...]
    policy_specs: dict[str, dict] = field(default_factory=dict)  # keep_unchanged policy -> its spec after setup
    hosts: object | None = None  # rhel9-ansible-opa: the violating hosts built for the agent (SimulatedHosts)


def documents(scenario_dir: str, files: Iterable[str]) -> list[dict]:
    """The YAML documents of ``files`` (relative to ``scenario_dir``), in order; lists (kind: List) flattened."""
    out = []
    for relative in files:
        with open(os.path.join(scenario_dir, relative), encoding="utf-8") as fh:
            out += flatten(yaml.safe_load_all(fh))
    return out


def flatten(docs: Iterable) -> list[dict]:
    out = []
    for doc in docs:
        if doc is None:
            continue
        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            out += [d for d in doc["items"] if d is not None]
        else:
            out.append(doc)
    return out


def namespaces_of(scenario: Scenario, scenario_dir: str) -> tuple[str, ...]:
    """The scenario's namespaces: as listed, else those its manifests create or use (in order); none for hosts."""
    if scenario.category == HOSTS_CATEGORY:
        return ()
    if scenario.ciso.namespaces:
        return tuple(scenario.ciso.namespaces)
    found: list[str] = []
    for doc in documents(scenario_dir, scenario.ciso.manifests):
        meta = doc.get("metadata") or {}
        name = meta.get("name") if doc.get("kind") == "Namespace" else meta.get("namespace")
        if name and name not in found:
            found.append(name)
    return tuple(found) or ("default",)


def describe(doc: dict) -> str:
    meta = doc.get("metadata") or {}
    where = f"{meta.get('namespace')}/" if meta.get("namespace") else ""
    return f"{doc.get('kind')} {where}{meta.get('name')}"


def apply_objects(api: ApiClient, docs: Iterable[dict], default_namespace: str | None = None) -> list[str]:
    """Create each object, or replace it when it exists; return one problem per object that failed."""
    client = dynamic.DynamicClient(api)
    problems = []
    for doc in docs:
        if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
            problems.append(f"not a Kubernetes object (apiVersion and kind): {json.dumps(doc)[:120]}")
            continue
        try:
            resource = client.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
        except ResourceNotFoundError:
            problems.append(f"{describe(doc)}: the cluster does not serve {doc['apiVersion']} {doc['kind']}")
            continue
        body = copy.deepcopy(doc)
        meta = body.setdefault("metadata", {})
        namespace = (meta.get("namespace") or default_namespace) if resource.namespaced else None
        if namespace:
            meta["namespace"] = namespace
        try:
            resource.create(body=body, namespace=namespace)
        except ApiException as exc:
            if exc.status != 409:
                problems.append(f"{describe(body)}: {exc.status} {exc.reason}: {message_of(exc)}")
                continue
            try:
                live = resource.get(name=meta.get("name"), namespace=namespace)
                meta["resourceVersion"] = live.metadata.resourceVersion
                resource.replace(body=body, namespace=namespace)
            except ApiException as again:
                problems.append(f"{describe(body)}: {again.status} {again.reason}: {message_of(again)}")
    return problems


def message_of(exc: ApiException) -> str:
    try:
        return json.loads(exc.body).get("message", exc.body)
    except (TypeError, ValueError, AttributeError):
        return str(exc.body)


def prepare(api: ApiClient, scenario: Scenario, scenario_dir: str, advance: Callable[[float], None]) -> CisoState:
    """Namespaces, existing policies, manifests (as admin); then a few warped seconds; record the specs of the
    policies the agent must leave alone."""
    spec = scenario.ciso
    if scenario.category == HOSTS_CATEGORY:
        return CisoState(namespaces=())  # no cluster objects: the hosts are built with the agent's workdir
    namespaces = namespaces_of(scenario, scenario_dir)
    core = k8s.CoreV1Api(api)
    for name in namespaces:
        try:
            core.create_namespace({"metadata": {"name": name}})
        except k8s.ApiException as exc:
            if exc.status != 409:
                raise SetupError(f"creating namespace {name}: {exc.status} {exc.reason}") from None
    for files, what in ((spec.existing_policies, "existing policy"), (spec.manifests, "manifest")):
        problems = apply_objects(api, documents(scenario_dir, files), namespaces[0])
        if problems:
            raise SetupError(f"the scenario's {what}s could not be created: " + "; ".join(problems))
    advance(SETTLE)
    state = CisoState(namespaces=namespaces)
    for ref in spec.keep_unchanged:
        obj = read_policy(api, ref)
        if obj is None:
            raise SetupError(f"keep_unchanged names {policy_label(ref)}, which setup did not create")
        state.policy_specs[policy_label(ref)] = obj.get("spec") or {}
    return state


# ---- rhel9-ansible-opa: simulated hosts ------------------------------------------------------------------------
AGENT_HOST_FILES = ("inventory.ini", "ansible.cfg")  # what the agent's workdir gets of a hosts build


def build_hosts(scenario: Scenario, scenario_dir: str, variant: str, where: str):
    """Build the scenario's violating or compliant hosts (SimulatedHosts) under ``where``."""
    from .hosts import HostsUnavailable, HostStateError, SimulatedHosts, load_hosts, preflight
    relative = scenario.ciso.hosts if variant == "violating" else scenario.ciso.compliant_hosts
    try:
        preflight()
    except HostsUnavailable as exc:
        raise SetupError(f"simulated hosts unavailable: {exc}") from None
    try:
        states = load_hosts(os.path.join(scenario_dir, relative))
    except HostStateError as exc:
        raise SetupError(f"{relative}: {exc}") from None
    return SimulatedHosts(where, states).build()


def hand_hosts(hosts, directory: str) -> None:
    """Put the build's inventory.ini and ansible.cfg into ``directory`` (``ansible-playbook -i inventory.ini``
    then works there; both name the build's absolute paths)."""
    os.makedirs(directory, exist_ok=True)
    for name, source in zip(AGENT_HOST_FILES, (hosts.inventory, hosts.ansible_cfg)):
        with open(source, encoding="utf-8") as src, open(os.path.join(directory, name), "w", encoding="utf-8") as dst:
            dst.write(src.read())


def policy_label(ref: PolicyRef) -> str:
    return f"{ref.kind} {ref.namespace}/{ref.name}" if ref.namespace else f"{ref.kind} {ref.name}"


def read_policy(api: ApiClient, ref: PolicyRef) -> dict | None:
    resource = dynamic.DynamicClient(api).resources.get(api_version=KYVERNO, kind=ref.kind)
    try:
        return resource.get(name=ref.name, namespace=ref.namespace).to_dict()
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def grant_extra(api: ApiClient, scenario: Scenario, account: str, home: str, suffix: str) -> None:
    """The CISO agent's cluster-wide rights beyond the general grant (docs/ciso.md, "The trial")."""
    rules = list(CLUSTER_READS)
    if scenario.category in ("kyverno", "kyverno-update"):
        rules += KYVERNO_RIGHTS
    rules += [dict(r) for r in scenario.ciso.agent_rules]
    rbac = k8s.RbacAuthorizationV1Api(api)
    name = f"{account}-ciso-{suffix}"
    rbac.create_cluster_role({"metadata": {"name": name}, "rules": rules})
    rbac.create_cluster_role_binding({
        "metadata": {"name": name},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": home}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}})


# Kinds whose objects are deleted and re-created to change them (pods go with their workloads); any other
# violating object the compliant manifests declare again is replaced in place, and one they do not is deleted.
RECREATED = ("Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "RoleBinding",
             "ClusterRoleBinding")  # a binding's roleRef cannot change


def to_compliant(api: ApiClient, scenario: Scenario, scenario_dir: str, advance: Callable[[float], None]) -> None:
    """Replace the violating resources with the compliant variant, as admin (docs/ciso.md, "Grading")."""
    truth: CisoGroundTruth = scenario.truth
    docs = documents(scenario_dir, scenario.ciso.compliant_manifests)
    namespaces = namespaces_of(scenario, scenario_dir)
    declared = {(d["kind"], (d.get("metadata") or {}).get("namespace") or "", d["metadata"]["name"]) for d in docs}
    client = dynamic.DynamicClient(api)
    pending = []
    for ref in truth.violating:
        if ref.kind not in RECREATED and (ref.kind, ref.namespace or "", ref.name) in declared:
            continue
        resource = _resource(client, ref, docs)
        if resource is None:
            continue
        namespace = (ref.namespace or namespaces[0]) if resource.namespaced else None
        try:
            resource.delete(name=ref.name, namespace=namespace,
                            body={"propagationPolicy": "Foreground", "gracePeriodSeconds": 0})
            pending.append((resource, ref.name, namespace))
        except ApiException as exc:
            if exc.status != 404:
                raise SetupError(f"deleting {ref.label()}: {exc.status} {exc.reason}: {message_of(exc)}") from None
    _wait(lambda: [f"{r.kind} {n}" for r, n, ns in pending if _exists(r, n, ns)], advance,
          "the violating resources did not go away")
    problems = apply_objects(api, docs, namespaces[0])
    if problems:
        raise SetupError("the compliant variant could not be created: " + "; ".join(problems))
    advance(SETTLE)
    core = k8s.CoreV1Api(api)
    _wait(lambda: [f"Pod {p.metadata.namespace}/{p.metadata.name}" for ns in namespaces
                   for p in core.list_namespaced_pod(ns).items if p.metadata.deletion_timestamp],
          advance, "pods of the violating variant are still terminating")


def _wait(left: Callable[[], list[str]], advance: Callable[[float], None], what: str) -> None:
    waited = 0.0
    while True:
        remaining = left()
        if not remaining:
            return
        if waited >= GONE_TIMEOUT:
            raise SetupError(f"{what} within {GONE_TIMEOUT:.0f} s: {', '.join(remaining)}")
        advance(POLL)
        waited += POLL


def _resource(client, ref: ResourceRef, docs: list[dict]):
    version = ref.apiVersion or next((d["apiVersion"] for d in docs if d.get("kind") == ref.kind), None)
    try:
        if version:
            return client.resources.get(api_version=version, kind=ref.kind)
        return client.resources.get(kind=ref.kind)
    except ResourceNotFoundError:
        return None
    except Exception:  # several groups serve the kind: the common one
        return client.resources.get(api_version=_VERSIONS.get(ref.kind, "v1"), kind=ref.kind)


def _exists(resource, name: str, namespace: str | None) -> bool:
    try:
        resource.get(name=name, namespace=namespace)
        return True
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise


_VERSIONS = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "ReplicaSet": "apps/v1",
             "Job": "batch/v1", "CronJob": "batch/v1", "NetworkPolicy": "networking.k8s.io/v1",
             "Role": "rbac.authorization.k8s.io/v1", "RoleBinding": "rbac.authorization.k8s.io/v1",
             "ClusterRole": "rbac.authorization.k8s.io/v1", "ClusterRoleBinding": "rbac.authorization.k8s.io/v1"}
