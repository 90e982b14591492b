"""OpenCost's custom pricing, as the twin's OpenCost reads it from the cluster (rule 2).

OpenCost's Helm chart, with ``customPricing.enabled``, writes ConfigMap ``custom-pricing-model`` in the
release's namespace (``opencost``) with one key, ``default.json``: a JSON object of string-encoded prices,
which the chart mounts where OpenCost watches its pricing file (``/tmp/custom-config``). The units are those
of OpenCost's ``CustomPricing``: ``CPU``/``spotCPU`` per vCPU-hour, ``RAM``/``spotRAM`` per GiB-hour,
``GPU``/``spotGPU`` per GPU-hour, ``storage`` per GiB-hour of a PersistentVolume, network egress per GiB,
``firstFiveForwardingRulesCost`` per load balancer-hour. ``spotLabel``/``spotLabelValue`` name the node label
that marks a node as spot (its prices are then ``spotCPU``/``spotRAM``).

Without the ConfigMap, OpenCost prices with the ``default.json`` shipped in its image (``provider: custom``,
GCP us-central1 figures), reproduced in :data:`DEFAULTS`.

A malformed ConfigMap never breaks the twin. As OpenCost decodes the file into a Go struct of strings, a value
of the wrong JSON type (``"CPU": 0.05``) or text that is not JSON at all makes the whole file unusable, and the
defaults apply; a string that is not a non-negative number (``"CPU": "cheap"``) keeps that field's default.
Each problem is logged and handed to :attr:`PricingSource.on_problem` (the twin records a Warning Event on the
ConfigMap) once per change of the ConfigMap, naming the ConfigMap and the field.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from dataclasses import dataclass, replace
from typing import Callable

from ...store import Store

log = logging.getLogger(__name__)

NAMESPACE = "opencost"  # the chart's release namespace, as OpenCost's install guide uses it
CONFIGMAP = "custom-pricing-model"  # the chart's default customPricing.configmapName
KEY = "default.json"


@dataclass(frozen=True)
class CustomPricing:
    """Prices in dollars: per vCPU-hour, GiB-hour, GPU-hour, GiB-hour of storage, GiB of egress, LB-hour."""

    cpu: float
    spot_cpu: float
    ram: float
    spot_ram: float
    gpu: float
    spot_gpu: float
    storage: float
    zone_egress: float
    region_egress: float
    internet_egress: float
    nat_gateway_egress: float
    nat_gateway_ingress: float
    first_five_forwarding_rules: float
    additional_forwarding_rule: float
    lb_ingress_data: float
    spot_label: str = ""
    spot_label_value: str = ""

    def load_balancer_hourly(self) -> float:
        """What OpenCost's custom provider charges a LoadBalancer Service per hour: one forwarding rule."""
        return self.first_five_forwarding_rules


# OpenCost's configs/default.json (what an OpenCost without a pricing ConfigMap uses); its spotGPU, absent from
# that file, is the one OpenCost fills in for files that lack it.
DEFAULTS = CustomPricing(
    cpu=0.031611, spot_cpu=0.006655, ram=0.004237, spot_ram=0.000892, gpu=0.95, spot_gpu=0.308,
    storage=0.00005479452, zone_egress=0.01, region_egress=0.01, internet_egress=0.12, nat_gateway_egress=0.045,
    nat_gateway_ingress=0.045, first_five_forwarding_rules=0.0, additional_forwarding_rule=0.0, lb_ingress_data=0.0)

# JSON key (as OpenCost's CustomPricing tags it) -> attribute.
_PRICE_KEYS = {
    "CPU": "cpu", "spotCPU": "spot_cpu", "RAM": "ram", "spotRAM": "spot_ram", "GPU": "gpu", "spotGPU": "spot_gpu",
    "storage": "storage", "zoneNetworkEgress": "zone_egress", "regionNetworkEgress": "region_egress",
    "internetNetworkEgress": "internet_egress", "natGatewayEgress": "nat_gateway_egress",
    "natGatewayIngress": "nat_gateway_ingress", "firstFiveForwardingRulesCost": "first_five_forwarding_rules",
    "additionalForwardingRuleCost": "additional_forwarding_rule", "LBIngressDataCost": "lb_ingress_data",
}
_TEXT_KEYS = {"spotLabel": "spot_label", "spotLabelValue": "spot_label_value"}
# Other string fields of CustomPricing: accepted, unused by the twin (a wrong type still spoils the file).
_OTHER_STRING_KEYS = ("provider", "description", "gpuLabel", "gpuLabelValue", "awsServiceKeyName",
                      "awsServiceKeySecret", "awsSpotDataRegion", "awsSpotDataBucket", "awsSpotDataPrefix",
                      "projectID", "customPricesEnabled", "defaultIdle", "currencyCode", "discount",
                      "negotiatedDiscount", "sharedOverhead", "clusterName", "sharedNamespaces")


