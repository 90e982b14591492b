"""``--itbench-backend=kind``: Kubernetes in Docker, created by the ``kind`` CLI.

The node image is pinned by digest (kind's release notes say to: an image is built for one kind release);
the cluster config is the one this package ships (``kind-cluster.yaml``: one control plane, N workers),
with the observability stack's node ports mapped to free ports of the host. The kubeconfig goes to a file
of the trial's (or the worker's) own, never to ``~/.kube/config``.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Callable

import yaml

from . import observability
from .base import BackendError
from .created_clusters import Created, CreatedClusterBackend
from .preflight import PreflightError, tool

KIND_MINIMUM = (0, 29, 0)  # the kind release the pinned image was built for
NODE_IMAGE = "kindest/node:v1.31.9@sha256:b94a3a6c06198d17f59cca8c6f486236fa05e2fb359cbd75dabbfc348a10b211"
CONFIG = Path(__file__).with_name("kind-cluster.yaml")
CREATE_TIMEOUT = 600  # seconds for `kind create cluster`, image pull included
INSTALL = "install kind v0.29.0 or later (https://kind.sigs.k8s.io/docs/user/quick-start/#installation)"

Run = Callable[..., subprocess.CompletedProcess]


def check_kind(run: Run = subprocess.run, which: Callable[[str], str | None] = shutil.which) -> str:
    """``kind`` is installed and recent enough for the pinned node image; its version."""
    kind = tool("kind", INSTALL, which)
    try:
        done = run([kind, "version"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise PreflightError("`kind version` did not return within 30 s") from None
    found = re.search(r"v(\d+)\.(\d+)\.(\d+)", done.stdout or "")
    if done.returncode != 0 or found is None:
        raise PreflightError(f"`kind version` failed or printed no version ({(done.stderr or done.stdout).strip()!r}); "
                             f"{INSTALL}")
    version = tuple(int(x) for x in found.groups())
    if version < KIND_MINIMUM:
        raise PreflightError(f"kind {found.group(0)} is older than v{'.'.join(map(str, KIND_MINIMUM))}, which the "
                             f"pinned node image ({NODE_IMAGE.split('@')[0]}) was built for; {INSTALL}")
    return f"kind {found.group(0)}"


def cluster_config(workers: int, host_ports: dict[int, int] | None = None) -> dict:
    """The shipped config with ``workers`` worker nodes and ``host_ports`` (node port -> host port) mapped."""
    if workers < 0:
        raise ValueError(f"workers must be 0 or more, got {workers}")
    shipped = yaml.safe_load(CONFIG.read_text())
    control = next(n for n in shipped["nodes"] if n["role"] == "control-plane")
    worker = next(n for n in shipped["nodes"] if n["role"] == "worker")
    control = copy.deepcopy(control)
    if host_ports:
        control["extraPortMappings"] = [{"containerPort": node, "hostPort": host, "listenAddress": "127.0.0.1",
                                         "protocol": "TCP"} for node, host in sorted(host_ports.items())]
    config = {k: v for k, v in shipped.items() if k != "nodes"}
    config["nodes"] = [control] + [copy.deepcopy(worker) for _ in range(workers)]
    return config


def create_command(kind: str, name: str, config_path: str, kubeconfig_path: str) -> list[str]:
    return [kind, "create", "cluster", "--name", name, "--image", NODE_IMAGE, "--config", config_path,
            "--kubeconfig", kubeconfig_path, "--wait", "5m"]


def delete_command(kind: str, name: str) -> list[str]:
    return [kind, "delete", "cluster", "--name", name]


def free_ports(count: int) -> list[int]:
    """Ports free on the loopback now (the kind node binds them a moment later)."""
    sockets, ports = [], []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in sockets:
            s.close()
    return ports


class KindBackend(CreatedClusterBackend):
    name = "kind"

    def __init__(self, *, workers: int = 2, run: Run = subprocess.run, kind: str | None = None, **kw):
        self.workers = workers
        self.run = run
        self.kind = kind or shutil.which("kind") or "kind"
        super().__init__(**kw)

    def delete_command_for(self, name: str) -> list[str]:
        return delete_command(self.kind, name)

    def _create(self, name: str, directory: str) -> Created:
        host_ports = dict(zip(observability.NODE_PORTS.values(), free_ports(len(observability.NODE_PORTS)))) \
            if self.observability else {}
        config_path = os.path.join(directory, f"{name}.kind.yaml")
        with open(config_path, "w") as fh:
            yaml.safe_dump(cluster_config(self.workers, host_ports), fh, sort_keys=False)
        kubeconfig_path = os.path.join(directory, f"{name}.kubeconfig")
        command = create_command(self.kind, name, config_path, kubeconfig_path)
        try:
            done = self.run(command, capture_output=True, text=True, timeout=CREATE_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise BackendError(f"`kind create cluster --name {name}` did not finish within {CREATE_TIMEOUT} s") \
                from None
        if done.returncode != 0:
            raise BackendError(f"`kind create cluster --name {name}` failed: {(done.stderr or done.stdout).strip()[-800:]}")
        by_signal = {signal: host_ports[node] for signal, node in observability.NODE_PORTS.items() if node in host_ports}
        return Created(name, kubeconfig_path, delete_command(self.kind, name), observability.urls(by_signal))

    def _delete(self, created: Created) -> None:
        try:
            done = self.run(created.delete_command, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BackendError(f"deleting kind cluster {created.name} failed: {exc}") from None
        if done.returncode != 0:
            raise BackendError(f"deleting kind cluster {created.name} failed: {(done.stderr or done.stdout).strip()[-500:]}")
