"""Defaulting: the fields a real API server fills in when a client leaves them out."""

from __future__ import annotations

from .resources import Resource


def apply_defaults(res: Resource, obj: dict) -> None:
    """Fill defaults in place, for an object in its storage version."""
    return None
