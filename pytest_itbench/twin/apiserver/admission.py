"""Admission plugins of kube-apiserver that the twin runs on every write.

Each plugin is ``plugin(operation, resource, object, old, ctx)`` and may
change the object (mutating) or raise a StatusError (validating), as
NamespaceLifecycle, ServiceAccount, Priority, DefaultTolerationSeconds and
DefaultStorageClass do upstream (plugin/pkg/admission/...). They run after
defaulting and before validation, in the order the twin registers them,
which follows the API server's default plugin order.
"""

from __future__ import annotations

from ..errors import Forbidden, NotFound
from .registry import Ctx, ResourceAPI
from .resources import Resource

# Review objects and events may be created in a terminating namespace (upstream's exceptions).
_ALLOWED_WHILE_TERMINATING = {"events", "localsubjectaccessreviews.authorization.k8s.io"}
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_VOLUME_PREFIX = "kube-api-access-"
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's utilrand alphabet
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300


def admission_name(meta: dict) -> str:
    """The name admission errors show: before a generated name exists upstream, that is the generateName."""
    name, prefix = meta.get("name") or "", (meta.get("generateName") or "")[:58]
    if prefix and name.startswith(prefix) and len(name) == len(prefix) + 5:
        return meta["generateName"]
    return name


def _forbidden(res: Resource, obj: dict, reason: str) -> Forbidden:
    name = admission_name(obj["metadata"])
    return Forbidden(f'{res.group_resource} "{name}" is forbidden: {reason}', resource=res.group_resource, name=name)


def _is_pod(res: Resource) -> bool:
    return res.kind == "Pod" and not res.group


# ---- NamespaceLifecycle -------------------------------------------------------------------------------

def namespace_lifecycle(api: ResourceAPI):
    namespaces = api.catalog.lookup("", "v1", "namespaces")

    def plugin(op: str, res: Resource, obj: dict, old: dict | None, ctx: Ctx) -> None:
        if op != "create" or not res.namespaced:
            return
        namespace = obj["metadata"].get("namespace")
        if not namespace:
            return
        ns = api.store.get(namespaces.bucket, "", namespace)
        if ns is None:
            raise NotFound("namespaces", namespace)
        if ns["metadata"].get("deletionTimestamp") and res.bucket not in _ALLOWED_WHILE_TERMINATING:
            err = _forbidden(res, obj, f"unable to create new content in namespace {namespace} because it is being "
                                       f"terminated")
            err.details = dict(err.details or {}, causes=[{
                "reason": "NamespaceTerminating", "message": f"namespace {namespace} is being terminated",
                "field": "metadata.namespace"}])
            raise err

    return plugin


# ---- ServiceAccount -------------------------------------------------------------------------------------

def service_account(api: ResourceAPI):
    """Give every new pod a service account (``default`` unless named) that must exist, and mount its token."""
    accounts = api.catalog.lookup("", "v1", "serviceaccounts")

    def plugin(op: str, res: Resource, pod: dict, old: dict | None, ctx: Ctx) -> None:
        if op != "create" or not _is_pod(res):
            return
        meta = pod["metadata"]
        if MIRROR_POD_ANNOTATION in (meta.get("annotations") or {}):
            return
        spec = pod.setdefault("spec", {})
        name = spec.get("serviceAccountName") or "default"
        spec["serviceAccountName"] = spec["serviceAccount"] = name
        namespace = meta.get("namespace", "")
        account = api.store.get(accounts.bucket, namespace, name)
        if account is None:
            raise _forbidden(res, pod, f'error looking up service account {namespace}/{name}: serviceaccount '
                                       f'"{name}" not found')
        automount = spec.get("automountServiceAccountToken")
        if automount is None:
            automount = account.get("automountServiceAccountToken", True)
        if automount is not False:
            _mount_token(spec, api.store.rng)
        if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [dict(ref) for ref in account["imagePullSecrets"]]

    return plugin


def _mount_token(spec: dict, rng) -> None:
    """The projected token volume, mounted read-only at the well-known path in every container without one."""
    volumes = spec.get("volumes") or []
    volume_name = next((v.get("name") for v in volumes if (v.get("name") or "").startswith(TOKEN_VOLUME_PREFIX)),
                       None)
    has_volume = volume_name is not None
    if volume_name is None:
        volume_name = TOKEN_VOLUME_PREFIX + "".join(rng.choice(_NAME_CHARS) for _ in range(5))
    mount = {"name": volume_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}
    needed = False
    for key in ("initContainers", "containers"):
        if not spec.get(key):
            continue
        containers = []
        for container in spec[key]:
            mounts = container.get("volumeMounts") or []
            if not any(m.get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                # A new dict: the caller's container may be shared with other objects it creates.
                container = dict(container, volumeMounts=mounts + [dict(mount)])
                needed = True
            containers.append(container)
        spec[key] = containers
    if needed and not has_volume:
        spec["volumes"] = volumes + [token_volume(volume_name)]


def token_volume(name: str) -> dict:
    return {"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                      "fieldPath": "metadata.namespace"}}]}},
    ]}}


