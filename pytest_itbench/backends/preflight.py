"""Checks before any work on a real backend, each failing with what is wrong and what to do.

- Docker runs (``docker info``), for kind and k3s;
- the tools a backend drives are installed (``kind``, ``helm``; testcontainers for k3s);
- the cluster answers (``/version``) and may be used for benchmarking (see :func:`benchmark_allowed`);
- the machine or cluster has room for the applications the session's scenarios deploy.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable

from kubernetes import client as k8s

from ..apps.catalog import application
from ..twin import quantity
from .base import BackendError

BENCHMARK_LABEL = "itbench.io/benchmark"  # on the kube-system Namespace: "allowed" marks a benchmark cluster
BENCHMARK_ALLOWED = "allowed"
CONTEXT_MARK = "itbench"  # a context whose name contains this is a benchmark cluster
MARK_COMMAND = f"kubectl label namespace kube-system {BENCHMARK_LABEL}={BENCHMARK_ALLOWED}"

Run = Callable[..., subprocess.CompletedProcess]


class PreflightError(BackendError):
    """A backend cannot start; the message says why and how to fix it."""


# ---- tools and Docker ------------------------------------------------------------------------------------------------
def tool(name: str, install: str, which: Callable[[str], str | None] = shutil.which) -> str:
    """The path of executable ``name``; else a PreflightError saying how to install it."""
    path = which(name)
    if path is None:
        raise PreflightError(f"`{name}` is not installed (not found on PATH); {install}")
    return path


def docker_running(run: Run = subprocess.run, which: Callable[[str], str | None] = shutil.which) -> "DockerHost":
    """The Docker engine's CPUs and memory; PreflightError when ``docker info`` fails."""
    docker = tool("docker", "install Docker (https://docs.docker.com/engine/install/) and start it", which)
    try:
        done = run([docker, "info", "--format", "{{.NCPU}} {{.MemTotal}}"], capture_output=True, text=True,
                   timeout=30)
    except subprocess.TimeoutExpired:
        raise PreflightError("Docker is not answering: `docker info` did not return within 30 s") from None
    if done.returncode != 0:
        reason = (done.stderr or done.stdout).strip().splitlines()
        raise PreflightError(f"Docker is not running: `docker info` failed ({reason[0] if reason else 'no output'}); "
                             f"start the Docker engine, or use --itbench-backend=twin or existing")
    try:
        cpus, memory = done.stdout.split()
        return DockerHost(int(cpus), int(memory))
    except ValueError:
        raise PreflightError(f"`docker info` answered {done.stdout.strip()!r}, not the CPUs and memory asked "
                             f"for") from None


@dataclass(frozen=True)
class DockerHost:
    cpus: int
    memory: int  # bytes


