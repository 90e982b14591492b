"""The default backend: a fresh embedded twin per trial."""

from __future__ import annotations

import contextlib
import os
import time

from kubernetes import client as k8s, config as k8s_config

from ..twin import Twin

# Phases without an agent are warped; to keep the timestamps kubectl shows consistent with wall time
# while the agent works, the twin's clock starts this far in the past and the deploy/inject/await
# phases (normally a few simulated minutes) use it up. See docs/twin.md, "Time".
HISTORY = 1200.0


class TwinCluster:
    backend = "twin"

    def __init__(self, twin: Twin, workdir: str):
        self.twin = twin
        self.workdir = workdir
        self.admin_kubeconfig = twin.write_kubeconfig(os.path.join(workdir, "admin.kubeconfig"))
        self.urls = {"prometheus": twin.prometheus_url, "alertmanager": twin.alertmanager_url,
                     "jaeger": twin.jaeger_url, "topology": twin.topology_url, "opencost": twin.opencost_url}
        self._client: k8s.ApiClient | None = None

    def api_client(self) -> k8s.ApiClient:
        if self._client is None:
            configuration = k8s.Configuration()
            k8s_config.load_kube_config(config_file=self.admin_kubeconfig, client_configuration=configuration)
            self._client = k8s.ApiClient(configuration)
        return self._client

    def reserve(self, namespaces, alerts=()) -> None:
        """A fresh twin per trial: every namespace is free."""

    def now(self) -> float:
        return self.twin.clock.now()

    def advance(self, seconds: float) -> None:
        self.twin.warp(seconds)

    @contextlib.contextmanager
    def realtime(self):
        clock = self.twin.clock
        # Catch up with wall time first, so that what the agent sees is stamped like on a real cluster.
        behind = time.time() - clock.now()
        if behind > 0:
            clock.warp(behind)
        clock.follow_wall_time()
        try:
            yield
        finally:
            clock.stop_following()

    def audit_events(self, user: str | None = None) -> list[dict]:
        """The twin API server's audit log (audit.k8s.io/v1 Events of every write), one user's if given."""
        return self.twin.server.audit.events(user)

    def agent_kubeconfig(self, service_account: str, namespace: str, path: str) -> str:
        return self.twin.write_kubeconfig(path, f"system:serviceaccount:{namespace}:{service_account}")

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        self.twin.stop()


class TwinBackend:
    name = "twin"

    def __init__(self, nodes: int = 3):
        self.nodes = nodes

    def provision(self, seed: int, workdir: str) -> TwinCluster:
        twin = Twin(seed=seed, nodes=self.nodes, start_time=time.time() - HISTORY)
        twin.start()
        try:
            return TwinCluster(twin, workdir)
        except BaseException:
            twin.stop()
            raise

    def close(self) -> None:
        """Each trial's twin stops with the trial: nothing outlives it."""
