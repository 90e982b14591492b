"""``submit_diagnosis``: ITBench's agent-output shape as a function schema, and its checks.

A diagnosis the evaluator could not score (a name not of the form ``namespace/Kind/name``, a missing
``contributing_factor``) is refused with a message saying what to fix, so the model can send it again,
rather than handed in to score zero.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...agents.base import Submission

_TEXT = {"type": "string"}

SPEC: dict[str, Any] = {
    "name": "submit_diagnosis",
    "description": "Record your diagnosis in ITBench's shape. final=true (default) hands it in and ends your work; "
                   "final=false records a draft, handed in should you run out of turns or time.",
    "parameters": {
        "type": "object",
        "properties": {
            "entities": {
                "type": "array",
                "description": "Root causes first (contributing_factor true), then affected objects (false).",
                "items": {"type": "object", "properties": {
                    "name": {"type": "string", "description": "namespace/Kind/name, e.g. shop/Deployment/cart; "
                                                              "Kind/name when cluster-scoped"},
                    "contributing_factor": {"type": "boolean"},
                    "reasoning": _TEXT, "evidence": _TEXT},
                    "required": ["name", "contributing_factor"]},
            },
            "propagations": {
                "type": "array",
                "items": {"type": "object", "properties": {"source": _TEXT, "target": _TEXT, "condition": _TEXT,
                                                           "effect": _TEXT},
                          "required": ["source", "target"]},
            },
            "alerts_explained": {
                "type": "array",
                "items": {"type": "object", "properties": {"alert": _TEXT, "explanation": _TEXT,
                                                           "explained": {"type": "boolean"}},
                          "required": ["alert"]},
            },
            "final": {"type": "boolean", "description": "true: hand in and stop (default); false: a draft"},
        },
        "required": ["entities"],
    },
}

# namespace/Kind/name, or Kind/name for a cluster-scoped object; Kinds are CamelCase.
_NAME = re.compile(r"^(?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Z][A-Za-z0-9]*/[^/\s]+$")


def check(arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The diagnosis and whether it is final; raises ValueError saying what to fix."""
    unknown = set(arguments) - {"entities", "propagations", "alerts_explained", "final"}
    if unknown:
        raise ValueError(f"unknown fields {sorted(unknown)}; the fields are entities, propagations, "
                         f"alerts_explained, final")
    final = arguments.get("final", True)
    if not isinstance(final, bool):
        raise ValueError("final must be true or false")
    diagnosis = {key: arguments.get(key) or [] for key in ("entities", "propagations", "alerts_explained")}
    for key, value in diagnosis.items():
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise ValueError(f"{key} must be a list of objects")
    Submission.from_dict({"diagnosis": diagnosis})  # the harness' own checks of the shape
    problems = []
    for i, entity in enumerate(diagnosis["entities"]):
        if not _NAME.match(entity["name"]):
            problems.append(f"entities[{i}].name {entity['name']!r} is not namespace/Kind/name (e.g. "
                            f"shop/Deployment/cart) nor Kind/name for a cluster-scoped object")
        if not isinstance(entity.get("contributing_factor"), bool):
            problems.append(f"entities[{i}].contributing_factor must be true (a root cause) or false (affected)")
    for i, step in enumerate(diagnosis["propagations"]):
        if not isinstance(step.get("source"), str) or not isinstance(step.get("target"), str):
            problems.append(f"propagations[{i}] needs a source and a target entity name")
    for i, alert in enumerate(diagnosis["alerts_explained"]):
        if not isinstance(alert.get("alert"), str):
            problems.append(f"alerts_explained[{i}] needs the alert's name")
    if problems:
        raise ValueError("; ".join(problems))
    return diagnosis, final


def summary(diagnosis: dict[str, Any]) -> str:
    roots = [e["name"] for e in diagnosis["entities"] if e.get("contributing_factor")]
    return (f"{len(diagnosis['entities'])} entities (root causes: {', '.join(roots) or 'none'}), "
            f"{len(diagnosis['propagations'])} propagations, {len(diagnosis['alerts_explained'])} alerts explained")


def in_text(text: str) -> dict[str, Any] | None:
    """A valid diagnosis written out in a message (a JSON object with entities, fenced or not), else None."""
    candidates = [m.group(1) for m in re.finditer(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.DOTALL)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("diagnosis"), dict):
            data = data["diagnosis"]
        if not isinstance(data, dict) or "entities" not in data:
            continue
        data = {k: v for k, v in data.items() if k in ("entities", "propagations", "alerts_explained")}
        try:
            found, _ = check(data)
        except ValueError:
            continue
        if found["entities"]:
            return found
    return None
