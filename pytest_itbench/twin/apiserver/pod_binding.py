"""Binding a pod to a node, as the ``pods/binding`` subresource (and so kube-scheduler) does.

Like kube-apiserver's BindingREST, this writes the pod directly rather than
through an update: it sets ``spec.nodeName``, merges the binding's
annotations and marks the pod ``PodScheduled=True``, refusing a pod that is
already assigned or being deleted. The HTTP handler and the twin's scheduler
share it.
"""

from __future__ import annotations

from ..errors import Conflict, NotFound
from ..store import clone
from .registry import Ctx, ResourceAPI


def set_pod_condition(status: dict, condition: dict, now: str) -> bool:
    """podutil.UpdatePodCondition: add or replace a condition; True if anything changed.

    The transition time moves only when the condition's status does.
    """
    conditions = status.setdefault("conditions", [])
    condition = {"type": condition["type"], "status": condition["status"], "lastProbeTime": None,
                 "lastTransitionTime": now, **{k: v for k, v in condition.items() if k in ("reason", "message") and v}}
    for i, old in enumerate(conditions):
        if old.get("type") != condition["type"]:
            continue
        if old.get("status") == condition["status"]:
            condition["lastTransitionTime"] = old.get("lastTransitionTime")
        changed = any(old.get(k) != condition.get(k) for k in ("status", "reason", "message", "lastProbeTime",
                                                                 "lastTransitionTime"))
        conditions[i] = condition
        return changed
    conditions.append(condition)
    return True


def bind_pod(api: ResourceAPI, namespace: str, name: str, node: str, ctx: Ctx, *,
             annotations: dict | None = None, uid: str | None = None) -> dict:
    pods = api.catalog.lookup("", "v1", "pods")
    with api.store.lock:
        stored = api.store.get(pods.bucket, namespace, name)
        if stored is None:
            raise NotFound(pods.group_resource, name)
        if uid and uid != stored["metadata"]["uid"]:
            raise Conflict("pods/binding", name, f"Precondition failed: UID in precondition: {uid}, "
                                                 f"UID in object meta: {stored['metadata']['uid']}")
        assigned = stored["spec"].get("nodeName")
        if assigned:
            raise Conflict("pods/binding", name, f'pod {name} is already assigned to node "{assigned}"')
        if stored["metadata"].get("deletionTimestamp"):
            raise Conflict("pods/binding", name, f"pod {name} is being deleted, cannot be assigned to a host")
        updated = clone(stored)
        updated["spec"]["nodeName"] = node
        if annotations:
            updated["metadata"].setdefault("annotations", {}).update(annotations)
        set_pod_condition(updated.setdefault("status", {}), {"type": "PodScheduled", "status": "True"},
                          api.clock.timestamp())
        written = api.store.update(pods.bucket, updated, check_rv=False)
        api._after_write("update", pods, written, stored)
        return written
