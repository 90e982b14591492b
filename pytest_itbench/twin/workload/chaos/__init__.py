"""Chaos Mesh in the twin: its custom resources, its controllers, and the faults they inject.

``install`` does what installing Chaos Mesh in a cluster does: its CustomResourceDefinitions
(``apps/crds/chaos-mesh.yaml``) are served, its controller manager runs (the experiment and
Schedule controllers, on the twin's clock), and the image its pod-failure uses can be pulled.
Experiments then act through the API (PodChaos) or through the traffic engine's fault table.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import yaml

from .experiments import ChaosController
from .kinds import PAUSE_IMAGE
from .schedule import ScheduleController

CRDS = Path(__file__).resolve().parents[3] / "apps" / "crds" / "chaos-mesh.yaml"


def install(twin, workload) -> None:
    """Serve Chaos Mesh's resources in ``twin`` and run its controllers against ``workload``."""
    definitions = twin.api.catalog.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    for crd in yaml.safe_load_all(CRDS.read_text()):
        if crd:
            twin.api.create(definitions, None, crd, twin.admin_ctx)
    _pullable_pause_image(workload.kubelet.registry)

    def runs_java(pod: dict, container: str) -> bool:
        found = workload.behaviour.match(pod, container)
        return found is not None and found[2].runtime == "java"

    twin.controllers.add(ChaosController(twin.controllers, workload.chaos, runs_java))
    twin.controllers.add(ScheduleController(twin.controllers))


def _pullable_pause_image(registry) -> None:
    """The pause image Chaos Mesh's pod-failure swaps in (its default), published as the pause image is."""
    repository, _, tag = PAUSE_IMAGE.rpartition(":")
    if repository in registry.repositories:
        return
    pause = registry.repositories["registry.k8s.io/pause"]
    registry.repositories[repository] = replace(pause, name=repository, tags=re.compile(rf"{re.escape(tag)}|3\.[0-9]+"))
