"""The pod-template-hash: how a Deployment names and tells apart the ReplicaSets of its revisions.

kube-controller-manager hashes the Deployment's pod template with 32-bit
FNV-1a, mixes in ``status.collisionCount`` (as eight little-endian bytes)
when it is set, and writes the decimal value of the hash through the
"safe" alphabet of apimachinery's rand package, one character per digit.
That gives names like ``web-7d9f8c6b5`` and a label the ReplicaSet's
selector and pods carry.

Upstream feeds the hash with a Go dump of the template struct; we feed it
the template's canonical JSON, so hashes have the same shape and
stability (same template, same hash) but not the same values as a real
cluster's.
"""

from __future__ import annotations

import orjson

HASH_LABEL = "pod-template-hash"  # apps/v1 DefaultDeploymentUniqueLabelKey
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # no vowels, no look-alikes: no words, no confusion

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def fnv32a(data: bytes, h: int = _FNV32_OFFSET) -> int:
    for byte in data:
        h = ((h ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    return "".join(SAFE_ALPHABET[ord(ch) % len(SAFE_ALPHABET)] for ch in text)


def template_hash(template: dict, collision_count: int | None = None) -> str:
    """The pod-template-hash of a Deployment's template."""
    h = fnv32a(orjson.dumps(template, option=orjson.OPT_SORT_KEYS))
    if collision_count is not None:
        h = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4), h)
    return safe_encode(str(h))


def without_hash_label(template: dict) -> dict:
    """The template as the Deployment holds it: without the pod-template-hash label."""
    meta = template.get("metadata") or {}
    labels = meta.get("labels") or {}
    if HASH_LABEL not in labels:
        return template
    labels = {k: v for k, v in labels.items() if k != HASH_LABEL}
    meta = {k: v for k, v in meta.items() if k != "labels"}
    if labels:
        meta["labels"] = labels
    return {**template, "metadata": meta}


def equal_ignore_hash(a: dict, b: dict) -> bool:
    """Whether two pod templates are the same apart from their pod-template-hash labels."""
    return _normal(without_hash_label(a)) == _normal(without_hash_label(b))


def _normal(template: dict) -> dict:
    # Go compares structs: an absent map and an empty one are the same.
    meta = template.get("metadata") or {}
    if not meta.get("labels") and "labels" in meta:
        meta = {k: v for k, v in meta.items() if k != "labels"}
    return {**template, "metadata": meta}
