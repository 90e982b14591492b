"""Controller references: which objects a controller claims, adopts and releases (ControllerRefManager).

An object belongs to the controller its controller ownerReference names.
A controller keeps what it owns while its selector still matches, releases
what it owns that no longer matches (unless it is itself being deleted),
and adopts orphans that match (unless either side is being deleted).
Objects another controller owns are left alone.
"""

from __future__ import annotations

from typing import Callable, Iterable

from ..errors import NotFound, StatusError
from ..selectors import LabelSelector, SelectorError


def controller_ref(owner: dict) -> dict:
    """The ownerReference a controller sets on what it creates or adopts."""
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"],
            "controller": True, "blockOwnerDeletion": True}


def controller_of(obj: dict) -> dict | None:
    """The controller ownerReference of ``obj``, of any kind."""
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None


def selector_of(obj: dict) -> LabelSelector | None:
    """The object's ``spec.selector``; None when it has none or it does not parse (it then selects nothing)."""
    try:
        return LabelSelector.from_object(obj["spec"].get("selector"))
    except SelectorError:
        return None


def with_owner(obj: dict, ref: dict) -> dict:
    """A copy of ``obj`` (its metadata copied) that also names ``ref`` as an owner."""
    meta = dict(obj["metadata"])
    meta["ownerReferences"] = [*(meta.get("ownerReferences") or ()), ref]
    return {**obj, "metadata": meta}


def without_owner(obj: dict, uid: str) -> dict:
    """A copy of ``obj`` (its metadata copied) without the ownerReference to ``uid``."""
    meta = dict(obj["metadata"])
    refs = [r for r in meta.get("ownerReferences") or () if r.get("uid") != uid]
    if refs:
        meta["ownerReferences"] = refs
    else:
        meta.pop("ownerReferences", None)
    return {**obj, "metadata": meta}


def claim(owner: dict, selector: LabelSelector, objects: Iterable[dict],
          adopt: Callable[[dict], None], release: Callable[[dict], None]) -> list[dict]:
    """The objects ``owner`` controls after adopting and releasing; raises the first write error, if any."""
    meta = owner["metadata"]
    uid, owner_deleting = meta["uid"], bool(meta.get("deletionTimestamp"))
    claimed: list[dict] = []
    first_error: StatusError | None = None
    for obj in objects:
        ref = controller_of(obj)
        matches = selector.matches(obj["metadata"].get("labels"))
        try:
            if ref is not None:
                if ref.get("uid") != uid:
                    continue
                if matches:
                    claimed.append(obj)
                elif not owner_deleting:
                    release(obj)
            elif matches and not owner_deleting and not obj["metadata"].get("deletionTimestamp"):
                adopt(obj)
                claimed.append(obj)
        except NotFound:
            continue
        except StatusError as exc:
            first_error = first_error or exc
    if first_error is not None:
        raise first_error
    return claimed
