"""Namespace lifecycle: what a namespace gets when it appears and how it goes away.

* The service-account controller keeps a ``default`` ServiceAccount in every
  active namespace, and the root-CA publisher a ``kube-root-ca.crt``
  ConfigMap (both are re-created if deleted).
* Deleting a namespace marks it ``Terminating``; the namespace controller
  deletes everything in it, reports what remains in the namespace's
  conditions, and once nothing is left removes the ``kubernetes`` finalizer,
  which lets the namespace go.
"""

from __future__ import annotations

import base64
import logging

from ..apiserver.registry import Ctx, DeleteOptions, ResourceAPI
from ..apiserver.resources import Resource
from ..errors import AlreadyExists, Forbidden, NotFound, StatusError
from ..store import clone
from .reactor import Reactor

log = logging.getLogger(__name__)

PROTECTED = ("default", "kube-system", "kube-public")
ROOT_CA = "kube-root-ca.crt"


class NamespaceLifecycle:
    def __init__(self, api: ResourceAPI, reactor: Reactor, ctx: Ctx, ca_pem: str):
        self.api = api
        self.ctx = ctx
        self.ca_pem = ca_pem
        self.namespaces = api.catalog.lookup("", "v1", "namespaces")
        api.deleters[self.namespaces.bucket] = self.delete_namespace
        reactor.register("namespace-lifecycle", self.react)

    # ---- deletion request ---------------------------------------------------------------------
    def delete_namespace(self, res: Resource, ns: dict, opts: DeleteOptions, ctx: Ctx) -> dict | None:
        name = ns["metadata"]["name"]
        if name in PROTECTED:
            raise Forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                            resource="namespaces", name=name)
        if ns["metadata"].get("deletionTimestamp"):
            return ns
        if opts.dry_run or ctx.dry_run:
            return ns
        marked = clone(ns)
        marked["metadata"]["deletionTimestamp"] = self.api.clock.timestamp()
        marked["metadata"]["deletionGracePeriodSeconds"] = 0
        marked.setdefault("status", {})["phase"] = "Terminating"
        stored = self.api.store.update(res.bucket, marked, check_rv=False)
        self.api._after_write("update", res, stored, ns)
        return self.api.store.get(res.bucket, "", name) or stored

    # ---- reactions ----------------------------------------------------------------------------------
    def react(self, op: str, res: Resource, obj: dict, old: dict | None) -> None:
        if res.bucket == self.namespaces.bucket:
            if op == "delete":
                return
            if obj["metadata"].get("deletionTimestamp"):
                self._terminate(obj)
            elif op == "create":
                self._populate(obj["metadata"]["name"])
            return
        namespace = obj["metadata"].get("namespace")
        if not namespace:
            return
        ns = self.api.store.get(self.namespaces.bucket, "", namespace)
        if ns is None:
            return
        if ns["metadata"].get("deletionTimestamp"):
            if op == "delete" or obj["metadata"].get("deletionTimestamp"):
                self._terminate(ns)
            return
        if op == "delete":
            name = obj["metadata"]["name"]
            if (res.kind, name) in (("ServiceAccount", "default"), ("ConfigMap", ROOT_CA)):
                self._populate(namespace)

    def _populate(self, namespace: str) -> None:
        sa = self.api.catalog.lookup("", "v1", "serviceaccounts")
        cm = self.api.catalog.lookup("", "v1", "configmaps")
        self._ensure(sa, {"apiVersion": "v1", "kind": "ServiceAccount",
                          "metadata": {"name": "default", "namespace": namespace}})
        self._ensure(cm, {"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": ROOT_CA, "namespace": namespace,
                                       "annotations": {"kubernetes.io/description": (
                                           "Contains a CA bundle that can be used to verify the kube-apiserver "
                                           "when using internal endpoints such as the internal service IP or "
                                           "kubernetes.default.svc. No other usage is guaranteed across "
                                           "distributions of Kubernetes clusters.")}},
                          "data": {"ca.crt": self.ca_pem}})

    def _ensure(self, res: Resource, obj: dict) -> None:
        meta = obj["metadata"]
        if self.api.store.get(res.bucket, meta["namespace"], meta["name"]) is not None:
            return
        try:
            self.api.create(res, meta["namespace"], obj, self.ctx)
        except AlreadyExists:
            pass

    def _terminate(self, ns: dict) -> None:
        name = ns["metadata"]["name"]
        remaining: dict[str, int] = {}
        finalizers_left: dict[str, int] = {}
        for res in self._namespaced_storage():
            items, _ = self.api.store.list(res.bucket, name)
            for obj in items:
                meta = obj["metadata"]
                if not meta.get("deletionTimestamp"):
                    try:
                        self.api.delete(res, name, meta["name"], DeleteOptions(propagation="Background"),
                                        self.ctx)
                    except NotFound:
                        continue
                    except StatusError as exc:
                        log.warning("namespace %s: could not delete %s %s: %s", name, res.group_resource,
                                    meta["name"], exc.message)
            items, _ = self.api.store.list(res.bucket, name)
            if items:
                remaining[res.group_resource] = len(items)
                for obj in items:
                    for f in obj["metadata"].get("finalizers") or []:
                        finalizers_left[f] = finalizers_left.get(f, 0) + 1
        current = self.api.store.get(self.namespaces.bucket, "", name)
        if current is None:
            return
        updated = clone(current)
        updated.setdefault("status", {})["conditions"] = _conditions(remaining, finalizers_left,
                                                                     self.api.clock.timestamp(),
                                                                     (current.get("status") or {}).get("conditions"))
        if not remaining:
            updated.setdefault("spec", {})["finalizers"] = [f for f in (updated["spec"].get("finalizers") or [])
                                                            if f != "kubernetes"]
        stored = self.api.store.update(self.namespaces.bucket, updated, check_rv=False)
        spec_finalizers = (stored.get("spec") or {}).get("finalizers") or []
        if not spec_finalizers and not stored["metadata"].get("finalizers"):
            gone = self.api.store.delete(self.namespaces.bucket, "", name)
            self.api._after_write("delete", self.namespaces, gone, stored)

    def _namespaced_storage(self) -> list[Resource]:
        seen, out = set(), []
        for res in self.api.catalog.resources:
            if res.namespaced and not res.virtual and res.bucket not in seen:
                seen.add(res.bucket)
                out.append(self.api.storage_of(res))
        return out


