"""What the StatefulSet, DaemonSet and Job controllers share about the pods they run.

* pods made from a template (controller.GetPodFromTemplate);
* claiming the pods an owner controls, found through an :class:`OwnerIndex`
  rather than by listing the namespace, with ``controller_ref.claim``'s
  adoption and release;
* RealPodControl's create and delete, with its events
  (``SuccessfulCreate`` "Created pod: x", ``FailedCreate`` "Error creating: ...").

Readiness and availability are ``pod_readiness``'s.
"""

from __future__ import annotations

from typing import Callable

from ..apiserver.resources import Resource
from ..errors import NotFound, StatusError
from ..selectors import LabelSelector
from ..store import clone
from .controller_ref import claim, controller_ref, with_owner, without_owner
from .events import EventSource
from .owner_index import OwnerIndex

TERMINAL_PHASES = ("Succeeded", "Failed")


def pod_from_template(template: dict, owner: dict) -> dict:
    """A pod with the template's labels, annotations, finalizers and spec, named ``<owner>-<random>`` and
    controlled by ``owner``."""
    source = template.get("metadata") or {}
    meta: dict = {"namespace": owner["metadata"]["namespace"], "generateName": f"{owner['metadata']['name']}-",
                  "ownerReferences": [controller_ref(owner)]}
    for key in ("labels", "annotations"):
        if source.get(key):
            meta[key] = dict(source[key])
    if source.get("finalizers"):
        meta["finalizers"] = list(source["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": clone(template.get("spec") or {})}


def phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def is_terminating(pod: dict) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def claim_indexed(controller, owner: dict, selector: LabelSelector, index: OwnerIndex, res: Resource, *,
                  member: Callable[[dict], bool] | None = None,
                  adopted: Callable[[dict], dict] | None = None) -> list[dict]:
    """The objects ``owner`` controls: those the index holds for it, plus the namespace's orphans it adopts.

    ``member`` narrows what the owner may keep or adopt beyond its selector (a StatefulSet's pods are named
    after it); ``adopted`` changes an orphan before it is adopted (the Job controller adds its finalizer).
    """
    meta = owner["metadata"]
    namespace, uid = meta["namespace"], meta["uid"]
    owned = [obj for obj in (controller.store.get(res.bucket, ns, name) for ns, name in index.owned(uid))
             if obj is not None]
    orphans = [obj for obj in (controller.store.get(res.bucket, namespace, name) for name in index.orphans(namespace))
               if obj is not None]
    ref = controller_ref(owner)
    adoptions: dict[str, dict] = {}

    def adopt(obj: dict) -> None:
        adoptions[obj["metadata"]["uid"]] = controller.update(res, with_owner(adopted(obj) if adopted else obj, ref))

    def release(obj: dict) -> None:
        try:
            controller.update(res, without_owner(obj, uid))
        except NotFound:
            pass

    if member is not None:
        # What the owner controls but may not keep is released as a selector mismatch would be.
        if not meta.get("deletionTimestamp"):
            for obj in owned:
                if not member(obj):
                    release(obj)
        owned = [obj for obj in owned if member(obj)]
        orphans = [obj for obj in orphans if member(obj)]
    claimed = claim(owner, selector, owned + orphans, adopt=adopt, release=release)
    return [adoptions.get(obj["metadata"]["uid"], obj) for obj in claimed]


class PodControl:
    """Creates and deletes a controller's pods, recording the events RealPodControl records."""

    def __init__(self, controller, source: EventSource):
        self.controller = controller
        self.source = source
        self.pods: Resource = controller.resource("", "v1", "pods")

    def create(self, owner: dict, pod: dict) -> dict | None:
        """Create ``pod``; None when its namespace is being deleted (every create fails then, and upstream lets
        it be). Other errors are recorded and raised."""
        try:
            created = self.controller.create(self.pods, pod)
        except StatusError as exc:
            if namespace_terminating(exc):
                return None
            self.controller.events.record(owner, "Warning", "FailedCreate", f"Error creating: {exc.message}",
                                          self.source)
            raise
        self.controller.events.record(owner, "Normal", "SuccessfulCreate",
                                      f"Created pod: {created['metadata']['name']}", self.source)
        return created

    def delete(self, owner: dict, name: str) -> bool:
        """Delete a pod; False if it was already gone. Other errors are recorded and raised."""
        try:
            gone = self.controller.delete(self.pods, owner["metadata"]["namespace"], name)
        except StatusError as exc:
            self.controller.events.record(owner, "Warning", "FailedDelete", f"Error deleting: {exc.message}",
                                          self.source)
            raise
        if gone is None:
            return False
        self.controller.events.record(owner, "Normal", "SuccessfulDelete", f"Deleted pod: {name}", self.source)
        return True


def namespace_terminating(exc: StatusError) -> bool:
    causes = (exc.details or {}).get("causes") or ()
    return any(c.get("reason") == "NamespaceTerminating" for c in causes)
