"""How a twin serving on its own tells a harness how fast its time runs: a ConfigMap, read through the API.

``python -m pytest_itbench.twin --time-scale N`` runs N simulated seconds per wall second. A harness that
treats it as an existing cluster (``--itbench-backend=existing``) cannot warp it; it waits instead, and
from this ConfigMap it knows to wait 1/N as long and where the twin's clock stands. A real cluster has
no such ConfigMap: its time is wall time, scale 1.

``kube-public/itbench-twin-clock``, data (decimal strings):

- ``timeScale``: simulated seconds per wall second;
- ``simulatedTime``, ``wallTime``: one moment, as the twin's clock and as wall time (Unix seconds), so
  the twin's time at wall time ``w`` is ``simulatedTime + (w - wallTime) * timeScale``.

Through the API (ARCHITECTURE.md, rule 1), so the harness needs nothing but the kubeconfig; the twin
itself never reads it (rule 2).
"""

from __future__ import annotations

import time

NAMESPACE = "kube-public"
NAME = "itbench-twin-clock"


def advertise(twin, scale: float) -> dict:
    """Write the ConfigMap for ``twin``, whose clock follows wall time at ``scale``; return its data."""
    data = {"timeScale": repr(float(scale)), "simulatedTime": repr(twin.clock.now()), "wallTime": repr(time.time())}
    resource = twin.api.catalog.for_api_version("v1", "ConfigMap")
    twin.api.create(resource, NAMESPACE, {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": NAME, "namespace": NAMESPACE,
                     "labels": {"app.kubernetes.io/managed-by": "pytest-itbench-twin"}},
        "data": data}, twin.admin_ctx)
    return data
