"""``--itbench-backend=existing``: trials on a cluster the user already has (and, underneath, on the
clusters the kind and k3s backends create).

The cluster outlives each trial, so a trial here differs from one on the twin in three ways:

- **Namespaces** are claimed before anything is deployed and deleted at the end (namespaces.py); trials
  needing the same namespace run one after the other, and a namespace someone else made is refused.
- **What the trial changes outside them** (cluster roles, a PriorityClass, a cordoned node, a rule in the
  monitoring namespace) is recorded by the admin client and undone at the end (ledger.py).
- **Time is real**: ``advance`` sleeps and ``realtime`` changes nothing (cluster_clock.py); a twin serving
  on its own with ``--time-scale N`` is waited for 1/N as long.

Observability URLs are the user's (``--itbench-prometheus-url`` ...); a signal not given is missing, and a
trial that needs it errors saying which option gives it.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
from typing import Callable

from kubernetes import client as k8s, config as k8s_config

from . import cluster_clock, kubeconfig, namespaces
from .base import SIGNALS, BackendError, SignalURLs
from .kubeconfig import Selection
from .ledger import Ledger, LedgerApiClient

log = logging.getLogger(__name__)

NAMESPACE_WAIT = 3600.0  # wall seconds a trial waits for another trial to release a namespace it needs
RELEASE_WAIT = 600.0  # wall seconds for the trial's namespaces to be gone after deleting them
QUIET_WAIT = 1200.0  # cluster seconds for alerts of an earlier trial in the same namespaces to resolve
QUIET_STEP = 15.0  # cluster seconds between looks (the rules' interval)
TOKEN_SECONDS = 6 * 3600  # the agent's token: longer than any time limit; it dies with its namespace anyway
# Cluster-scoped kinds an agent may be allowed to create (CISO: Kyverno ClusterPolicies); what it made of them
# is deleted at the end, since the agent's own writes do not go through the ledger.
AGENT_CLUSTER_KINDS = (("kyverno.io", "v1", "clusterpolicies"),)


def signal_hint(backend: str) -> str:
    if backend in ("kind", "k3s"):
        return (f"this {backend} cluster has no {{signal}}: the observability stack is installed with "
                f"--itbench-observability=helm (the default), and it has no topology monitor or OpenCost")
    return (f"the {{signal}} URL of this {backend} cluster was not given; pass --itbench-{{signal}}-url=URL "
            f"(reachable from the machine running pytest, e.g. through kubectl port-forward) to use it")


class ExistingCluster:
    """One trial on a cluster that outlives it."""

    def __init__(self, selection: Selection, urls: dict[str, str], workdir: str, *, backend: str = "existing",
                 trial: str = "", namespace_wait: float = NAMESPACE_WAIT, tidy: bool = True,
                 after_close: Callable[[], None] | None = None,
                 on_reserve: Callable[[k8s.ApiClient, list[str]], None] | None = None):
        """``tidy=False``: the cluster is thrown away after this trial (kind or k3s per trial), so nothing needs
        undoing; ``after_close`` then deletes it."""
        self.backend = backend
        self.tidy = tidy
        self.after_close = after_close
        self.on_reserve = on_reserve  # what a created cluster adds to each claimed namespace (collector alias)
        self.selection = selection
        self.where = f"context {selection.context!r} ({selection.server})"
        self.trial = trial
        self.namespace_wait = namespace_wait
        self.admin_kubeconfig = kubeconfig.write_admin(selection, os.path.join(workdir, "admin.kubeconfig"))
        configuration = k8s.Configuration()
        k8s_config.load_kube_config(config_file=self.admin_kubeconfig, client_configuration=configuration)
        self.ledger = Ledger()
        self._client = LedgerApiClient(configuration, self.ledger)
        self.urls = SignalURLs(urls, signal_hint(backend))
        self.claimed: list[str] = []
        self._agent_objects_before: dict[tuple, set[str]] | None = None
        self._closed = False
        try:
            self.clock = cluster_clock.read(self._client, self.where)
        except BaseException:
            self._client.close()
            raise

    def api_client(self) -> k8s.ApiClient:
        return self._client

    # ---- namespaces ------------------------------------------------------------------------------------------------
    def reserve(self, names, alerts: tuple[str, ...] = ()) -> None:
        names = tuple(names)
        self.ledger.namespaces.update(n for n in names if n not in namespaces.SYSTEM)
        core = k8s.CoreV1Api(self._client)
        try:
            for name in sorted(set(names) - namespaces.SYSTEM):
                namespaces.claim(core, [name], self.trial, where=self.where, wait_limit=self.namespace_wait)
                self.claimed.append(name)
        except BaseException:
            self.ledger.namespaces.difference_update(set(names) - set(self.claimed))
            raise
        if self.on_reserve is not None:
            self.on_reserve(self._client, list(self.claimed))
        self._await_quiet(names, alerts)

    def _await_quiet(self, names, alerts) -> None:
        """An earlier trial's alerts in these namespaces resolve minutes after its namespaces went away (the
        rules' rate windows); until then an expected alert would count as fired before the faults are injected.
        Only the expected alerts matter: others (no traffic yet, say) fire on an empty namespace anyway."""
        if not alerts or "alertmanager" not in self.urls:
            return
        from ..evaluate.signals import Alertmanager  # the harness's HTTP reader of the alerts API

        alertmanager = Alertmanager(self.urls["alertmanager"])
        waited = 0.0
        while True:
            firing = {f"{ns}: {a}" for ns in names for a in alertmanager.firing_names(ns) & set(alerts)}
            if not firing:
                return
            if waited >= QUIET_WAIT:
                raise BackendError(f"alerts still firing in the trial's namespaces on {self.where} "
                                   f"{QUIET_WAIT:.0f} s after they were claimed: {', '.join(sorted(firing))}; an "
                                   f"earlier trial's alerts should have resolved by now")
            self.advance(QUIET_STEP)
            waited += QUIET_STEP

    # ---- time ------------------------------------------------------------------------------------------------------
    def now(self) -> float:
        return self.clock.now()

    def advance(self, seconds: float) -> None:
        self.clock.wait(seconds)

    def realtime(self):
        return contextlib.nullcontext()  # a real cluster always follows wall time

    # ---- the agent -------------------------------------------------------------------------------------------------
    def agent_kubeconfig(self, service_account: str, namespace: str, path: str) -> str:
        answer = k8s.CoreV1Api(self._client).create_namespaced_service_account_token(
            service_account, namespace, {"spec": {"expirationSeconds": TOKEN_SECONDS}})
        self._agent_objects_before = self._agent_objects()
        return kubeconfig.write_service_account(self.selection, service_account, namespace, answer.status.token, path)

    def _agent_objects(self) -> dict[tuple, set[str]]:
        found = {}
        for group, version, plural in AGENT_CLUSTER_KINDS:
            try:
                listing = k8s.CustomObjectsApi(self._client).list_cluster_custom_object(group, version, plural)
            except k8s.ApiException:
                continue  # the kind is not served here
            found[(group, version, plural)] = {o["metadata"]["name"] for o in listing.get("items", [])}
        return found

    # ---- the end ---------------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Undo what the trial did outside its namespaces, delete them and wait until they are gone.

        Raises BackendError listing whatever could not be cleaned up, after trying everything."""
        if self._closed:
            return
        self._closed = True
        problems = []
        try:
            if self.tidy:
                # Before anything else: the cleanup's own writes are not the trial's (a deletion recorded now
                # would be "undone" by re-creating what it deleted).
                self.ledger.paused = True
                problems += self._delete_agent_objects()
                problems += self._client.undo()
                core = k8s.CoreV1Api(self._client)
                problems += namespaces.release(core, self.claimed, where=self.where, wait_limit=RELEASE_WAIT)
                problems += self._delete_released_volumes(core)
        except Exception as exc:  # the cluster went away mid-cleanup: say so, still close the client
            problems.append(f"{type(exc).__name__}: {exc}")
        finally:
            self._client.close()
            if self.after_close is not None:
                try:
                    self.after_close()
                except BackendError as exc:
                    problems.append(str(exc))
        if problems:
            raise BackendError(f"cleaning up after the trial on {self.where} left things behind:\n  "
                               + "\n  ".join(problems) + f"\n(leftovers carry the label "
                               f"app.kubernetes.io/managed-by=pytest-itbench; see docs/real-clusters.md, 'Cleaning up')")

    def _delete_agent_objects(self) -> list[str]:
        if self._agent_objects_before is None:
            return []
        problems = []
        api = k8s.CustomObjectsApi(self._client)
        for (group, version, plural), before in self._agent_objects_before.items():
            for name in sorted(self._agent_objects().get((group, version, plural), set()) - before):
                try:
                    api.delete_cluster_custom_object(group, version, plural, name)
                except k8s.ApiException as exc:
                    if exc.status != 404:
                        problems.append(f"deleting the agent's {plural} {name}: {exc.status} {exc.reason}")
        return problems

    def _delete_released_volumes(self, core: k8s.CoreV1Api) -> list[str]:
        """Volumes provisioned for the trial's claims with reclaimPolicy Retain outlive the namespace."""
        problems = []
        for volume in core.list_persistent_volume().items:
            ref = volume.spec.claim_ref
            if ref is not None and ref.namespace in self.claimed and (volume.status.phase in ("Released", "Failed")):
                try:
                    core.delete_persistent_volume(volume.metadata.name)
                except k8s.ApiException as exc:
                    if exc.status != 404:
                        problems.append(f"deleting PersistentVolume {volume.metadata.name}: {exc.status} {exc.reason}")
        return problems


