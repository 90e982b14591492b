"""Admission plugins of kube-apiserver that the twin runs on every write.

Each plugin is ``plugin(operation, resource, object, old, ctx)`` and may
change the object (mutating) or raise a StatusError (validating), as
NamespaceLifecycle, ServiceAccount, Priority and the others do upstream.
"""

from __future__ import annotations

from ..errors import Forbidden, NotFound
from .registry import Ctx, ResourceAPI
from .resources import Resource

# Review objects and events may be created in a terminating namespace (upstream's exceptions).
_ALLOWED_WHILE_TERMINATING = {"events", "localsubjectaccessreviews.authorization.k8s.io"}


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
            err = Forbidden(f'{res.group_resource} "{obj["metadata"].get("name", "")}" is forbidden: unable to '
                            f"create new content in namespace {namespace} because it is being terminated",
                            resource=res.group_resource, name=obj["metadata"].get("name"))
            err.details = dict(err.details or {}, causes=[{
                "reason": "NamespaceTerminating", "message": f"namespace {namespace} is being terminated",
                "field": "metadata.namespace"}])
            raise err

    return plugin