def parse(text: str) -> tuple[CustomPricing, list[str]]:
    """Prices from a ``default.json`` and the problems found (field-named); defaults wherever it is unusable."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        return DEFAULTS, [f"{KEY} is not valid JSON ({exc}); using the default prices"]
    if not isinstance(document, dict):
        return DEFAULTS, [f"{KEY}: cannot unmarshal {_json_kind(document)} into an object of prices; "
                          f"using the default prices"]
    known = {**_PRICE_KEYS, **_TEXT_KEYS, **{k: "" for k in _OTHER_STRING_KEYS}}
    # A JSON null leaves a Go field as it was: the same as an absent key.
    chosen = {k: v for k, v in _fold_keys(document, known).items() if v is not None}
    # Every CustomPricing field is a Go string: one value of another JSON type fails the whole decode.
    for key, value in chosen.items():
        if not isinstance(value, str):
            return DEFAULTS, [f"{KEY}: field {key!r}: cannot unmarshal {_json_kind(value)} into a string "
                              f"(OpenCost's prices are strings, e.g. \"0.031611\"); using the default prices"]
    values: dict[str, object] = {}
    problems = []
    for key, attribute in _PRICE_KEYS.items():
        if key not in chosen:
            continue
        price = _price(chosen[key])
        if price is None:
            default = getattr(DEFAULTS, attribute)
            problems.append(f"{KEY}: field {key!r}: {chosen[key]!r} is not a non-negative number; "
                            f"keeping the default {default:g}")
            continue
        values[attribute] = price
    for key, attribute in _TEXT_KEYS.items():
        if key in chosen:
            values[attribute] = chosen[key]
    return replace(DEFAULTS, **values), problems


def _fold_keys(document: dict, known: dict[str, str]) -> dict[str, object]:
    """Go's encoding/json matches keys to fields case-insensitively, an exact match first; others are ignored."""
    folded = {key.lower(): key for key in known}
    chosen: dict[str, object] = {}
    for key, value in document.items():
        field_key = key if key in known else folded.get(str(key).lower())
        if field_key is None:
            continue
        if field_key in chosen and key != field_key:
            continue  # an exact-case key wins over a folded one
        chosen[field_key] = value
    return chosen


def _price(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    if math.isnan(value) or math.isinf(value) or value < 0:
        return None
    return value


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if value is None:
        return "null"
    return "string"


class PricingSource:
    """The current custom pricing, re-read when the ConfigMap changes (as OpenCost watches its pricing file).

    Problems are reported (logged, and handed to ``on_problem``) once per change of the ConfigMap, by the
    caller that passes ``report=True``: the exporter, on the clock's thread, so that an Event is never
    recorded from an HTTP worker thread.
    """

    def __init__(self, store: Store):
        self.store = store
        self.on_problem: Callable[[dict, str], None] | None = None  # (the ConfigMap, message)
        self._lock = threading.Lock()
        self._seen: tuple | None = None  # (uid, resourceVersion) of the ConfigMap last parsed, or None
        self._pricing = DEFAULTS
        self._pending: list[tuple[dict, str]] = []
        self.problems: list[str] = []

    def current(self, *, report: bool = False) -> CustomPricing:
        configmap = self.store.get("configmaps", NAMESPACE, CONFIGMAP)
        identity = None if configmap is None else (configmap["metadata"].get("uid"),
                                                   configmap["metadata"].get("resourceVersion"))
        with self._lock:
            if identity != self._seen:
                self._seen = identity
                self._reparse(configmap)
            pricing = self._pricing
            pending, self._pending = (self._pending, []) if report else ([], self._pending)
        for obj, message in pending:
            log.warning("opencost: %s", message)
            if self.on_problem is not None:
                try:
                    self.on_problem(obj, message)
                except Exception:  # reporting must not stop the pricing (the namespace may be terminating)
                    log.exception("opencost: could not report %r", message)
        return pricing

    def _reparse(self, configmap: dict | None) -> None:
        if configmap is None:
            self._pricing, self.problems, self._pending = DEFAULTS, [], []
            return
        text = (configmap.get("data") or {}).get(KEY)
        if text is None:
            self._pricing, problems = DEFAULTS, [f"has no key {KEY!r}; using the default prices"]
        else:
            self._pricing, problems = parse(text)
        self.problems = [f"ConfigMap {NAMESPACE}/{CONFIGMAP}: {problem}" for problem in problems]
        self._pending = [(configmap, message) for message in self.problems]
