"""``Twin``: an embedded Kubernetes cluster served on a loopback port from a background thread."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import random
import threading
from typing import Iterable

import base64

import yaml
from aiohttp import web_app as aiohttp_web_app

from .apiserver import admission, limit_ranger, metrics_api, quota_admission, service_allocation
from .apiserver import pod_deletion
from .apiserver.access import rbac_escalation, reviews
from .apiserver.crd.controller import CustomResourceDefinitions
from .apiserver.pod_io import PodIO
from .apiserver.port_forward import PortForwarding
from .apiserver.access.authn import ADMIN_USER, user_for
from .apiserver.registry import Ctx
from .apiserver.server import APIServer
from .bootstrap import add_node, bootstrap, node_name
from .clock import SimClock
from .controllers.apiservices import APIServiceControllers
from .controllers.clusterrole_aggregation import ClusterRoleAggregation
from .controllers.events import EventRecorder, EventSource
from .controllers.garbage_collector import GarbageCollector
from .controllers.install import install as install_controllers
from .controllers.manager import ControllerManager
from .controllers.namespaces import NamespaceLifecycle, fake_ca_pem
from .controllers.reactor import Reactor
from .logs import LogStore
from .metrics import Metrics
from .policy import install as install_kyverno
from .store import Store
from .apiserver.patching.managedfields import forget as forget_managed_fields
from .telemetry.jaeger_api import create_jaeger_app
from .telemetry.monitoring import Monitoring
from .telemetry.prometheus_rules import install as install_prometheus_rules
from .telemetry.sites import LoopbackSites
from .telemetry.topology_api import create_topology_app
from .telemetry.topology_events import TopologyEvents
from .telemetry.topology_monitor import ClusterObjects, TopologyMonitor
from .telemetry.traces import TraceStore
from .tls import generate as generate_certificates
from .workload import install as install_workload

log = logging.getLogger(__name__)

ADMIN = "admin"


class TwinError(RuntimeError):
    pass


class Twin:
    """A Kubernetes API server and cluster state in this process.

    >>> with Twin(nodes=3) as twin:
    ...     path = twin.write_kubeconfig("/tmp/kubeconfig")
    ...     twin.warp(60)

    ``seed`` feeds the one random generator of this environment (uids, names,
    IPs, tokens), so the same seed and the same actions give the same cluster.
    ``controllers`` names the controllers to run (default: all of them; see
    ``controllers/install.py``); tests of one controller run it alone. ``kyverno`` installs Kyverno's
    kinds, webhook and reports controller (``twin/policy/``; default: when every controller runs).
    """

    def __init__(self, *, seed: int = 0, nodes: int = 0, port: int = 0, host: str = "127.0.0.1",
                 start_time: float | None = None, tick: float = 1.0, cluster_name: str = "itbench",
                 tls: bool = True, controllers: Iterable[str] | None = None, telemetry: bool = True,
                 workload: bool = True, kyverno: bool | None = None):
        self.seed = seed
        self.host = host
        self.requested_port = port
        self.cluster_name = cluster_name
        self.rng = random.Random(seed)
        self.clock = SimClock(start=start_time, tick=tick)
        # kubectl sends bearer tokens only over TLS; plain HTTP serves clients that need no token.
        self.certificates = generate_certificates(self.rng, (host,)) if tls else None
        self.store = Store(self.clock, self.rng)
        self.server = APIServer(self.store, self.clock)
        self.api = self.server.api
        self.admin_ctx = Ctx(user=user_for(ADMIN_USER, ("system:masters",)), field_manager="itbench-twin")
        self.controller_ctx = Ctx(user=user_for("system:kube-controller-manager"),
                                  field_manager="kube-controller-manager", trusted=True)
        self.reactor = Reactor(self.api)
        self.api.admission.append(admission.namespace_lifecycle(self.api))
        self.api.admission.append(limit_ranger.limit_ranger(self.api))
        self.api.admission.append(admission.service_account(self.api))
        self.api.admission.append(admission.priority(self.api))
        self.api.admission.append(admission.default_toleration_seconds())
        self.api.admission.append(admission.default_storage_class(self.api))
        quota_admission.register(self.api)  # ResourceQuota comes last, as in kube-apiserver
        # First of the after-write hooks: a Service's IP is taken before any reaction can allocate another.
        self.api.after_write.insert(0, service_allocation.track(self.api))
        rbac_escalation.register(self.api, self.server.authorizer)
        pod_deletion.register(self.api)  # bound pods end gracefully, through their node's kubelet
        self.garbage_collector = GarbageCollector(self.api, self.reactor, self.controller_ctx)
        self.crds = CustomResourceDefinitions(self.server, self.reactor, self.controller_ctx)
        self.clusterrole_aggregation = ClusterRoleAggregation(self.api, self.reactor, self.controller_ctx)
        self.api_services = APIServiceControllers(self.api, self.reactor, self.controller_ctx)
        self.logs = LogStore(self.clock, self.store)
        self.metrics = Metrics(self.clock, self.store)
        self.server.pod_io = PodIO(self.server, self.logs)
        self.events = EventRecorder(self.api, self.clock)
        self.controllers = ControllerManager(self.api, self.clock, self.rng, self.events, self.logs, self.metrics)
        install_controllers(self.controllers, controllers)
        self.server.port_forward = PortForwarding(
            self.server, next((c for c in self.controllers.controllers if c.name == "kubelet"), None))
        reviews.register(self.server)
        metrics_api.register(self.server, self.metrics)
        self.namespaces = NamespaceLifecycle(self.api, self.reactor, self.controller_ctx, self.certificates.ca_pem if self.certificates else fake_ca_pem(self.rng))
        self._node_count = 0
        bootstrap(self.api, self.admin_ctx, 0, cluster_name)
        self.api_services.register_local()
        for _ in range(nodes):
            self.add_node()
        # Traces (the Jaeger query API) and topology (ITBench's topology monitor), each served on a loopback
        # port of its own; the traffic engine feeds ``traces`` and gives ``topology`` its call graph.
        self.traces = TraceStore(self.clock.now)
        self.topology = TopologyMonitor(ClusterObjects(self.api))
        self.topology_events = TopologyEvents(self.store, self.api, self.clock.now)
        self._trace_topology_sites = LoopbackSites(host)
        # The scrape loop and the shipped rules run on the clock; each HTTP API gets a loopback port of its own
        # while serving. ``telemetry=False`` leaves them out (tests of the API server alone).
        self.monitoring = Monitoring(self.clock, self.store, self.metrics, seed=seed) if telemetry else None
        self.tsdb = self.monitoring.tsdb if self.monitoring else None
        self.rules = self.monitoring.rules if self.monitoring else None
        self.alertmanager = self.monitoring.alertmanager if self.monitoring else None
        self._monitoring_sites = LoopbackSites(host)
        if self.monitoring is not None:
            install_prometheus_rules(self)  # the PrometheusRule kind and the Prometheus Operator's webhooks
            # A malformed OpenCost pricing ConfigMap shows as a Warning Event on it (OpenCost only logs it).
            self.monitoring.opencost.pricing.on_problem = lambda obj, message: self.events.record(
                obj, "Warning", "InvalidCustomPricing", message, EventSource("opencost"))
        # The traffic engine (applications' behaviour sheets, traffic, Chaos Mesh) feeds the telemetry above.
        self.workload = install_workload(self) if workload else None
        # Kyverno (policies, its webhook, PolicyReports; twin/policy/): by default with the whole controller set.
        # Idle, and never loading the engine, until a policy exists.
        self.kyverno = install_kyverno(self) if (controllers is None if kyverno is None else kyverno) else None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._stopped = threading.Event()
        self._startup_error: BaseException | None = None
        self._stop_future: asyncio.Future | None = None
        self.port: int | None = None

    # ---- cluster shape -------------------------------------------------------------------------
    def add_node(self, name: str | None = None, *, capacity: dict | None = None, labels: dict | None = None,
                 arch: str = "amd64") -> dict:
        index = self._node_count
        self._node_count += 1
        return add_node(self.api, self.admin_ctx, name or node_name(self.cluster_name, index), index, capacity,
                        labels, arch)

    # ---- serving ------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self.port is None:
            raise TwinError("the twin is not serving; call start() first")
        scheme = "https" if self.certificates else "http"
        return f"{scheme}://{self.host}:{self.port}"

    @property
    def jaeger_url(self) -> str:
        """The Jaeger query API (``/api/traces``, ...) over ``traces``."""
        return self._site_url("jaeger")

    @property
    def topology_url(self) -> str:
        """The topology monitor's API (``/nodes``, ``/edges``, ``/graph``, ...)."""
        return self._site_url("topology")

    @property
    def prometheus_url(self) -> str:
        """The Prometheus HTTP API (``/api/v1/query``, ``/api/v1/alerts``, ...) over the scraped telemetry."""
        return self._monitoring_url("prometheus")

    @property
    def opencost_url(self) -> str:
        """OpenCost's API (``/allocation/compute``, ``/healthz``) over the scraped telemetry."""
        return self._monitoring_url("opencost")

    @property
    def alertmanager_url(self) -> str:
        """Alertmanager's API v2 (``/api/v2/alerts``, ...), fed by the rules."""
        return self._monitoring_url("alertmanager")

    def _monitoring_url(self, name: str) -> str:
        if self.monitoring is None:
            raise TwinError("this twin runs without telemetry (Twin(telemetry=False))")
        port = self._monitoring_sites.ports.get(name)
        if port is None:
            raise TwinError("the twin is not serving; call start() first")
        return f"http://{self.host}:{port}"

    def _site_url(self, name: str) -> str:
        port = self._trace_topology_sites.ports.get(name)
        if port is None:
            raise TwinError("the twin is not serving; call start() first")
        return f"http://{self.host}:{port}"

    def start(self, timeout: float = 10.0) -> "Twin":
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._serve, name=f"twin-apiserver-{self.seed}", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TwinError(f"the twin's API server did not start within {timeout} s")
        if self._startup_error is not None:
            self._thread.join(timeout)
            self._thread = None
            raise TwinError(f"the twin's API server could not start on {self.host}:{self.requested_port}: "
                            f"{self._startup_error}") from self._startup_error
        return self

    def _serve(self) -> None:
        from aiohttp import web

        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        runner = web.AppRunner(self.server.build_app(), access_log=None, handle_signals=False,
                               shutdown_timeout=0.5)
        try:
            loop.run_until_complete(runner.setup())
            ssl_context = self.certificates.server_context() if self.certificates else None
            site = web.TCPSite(runner, self.host, self.requested_port, reuse_address=True, ssl_context=ssl_context)
            loop.run_until_complete(site.start())
            sockets = site._server.sockets if site._server is not None else []  # type: ignore[union-attr]
            self.port = sockets[0].getsockname()[1]
            loop.run_until_complete(self._trace_topology_sites.start({
                "jaeger": create_jaeger_app(self.traces, self.clock.now),
                "topology": create_topology_app(self.topology, self.topology_events, self.clock.now)}))
            if self.monitoring is not None:
                loop.run_until_complete(self._monitoring_sites.start(self.monitoring.apps()))
            self._stop_future = loop.create_future()
        except BaseException as exc:  # report to start(); leave nothing bound
            self._startup_error = exc
            loop.run_until_complete(self._trace_topology_sites.stop())  # bound before a later site failed
            loop.run_until_complete(runner.cleanup())
            loop.close()
            self._ready.set()
            return
        self._ready.set()
        try:
            loop.run_until_complete(self._stop_future)
        finally:
            loop.run_until_complete(self._trace_topology_sites.stop())
            loop.run_until_complete(self._monitoring_sites.stop())
            loop.run_until_complete(runner.cleanup())
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            # Prometheus queries run on the loop's default executor: its threads end with the loop (monitoring).
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()
            self._stopped.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving, end every watch, stop the clock; idempotent."""
        self.clock.close()
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        if self._stop_future is not None and not loop.is_closed():
            loop.call_soon_threadsafe(lambda: self._stop_future.done() or self._stop_future.set_result(None))
        thread.join(timeout)
        if thread.is_alive():
            raise TwinError(f"the twin's API server thread did not stop within {timeout} s")
        self._thread = None
        self.port = None
        # The managedFields memo is the process's, keyed by the stored objects it holds: a stopped twin's
        # objects would otherwise stay in memory until other twins' writes pushed them out.
        forget_managed_fields()
        # aiohttp caches each handler wrapped in its app's middlewares in a module-level LRU (1024 entries):
        # the API server's bound handler in it kept every stopped twin (store, telemetry) alive, +50 MB a trial.
        cached = getattr(aiohttp_web_app, "_cached_build_middleware", None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()

    def __enter__(self) -> "Twin":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- time -------------------------------------------------------------------------------------------
    def warp(self, seconds: float) -> None:
        # A warp allocates many short-lived objects next to the twin's large, long-lived state, and the cyclic
        # collector's passes over that state took a quarter of a warp's CPU; a warp leaves little cyclic
        # garbage, so the collector waits until it ends (and collects then, as usual, if it was enabled).
        enabled = gc.isenabled()
        gc.disable()
        try:
            self.clock.warp(seconds)
        finally:
            if enabled:
                gc.enable()

    # ---- identities ---------------------------------------------------------------------------------------
    def token(self, identity: str = ADMIN, groups: tuple[str, ...] = ()) -> str:
        if identity == ADMIN:
            return self.server.token_for(ADMIN_USER, ("system:masters", *groups))
        return self.server.token_for(identity, groups)

    def kubeconfig(self, identity: str = ADMIN, *, groups: tuple[str, ...] = (), namespace: str | None = None) -> str:
        """A kubeconfig (YAML text) for ``identity``: ``admin``, a user name, or
        ``system:serviceaccount:<namespace>:<name>``."""
        user = ADMIN_USER if identity == ADMIN else identity
        context = {"cluster": self.cluster_name, "user": user}
        if namespace:
            context["namespace"] = namespace
        config = {
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": self.cluster_name, "cluster": self._cluster_entry()}],
            "users": [{"name": user, "user": {"token": self.token(identity, groups)}}],
            "contexts": [{"name": f"{user}@{self.cluster_name}", "context": context}],
            "current-context": f"{user}@{self.cluster_name}",
            "preferences": {},
        }
        return yaml.safe_dump(config, sort_keys=False)

    def _cluster_entry(self) -> dict:
        entry = {"server": self.url}
        if self.certificates:
            entry["certificate-authority-data"] = base64.b64encode(self.certificates.ca_pem.encode()).decode()
        return entry

    def write_kubeconfig(self, path: str | os.PathLike, identity: str = ADMIN, **kw) -> str:
        text = self.kubeconfig(identity, **kw)
        fd = os.open(os.fspath(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        return os.fspath(path)
