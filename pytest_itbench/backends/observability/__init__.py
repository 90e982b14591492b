"""The observability stack a real cluster needs, which the twin simulates: the commands that install it.

On kind and k3s the harness installs, from pinned upstream Helm charts and the values files beside this
module: Prometheus and Alertmanager (kube-prometheus-stack) with the shipped rule files as PrometheusRules,
the OpenTelemetry Collector turning spans into span metrics, Jaeger, and, for the scenarios that need them,
Chaos Mesh and Kyverno. The apps send OTLP to ``otel-collector:4318`` in their own namespace, so each
application namespace gets an ExternalName Service of that name pointing at the collector
(:func:`collector_alias`).

Prometheus, Alertmanager and Jaeger's query API are NodePort Services on fixed node ports (``NODE_PORTS``);
the kind config maps them to free ports of the host, the k3s container exposes them, and the URLs the
trial gets are those host ports. Topology (ITBench's topology monitor) and OpenCost are not installed: the
evaluator builds the topology graph from the API without one, and FinOps scenarios need the twin.

This module only builds commands and documents; ``install`` runs them. Not exercised end to end on a
machine without Docker (docs/real-clusters.md, "What is tested where").
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable

import yaml

from ...apps.rules import rule_file_paths
from ..base import BackendError
from ..preflight import Needs

VALUES_DIR = Path(__file__).parent
MONITORING_NAMESPACE = "prometheus"  # the harness's own rules live here (finops_setup.MONITORING_NAMESPACE)
OBSERVABILITY_NAMESPACE = "observability"  # collector and Jaeger
NODE_PORTS = {"prometheus": 30090, "alertmanager": 30093, "jaeger": 30686}
HELM_TIMEOUT = "10m"


@dataclass(frozen=True)
class Chart:
    release: str
    namespace: str
    repository: str
    chart: str
    version: str  # pinned: a new chart version changes what the benchmark measures
    values: str  # file beside this module


CHARTS = (
    Chart("prometheus", MONITORING_NAMESPACE, "https://prometheus-community.github.io/helm-charts",
          "kube-prometheus-stack", "65.1.1", "prometheus-values.yaml"),
    Chart("jaeger", OBSERVABILITY_NAMESPACE, "https://jaegertracing.github.io/helm-charts", "jaeger", "3.4.1",
          "jaeger-values.yaml"),
    Chart("otel-collector", OBSERVABILITY_NAMESPACE, "https://open-telemetry.github.io/opentelemetry-helm-charts",
          "opentelemetry-collector", "0.108.0", "otel-collector-values.yaml"),
    Chart("chaos-mesh", "chaos-mesh", "https://charts.chaos-mesh.org", "chaos-mesh", "2.7.0",
          "chaos-mesh-values.yaml"),
    Chart("kyverno", "kyverno", "https://kyverno.github.io/kyverno/", "kyverno", "3.2.6", "kyverno-values.yaml"),
)

# What the stack requests (the values files' requests, plus the operators' and Kyverno's and Chaos Mesh's
# own defaults, rounded up): part of the preflight's resource check.
STACK_NEEDS = Needs(Fraction(3, 2), Fraction(3 * 2**30))


def helm_commands(kubeconfig: str, charts: tuple[Chart, ...] = CHARTS, helm: str = "helm") -> list[list[str]]:
    """``helm upgrade --install`` per chart, pinned, from its repository URL (no ``helm repo add`` state)."""
    commands = []
    for chart in charts:
        commands.append([helm, "upgrade", "--install", chart.release, chart.chart, "--repo", chart.repository,
                         "--version", chart.version, "--namespace", chart.namespace, "--create-namespace",
                         "--values", str(VALUES_DIR / chart.values), "--kubeconfig", kubeconfig,
                         "--wait", "--timeout", HELM_TIMEOUT])
    return commands


def rule_objects() -> list[dict]:
    """The shipped rule files as PrometheusRules in the monitoring namespace (their content is the spec)."""
    objects = []
    for path in rule_file_paths():
        objects.append({"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
                        "metadata": {"name": f"itbench-{path.stem}", "namespace": MONITORING_NAMESPACE,
                                     "labels": {"release": "prometheus",
                                                "app.kubernetes.io/managed-by": "pytest-itbench"}},
                        "spec": yaml.safe_load(path.read_text())})
    return objects


def extra_manifests() -> list[dict]:
    """What the charts do not make: the rules, and Jaeger's query API on its NodePort."""
    return rule_objects() + list(yaml.safe_load_all((VALUES_DIR / "jaeger-nodeport.yaml").read_text()))


def collector_alias(namespace: str) -> dict:
    """``otel-collector`` in an application namespace, naming the collector of the observability namespace."""
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "otel-collector", "namespace": namespace,
                         "labels": {"app.kubernetes.io/managed-by": "pytest-itbench"}},
            "spec": {"type": "ExternalName",
                     "externalName": f"otel-collector.{OBSERVABILITY_NAMESPACE}.svc.cluster.local"}}


def urls(host_ports: dict[str, int], host: str = "127.0.0.1") -> dict[str, str]:
    """The trial's URLs from the host ports the node ports were mapped to."""
    return {signal: f"http://{host}:{host_ports[signal]}" for signal in NODE_PORTS if signal in host_ports}


def install(kubeconfig: str, run: Callable[..., subprocess.CompletedProcess] = subprocess.run,
            helm: str = "helm") -> None:
    """Run the helm commands, then apply the extra manifests; BackendError naming the step that failed."""
    for command in helm_commands(kubeconfig, helm=helm):
        done = run(command, capture_output=True, text=True, timeout=1200)
        if done.returncode != 0:
            raise BackendError(f"installing the observability stack failed at `{' '.join(command[:4])}` "
                               f"({command[command.index('--version') + 1]}): "
                               f"{(done.stderr or done.stdout).strip()[-500:]}")
    from kubernetes import config as k8s_config

    from ...ciso_setup import apply_objects

    api = k8s_config.new_client_from_config(config_file=kubeconfig)
    try:
        problems = apply_objects(api, extra_manifests())
    finally:
        api.close()
    if problems:
        raise BackendError("applying the observability stack's rules and services failed: " + "; ".join(problems))
