"""The one interface every environment provider implements: the twin, kind, k3s, an existing cluster.

A backend provisions a :class:`Cluster`; everything else in a trial talks to it through a kubeconfig
and URLs (ARCHITECTURE.md, rule 1), plus the few verbs of time a benchmark needs: let time pass
quickly where nobody is watching, and follow wall time while the agent works.
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Protocol

from kubernetes.client import ApiClient

SIGNALS = ("prometheus", "alertmanager", "jaeger", "topology")


class Cluster(Protocol):
    backend: str
    admin_kubeconfig: str  # path: the harness's credentials (never handed to the agent)
    urls: dict[str, str]  # by signal name (SIGNALS)

    def api_client(self) -> ApiClient:
        """An official-client ApiClient with the harness's admin rights."""

    def now(self) -> float:
        """The cluster's clock (simulated on the twin, wall time on a real cluster), epoch seconds."""

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` of cluster time pass: warped on the twin, waited out on a real cluster."""

    def realtime(self) -> contextlib.AbstractContextManager:
        """While inside, the cluster's clock follows wall time (the agent's turn)."""

    def agent_kubeconfig(self, service_account: str, namespace: str, path: str) -> str:
        """Write a kubeconfig for a service account (its RBAC is the harness's business); return the path."""

    def close(self) -> None:
        """Tear everything down; nothing may be left behind (threads, ports, processes, clusters)."""


class Backend(Protocol):
    name: str

    def provision(self, seed: int, workdir: str) -> Cluster:
        """A fresh environment for one trial."""


@contextlib.contextmanager
def provisioned(backend: Backend, seed: int, workdir: str) -> Iterator[Cluster]:
    cluster = backend.provision(seed, workdir)
    try:
        yield cluster
    finally:
        cluster.close()
