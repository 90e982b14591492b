"""Revisions and the annotations the deployment controller keeps on ReplicaSets.

Each ReplicaSet of a Deployment carries ``deployment.kubernetes.io/revision``
(the newest is one more than the highest of the others; a rollback moves an
old ReplicaSet to a new revision and remembers its earlier ones in
``revision-history``), ``desired-replicas`` and ``max-replicas`` (spec.replicas
and spec.replicas + maxSurge when it was last scaled, which tell a scaling
event from a rollout), and a copy of the Deployment's own annotations, such
as ``kubernetes.io/change-cause`` that ``kubectl rollout history`` shows.
"""

from __future__ import annotations

import re

REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
DEPRECATED_ROLLBACK_TO = "deprecated.deployment.rollback.to"
# Annotations that stay on the Deployment (or are the controller's own) and are not copied to ReplicaSets.
NOT_COPIED = frozenset({LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS,
                        DEPRECATED_ROLLBACK_TO})
MAX_REVISION_HISTORY_CHARS = 2000

_GO_INT = re.compile(r"[+-]?[0-9]+")  # what strconv.ParseInt and Atoi accept


def parse_int(value: str | None) -> int | None:
    if value is None or not _GO_INT.fullmatch(value):
        return None
    return int(value)


def _annotations(obj: dict) -> dict:
    return obj["metadata"].get("annotations") or {}


def revision(obj: dict) -> int | None:
    """The object's revision; 0 without the annotation, None when it does not parse."""
    value = _annotations(obj).get(REVISION)
    return 0 if value is None else parse_int(value)


def max_revision(rss: list[dict]) -> int:
    """The highest revision among ReplicaSets (those whose revision does not parse are skipped)."""
    return max((r for r in (revision(rs) for rs in rss) if r is not None), default=0)


def by_revision(rss: list[dict]) -> list[dict]:
    """Oldest revision first; creation time, then name, break ties and stand in for unparseable revisions."""
    def key(rs: dict):
        rev = revision(rs)
        return (rev if rev is not None else -1, rs["metadata"].get("creationTimestamp", ""), rs["metadata"]["name"])
    return sorted(rss, key=key)


def desired_replicas_annotation(rs: dict) -> int | None:
    return parse_int(_annotations(rs).get(DESIRED_REPLICAS))


def max_replicas_annotation(rs: dict) -> int | None:
    return parse_int(_annotations(rs).get(MAX_REPLICAS))


def replicas_annotations_need_update(rs: dict, desired: int, most: int) -> bool:
    ann = _annotations(rs)
    return ann.get(DESIRED_REPLICAS) != str(desired) or ann.get(MAX_REPLICAS) != str(most)


def set_replicas_annotations(rs: dict, desired: int, most: int) -> bool:
    """Record spec.replicas and spec.replicas + maxSurge on a ReplicaSet (a mutable copy); True if changed."""
    ann = rs["metadata"].setdefault("annotations", {})
    changed = False
    for key, value in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(most))):
        if ann.get(key) != value:
            ann[key] = value
            changed = True
    return changed


def copy_deployment_annotations(d: dict, rs: dict) -> bool:
    """Copy the Deployment's annotations, but the controller's own and kubectl's last-applied, to ``rs``."""
    ann = rs["metadata"].setdefault("annotations", {})
    changed = False
    for key, value in _annotations(d).items():
        if key in NOT_COPIED or (key in ann and ann[key] == value):
            continue
        ann[key] = value
        changed = True
    return changed


def set_new_rs_annotations(d: dict, rs: dict, new_revision: int, exists: bool, desired: int, most: int) -> bool:
    """Bring the new ReplicaSet's annotations (a mutable copy) up to date; True if any changed."""
    changed = copy_deployment_annotations(d, rs)
    ann = rs["metadata"]["annotations"]
    old_value = ann.get(REVISION)
    old_revision = 0 if old_value in (None, "") else parse_int(old_value)
    if old_revision is None:
        return False  # upstream gives up on a revision that is not a number
    if old_revision < new_revision:
        ann[REVISION] = str(new_revision)
        changed = True
        if old_value is not None:
            # An old ReplicaSet becomes the new one again (a rollback): keep the revisions it served.
            _append_revision_history(ann, old_value)
    if not exists and set_replicas_annotations(rs, desired, most):
        changed = True
    return changed


def _append_revision_history(ann: dict, old_revision: str) -> None:
    history = ann.get(REVISION_HISTORY, "")
    if not history:
        ann[REVISION_HISTORY] = old_revision
        return
    revisions = history.split(",")
    total = len(history) + len(old_revision) + 1
    start = 0
    while total > MAX_REVISION_HISTORY_CHARS and start < len(revisions):
        total -= len(revisions[start]) + 1
        start += 1
    if total <= MAX_REVISION_HISTORY_CHARS:
        ann[REVISION_HISTORY] = ",".join(revisions[start:] + [old_revision])


def set_deployment_revision(d: dict, value: str) -> bool:
    """Show the new ReplicaSet's revision on the Deployment (a mutable copy); True if it changed."""
    ann = d["metadata"].setdefault("annotations", {})
    if ann.get(REVISION) == value:
        return False
    ann[REVISION] = value
    return True