def _conditions(remaining: dict[str, int], finalizers: dict[str, int], now: str, previous) -> list[dict]:
    """The conditions the namespace controller reports while it empties a namespace."""
    old = {c["type"]: c for c in previous or []}

    def cond(type_: str, status: str, reason: str, message: str) -> dict:
        prev = old.get(type_)
        since = prev["lastTransitionTime"] if prev and prev.get("status") == status else now
        return {"type": type_, "status": status, "lastTransitionTime": since, "reason": reason, "message": message}

    content = ", ".join(f"{k} has {v} resource instances" for k, v in sorted(remaining.items()))
    fins = ", ".join(f"{k} in {v} resource instances" for k, v in sorted(finalizers.items()))
    return [
        cond("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "All resources successfully discovered"),
        cond("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions",
             "All legacy kube types successfully parsed"),
        cond("NamespaceDeletionContentFailure", "False", "ContentDeleted",
             "All content successfully deleted, may be waiting on finalization"),
        cond("NamespaceContentRemaining", "True" if remaining else "False",
             "SomeResourcesRemain" if remaining else "ContentRemoved",
             f"Some resources are remaining: {content}" if remaining else "All content successfully removed"),
        cond("NamespaceFinalizersRemaining", "True" if finalizers else "False",
             "SomeFinalizersRemain" if finalizers else "ContentHasNoFinalizers",
             f"Some content in the namespace has finalizers remaining: {fins}" if finalizers
             else "All content-preserving finalizers finished"),
    ]


def fake_ca_pem(rng) -> str:
    """A PEM block of the right shape for the cluster CA bundle, drawn from the twin's generator."""
    body = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(760))).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----\n"
