"""Resource usage of pods and nodes, as metrics-server reports it (fed by whoever models usage)."""

from __future__ import annotations


class Metrics:
    def __init__(self, clock):
        self.clock = clock
