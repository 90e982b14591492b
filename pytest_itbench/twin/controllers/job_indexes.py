"""Completion indexes of Indexed Jobs: the annotation and label pods carry, and ``status.completedIndexes``.

A Job writes its completed indexes as ordered intervals, ``"0-2,5,7-8"``;
the controller reads them back (keeping those below ``completions``), adds
the indexes of pods that succeeded, and starts pods for the lowest indexes
neither completed nor running.
"""

from __future__ import annotations

from typing import Iterable

INDEX_KEY = "batch.kubernetes.io/job-completion-index"  # annotation and (PodIndexLabel) label
INDEX_ENV = "JOB_COMPLETION_INDEX"
MAX_GENERATED_NAME = 58  # names.MaxGeneratedNameLength: generateName prefixes are cut to this


def index_of(pod: dict) -> int:
    """The pod's completion index (from its annotation), or -1."""
    value = (pod["metadata"].get("annotations") or {}).get(INDEX_KEY)
    if value is None or not value.lstrip("+-").isdigit():
        return -1
    number = int(value)
    return number if number >= 0 else -1


def parse(text: str | None, completions: int) -> set[int]:
    """Indexes written as ``"1,3-5"``, those below ``completions``; malformed parts are skipped."""
    out: set[int] = set()
    for part in (text or "").split(","):
        first, _, last = part.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            continue
        low, high = int(first), int(last or first)
        out.update(range(low, min(high, completions - 1) + 1))
    return out


def format_indexes(indexes: Iterable[int]) -> str:
    """Ordered intervals: consecutive indexes become ``first-last``."""
    runs: list[list[int]] = []
    for index in sorted(set(indexes)):
        if runs and index == runs[-1][1] + 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def first_pending(count: int, completions: int, succeeded: set[int], running: set[int]) -> list[int]:
    """The lowest ``count`` indexes that neither succeeded nor have a running pod."""
    out = []
    for index in range(completions):
        if len(out) >= count:
            break
        if index not in succeeded and index not in running:
            out.append(index)
    return out


def generate_name(job_name: str, index: int) -> str:
    """``<job>-<index>-``, with the job name cut so the index survives the API server's truncation."""
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME:
        prefix = prefix[:MAX_GENERATED_NAME - len(suffix)] + suffix
    return prefix


def with_index_env(template: dict) -> dict:
    """Every container gets ``JOB_COMPLETION_INDEX`` from the pod's index label, unless it sets it itself."""
    spec = template.get("spec") or {}
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or ():
            env = container.setdefault("env", [])
            if not any(v.get("name") == INDEX_ENV for v in env):
                env.append({"name": INDEX_ENV, "valueFrom": {"fieldRef": {
                    "fieldPath": f"metadata.labels['{INDEX_KEY}']"}}})
    return template