# ---- Priority -----------------------------------------------------------------------------------------------

def priority(api: ResourceAPI):
    """Pods get the priority of their PriorityClass (or of the global default); one default class at most."""
    classes = api.catalog.lookup("scheduling.k8s.io", "v1", "priorityclasses")

    def default_class() -> dict | None:
        items, _ = api.store.list(classes.bucket)
        defaults = [c for c in items if c.get("globalDefault")]
        return min(defaults, key=lambda c: c.get("value", 0)) if defaults else None

    def plugin(op: str, res: Resource, obj: dict, old: dict | None, ctx: Ctx) -> None:
        if _is_pod(res) and op == "create":
            _admit_pod(res, obj)
        elif res.kind == "PriorityClass" and op in ("create", "update") and obj.get("globalDefault"):
            current = default_class()
            if current is not None and (op == "create" or current["metadata"]["name"] != obj["metadata"]["name"]):
                raise _forbidden(res, obj, f"PriorityClass {current['metadata']['name']} is already marked as "
                                           f"default. Only one default can exist")

    def _admit_pod(res: Resource, pod: dict) -> None:
        spec = pod.setdefault("spec", {})
        name = spec.get("priorityClassName") or ""
        if name:
            found = api.store.get(classes.bucket, "", name)
            if found is None:
                raise _forbidden(res, pod, f"no PriorityClass with name {name} was found")
        else:
            found = default_class()
            if found is not None:
                spec["priorityClassName"] = found["metadata"]["name"]
        value = found.get("value", 0) if found else 0
        policy = (found or {}).get("preemptionPolicy") or "PreemptLowerPriority"
        if spec.get("priority") is not None and spec["priority"] != value:
            raise _forbidden(res, pod, f"the integer value of priority ({spec['priority']}) must not be provided in "
                                       f"pod spec; priority admission controller computed {value} from the given "
                                       f"PriorityClass name")
        spec["priority"] = value
        if spec.get("preemptionPolicy") is not None and spec["preemptionPolicy"] != policy:
            raise _forbidden(res, pod, f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must not "
                                       f"be provided in pod spec; priority admission controller computed {policy} "
                                       f"from the given PriorityClass name")
        spec["preemptionPolicy"] = policy

    return plugin


# ---- DefaultTolerationSeconds --------------------------------------------------------------------------------

def default_toleration_seconds():
    """New pods tolerate a not-ready or unreachable node for five minutes before eviction."""

    def plugin(op: str, res: Resource, pod: dict, old: dict | None, ctx: Ctx) -> None:
        if op != "create" or not _is_pod(res):
            return
        spec = pod.setdefault("spec", {})
        tolerations = list(spec.get("tolerations") or [])
        added = [{"key": taint, "operator": "Exists", "effect": "NoExecute",
                  "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}
                 for taint in (NOT_READY_TAINT, UNREACHABLE_TAINT) if not _tolerates(tolerations, taint)]
        if added:
            spec["tolerations"] = tolerations + added

    return plugin


def _tolerates(tolerations: list[dict], taint: str) -> bool:
    return any((t.get("key") or "") in ("", taint) and (t.get("effect") or "") in ("", "NoExecute")
               for t in tolerations)


# ---- DefaultStorageClass --------------------------------------------------------------------------------------

def default_storage_class(api: ResourceAPI):
    """A new claim that names no storage class gets the cluster's default class."""
    classes = api.catalog.lookup("storage.k8s.io", "v1", "storageclasses")

    def plugin(op: str, res: Resource, claim: dict, old: dict | None, ctx: Ctx) -> None:
        if op != "create" or res.kind != "PersistentVolumeClaim" or res.group:
            return
        spec = claim.setdefault("spec", {})
        if spec.get("storageClassName") is not None:
            return
        items, _ = api.store.list(classes.bucket)
        defaults = [c for c in items if any((c["metadata"].get("annotations") or {}).get(key) == "true"
                                            for key in DEFAULT_CLASS_ANNOTATIONS)]
        if defaults:
            # With several defaults the newest wins, the first by name among equals (as since v1.28).
            by_name = sorted(defaults, key=lambda c: c["metadata"]["name"])
            newest = max(by_name, key=lambda c: c["metadata"].get("creationTimestamp") or "")
            spec["storageClassName"] = newest["metadata"]["name"]

    return plugin
