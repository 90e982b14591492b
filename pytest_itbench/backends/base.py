"""The one interface every environment provider implements: the twin, kind, k3s, an existing cluster.

A backend provisions a :class:`Cluster`; everything else in a trial talks to it through a kubeconfig
and URLs (ARCHITECTURE.md, rule 1), plus the few verbs of time a benchmark needs: let time pass
quickly where nobody is watching, and follow wall time while the agent works.
"""

from __future__ import annotations

import contextlib
from typing import Iterable, Iterator, Protocol

from kubernetes.client import ApiClient

SIGNALS = ("prometheus", "alertmanager", "jaeger", "topology", "opencost")


class BackendError(RuntimeError):
    """The environment could not be provided or cleaned up; the message says what, where, and what to do."""


class MissingSignal(KeyError):
    """A trial asked for an observability URL its backend was not given."""

    def __str__(self) -> str:  # KeyError's str() quotes its argument; this is a sentence
        return str(self.args[0]) if self.args else "missing signal"


class SignalURLs(dict):
    """The observability URLs of a cluster by signal name; asking for one that is missing says how to give it.

    ``urls.get(name)`` and ``name in urls`` behave as for any dict (the topology graph falls back to the
    API when it has no URL); ``urls[name]`` raises :class:`MissingSignal` with ``hint(name)``.
    """

    def __init__(self, given: dict[str, str], hint: str = "{signal}: no URL"):
        super().__init__({k: v for k, v in given.items() if v})
        self.hint = hint

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(s for s in SIGNALS if s not in self)

    def __missing__(self, signal: str):
        raise MissingSignal(self.hint.format(signal=signal))


class Cluster(Protocol):
    backend: str
    admin_kubeconfig: str  # path: the harness's credentials (never handed to the agent)
    urls: dict[str, str]  # by signal name (SIGNALS)

    def api_client(self) -> ApiClient:
        """An official-client ApiClient with the harness's admin rights."""

    def reserve(self, namespaces: Iterable[str], alerts: tuple[str, ...] = ()) -> None:
        """Before anything is deployed: make ``namespaces`` the trial's own (a fresh environment has them
        free; a shared cluster claims them, waits for another trial to release them, or refuses), and wait
        until none of ``alerts`` (the scenario's expected alerts) still fires in them from an earlier trial."""

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

    def close(self) -> None:
        """At the end of the session: release what outlives trials (a cluster kept per worker or session)."""


@contextlib.contextmanager
def provisioned(backend: Backend, seed: int, workdir: str) -> Iterator[Cluster]:
    cluster = backend.provision(seed, workdir)
    try:
        yield cluster
    finally:
        cluster.close()
