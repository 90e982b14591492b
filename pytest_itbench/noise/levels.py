"""Noise levels: how many changes by other teams before the incident and how many transient faults after it."""

from __future__ import annotations

from dataclasses import dataclass

LEVELS = ("off", "light", "heavy")
DOMAINS = ("sre",)  # FinOps is judged on the bill, which noise would change; CISO trials have no application


@dataclass(frozen=True)
class Level:
    changes: int  # changes by other teams in the minutes before the fault: rollout, ConfigMap edit, autoscaler
    transients: int  # faults that heal by themselves, right after the fault: an evicted pod, a network blip


AMOUNTS = {"off": Level(0, 0), "light": Level(1, 1), "heavy": Level(3, 2)}


def default_level(domain: str) -> str:
    """An SRE scenario runs at light noise unless its file or --itbench-noise says otherwise."""
    return "light" if domain in DOMAINS else "off"
