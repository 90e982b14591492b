"""``--itbench-backend=k3s``: a single-node k3s in Docker, started through testcontainers' K3SContainer.

Needs ``pip install 'pytest-itbench[k3s]'`` (testcontainers) and Docker. The image is pinned; the
observability stack's node ports are exposed by the container and reached on the host ports Docker picks.
The container is removed with ``docker rm -f -v`` by id, which any process (the registry's sweep too) can run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any, Callable

from . import observability
from .base import BackendError
from .created_clusters import Created, CreatedClusterBackend

IMAGE = "rancher/k3s:v1.31.9-k3s1"  # Kubernetes 1.31, as the twin reports and kind runs

Run = Callable[..., subprocess.CompletedProcess]


def container_settings(name: str, image: str = IMAGE,
                       node_ports=tuple(observability.NODE_PORTS.values())) -> dict[str, Any]:
    """What the K3SContainer is built with: the cluster's name as the container's (so ``docker rm`` finds it
    before its id is known), the pinned image and the node ports to expose."""
    return {"name": name, "image": image, "enable_cgroup_mount": True, "exposed_ports": list(node_ports)}


def start_container(settings: dict[str, Any]):
    """Start a K3SContainer (testcontainers, imported here: an optional dependency)."""
    try:
        from testcontainers.k3s import K3SContainer
    except ImportError:
        raise BackendError("the k3s backend needs testcontainers: pip install 'pytest-itbench[k3s]'") from None
    container = K3SContainer(image=settings["image"], enable_cgroup_mount=settings["enable_cgroup_mount"])
    container.with_name(settings["name"])
    container.with_exposed_ports(*settings["exposed_ports"])
    container.start()
    return container


def delete_command(docker: str, container_id: str) -> list[str]:
    return [docker, "rm", "-f", "-v", container_id]


class K3sBackend(CreatedClusterBackend):
    name = "k3s"

    def __init__(self, *, image: str = IMAGE, run: Run = subprocess.run, start: Callable = start_container, **kw):
        self.image = image
        self.run = run
        self.start = start
        self.docker = shutil.which("docker") or "docker"
        super().__init__(**kw)

    def delete_command_for(self, name: str) -> list[str]:
        return delete_command(self.docker, name)  # the container is named after the cluster

    def _create(self, name: str, directory: str) -> Created:
        container = self.start(container_settings(name, self.image))
        container_id = name
        try:
            kubeconfig_path = os.path.join(directory, f"{name}.kubeconfig")
            fd = os.open(kubeconfig_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(container.config_yaml())
            host = container.get_container_host_ip()
            ports = {signal: int(container.get_exposed_port(node)) for signal, node in observability.NODE_PORTS.items()}
        except BaseException:
            self.run(delete_command(self.docker, container_id), capture_output=True, timeout=120)
            raise
        return Created(name, kubeconfig_path, delete_command(self.docker, container_id),
                       observability.urls(ports, host) if self.observability else {})

    def _delete(self, created: Created) -> None:
        try:
            done = self.run(created.delete_command, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BackendError(f"removing k3s container of {created.name} failed: {exc}") from None
        if done.returncode != 0 and "No such container" not in (done.stderr or ""):
            raise BackendError(f"removing k3s container of {created.name} failed: {(done.stderr or '').strip()[-300:]}")
