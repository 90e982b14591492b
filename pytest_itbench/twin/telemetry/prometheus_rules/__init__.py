"""PrometheusRule objects in the twin: the Prometheus Operator's CRD, admission webhooks and rule selection.

On a cluster with kube-prometheus-stack, alerting and recording rules are ``monitoring.coreos.com/v1``
PrometheusRule objects; the Prometheus Operator validates them at admission and renders the ones its
Prometheus selects into rule files that Prometheus reloads. The twin does the same:

* ``install(twin)`` serves the kind (``apps/crds/prometheus-operator.yaml``) and registers the Operator's
  mutating and validating webhooks (``webhook.py``); the twin calls it whenever monitoring is on;
* :class:`PrometheusRuleSync` (``sync.py``), owned by the monitoring stack, turns the selected objects
  into rule files (``render.py``: named and written as the Operator names and writes them) and reloads
  the rule manager with them beside the shipped files, keeping the state of unchanged rules.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path

import yaml

from ...store import clone
from .render import rule_file_path, spec_problems
from .sync import PrometheusRuleSync
from .webhook import BUCKET, RulesNotValid, mutate, validate

CRD_FILE = Path(__file__).resolve().parents[3] / "apps" / "crds" / "prometheus-operator.yaml"


@functools.lru_cache(maxsize=1)
def _definition() -> dict:
    """The CRD, parsed once per process."""
    return yaml.safe_load(CRD_FILE.read_text())


def install(twin) -> None:
    """Serve the PrometheusRule kind in ``twin`` and register the Operator's webhooks on it."""
    definitions = twin.api.catalog.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    # The CRD's uid comes from a generator of its own, so the twin's one stream (uids, generated names) draws
    # the same values with monitoring on as off.
    shared, twin.store.rng = twin.store.rng, random.Random(f"{twin.seed}:prometheus-operator")
    try:
        twin.api.create(definitions, None, clone(_definition()), twin.admin_ctx)
    finally:
        twin.store.rng = shared
    # kube-apiserver runs mutating webhooks before the schema check and validating ones after it; in the
    # twin the schema check is the CRD registry's admission plugin, so the webhooks go on either side of it.
    admission = twin.api.admission
    schema_check = admission.index(twin.crds._admit)
    admission.insert(schema_check, mutate)
    admission.insert(schema_check + 2, validate)


__all__ = ["BUCKET", "PrometheusRuleSync", "RulesNotValid", "install", "rule_file_path", "spec_problems"]
