"""ControllerRevisions: the template history of StatefulSets and DaemonSets (pkg/controller/history).

A revision stores a strategic merge patch that puts a pod template back
(``{"spec": {"template": {..., "$patch": "replace"}}}``), serialised as Go's
encoding/json writes a map (sorted keys, compact, HTML characters escaped),
so its bytes and hash match what kube-controller-manager would store for the
same template. ``kubectl rollout history|undo`` read and apply these patches.
"""

from __future__ import annotations

import json
from typing import Iterable

from ..clock import parse_time
from .pod_template import safe_encode

HASH_LABEL = "controller.kubernetes.io/hash"
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_MAX_PREFIX = 223  # a revision name stays within 253 characters
_GO_HTML_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                                  "\u2029": "\\u2029"})


def go_json(value) -> bytes:
    """``value`` as Go's json.Marshal writes a map[string]interface{}."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.translate(_GO_HTML_ESCAPES).encode()


def fnv32(data: bytes) -> int:
    """FNV-1, 32 bits (Go's hash/fnv New32)."""
    h = _FNV_OFFSET
    for byte in data:
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
        h ^= byte
    return h


def template_patch(template: dict) -> dict:
    """The revision data for a pod template (getPatch of the StatefulSet and DaemonSet controllers)."""
    return {"spec": {"template": dict(template, **{"$patch": "replace"})}}


def template_of(revision: dict) -> dict:
    """The pod template a revision restores."""
    template = dict(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


def revision_hash(data: dict, collision_count: int | None) -> str:
    """HashControllerRevision: FNV-1 of the data, then of the collision count, safely encoded."""
    raw = go_json(data)
    if collision_count is not None:
        raw += str(collision_count).encode()
    return safe_encode(str(fnv32(raw)))


def revision_name(prefix: str, hash_: str) -> str:
    return f"{prefix[:_MAX_PREFIX]}-{hash_}"


def new_revision(owner: dict, owner_ref: dict, name: str, labels: dict, data: dict, number: int) -> dict:
    """A ControllerRevision of ``owner``; it carries the owner's annotations, as upstream's do."""
    meta = owner["metadata"]
    revision_meta: dict = {"name": name, "namespace": meta["namespace"], "labels": labels,
                           "ownerReferences": [owner_ref]}
    if meta.get("annotations"):
        revision_meta["annotations"] = dict(meta["annotations"])
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": revision_meta,
            "data": data, "revision": number}


def sort_revisions(revisions: Iterable[dict]) -> list[dict]:
    """By revision number, then creation time, then name (history.SortControllerRevisions)."""
    return sorted(revisions, key=lambda r: (r.get("revision", 0), _created(r), r["metadata"]["name"]))


def same_data(a: dict, b: dict) -> bool:
    return go_json(a.get("data")) == go_json(b.get("data"))


def next_number(revisions: list[dict]) -> int:
    """One more than the highest revision number (revisions sorted), or 1."""
    return revisions[-1].get("revision", 0) + 1 if revisions else 1


def _created(revision: dict) -> float:
    stamp = revision["metadata"].get("creationTimestamp")
    return parse_time(stamp) if stamp else 0.0
