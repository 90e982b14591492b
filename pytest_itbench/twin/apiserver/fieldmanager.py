"""Managed fields and server-side apply."""

from __future__ import annotations

from ..schema import Node
from .patch import merge_patch
from .resources import Resource


def on_update(api, res: Resource, old: dict | None, new: dict, manager: str, subresource: str, now: str) -> None:
    """Record that ``manager`` changed fields of ``new`` in a non-apply write."""
    return None


def apply(api, res: Resource, current: dict | None, applied: dict, manager: str, force: bool, subresource: str,
          now: str) -> dict:
    """Server-side apply of ``applied`` by ``manager`` to ``current`` (None: create)."""
    if current is None:
        return applied
    return merge_patch(current, applied)
