"""Node selectors, node affinity and tolerations, with the semantics of k8s.io/component-helpers.

A ``NodeSelector`` matches when any of its terms does; a term matches when
all of its ``matchExpressions`` (on labels) and ``matchFields`` (on
``metadata.name``) hold; a term with neither matches nothing, and a term that
cannot be parsed (an unknown operator, ``Gt`` without exactly one integer) is
skipped. The volume binder uses the same matching for PersistentVolume node
affinity.
"""

from __future__ import annotations

from typing import Mapping

from ..tolerations import tolerates

NAME_FIELD = "metadata.name"
NO_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")


class _Invalid(Exception):
    """A requirement the upstream parser rejects; its term never matches."""


def _expression(req: dict, labels: Mapping[str, str]) -> bool:
    key, op, values = req.get("key", ""), req.get("operator"), req.get("values") or []
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise _Invalid
        try:
            want = int(values[0])
        except ValueError:
            raise _Invalid from None
        try:
            have = int(labels[key])
        except (KeyError, ValueError):
            return False
        return have > want if op == "Gt" else have < want
    raise _Invalid


def _field(req: dict, node_name: str) -> bool:
    values = req.get("values") or []
    if req.get("key") != NAME_FIELD or len(values) != 1:
        raise _Invalid
    if req.get("operator") == "In":
        return node_name == values[0]
    if req.get("operator") == "NotIn":
        return node_name != values[0]
    raise _Invalid


def term_matches(term: dict, labels: Mapping[str, str], node_name: str) -> bool:
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    try:
        return all(_expression(r, labels) for r in expressions) and all(_field(r, node_name) for r in fields)
    except _Invalid:
        return False


def selector_matches(selector: dict | None, labels: Mapping[str, str], node_name: str) -> bool:
    """A v1.NodeSelector (``nodeSelectorTerms``, ORed)."""
    return any(term_matches(t, labels, node_name) for t in (selector or {}).get("nodeSelectorTerms") or ())


class RequiredNodeAffinity:
    """A pod's ``nodeSelector`` and required node affinity, both of which a node must satisfy."""

    __slots__ = ("node_selector", "required")

    def __init__(self, spec: dict):
        self.node_selector: dict = spec.get("nodeSelector") or {}
        node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        self.required: dict | None = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")

    @property
    def empty(self) -> bool:
        return not self.node_selector and self.required is None

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        for key, value in self.node_selector.items():
            if labels.get(key) != value:
                return False
        return self.required is None or selector_matches(self.required, labels, node_name)


def tolerated(tolerations: list[dict], taint: dict) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def first_untolerated_taint(taints: list[dict], tolerations: list[dict],
                            effects: tuple[str, ...] = NO_SCHEDULE_EFFECTS) -> dict | None:
    """The first taint with one of ``effects`` that no toleration tolerates, in the node's order."""
    for taint in taints:
        if taint.get("effect") in effects and not tolerated(tolerations, taint):
            return taint
    return None
