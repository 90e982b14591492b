"""Graceful pod deletion, as kube-apiserver's pod strategy and ``BeforeDelete`` do it.

Deleting a pod that is bound to a node and has not finished does not remove
it: the API server sets ``deletionTimestamp`` to now plus the grace period
(the request's ``gracePeriodSeconds``, else the pod's
``terminationGracePeriodSeconds``) and ``deletionGracePeriodSeconds``, and
the pod shows ``Terminating`` until the node's kubelet has stopped its
containers and deletes it with a grace period of 0. A pod that is not bound,
or has Succeeded or Failed, goes at once, as does any delete with
``gracePeriodSeconds=0`` (``kubectl delete --grace-period=0 --force``). A
second delete may only shorten a pending grace period; a negative one counts
as one second. A pod with finalizers, once its kubelet is done, stays marked
with a grace period of 0 until they are removed.
"""

from __future__ import annotations

from ..clock import format_time, parse_time
from ..store import clone
from .registry import Ctx, DeleteOptions, ResourceAPI
from .resources import Resource


def register(api: ResourceAPI) -> None:
    pods = api.catalog.lookup("", "v1", "pods")
    assert pods is not None

    def delete_pod(res: Resource, pod: dict, opts: DeleteOptions, ctx: Ctx) -> dict | None:
        return _delete(api, res, pod, opts, ctx)

    api.deleters[pods.bucket] = delete_pod


def _delete(api: ResourceAPI, res: Resource, pod: dict, opts: DeleteOptions, ctx: Ctx) -> dict | None:
    """The marked pod when the deletion is graceful; None to let the generic deletion remove it now."""
    meta = pod["metadata"]
    requested = opts.grace_period
    if requested is not None and requested < 0:
        requested = 1
    pending = meta.get("deletionGracePeriodSeconds")
    if meta.get("deletionTimestamp"):
        if not pending:
            return None  # marked with no grace left (finalizers, or an interrupted delete): delete now
        if requested is None or requested >= pending:
            return pod  # graceful deletion already under way: nothing changes
        if requested == 0 and not meta.get("finalizers"):
            return None
        started = parse_time(meta["deletionTimestamp"]) - pending  # a shorter period counts from the same start
        return _mark(api, res, pod, requested, started + requested, opts, ctx)
    grace = requested if requested is not None else (pod.get("spec") or {}).get("terminationGracePeriodSeconds") or 0
    if not (pod.get("spec") or {}).get("nodeName"):
        grace = 0
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        grace = 0
    if grace == 0:
        return None
    return _mark(api, res, pod, grace, api.clock.now() + grace, opts, ctx)


def _mark(api: ResourceAPI, res: Resource, pod: dict, grace: int, deadline: float, opts: DeleteOptions,
          ctx: Ctx) -> dict:
    marked = clone(pod)
    meta = marked["metadata"]
    meta["deletionTimestamp"] = format_time(deadline)
    meta["deletionGracePeriodSeconds"] = grace
    finalizers = list(meta.get("finalizers") or [])
    if opts.propagation == "Foreground" and "foregroundDeletion" not in finalizers:
        finalizers.append("foregroundDeletion")
    elif opts.propagation == "Orphan" and "orphan" not in finalizers:
        finalizers.append("orphan")
    if finalizers:
        meta["finalizers"] = finalizers
    if opts.dry_run or ctx.dry_run:
        return marked
    stored = api.store.update(res.bucket, marked, check_rv=False)
    api._after_write("update", res, stored, pod)
    return stored
