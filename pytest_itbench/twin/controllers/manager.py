"""The controller manager: controllers as reconcile loops driven by the twin's clock.

Each controller names the buckets it watches and maps every change in them
to keys (usually the object that must be reconciled: a Deployment for a
change to one of its ReplicaSets). Keys go into the controller's work queue,
due now or after a delay the controller asks for. On every tick of the
clock the manager hands each controller its due keys, in a fixed order, and
repeats until no work is left for that moment, so a cascade (Deployment ->
ReplicaSet -> Pod -> scheduled) settles within the tick it started in while
delays (an image pull, a back-off) stay on the clock.

Controllers write through the same ResourceAPI as any client, under their
own identity and field manager, so validation, admission, managedFields and
watches see their writes as they would a real controller's.
"""

from __future__ import annotations

import logging
from typing import Hashable, Iterable

from ..apiserver.access.authn import user_for
from ..apiserver.registry import Ctx, DeleteOptions, ResourceAPI
from ..apiserver.resources import Resource
from ..clock import SimClock
from ..errors import Conflict, NotFound, StatusError
from ..selectors import LabelSelector
from ..store import Change
from .events import EventRecorder
from .queue import WorkQueue

log = logging.getLogger(__name__)

MAX_ROUNDS = 50  # reconcile rounds per tick; a controller that keeps requeueing itself waits for the next tick
RETRY_AFTER_CONFLICT = 0.0  # next round
RETRY_AFTER_ERROR = 5.0


class Controller:
    """Base of every controller: a work queue, an identity, and helpers to read and write through the API."""

    name = ""
    identity = "system:kube-controller-manager"
    field_manager = "kube-controller-manager"
    watches: tuple[str, ...] = ()  # buckets whose changes reach keys_for()

    def __init__(self, manager: "ControllerManager"):
        self.manager = manager
        self.api: ResourceAPI = manager.api
        self.store = manager.api.store
        self.clock: SimClock = manager.clock
        self.rng = manager.rng
        self.events: EventRecorder = manager.events
        self.queue = WorkQueue()
        self.ctx = Ctx(user=user_for(self.identity), field_manager=self.field_manager, trusted=True)

    # ---- what to do ------------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[Hashable]:
        """Keys to reconcile after ``change`` (called under the store lock: read only, no API calls)."""
        return ()

    def reconcile(self, key: Hashable, now: float) -> float | None:
        """Bring the world one step towards the desired state; return seconds until the next look, if any."""
        raise NotImplementedError

    def enqueue(self, key: Hashable, after: float = 0.0) -> None:
        self.queue.add(key, self.clock.now() + after)

    # ---- reading ----------------------------------------------------------------------------------
    def resource(self, group: str, version: str, plural: str) -> Resource:
        res = self.api.catalog.lookup(group, version, plural)
        assert res is not None, (group, version, plural)
        return res

    def get(self, res: Resource, namespace: str | None, name: str) -> dict | None:
        """A copy of the object, or None."""
        try:
            return self.api.get(res, namespace or "", name)
        except NotFound:
            return None

    def list(self, res: Resource, namespace: str | None = None,
             selector: LabelSelector | None = None) -> list[dict]:
        """Stored objects (read only), optionally in one namespace and matching a selector."""
        items, _ = self.store.list(res.bucket, namespace if res.namespaced else None)
        if selector is None:
            return items
        return [o for o in items if selector.matches(o["metadata"].get("labels"))]

    # ---- writing ----------------------------------------------------------------------------------
    def create(self, res: Resource, obj: dict) -> dict:
        return self.api.create(res, obj["metadata"].get("namespace"), obj, self.ctx)

    def update(self, res: Resource, obj: dict) -> dict:
        meta = obj["metadata"]
        return self.api.update(res, meta.get("namespace"), meta["name"], obj, self.ctx)

    def update_status(self, res: Resource, obj: dict) -> dict:
        meta = obj["metadata"]
        return self.api.update(res, meta.get("namespace"), meta["name"], obj, self.ctx, subresource="status")

    def delete(self, res: Resource, namespace: str | None, name: str, *, propagation: str | None = None,
               uid: str | None = None, grace_period: int | None = None) -> dict | None:
        try:
            return self.api.delete(res, namespace, name,
                                   DeleteOptions(propagation=propagation, uid=uid, grace_period=grace_period),
                                   self.ctx)
        except NotFound:
            return None


class ControllerManager:
    def __init__(self, api: ResourceAPI, clock: SimClock, rng, events: EventRecorder, logs=None, metrics=None):
        self.api = api
        self.clock = clock
        self.rng = rng
        self.events = events
        self.logs = logs  # LogStore: what containers write (the kubelet appends)
        self.metrics = metrics  # Metrics: usage metrics-server reports (the kubelet sets)
        self.controllers: list[Controller] = []
        self._by_bucket: dict[str, list[Controller]] = {}
        api.store.on_write(self._on_write)
        clock.on_tick(self.tick, name="controller-manager")

    def add(self, controller: Controller) -> Controller:
        self.controllers.append(controller)
        for bucket in controller.watches:
            self._by_bucket.setdefault(bucket, []).append(controller)
        # Objects that exist before the controller starts are its initial work, as an informer's first list.
        for bucket in controller.watches:
            for obj in self.api.store.list(bucket)[0]:
                for key in controller.keys_for(_existing(bucket, obj)):
                    controller.queue.add(key, self.clock.now())
        return controller

    def _on_write(self, change: Change) -> None:
        controllers = self._by_bucket.get(change.bucket)
        if not controllers:
            return
        now = self.clock.now()
        for controller in controllers:
            for key in controller.keys_for(change):
                controller.queue.add(key, now)

    def tick(self, now: float) -> None:
        for _ in range(MAX_ROUNDS):
            worked = False
            for controller in self.controllers:
                for key in controller.queue.pop_due(now):
                    worked = True
                    self._reconcile(controller, key, now)
            if not worked:
                return
        log.warning("controllers still had work after %d rounds at t=%s", MAX_ROUNDS, now)

    def _reconcile(self, controller: Controller, key: Hashable, now: float) -> None:
        try:
            after = controller.reconcile(key, now)
        except Conflict:
            after = RETRY_AFTER_CONFLICT  # someone wrote first: look again with fresh state
        except StatusError as exc:
            log.warning("%s: %s: %s", controller.name, key, exc.message)
            after = RETRY_AFTER_ERROR
        except Exception:  # one broken reconcile must not stop the cluster
            log.exception("%s failed to reconcile %s", controller.name, key)
            after = RETRY_AFTER_ERROR
        if after is not None:
            # "Now" means the next round of this tick; a positive delay lands on the clock.
            controller.queue.add(key, now + max(after, 0.0))


def _existing(bucket: str, obj: dict) -> Change:
    return Change(0, bucket, "ADDED", obj, None)


def owner_of(obj: dict, kind: str) -> dict | None:
    """The controller ownerReference of ``obj`` if it is of ``kind``."""
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") == kind:
            return ref
    return None


def object_key(obj: dict) -> tuple[str, str]:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


__all__ = ["Controller", "ControllerManager", "owner_of", "object_key"]
