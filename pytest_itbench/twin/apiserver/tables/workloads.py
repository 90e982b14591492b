"""apps/v1, policy/v1 and core/v1 workload printers: deployments, replica sets, replication controllers,
stateful sets, daemon sets, controller revisions and pod disruption budgets."""

from __future__ import annotations

from .core import Column, age, age_column, api_doc, containers_column, images_column, name_column, register
from .formatting import (
    InvalidSelector, container_cells, format_label_selector, format_labels, selector_string, template_spec,
)


def _ready_column() -> Column:
    return Column("Ready", description="Number of the pod with ready state")


def deployment_row(obj: dict, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    try:
        selector = selector_string(spec.get("selector"))
    except InvalidSelector:
        selector = "<invalid>"
    return [obj["metadata"].get("name", ""), f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
            status.get("updatedReplicas", 0), status.get("availableReplicas", 0), age(obj, now),
            *container_cells(template_spec(obj)), selector]


register("apps", "Deployment", [
    name_column(),
    _ready_column(),
    Column("Up-to-date", description=api_doc("apps.v1.DeploymentStatus", "updatedReplicas")),
    Column("Available", description=api_doc("apps.v1.DeploymentStatus", "availableReplicas")),
    age_column(),
    containers_column(),
    images_column(),
    Column("Selector", description=api_doc("apps.v1.DeploymentSpec", "selector"), priority=1),
], deployment_row)


def replica_set_row(obj: dict, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [obj["metadata"].get("name", ""), spec.get("replicas", 0), status.get("replicas", 0),
            status.get("readyReplicas", 0), age(obj, now), *container_cells(template_spec(obj)),
            format_label_selector(spec.get("selector"))]


register("apps", "ReplicaSet", [
    name_column(),
    Column("Desired", "integer", description=api_doc("apps.v1.ReplicaSetSpec", "replicas")),
    Column("Current", "integer", description=api_doc("apps.v1.ReplicaSetStatus", "replicas")),
    Column("Ready", "integer", description=api_doc("apps.v1.ReplicaSetStatus", "readyReplicas")),
    age_column(),
    containers_column(),
    images_column(),
    Column("Selector", description=api_doc("apps.v1.ReplicaSetSpec", "selector"), priority=1),
], replica_set_row)


def replication_controller_row(obj: dict, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [obj["metadata"].get("name", ""), spec.get("replicas", 0), status.get("replicas", 0),
            status.get("readyReplicas", 0), age(obj, now), *container_cells(template_spec(obj)),
            format_labels(spec.get("selector"))]


register("", "ReplicationController", [
    name_column(),
    Column("Desired", "integer", description=api_doc("core.v1.ReplicationControllerSpec", "replicas")),
    Column("Current", "integer", description=api_doc("core.v1.ReplicationControllerStatus", "replicas")),
    Column("Ready", "integer", description=api_doc("core.v1.ReplicationControllerStatus", "readyReplicas")),
    age_column(),
    containers_column(),
    images_column(),
    Column("Selector", description=api_doc("core.v1.ReplicationControllerSpec", "selector"), priority=1),
], replication_controller_row)


def stateful_set_row(obj: dict, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [obj["metadata"].get("name", ""), f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
            age(obj, now), *container_cells(template_spec(obj))]


register("apps", "StatefulSet", [
    name_column(),
    _ready_column(),
    age_column(),
    containers_column(),
    images_column(),
], stateful_set_row)


def daemon_set_row(obj: dict, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [obj["metadata"].get("name", ""), status.get("desiredNumberScheduled", 0),
            status.get("currentNumberScheduled", 0), status.get("numberReady", 0),
            status.get("updatedNumberScheduled", 0), status.get("numberAvailable", 0),
            format_labels(template_spec(obj).get("nodeSelector")), age(obj, now),
            *container_cells(template_spec(obj)), format_label_selector(spec.get("selector"))]


register("apps", "DaemonSet", [
    name_column(),
    Column("Desired", "integer", description=api_doc("apps.v1.DaemonSetStatus", "desiredNumberScheduled")),
    Column("Current", "integer", description=api_doc("apps.v1.DaemonSetStatus", "currentNumberScheduled")),
    Column("Ready", "integer", description=api_doc("apps.v1.DaemonSetStatus", "numberReady")),
    Column("Up-to-date", "integer", description=api_doc("apps.v1.DaemonSetStatus", "updatedNumberScheduled")),
    Column("Available", "integer", description=api_doc("apps.v1.DaemonSetStatus", "numberAvailable")),
    Column("Node Selector", description=api_doc("core.v1.PodSpec", "nodeSelector")),
    age_column(),
    containers_column(),
    images_column(),
    Column("Selector", description=api_doc("apps.v1.DaemonSetSpec", "selector"), priority=1),
], daemon_set_row)


def controller_revision_row(obj: dict, now: float) -> list:
    controller = "<none>"
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            group = ref.get("apiVersion", "").rpartition("/")[0]
            kind = f"{ref.get('kind', '')}.{group}" if group else ref.get("kind", "")
            controller = f"{kind.lower()}/{ref.get('name', '')}" if kind else ref.get("name", "")
            break
    return [obj["metadata"].get("name", ""), controller, obj.get("revision", 0), age(obj, now)]


register("apps", "ControllerRevision", [
    name_column(),
    Column("Controller", description="Controller of the object"),
    Column("Revision", description=api_doc("apps.v1.ControllerRevision", "revision")),
    age_column(),
], controller_revision_row)


def pod_disruption_budget_row(obj: dict, now: float) -> list:
    spec = obj.get("spec") or {}
    min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
    return [obj["metadata"].get("name", ""), "N/A" if min_available is None else str(min_available),
            "N/A" if max_unavailable is None else str(max_unavailable),
            (obj.get("status") or {}).get("disruptionsAllowed", 0), age(obj, now)]


register("policy", "PodDisruptionBudget", [
    name_column(),
    Column("Min Available", description="The minimum number of pods that must be available."),
    Column("Max Unavailable", description="The maximum number of pods that may be unavailable."),
    Column("Allowed Disruptions", "integer", description="Calculated number of pods that may be disrupted at this "
                                                         "time."),
    age_column(),
], pod_disruption_budget_row)
