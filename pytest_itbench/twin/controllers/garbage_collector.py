"""The garbage collector: ownerReferences, cascading deletion and the orphan/foreground finalizers.

As kube-controller-manager's garbagecollector does:

* when an owner is gone, each dependent that has no other live owner is
  deleted (background cascade); one that still has a live owner only loses
  the dangling reference;
* an owner marked with the ``foregroundDeletion`` finalizer stays until every
  dependent with ``blockOwnerDeletion: true`` is gone; its dependents are
  deleted first;
* an owner marked with the ``orphan`` finalizer has its references removed
  from its dependents, then the finalizer is dropped;
* an object whose owners never existed is deleted.
"""

from __future__ import annotations

import logging

from ..apiserver.registry import Ctx, DeleteOptions, ResourceAPI
from ..apiserver.resources import Resource
from ..errors import NotFound, StatusError
from ..store import Change, clone
from .reactor import Reactor

log = logging.getLogger(__name__)

Ref = tuple[str, str, str]  # bucket, namespace, name


class GarbageCollector:
    def __init__(self, api: ResourceAPI, reactor: Reactor, ctx: Ctx):
        self.api = api
        self.ctx = ctx
        self._dependents: dict[str, set[Ref]] = {}  # owner uid -> dependents
        api.store.on_write(self._index)
        reactor.register("garbage-collector", self.react)

    # ---- the owner index --------------------------------------------------------------------
    def _index(self, change: Change) -> None:
        ref = _ref(change.bucket, change.obj)
        before = _owner_uids(change.old) if change.old is not None else set()
        after = set() if change.type == "DELETED" else _owner_uids(change.obj)
        for uid in before - after:
            deps = self._dependents.get(uid)
            if deps is not None:
                deps.discard(ref)
                if not deps:
                    del self._dependents[uid]
        for uid in after:
            self._dependents.setdefault(uid, set()).add(ref)

    def dependents_of(self, uid: str) -> list[dict]:
        out = []
        for bucket, ns, name in sorted(self._dependents.get(uid, ())):
            obj = self.api.store.get(bucket, ns, name)
            if obj is not None:
                out.append(obj)
        return out

    # ---- reactions -----------------------------------------------------------------------------
    def react(self, op: str, res: Resource, obj: dict, old: dict | None) -> None:
        meta = obj["metadata"]
        if op == "delete":
            self._owner_gone(meta["uid"])
            self._maybe_unblock_owners(obj)
            return
        if meta.get("deletionTimestamp"):
            finalizers = meta.get("finalizers") or []
            if "orphan" in finalizers:
                self._orphan(res, obj)
            elif "foregroundDeletion" in finalizers:
                self._foreground(res, obj)
        if op == "create" and meta.get("ownerReferences"):
            self._delete_if_all_owners_absent(res, obj)
        if op == "update" and meta.get("deletionTimestamp"):
            self._maybe_unblock_owners(obj)

    def _owner_gone(self, uid: str) -> None:
        for dep in self.dependents_of(uid):
            if dep["metadata"].get("deletionTimestamp"):
                continue
            live_owners = [r for r in dep["metadata"].get("ownerReferences") or []
                           if r.get("uid") != uid and self._owner_exists(dep, r)]
            dep_res = self._resource_of(dep)
            if dep_res is None:
                continue
            if live_owners:
                self._set_owner_refs(dep_res, dep, [r for r in dep["metadata"]["ownerReferences"]
                                                    if r.get("uid") != uid])
            else:
                self._delete(dep_res, dep, "Background")

    def _orphan(self, res: Resource, owner: dict) -> None:
        uid = owner["metadata"]["uid"]
        for dep in self.dependents_of(uid):
            dep_res = self._resource_of(dep)
            if dep_res is not None:
                self._set_owner_refs(dep_res, dep, [r for r in dep["metadata"].get("ownerReferences") or []
                                                    if r.get("uid") != uid])
        self._remove_finalizer(res, owner, "orphan")

    def _foreground(self, res: Resource, owner: dict) -> None:
        uid = owner["metadata"]["uid"]
        for dep in self.dependents_of(uid):
            if dep["metadata"].get("deletionTimestamp"):
                continue
            dep_res = self._resource_of(dep)
            if dep_res is not None:
                has_own_dependents = bool(self._dependents.get(dep["metadata"]["uid"]))
                self._delete(dep_res, dep, "Foreground" if has_own_dependents else "Background")
        if any(_blocks(dep, uid) for dep in self.dependents_of(uid)):
            return
        current = self.api.store.get(res.bucket, owner["metadata"].get("namespace", ""), owner["metadata"]["name"])
        if current is not None and current["metadata"]["uid"] == uid:
            self._remove_finalizer(res, current, "foregroundDeletion")

    def _maybe_unblock_owners(self, obj: dict) -> None:
        """A dependent went away (or started going): an owner deleting in the foreground may now finish."""
        for ref in obj["metadata"].get("ownerReferences") or []:
            owner_res = self.api.catalog.for_api_version(ref.get("apiVersion", ""), ref.get("kind", ""))
            if owner_res is None:
                continue
            ns = obj["metadata"].get("namespace", "") if owner_res.namespaced else ""
            owner = self.api.store.get(owner_res.bucket, ns, ref.get("name", ""))
            if owner is None or owner["metadata"]["uid"] != ref.get("uid"):
                continue
            if owner["metadata"].get("deletionTimestamp") and \
                    "foregroundDeletion" in (owner["metadata"].get("finalizers") or []):
                self._foreground(self.api.storage_of(owner_res), owner)

    def _delete_if_all_owners_absent(self, res: Resource, obj: dict) -> None:
        refs = obj["metadata"].get("ownerReferences") or []
        if refs and not any(self._owner_exists(obj, r) for r in refs):
            self._delete(res, obj, "Background")

    # ---- helpers ------------------------------------------------------------------------------------
    def _resource_of(self, obj: dict) -> Resource | None:
        res = self.api.catalog.for_api_version(obj.get("apiVersion", ""), obj.get("kind", ""))
        return self.api.storage_of(res) if res is not None else None

    def _owner_exists(self, dependent: dict, ref: dict) -> bool:
        owner_res = self.api.catalog.for_api_version(ref.get("apiVersion", ""), ref.get("kind", ""))
        if owner_res is None:
            # An owner of a kind the server does not serve cannot be verified; keep the dependent.
            return True
        ns = dependent["metadata"].get("namespace", "") if owner_res.namespaced else ""
        owner = self.api.store.get(owner_res.bucket, ns, ref.get("name", ""))
        return owner is not None and owner["metadata"]["uid"] == ref.get("uid")

    def _set_owner_refs(self, res: Resource, obj: dict, refs: list[dict]) -> None:
        updated = clone(obj)
        if refs:
            updated["metadata"]["ownerReferences"] = refs
        else:
            updated["metadata"].pop("ownerReferences", None)
        self._write(res, obj, updated)

    def _remove_finalizer(self, res: Resource, obj: dict, finalizer: str) -> None:
        updated = clone(obj)
        updated["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
        if not updated["metadata"]["finalizers"]:
            del updated["metadata"]["finalizers"]
        self._write(res, obj, updated)

    def _write(self, res: Resource, old: dict, new: dict) -> None:
        try:
            self.api._write_update(res, res, old, new, self.ctx, "", check_rv=False)
        except NotFound:
            pass
        except StatusError as exc:
            log.warning("garbage collector could not update %s %s: %s", res.group_resource,
                        old["metadata"]["name"], exc.message)

    def _delete(self, res: Resource, obj: dict, propagation: str) -> None:
        meta = obj["metadata"]
        try:
            self.api.delete(res, meta.get("namespace"), meta["name"],
                            DeleteOptions(propagation=propagation, uid=meta["uid"]), self.ctx)
        except NotFound:
            pass
        except StatusError as exc:
            log.warning("garbage collector could not delete %s %s: %s", res.group_resource, meta["name"],
                        exc.message)


def _ref(bucket: str, obj: dict) -> Ref:
    meta = obj["metadata"]
    return bucket, meta.get("namespace", ""), meta["name"]


def _blocks(dependent: dict, owner_uid: str) -> bool:
    return any(r.get("uid") == owner_uid and r.get("blockOwnerDeletion")
               for r in dependent["metadata"].get("ownerReferences") or ())


def _owner_uids(obj: dict | None) -> set[str]:
    if not obj:
        return set()
    return {r["uid"] for r in obj["metadata"].get("ownerReferences") or () if r.get("uid")}
