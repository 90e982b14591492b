"""Which pods and containers a Chaos Mesh selector picks, as its pod and container selectors pick them.

A selector lists pods in its namespaces (the experiment's own when none is given) that match
every criterion given (labels, expressions, annotations, fields, nodes, node labels, phases, or
an explicit list of pods), skipping pods being deleted; ``mode`` then takes one at random, all,
a fixed number, a fixed percentage (at least one) or a random percentage up to a maximum. A
container selector takes the named containers of those pods, or each pod's first container.
An empty result is an error, worded as Chaos Mesh words it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ...selectors import LabelSelector
from ...store import Store


class SelectionError(ValueError):
    pass


@dataclass(frozen=True)
class Target:
    namespace: str
    pod: str
    container: str | None = None

    @property
    def id(self) -> str:
        """The record id Chaos Mesh gives it: ``namespace/pod`` or ``namespace/pod/container``."""
        base = f"{self.namespace}/{self.pod}"
        return f"{base}/{self.container}" if self.container is not None else base


def select_pods(store: Store, selector: dict, mode: str, value: str | None, default_namespace: str,
                rng: random.Random) -> list[dict]:
    pods = [p for p in _candidates(store, selector or {}, default_namespace) if _matches(store, selector or {}, p)]
    if not pods:
        raise SelectionError("no target has been selected")
    return [pods[i] for i in sorted(_pick(mode, value, len(pods), rng))]


def select(store: Store, spec: dict, default_namespace: str, rng: random.Random, *, containers: bool,
           selector_key: str = "selector") -> list[Target]:
    """The targets of ``spec`` (an experiment's spec or its ``target``)."""
    pods = select_pods(store, spec.get(selector_key) or {}, spec.get("mode") or "", spec.get("value"),
                       default_namespace, rng)
    out = []
    for pod in pods:
        meta = pod["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        if not containers:
            out.append(Target(namespace, name))
            continue
        names = spec.get("containerNames") or []
        declared = [c["name"] for c in (pod.get("spec") or {}).get("containers") or ()]
        chosen = [n for n in declared if n in names] if names else declared[:1]
        out.extend(Target(namespace, name, container) for container in chosen)
    if not out:
        raise SelectionError("no target has been selected")
    return out


def _candidates(store: Store, selector: dict, default_namespace: str) -> list[dict]:
    explicit = selector.get("pods")
    if explicit:
        found = [store.get("pods", ns, name) for ns, names in sorted(explicit.items()) for name in names]
        return [p for p in found if p is not None]
    namespaces = selector.get("namespaces") or [default_namespace]
    return [p for ns in sorted(set(namespaces)) for p in store.list("pods", ns)[0]]


def _matches(store: Store, selector: dict, pod: dict) -> bool:
    meta = pod["metadata"]
    if meta.get("deletionTimestamp"):
        return False
    labels = meta.get("labels") or {}
    if any(labels.get(k) != v for k, v in (selector.get("labelSelectors") or {}).items()):
        return False
    expressions = selector.get("expressionSelectors")
    if expressions:
        parsed = LabelSelector.from_object({"matchExpressions": expressions})
        if parsed is None or not parsed.matches(labels):
            return False
    annotations = meta.get("annotations") or {}
    if any(annotations.get(k) != v for k, v in (selector.get("annotationSelectors") or {}).items()):
        return False
    for field, wanted in (selector.get("fieldSelectors") or {}).items():
        if _field(pod, field) != wanted:
            return False
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    nodes = selector.get("nodes")
    if nodes and spec.get("nodeName") not in nodes:
        return False
    node_labels = selector.get("nodeSelectors")
    if node_labels:
        node = store.get("nodes", "", spec.get("nodeName") or "") or {}
        have = (node.get("metadata") or {}).get("labels") or {}
        if any(have.get(k) != v for k, v in node_labels.items()):
            return False
    phases = selector.get("podPhaseSelectors")
    if phases and status.get("phase") not in phases:
        return False
    return True


def _field(pod: dict, path: str) -> str:
    value: object = pod
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return "" if value is None else str(value)


def _pick(mode: str, value: str | None, count: int, rng: random.Random) -> list[int]:
    """Indexes of the chosen pods, as Chaos Mesh's FilterObjectsByMode chooses them."""
    if mode == "one":
        return [rng.randrange(count)]
    if mode == "all":
        return list(range(count))
    number = _integer(value)
    if mode == "fixed":
        if number <= 0:
            raise SelectionError("cannot select any object as value below or equal 0")
        return rng.sample(range(count), min(number, count))
    if mode in ("fixed-percent", "random-max-percent"):
        if number == 0:
            raise SelectionError("cannot select any object as value below or equal 0")
        if not 0 < number <= 100:
            raise SelectionError(f"fixed percentage value of {number} is invalid, Must be (0,100]")
        percent = number if mode == "fixed-percent" else rng.randint(0, number)
        return rng.sample(range(count), math.ceil(count * percent / 100))
    raise SelectionError(f"mode {mode} not supported")


def _integer(value: str | None) -> int:
    try:
        return int(value or "")
    except ValueError:
        raise SelectionError(f'strconv.Atoi: parsing "{value or ""}": invalid syntax') from None
