"""The scrape targets of the monitoring stack ITBench installs, with the labels Prometheus gives them.

ITBench deploys kube-prometheus-stack as release ``prometheus`` in namespace ``prometheus``; the
Prometheus Operator turns its ServiceMonitors into scrape configurations whose relabelling gives
each target ``job``, ``instance``, ``namespace``, ``service``, ``endpoint``, and ``pod``/``container``
(pod endpoints) or ``node`` (the kubelet's node endpoints). The OpenTelemetry Demo's collector is
scraped through the ServiceMonitor of its own chart. Those target labels are reproduced here so
that a query written against such a cluster selects the same series on the twin.

The monitoring stack's own pods are not objects of the twin (an agent cannot see that namespace
anyway); their names and addresses are drawn once from the telemetry's seeded generator.
"""

from __future__ import annotations

import random

from .. import labels as lbl
from ..labels import Labels

MONITORING_NAMESPACE = "prometheus"
PROMETHEUS = "prometheus-kube-prometheus-prometheus"  # the Prometheus object (and its Service)
EXTERNAL_URL = f"http://{PROMETHEUS}.{MONITORING_NAMESPACE}:9090"  # the Operator's default external URL
# The Operator adds these to every alert Prometheus sends (prometheus_replica is dropped before sending).
EXTERNAL_LABELS = {"prometheus": f"{MONITORING_NAMESPACE}/{PROMETHEUS}"}
RULE_FILE_DIR = f"/etc/prometheus/rules/prometheus-{PROMETHEUS}-rulefiles-0"

KUBELET_SERVICE = "prometheus-kube-prometheus-kubelet"  # the Operator's kubelet Service in kube-system
KUBELET_PORT = 10250
KSM_SERVICE = "prometheus-kube-state-metrics"
KSM_PORT = 8080
COLLECTOR_SERVICE = "otel-collector"  # the demo chart's fullnameOverride
COLLECTOR_PORT = 8888  # ITBench's prometheus exporter endpoint (the Service's `metrics` port)

_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # what Kubernetes draws generated name suffixes from


def kube_state_metrics(rng: random.Random) -> Labels:
    """The kube-state-metrics target (a Deployment's pod behind the ``http`` port)."""
    suffix = "".join(rng.choice(_NAME_ALPHABET) for _ in range(10))
    pod = f"{KSM_SERVICE}-{suffix}-{''.join(rng.choice(_NAME_ALPHABET) for _ in range(5))}"
    address = f"10.244.{rng.randint(1, 3)}.{rng.randint(2, 254)}"
    return lbl.from_mapping({"container": "kube-state-metrics", "endpoint": "http", "instance": f"{address}:{KSM_PORT}",
                             "job": "kube-state-metrics", "namespace": MONITORING_NAMESPACE, "pod": pod,
                             "service": KSM_SERVICE})


def kubelet_cadvisor(node: str, address: str) -> Labels:
    """A node's kubelet, at its ``/metrics/cadvisor`` path (the Operator's kubelet Endpoints list nodes)."""
    return lbl.from_mapping({"endpoint": "https-metrics", "instance": f"{address}:{KUBELET_PORT}", "job": "kubelet",
                             "metrics_path": "/metrics/cadvisor", "namespace": "kube-system", "node": node,
                             "service": KUBELET_SERVICE})


def otel_collector(namespace: str) -> Labels:
    """The application's OpenTelemetry Collector, whose prometheus exporter serves the span metrics.

    The collector is modelled, not a pod of the twin, so the target has no ``pod`` label and its
    ``instance`` names the Service rather than a pod address.
    """
    return lbl.from_mapping({"container": "opentelemetry-collector", "endpoint": "metrics",
                             "instance": f"{COLLECTOR_SERVICE}.{namespace}:{COLLECTOR_PORT}",
                             "job": COLLECTOR_SERVICE, "namespace": namespace, "service": COLLECTOR_SERVICE})
