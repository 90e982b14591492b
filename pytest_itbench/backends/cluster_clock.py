"""Time on a cluster the harness cannot warp: wall time, waited out.

A real cluster's clock is wall time (scale 1): ``advance(seconds)`` sleeps that long. A twin serving on its
own (``python -m pytest_itbench.twin --time-scale N``) runs N times faster and says so in a ConfigMap
(``pytest_itbench/twin/time_advert.py``); then the cluster's time is the twin's and an advance sleeps 1/N as
long. Read through the Kubernetes API like everything else (ARCHITECTURE.md, rule 1).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from kubernetes import client as k8s

from ..twin.time_advert import NAME, NAMESPACE
from .base import BackendError


@dataclass(frozen=True)
class ClusterClock:
    scale: float = 1.0  # cluster seconds per wall second
    simulated_at: float | None = None  # the cluster's time at wall time ``wall_at`` (None: wall time itself)
    wall_at: float = 0.0

    def now(self) -> float:
        wall = time.time()
        if self.simulated_at is None:
            return wall
        return self.simulated_at + (wall - self.wall_at) * self.scale

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` of cluster time pass."""
        if seconds > 0:
            time.sleep(seconds / self.scale)

    def wall_seconds(self, seconds: float) -> float:
        return seconds / self.scale


def read(api: k8s.ApiClient, where: str) -> ClusterClock:
    """The clock the cluster advertises (a twin's), else wall time."""
    try:
        config_map = k8s.CoreV1Api(api).read_namespaced_config_map(NAME, NAMESPACE)
    except k8s.ApiException as exc:
        if exc.status in (403, 404):  # a real cluster: no such ConfigMap (or no right to read kube-public)
            return ClusterClock()
        raise BackendError(f"cannot read {NAMESPACE}/{NAME} on {where}: {exc.status} {exc.reason}") from None
    data = config_map.data or {}
    try:
        scale, simulated, wall = (float(data[k]) for k in ("timeScale", "simulatedTime", "wallTime"))
    except (KeyError, ValueError) as exc:
        raise BackendError(f"ConfigMap {NAMESPACE}/{NAME} on {where} does not advertise a clock "
                           f"(timeScale, simulatedTime, wallTime as numbers): {exc}") from None
    if not (scale > 0 and math.isfinite(scale) and math.isfinite(simulated) and math.isfinite(wall)):
        raise BackendError(f"ConfigMap {NAMESPACE}/{NAME} on {where}: timeScale must be a positive number, got "
                           f"{data.get('timeScale')!r}")
    return ClusterClock(scale, simulated, wall)