class ExistingBackend:
    """Trials on the cluster of one kubeconfig context; see docs/real-clusters.md."""

    name = "existing"

    def __init__(self, selection: Selection, urls: dict[str, str] | None = None, *,
                 namespace_wait: float = NAMESPACE_WAIT, register_exit: bool = True):
        self.selection = selection
        self.urls = {k: v for k, v in (urls or {}).items() if k in SIGNALS and v}
        self.namespace_wait = namespace_wait
        self._live: list[ExistingCluster] = []
        self._lock = threading.Lock()
        self._registered = register_exit
        if register_exit:
            # Ctrl-C and errors reach each trial's teardown; this is for an interpreter exiting without one.
            atexit.register(self._close_leftovers)

    def provision(self, seed: int, workdir: str) -> ExistingCluster:
        cluster = ExistingCluster(self.selection, self.urls, workdir, backend=self.name,
                                  trial=f"seed {seed:x}, {os.path.basename(workdir)}",
                                  namespace_wait=self.namespace_wait)
        with self._lock:
            self._live = [c for c in self._live if not c._closed] + [cluster]
        return cluster

    def close(self) -> None:
        """The session's end. Trials clean up after themselves, and one kept for inspection (--itbench-keep)
        is closed by the plugin after the summary; whatever is still open at exit is closed then."""
        with self._lock:
            self._live = [c for c in self._live if not c._closed]
            done = not self._live
        if done and self._registered:
            atexit.unregister(self._close_leftovers)
            self._registered = False

    def _close_leftovers(self) -> None:
        with self._lock:
            live, self._live = self._live, []
        for cluster in live:
            try:
                cluster.close()
            except BackendError as exc:
                log.error("%s", exc)

    def admin_api(self) -> k8s.ApiClient:
        """A plain admin client (the session's checks; trials get their own)."""
        configuration = k8s.Configuration()
        k8s_config.load_kube_config(config_file=self.selection.path, context=self.selection.context,
                                    client_configuration=configuration)
        return k8s.ApiClient(configuration)

    def describe_where(self) -> str:
        return f"context {self.selection.context!r} ({self.selection.server})"

    def describe(self) -> str:
        missing = [s for s in SIGNALS if s not in self.urls]
        given = ", ".join(f"{k}={v}" for k, v in sorted(self.urls.items())) or "none"
        text = f"{self.describe_where()}; signals: {given}"
        if missing:
            text += (f"; missing: {', '.join(missing)} (trials that need one error; give it with "
                     f"--itbench-<signal>-url)")
        return text
