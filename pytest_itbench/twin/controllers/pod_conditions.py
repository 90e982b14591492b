"""Reading a pod's state the way kube-controller-manager's helpers (podutil) read it."""

from __future__ import annotations


def condition(obj: dict, type_: str) -> dict | None:
    """The status condition of ``type_`` on a pod or node, if it has one."""
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == type_:
            return cond
    return None


def is_ready(pod: dict) -> bool:
    """podutil.IsPodReady: the pod's Ready condition is True."""
    cond = condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def is_terminal(pod: dict) -> bool:
    """A pod that has finished: Succeeded or Failed."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def controller_ref(obj: dict) -> dict | None:
    """metav1.GetControllerOf: the ownerReference marked ``controller: true``."""
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None
