"""Feature flags as flagd serves them: from its flag definitions file, to the value each flag evaluates to.

flagd reads a JSON document (``{"flags": {name: {"state", "variants", "defaultVariant"}}}``) and
answers an evaluation with the value of the flag's default variant; a disabled or unknown flag,
or a document it cannot parse, makes the evaluation fail and the client fall back to the default
its code passes (off). Services reach flagd over the network, so a service that cannot reach it
sees every flag off. Where the document comes from is cluster state: the ConfigMap mounted into
flagd (read live), or the copy an init container made when the pod started (the demo's layout,
which is why a changed ``flagd-config`` takes effect only once flagd restarts).
"""

from __future__ import annotations

import json

from ..store import Store
from .instances import Instance

FlagValues = dict[str, object]


def parse(document: str) -> FlagValues:
    """Flag name -> the value of its default variant, for the enabled flags of a flagd document."""
    try:
        flags = json.loads(document).get("flags") or {}
    except (ValueError, AttributeError):
        return {}
    out: FlagValues = {}
    for name, flag in flags.items():
        if not isinstance(flag, dict) or flag.get("state", "ENABLED") != "ENABLED":
            continue
        variants = flag.get("variants") or {}
        default = flag.get("defaultVariant")
        if default in variants:
            out[name] = variants[default]
    return out


def served(flagd: Instance, store: Store) -> FlagValues:
    """What a flagd instance answers now."""
    if flagd.flag_snapshot is not None:
        return parse(flagd.flag_snapshot)
    if flagd.flag_config is None:
        return {}
    name, key = flagd.flag_config
    configmap = store.get("configmaps", flagd.namespace, name) or {}
    return parse((configmap.get("data") or {}).get(key, ""))


def active(value: object) -> bool:
    """Whether a flag's value turns its effect on (true, or a number above zero)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value > 0
    return False


def number(value: object) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return float(value) if isinstance(value, (int, float)) else 0.0
