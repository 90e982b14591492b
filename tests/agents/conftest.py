"""Helpers for the agent tests: tasks with short deadlines, and agent programs written on the fly."""

from __future__ import annotations

import stat
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_itbench.agents import Task
from pytest_itbench.twin import Twin
from tests.conftest import KUBECTL, Kubectl


@pytest.fixture
def make_task(tmp_path):
    """``make_task(time_limit=10, urls=..., kubeconfig=...)``: a Task whose deadline starts now."""

    def make(time_limit: float = 20.0, urls: dict[str, str] | None = None, kubeconfig: str | None = None,
             namespaces: tuple[str, ...] = ("shop",), domain: str = "sre", workdir: Path | None = None) -> Task:
        workdir = workdir or tmp_path / "work"
        workdir.mkdir(parents=True, exist_ok=True)
        if kubeconfig is None:
            kubeconfig = str(tmp_path / "agent-kubeconfig")
            Path(kubeconfig).write_text("apiVersion: v1\nkind: Config\n")
        return Task(scenario_id="sre-test", domain=domain, text="Find the root cause.", kubeconfig=kubeconfig,
                    urls=dict(urls if urls is not None else {"prometheus": "http://127.0.0.1:9/prometheus"}),
                    workdir=str(workdir), deadline=time.time() + time_limit, time_limit=time_limit,
                    namespaces=namespaces)

    return make


@pytest.fixture
def script(tmp_path):
    """``script("name.sh", text)``: an executable file in a directory of agent programs."""
    directory = tmp_path / "agents"
    directory.mkdir()

    def write(name: str, text: str) -> Path:
        path = directory / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path

    return write


SHOP = """
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: agent-admin, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: agent}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cart, namespace: shop}
spec:
  replicas: 0
  selector: {matchLabels: {app: cart}}
  template:
    metadata: {labels: {app: cart}}
    spec: {containers: [{name: cart, image: registry.k8s.io/pause:3.9}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: frontend, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: frontend}}
  template:
    metadata: {labels: {app: frontend}}
    spec: {containers: [{name: frontend, image: registry.k8s.io/pause:3.9}]}
---
apiVersion: v1
kind: Service
metadata: {name: cart, namespace: shop}
spec: {selector: {app: cart}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cart-config-5d8f, namespace: shop}
data: {CART_PORT: "8080"}
"""


@dataclass
class Shop:
    """A one-node twin running a small shop whose cart is scaled to zero (frontend available)."""

    twin: Twin
    admin: Kubectl
    agent_kubeconfig: str  # user "agent": admin of namespace shop only

    def replicas(self, deployment: str) -> int:
        return self.admin.run("get", "deployment", deployment, "-n", "shop", "-o", "json").json()["spec"]["replicas"]


@pytest.fixture
def shop(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH; these tests drive the real kubectl binary")
    with Twin(seed=11, nodes=1) as twin:
        admin = Kubectl(twin, tmp_path / "admin")
        admin("apply", "-f", "-", input=SHOP)
        twin.warp(60)  # the frontend's pod scheduled, started and ready
        yield Shop(twin, admin, twin.write_kubeconfig(tmp_path / "agent-kubeconfig", "agent"))
