"""Container logs: what each container has written, on the twin's clock."""

from __future__ import annotations


class LogStore:
    def __init__(self, clock):
        self.clock = clock
