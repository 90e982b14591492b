"""Fixtures shared by the plugin's own tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass

import pytest

from pytest_itbench.twin import Twin

# pytester runs nested pytest sessions (the plugin's outputs are checked through real runs). It is
# declared here because pytest refuses ``pytest_plugins`` in a conftest below the top level.
pytest_plugins = ["pytester"]


def _load_every_kubernetes_model() -> None:
    """Import all of the official client's models now, once per process.

    The client imports its models lazily, on first attribute access. pytester's in-process runs restore
    ``sys.modules`` afterwards, dropping any model first imported inside them; the next access imports
    a second copy of the class, which the client's pydantic-validated methods then refuse ("Input should
    be a valid dictionary or instance of V1Eviction", given a V1Eviction). Loaded here, before any
    nested run, every model is in pytester's snapshot and is kept.
    """
    import kubernetes.client

    for name in kubernetes.client.__all__:
        getattr(kubernetes.client, name)


_load_every_kubernetes_model()

# The MCP server's modules (the SDK, Starlette, uvicorn: about a second to import), loaded once before any nested
# run for the same reason: pytester would drop them after each run and every trial session would import them again.
import pytest_itbench.mcp.trial  # noqa: E402,F401


def pytest_collection_modifyitems(config, items):
    """The slowest tests first: whole sessions (end_to_end), then tests that run nested sessions (pytester).

    xdist's load scheduling hands tests out in this order; started last, a few sessions of minutes ran alone
    at the end of CI while the other worker sat idle. A module moves whole (its module-scoped fixtures are set
    up once), ranked by its slowest kind of test; the order within it is kept.
    """
    def cost(item) -> int:
        if item.get_closest_marker("end_to_end") is not None:
            return 0
        return 1 if "pytester" in getattr(item, "fixturenames", ()) else 2

    by_module: dict[str, int] = {}
    for item in items:
        by_module[item.nodeid.split("::")[0]] = min(cost(item), by_module.get(item.nodeid.split("::")[0], 2))
    items.sort(key=lambda item: by_module[item.nodeid.split("::")[0]])

KUBECTL = shutil.which("kubectl")


@pytest.fixture
def twin():
    """A started twin with three ready nodes and no controllers: the API server alone, whose state
    the test sets as it likes (statuses, usage), stopped after the test."""
    with Twin(seed=7, nodes=3, controllers=(), telemetry=False, workload=False) as t:
        yield t


@pytest.fixture
def cluster():
    """A started twin with three ready nodes and every controller: a whole cluster on the twin's clock."""
    with Twin(seed=7, nodes=3) as t:
        yield t


@dataclass
class KubectlResult:
    returncode: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)


class Kubectl:
    """Runs the real kubectl against a twin, with a kubeconfig and a fresh discovery cache of its own."""

    def __init__(self, twin: Twin, workdir, identity: str = "admin"):
        self.twin = twin
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.kubeconfig = twin.write_kubeconfig(workdir / "kubeconfig", identity)
        self.env = dict(os.environ, KUBECONFIG=self.kubeconfig, KUBECACHEDIR=str(workdir / "cache"),
                        HOME=str(workdir))

    def run(self, *args: str, input: str | None = None, timeout: float = 30, check: bool = True) -> KubectlResult:
        proc = subprocess.run([KUBECTL, *args], input=input, capture_output=True, text=True, env=self.env,
                              timeout=timeout, cwd=self.workdir)
        result = KubectlResult(proc.returncode, proc.stdout, proc.stderr)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
        return result

    def __call__(self, *args: str, **kw) -> str:
        return self.run(*args, **kw).stdout

    def fails(self, *args: str, **kw) -> KubectlResult:
        result = self.run(*args, check=False, **kw)
        assert result.returncode != 0, f"kubectl {' '.join(args)} succeeded unexpectedly:\n{result.stdout}"
        return result


@pytest.fixture
def kubectl(twin, tmp_path):
    """The real kubectl, as the cluster admin."""
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH; these tests drive the real kubectl binary")
    return Kubectl(twin, tmp_path / "admin")


@pytest.fixture
def kubectl_as(twin, tmp_path):
    """kubectl as another identity: ``kubectl_as("system:serviceaccount:ns:name")``."""
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH; these tests drive the real kubectl binary")

    def make(identity: str) -> Kubectl:
        safe = identity.replace(":", "_")
        return Kubectl(twin, tmp_path / safe, identity)

    return make


@pytest.fixture
def client(twin, tmp_path):
    """The official kubernetes client's ApiClient, configured from an admin kubeconfig."""
    from kubernetes import client as k8s, config

    path = twin.write_kubeconfig(tmp_path / "client-kubeconfig")
    configuration = k8s.Configuration()
    config.load_kube_config(config_file=path, client_configuration=configuration)
    api_client = k8s.ApiClient(configuration)
    yield api_client
    api_client.close()


class RawAPI:
    """Plain HTTPS requests to the twin, for what no client library sends (bad bodies, odd headers)."""

    def __init__(self, twin: Twin, token: str):
        import ssl
        self.twin = twin
        self.token = token
        self.context = ssl.create_default_context(cadata=twin.certificates.ca_pem)

    def request(self, method: str, path: str, body: bytes | str | dict | None = None, headers: dict | None = None,
                token: str | None = None):
        import http.client
        from urllib.parse import urlparse
        url = urlparse(self.twin.url)
        conn = http.client.HTTPSConnection(url.hostname, url.port, context=self.context, timeout=30)
        hdrs = {"Authorization": f"Bearer {token or self.token}", "Accept": "application/json"}
        if isinstance(body, dict):
            body = json.dumps(body)
            hdrs["Content-Type"] = "application/json"
        hdrs.update(headers or {})
        try:
            conn.request(method, path, body=body, headers=hdrs)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, dict(resp.getheaders()), data
        finally:
            conn.close()

    def json(self, method: str, path: str, body=None, headers=None):
        status, hdrs, data = self.request(method, path, body, headers)
        return status, json.loads(data) if data else None


@pytest.fixture
def raw(twin):
    return RawAPI(twin, twin.token())
