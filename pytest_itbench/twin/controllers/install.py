"""Which controllers a twin runs, in the order the manager hands them work each tick.

The order follows the flow of a change through a cluster (workload controllers,
then the scheduler, then the node agents, then the controllers that read what
those produce); any order converges, this one in fewer rounds. Each entry is
(name, "module:Class") under this package; a twin can run a subset by name,
which is how a controller's tests stand in for the others.
"""

from __future__ import annotations

import importlib
from typing import Iterable

from .manager import ControllerManager

CONTROLLERS: list[tuple[str, str]] = [
    ("deployment", "deployment:DeploymentController"),
    ("replicaset", "replicaset:ReplicaSetController"),
    ("replicationcontroller", "replicaset:ReplicationManager"),
    ("statefulset", "statefulset:StatefulSetController"),
    ("daemonset", "daemonset:DaemonSetController"),
    ("job", "job:JobController"),
    ("cronjob", "cronjob:CronJobController"),
    ("horizontal-pod-autoscaler", "hpa:HorizontalPodAutoscalerController"),
    ("disruption", "disruption:DisruptionController"),
    ("resourcequota", "resourcequota:ResourceQuotaController"),
    ("persistentvolume-binder", "volumes:PersistentVolumeBinder"),
    ("scheduler", "scheduler.controller:Scheduler"),
    ("kubelet", "kubelet:Kubelet"),
    ("node-heartbeat", "node_heartbeat:NodeHeartbeat"),
    ("node-lifecycle", "node_lifecycle:NodeLifecycle"),
    ("endpoints", "endpoints:EndpointsController"),
    ("endpointslice", "endpointslices:EndpointSliceController"),
    # Last: it reads what the scheduler decided (unschedulable pods) and adds or removes nodes; idle until
    # the node-group ConfigMaps exist (autoscaler/config.py).
    ("cluster-autoscaler", "autoscaler.controller:ClusterAutoscaler"),
]


def names() -> list[str]:
    return [name for name, _ in CONTROLLERS]


def install(manager: ControllerManager, only: Iterable[str] | None = None) -> None:
    """Add the twin's controllers (or only those named) to ``manager``."""
    wanted = None if only is None else set(only)
    if wanted is not None:
        unknown = wanted - set(names())
        if unknown:
            raise ValueError(f"unknown controllers {sorted(unknown)}; the twin has {names()}")
    for name, target in CONTROLLERS:
        if wanted is not None and name not in wanted:
            continue
        module_name, class_name = target.split(":")
        module = importlib.import_module(f"{__package__}.{module_name}")
        manager.add(getattr(module, class_name)(manager))
