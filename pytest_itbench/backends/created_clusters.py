"""What kind and k3s share: clusters the harness creates, per trial, per xdist worker or per session.

``--itbench-fresh``:

- ``trial`` (default): each trial gets a new cluster, deleted when the trial ends (a trial kept with
  ``--itbench-keep`` keeps its cluster until the session ends, like a twin);
- ``worker``: each process (xdist worker) creates one cluster on its first trial and deletes it at the end
  of the session; trials on it clean up after themselves like on an existing cluster (namespaces deleted,
  cluster-wide changes undone);
- ``session``: one cluster for all workers, created by the first that needs it (under the registry's lock),
  deleted by the last to leave.

Every cluster is in the machine's registry before it is created, so a crash at any point leaves a record
that the next session (or ``python -m pytest_itbench.backends.cluster_registry``) cleans up.
"""

from __future__ import annotations

import atexit
import logging
import os
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from typing import Callable

from kubernetes import client as k8s

from . import kubeconfig, observability
from .base import BackendError
from .cluster_registry import ClusterRegistry, Record
from .existing import ExistingCluster

log = logging.getLogger(__name__)


@dataclass
class Created:
    """A cluster that exists: where its kubeconfig is, its URLs, and how to delete it."""

    name: str
    kubeconfig: str
    delete_command: list[str]
    urls: dict[str, str] = field(default_factory=dict)


class CreatedClusterBackend:
    """Subclasses say how to create and delete one cluster (``_create``, ``_delete``); this class decides when."""

    name = "created"

    def __init__(self, *, fresh: str = "trial", observability: bool = True, registry: ClusterRegistry | None = None,
                 worker: str | None = None, run_id: str | None = None):
        if fresh not in ("trial", "worker", "session"):
            raise ValueError(f"fresh must be trial, worker or session, got {fresh!r}")
        self.fresh = fresh
        self.observability = observability
        self.registry = registry or ClusterRegistry()
        self.worker = worker or os.environ.get("PYTEST_XDIST_WORKER", "main")
        # Shared by the workers of one xdist run (they see the same PYTEST_XDIST_TESTRUNUID), unique otherwise.
        self.run_id = (run_id or os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex)[:8]
        self._serial = 0
        self._shared: Created | None = None
        self._mine: set[str] = set()  # clusters this process created and has not deleted
        self._lock = threading.Lock()
        for problem in self.registry.sweep():
            log.warning("could not delete a cluster left by an earlier run: %s", problem)
        atexit.register(self._delete_leftovers)

    # ---- what subclasses provide -------------------------------------------------------------------------------
    def _create(self, name: str, directory: str) -> Created:
        raise NotImplementedError

    def _delete(self, created: Created) -> None:
        raise NotImplementedError

    # ---- names ---------------------------------------------------------------------------------------------------
    def cluster_name(self) -> str:
        """itbench-<run>-<worker>-<n> per trial, itbench-<run>-<worker> per worker, itbench-<run> per session."""
        if self.fresh == "session":
            return f"itbench-{self.run_id}"
        if self.fresh == "worker":
            return f"itbench-{self.run_id}-{self.worker}"
        self._serial += 1
        return f"itbench-{self.run_id}-{self.worker}-{self._serial}"

    # ---- provisioning ----------------------------------------------------------------------------------------------
    def provision(self, seed: int, workdir: str) -> ExistingCluster:
        if self.fresh == "trial":
            created = self._create_recorded(self.cluster_name(), workdir)
            try:
                return self._cluster(created, workdir, seed, tidy=False, after_close=lambda: self._retire(created))
            except BaseException:
                self._retire(created)
                raise
        return self._cluster(self._shared_cluster(), workdir, seed, tidy=True)

    def _cluster(self, created: Created, workdir: str, seed: int, *, tidy: bool,
                 after_close: Callable[[], None] | None = None) -> ExistingCluster:
        selection = kubeconfig.select(created.kubeconfig)
        return ExistingCluster(selection, created.urls, workdir, backend=self.name, tidy=tidy,
                               trial=f"seed {seed:x}, {os.path.basename(workdir)}", after_close=after_close,
                               on_reserve=self._alias_collector if self.observability else None)

    def _shared_cluster(self) -> Created:
        with self._lock:
            if self._shared is not None:
                return self._shared
            name = self.cluster_name()
            if self.fresh == "session":
                with self.registry.locked():
                    record = self.registry.join(name)
                    if record is not None:
                        self._shared = Created(name, record.kubeconfig, record.delete, dict(record.urls))
                    else:
                        self._shared = self._create_recorded(name, str(self.registry.directory), locked=True)
            else:
                self._shared = self._create_recorded(name, tempfile.mkdtemp(prefix=f"{name}-"))
            return self._shared

    def _create_recorded(self, name: str, directory: str, locked: bool = False) -> Created:
        kubeconfig_path = os.path.join(directory, f"{name}.kubeconfig")
        record = Record(backend=self.name, name=name, delete=self.delete_command_for(name),
                        kubeconfig=kubeconfig_path)
        if locked:
            self.registry.add(record)
        else:
            with self.registry.locked():
                self.registry.add(record)
        self._mine.add(name)
        try:
            created = self._create(name, directory)
            if self.observability:
                observability.install(created.kubeconfig)
        except BaseException:
            self._retire(Created(name, kubeconfig_path, record.delete))
            raise
        record.kubeconfig, record.delete, record.urls = created.kubeconfig, created.delete_command, created.urls
        self.registry.put(record)
        return created

    def delete_command_for(self, name: str) -> list[str]:
        raise NotImplementedError

    def _alias_collector(self, api: k8s.ApiClient, namespaces: list[str]) -> None:
        core = k8s.CoreV1Api(api)
        for namespace in namespaces:
            try:
                core.create_namespaced_service(namespace, observability.collector_alias(namespace))
            except k8s.ApiException as exc:
                if exc.status != 409:
                    raise BackendError(f"creating the otel-collector alias in {namespace}: {exc.status} "
                                       f"{exc.reason}") from None

    # ---- the end ---------------------------------------------------------------------------------------------------
    def _retire(self, created: Created) -> None:
        """Delete a cluster this process created, and its record; BackendError naming the manual command."""
        try:
            self._delete(created)
        except BackendError as exc:
            raise BackendError(f"{exc}; delete it by hand: {' '.join(created.delete_command)}") from None
        finally:
            self._mine.discard(created.name)
        self.registry.remove(created.name)

    def close(self) -> None:
        """The session's end: the worker's cluster is deleted, the session's by the last worker out."""
        with self._lock:
            shared, self._shared = self._shared, None
        if shared is None:
            return
        if self.fresh == "session":
            with self.registry.locked():
                if not self.registry.leave(shared.name):
                    self._mine.discard(shared.name)
                    return
        self._retire(shared)

    def _delete_leftovers(self) -> None:
        for name in sorted(self._mine):
            record = self.registry.get(name)
            if record is None:
                continue
            try:
                self._retire(Created(name, record.kubeconfig, record.delete))
            except BackendError as exc:
                log.error("%s", exc)

