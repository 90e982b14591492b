"""Kyverno in the twin: its policy kinds, its validating webhook, and its reports controller.

``install`` does what installing Kyverno (1.12 is the reference) and the Policy WG's report CRDs in a
cluster does: ``kyverno.io/v1`` ClusterPolicy and Policy and ``wgpolicyk8s.io/v1alpha2`` PolicyReport and
ClusterPolicyReport are served (``apps/crds/kyverno.yaml``, ``apps/crds/wgpolicyk8s.yaml``), Enforce
policies reject admission with Kyverno's message (``admission.py``), and the reports controller keeps one
report per resource on the twin's clock (``reports.py``). Policies are evaluated by
:mod:`pytest_itbench.policy.kyverno`, loaded only once a policy exists; until then the webhook and the
controller return at once, so a twin without policies pays nothing but the four CRDs.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path

import yaml

from ..store import clone
from .admission import WebhookDenied, blocked_message
from .reports import BACKGROUND_SCAN_INTERVAL, KyvernoReports

CRDS_DIR = Path(__file__).resolve().parents[2] / "apps" / "crds"
CRD_FILES = ("kyverno.yaml", "wgpolicyk8s.yaml")


@functools.lru_cache(maxsize=1)
def _definitions() -> tuple[dict, ...]:
    """The CRDs, parsed once per process (parsing the YAML costs more than serving it)."""
    return tuple(crd for filename in CRD_FILES for crd in yaml.safe_load_all((CRDS_DIR / filename).read_text())
                 if crd)


def install(twin) -> KyvernoReports:
    """Serve Kyverno's kinds in ``twin``, register its webhook, and run its reports controller."""
    definitions = twin.api.catalog.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    # The CRDs' uids come from a generator of their own, so the twin's one stream (uids, generated names)
    # draws the same values with Kyverno installed as without.
    shared, twin.store.rng = twin.store.rng, random.Random(f"{twin.seed}:kyverno")
    try:
        for crd in _definitions():
            twin.api.create(definitions, None, clone(crd), twin.admin_ctx)
    finally:
        twin.store.rng = shared
    from .admission import plugin

    controller = KyvernoReports(twin.controllers)
    twin.controllers.add(controller)
    twin.api.admission.append(plugin(controller))
    return controller


__all__ = ["BACKGROUND_SCAN_INTERVAL", "KyvernoReports", "WebhookDenied", "blocked_message", "install"]
