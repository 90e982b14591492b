"""The alert rule files the benchmark ships, one per source (Kubernetes, OpenTelemetry Demo).

They are plain Prometheus rule files (their content is also a PrometheusRule's ``spec``), so the
same files load into the twin's rule evaluator and into a real cluster's Prometheus.
"""

from __future__ import annotations

from pathlib import Path

RULES_DIR = Path(__file__).parent


def rule_file_paths() -> list[Path]:
    """The shipped rule files, in name order."""
    return sorted(RULES_DIR.glob("*.yaml"))