def python_package(module: str, extra: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise PreflightError(f"the Python package {module} is not installed; pip install 'pytest-itbench[{extra}]'")


# ---- the cluster ------------------------------------------------------------------------------------------------------
def reachable(api: k8s.ApiClient, where: str) -> str:
    """The cluster's version; PreflightError when it does not answer."""
    try:
        return k8s.VersionApi(api).get_code(_request_timeout=15).git_version
    except k8s.ApiException as exc:
        raise PreflightError(f"the cluster of {where} answered /version with {exc.status} {exc.reason}; are the "
                             f"credentials valid?") from None
    except Exception as exc:  # connection refused, DNS, TLS, timeouts: urllib3 raises many kinds
        raise PreflightError(f"cannot reach the cluster of {where}: {type(exc).__name__}: {exc}") from None


def benchmark_allowed(api: k8s.ApiClient, context: str, explicit: bool, where: str) -> str:
    """Why this cluster may be used; PreflightError when it may not.

    Trials create and delete namespaces and cluster-wide RBAC, cordon nodes and break workloads on
    purpose, so the harness runs only where someone said so: the context is named with --itbench-context,
    its name contains ``itbench``, or the cluster's kube-system Namespace carries the label
    ``itbench.io/benchmark=allowed``.
    """
    if explicit:
        return f"context {context!r} named with --itbench-context"
    if CONTEXT_MARK in context.lower():
        return f"context name {context!r} contains {CONTEXT_MARK!r}"
    try:
        labels = k8s.CoreV1Api(api).read_namespace("kube-system").metadata.labels or {}
    except k8s.ApiException as exc:
        labels = {}
        if exc.status not in (403, 404):
            raise PreflightError(f"cannot read the kube-system Namespace of {where}: {exc.status} {exc.reason}") \
                from None
    if labels.get(BENCHMARK_LABEL) == BENCHMARK_ALLOWED:
        return f"kube-system is labelled {BENCHMARK_LABEL}={BENCHMARK_ALLOWED}"
    raise PreflightError(
        f"refusing to run benchmark trials on {where}: it is not marked for benchmarking. Trials create and "
        f"delete namespaces, cluster roles and other objects and break workloads on purpose. If this cluster "
        f"is meant for it, either name the context explicitly (--itbench-context={context}), use a context "
        f"whose name contains {CONTEXT_MARK!r}, or mark the cluster: {MARK_COMMAND}")


# ---- room for the applications --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Needs:
    cpu: Fraction  # cores
    memory: Fraction  # bytes

    def __add__(self, other: "Needs") -> "Needs":
        return Needs(self.cpu + other.cpu, self.memory + other.memory)

    def describe(self) -> str:
        return f"{float(self.cpu):.1f} CPUs and {float(self.memory) / 2**30:.1f} GiB of memory"


NOTHING = Needs(Fraction(0), Fraction(0))
# What a kind or k3s cluster runs before any application (control plane, CoreDNS, CNI, kube-proxy):
# kind v0.24's control-plane pods request about 0.95 CPU and 0.3 GiB, plus the processes' own use.
SYSTEM = Needs(Fraction(1), Fraction(1 * 2**30))


def application_needs(name: str) -> Needs:
    """What the scheduler must find for application ``name``: every container's requests, times replicas.

    A container that sets only limits gets them as requests (the API server's defaulting), so the astronomy
    shop's memory limits count; init containers run before the others and count when larger.
    """
    total = NOTHING
    for doc in application(name).documents():
        if doc.get("kind") not in ("Deployment", "StatefulSet", "DaemonSet"):
            continue
        spec = doc["spec"]["template"]["spec"]
        replicas = Fraction(doc["spec"].get("replicas", 1)) if doc["kind"] != "DaemonSet" else Fraction(1)
        main = _sum(_requests(c) for c in spec.get("containers", []))
        init = [_requests(c) for c in spec.get("initContainers", [])]
        pod = Needs(max([main.cpu, *(i.cpu for i in init)]), max([main.memory, *(i.memory for i in init)]))
        total = total + Needs(pod.cpu * replicas, pod.memory * replicas)
    return total


def _requests(container: dict) -> Needs:
    resources = container.get("resources") or {}
    wanted = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return Needs(quantity.value(wanted.get("cpu", 0)), quantity.value(wanted.get("memory", 0)))


def _sum(needs: Iterable[Needs]) -> Needs:
    total = NOTHING
    for n in needs:
        total = total + n
    return total


def needs_of(applications: Iterable[str], extra: Needs = NOTHING) -> Needs:
    """The largest single application (trials of one worker run one at a time) plus ``extra``."""
    apps = [application_needs(a) for a in sorted(set(applications))]
    biggest = Needs(max([n.cpu for n in apps], default=Fraction(0)), max([n.memory for n in apps], default=Fraction(0)))
    return biggest + extra


def room_on_docker(host: DockerHost, needs: Needs, what: str) -> None:
    if host.cpus < needs.cpu or host.memory < needs.memory:
        raise PreflightError(
            f"Docker has {host.cpus} CPUs and {host.memory / 2**30:.1f} GiB of memory; {what} needs {needs.describe()} "
            f"(docs/real-clusters.md, 'Resources'); give Docker more, or run fewer applications (-k)")


def room_on_cluster(api: k8s.ApiClient, needs: Needs, what: str, where: str) -> None:
    nodes = k8s.CoreV1Api(api).list_node().items
    ready = [n for n in nodes if not (n.spec and n.spec.unschedulable)]
    cpu = sum((quantity.value((n.status.allocatable or {}).get("cpu", 0)) for n in ready), Fraction(0))
    memory = sum((quantity.value((n.status.allocatable or {}).get("memory", 0)) for n in ready), Fraction(0))
    if cpu < needs.cpu or memory < needs.memory:
        raise PreflightError(
            f"the schedulable nodes of {where} have {float(cpu):.1f} CPUs and {float(memory) / 2**30:.1f} GiB "
            f"allocatable; {what} needs {needs.describe()} (docs/real-clusters.md, 'Resources')")
