"""The backend's command-line options, their checks, and the session's Backend built from them.

Kept out of plugin.py so that the plugin only calls ``add_options``, ``configure``, ``make`` and ``header``.
Every check fails before any trial with a ``pytest.UsageError`` naming the option and what is wrong.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import pytest

from . import NAMES as BACKENDS
from .base import SIGNALS, BackendError
from .kubeconfig import KubeconfigError

FRESH = ("trial", "worker", "session")
_HEADER = pytest.StashKey[str]()


def add_options(group) -> None:
    group.addoption("--itbench-backend", default="twin", metavar="NAME",
                    help="where trials run: twin (default, the embedded Kubernetes twin), existing (the cluster of "
                         "--itbench-kubeconfig), kind or k3s (a cluster created in Docker); docs/real-clusters.md")
    group.addoption("--itbench-kubeconfig", metavar="PATH",
                    help="existing backend: the kubeconfig of the cluster to run trials on")
    group.addoption("--itbench-context", metavar="NAME",
                    help="existing backend: the kubeconfig context to use (default: its current-context, which "
                         "must be marked for benchmarking; naming it here is the permission)")
    for signal in SIGNALS:
        group.addoption(f"--itbench-{signal}-url", metavar="URL",
                        help=f"existing backend: the {signal} API of the cluster, as the harness and agent reach it")
    group.addoption("--itbench-fresh", default="trial", choices=FRESH, metavar="SCOPE",
                    help="kind and k3s: a new cluster per trial (default), per xdist worker, or per session; a "
                         "shared one has its namespaces cleaned between trials")
    group.addoption("--itbench-kind-workers", type=int, default=2, metavar="N",
                    help="kind: worker nodes beside the control plane (default 2)")
    group.addoption("--itbench-observability", default="helm", choices=("helm", "none"),
                    help="kind and k3s: install the observability stack from pinned Helm charts (default), or none")


def configure(config) -> None:
    """Check the backend options; with an agent to run, check the backend can start (preflight)."""
    name = config.getoption("itbench_backend")
    if name not in BACKENDS:
        raise pytest.UsageError(f"--itbench-backend={name}: unknown backend; available: {', '.join(BACKENDS)}")
    kubeconfig_path = config.getoption("itbench_kubeconfig")
    urls = signal_urls(config)
    for signal, url in urls.items():
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise pytest.UsageError(f"--itbench-{signal}-url={url}: not an http:// or https:// URL")
    if name != "existing":
        for option, value in (("--itbench-kubeconfig", kubeconfig_path), ("--itbench-context",
                                                                          config.getoption("itbench_context")),
                              *((f"--itbench-{s}-url", u) for s, u in urls.items())):
            if value:
                raise pytest.UsageError(f"{option} is for --itbench-backend=existing (the backend is {name})")
    if config.getoption("itbench_kind_workers") < 0:
        raise pytest.UsageError(f"--itbench-kind-workers must be 0 or more, got {config.getoption('itbench_kind_workers')}")
    if name == "existing" and not kubeconfig_path:
        raise pytest.UsageError("--itbench-backend=existing needs --itbench-kubeconfig=PATH (the cluster to run on)")
    if not config.getoption("itbench_agent"):
        return  # nothing will run: no cluster needed
    try:
        config.stash[_HEADER] = _preflight(config, name)
    except (BackendError, KubeconfigError) as exc:
        raise pytest.UsageError(f"--itbench-backend={name}: {exc}") from None


def signal_urls(config) -> dict[str, str]:
    return {s: u for s in SIGNALS if (u := config.getoption(f"itbench_{s}_url"))}


def _preflight(config, name: str) -> str:
    from . import preflight

    if name == "existing":
        from kubernetes import client as k8s, config as k8s_config

        from . import kubeconfig

        selection = kubeconfig.select(_path(config), config.getoption("itbench_context"))
        where = f"context {selection.context!r} ({selection.server}) of {selection.path}"
        configuration = k8s.Configuration()
        try:
            k8s_config.load_kube_config(config_file=selection.path, context=selection.context,
                                        client_configuration=configuration)
        except Exception as exc:  # the client's own loader: exec plugins, certificate files
            raise BackendError(f"the official client cannot use {where}: {exc}") from None
        with k8s.ApiClient(configuration) as api:
            version = preflight.reachable(api, where)
            why = preflight.benchmark_allowed(api, selection.context, selection.explicit, where)
        from .existing import ExistingBackend

        return f"existing, Kubernetes {version}, {why}; " + ExistingBackend(selection, signal_urls(config),
                                                                              register_exit=False).describe()
    if name == "kind":
        from .kind import check_kind

        host = preflight.docker_running()
        what = check_kind()
    elif name == "k3s":
        preflight.python_package("testcontainers", "k3s")
        host = preflight.docker_running()
        what = "testcontainers"
    else:
        return "twin"
    if config.getoption("itbench_observability") == "helm":
        preflight.tool("helm", "install Helm 3 (https://helm.sh/docs/intro/install/), or pass "
                               "--itbench-observability=none (then no Prometheus: SRE scenarios cannot run)")
    return f"{name} ({what}, fresh per {config.getoption('itbench_fresh')}), Docker with {host.cpus} CPUs and " \
           f"{host.memory / 2**30:.1f} GiB"


def _path(config) -> str:
    path = config.getoption("itbench_kubeconfig")
    return path if os.path.isabs(path) else os.path.join(str(config.invocation_params.dir), path)


def make(config, session=None):
    """The session's Backend (the itbench_backend fixture); checks there is room for the applications."""
    name = config.getoption("itbench_backend")
    if name == "twin":
        from .twin import TwinBackend
        return TwinBackend()
    applications = _applications(session)
    from . import kubeconfig, preflight

    if name == "existing":
        from .existing import ExistingBackend

        backend = ExistingBackend(kubeconfig.select(_path(config), config.getoption("itbench_context")),
                                  signal_urls(config))
        if applications:
            with backend.admin_api() as api:
                preflight.room_on_cluster(api, preflight.needs_of(applications), " and ".join(applications),
                                          backend.describe_where())
        return backend
    needs = preflight.needs_of(applications, preflight.SYSTEM)
    if config.getoption("itbench_observability") == "helm":
        from .observability import STACK_NEEDS
        needs = needs + STACK_NEEDS
    preflight.room_on_docker(preflight.docker_running(), needs, _what(applications, config))
    common = dict(fresh=config.getoption("itbench_fresh"),
                  observability=config.getoption("itbench_observability") == "helm")
    if name == "kind":
        from .kind import KindBackend
        return KindBackend(workers=config.getoption("itbench_kind_workers"), **common)
    from .k3s import K3sBackend
    return K3sBackend(**common)


def _what(applications, config) -> str:
    parts = [" and ".join(applications) or "the cluster"]
    if config.getoption("itbench_observability") == "helm":
        parts.append("the observability stack")
    return " with ".join(parts)


def _applications(session) -> list[str]:
    if session is None:
        return []
    found = set()
    for item in getattr(session, "items", []):
        for marker in item.iter_markers("application"):
            if marker.args:
                found.add(marker.args[0])
    return sorted(found)


def header(config) -> list[str]:
    text = config.stash.get(_HEADER, None)
    return [f"itbench backend: {text}"] if text and text != "twin" else []
