"""How the cluster autoscaler sees pods: which wait for a node, which a node's removal must move, and which
forbid it.

The drain rules are cluster-autoscaler's defaults (its FAQ, "What types of pods can prevent CA from removing
a node?"): DaemonSet and mirror pods never block, nor do pods that finished; a pod blocks when it is not
backed by a controller, is in ``kube-system`` without a PodDisruptionBudget, uses local storage (emptyDir or
hostPath; ``--skip-nodes-with-local-storage``), carries ``cluster-autoscaler.kubernetes.io/safe-to-evict:
"false"``, or when its PodDisruptionBudgets allow fewer disruptions than the node would cause.
``safe-to-evict: "true"`` lifts every rule but the budget one; ``safe-to-evict-local-volumes`` lists the
local volumes that may go.
"""

from __future__ import annotations

from ...selectors import LabelSelector, SelectorError

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
SYSTEM_NAMESPACE = "kube-system"


def finished(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def unschedulable(pod: dict) -> bool:
    """A pod the scheduler gave up on for now: not bound, PodScheduled False with reason Unschedulable.

    A pod nominated to a node (preemption made room for it) is left out: it will be scheduled there, as
    cluster-autoscaler leaves out pods waiting for their preemption victims to go.
    """
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    if spec.get("nodeName") or pod["metadata"].get("deletionTimestamp") or finished(pod):
        return False
    if status.get("nominatedNodeName"):
        return False
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable"
               for c in status.get("conditions") or ())


def controller_kind(pod: dict) -> str | None:
    for ref in pod["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return ref.get("kind")
    return None


def stays_with_node(pod: dict) -> bool:
    """Pods a node's removal neither moves nor waits for: DaemonSet and mirror pods, pods that finished."""
    return controller_kind(pod) == "DaemonSet" or MIRROR_ANNOTATION in (pod["metadata"].get("annotations") or {}) \
        or finished(pod)


def blocking_reason(pod: dict, budgets: list[dict]) -> str | None:
    """Why this pod forbids removing its node (cluster-autoscaler's reason names), or None.

    ``budgets`` are the PodDisruptionBudgets of the pod's namespace; the budget rule is checked per node
    (:func:`budgets_block`), as it depends on how many of a budget's pods the node holds.
    """
    annotations = pod["metadata"].get("annotations") or {}
    safe = annotations.get(SAFE_TO_EVICT)
    if safe == "false":
        return "NotSafeToEvictAnnotation"
    if safe == "true":
        return None
    if controller_kind(pod) is None:
        return "NotReplicated"
    if pod["metadata"].get("namespace") == SYSTEM_NAMESPACE and not matching_budgets(pod, budgets):
        return "UnmovableKubeSystemPod"
    allowed = {v.strip() for v in (annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES) or "").split(",") if v.strip()}
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if ("emptyDir" in volume or "hostPath" in volume) and volume.get("name") not in allowed:
            return "LocalStorageRequested"
    return None


def matching_budgets(pod: dict, budgets: list[dict]) -> list[dict]:
    labels = pod["metadata"].get("labels") or {}
    out = []
    for pdb in budgets:
        try:
            selector = LabelSelector.from_object((pdb.get("spec") or {}).get("selector"))
        except SelectorError:
            continue
        if selector is not None and not selector.empty and selector.matches(labels):
            out.append(pdb)
    return out


def budgets_block(pods: list[dict], budgets_of) -> str | None:
    """"NotEnoughPdb" when moving ``pods`` together would take some budget below what it allows."""
    wanted: dict[tuple[str, str], int] = {}
    allowed: dict[tuple[str, str], int] = {}
    for pod in pods:
        for pdb in matching_budgets(pod, budgets_of(pod["metadata"]["namespace"])):
            key = (pdb["metadata"]["namespace"], pdb["metadata"]["name"])
            wanted[key] = wanted.get(key, 0) + 1
            allowed[key] = (pdb.get("status") or {}).get("disruptionsAllowed", 0)
    return "NotEnoughPdb" if any(n > allowed[key] for key, n in wanted.items()) else None
