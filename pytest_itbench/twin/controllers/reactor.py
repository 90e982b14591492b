"""Instant reactions to API writes, for controllers that a real cluster runs within milliseconds.

The garbage collector, the namespace lifecycle and the service-account and
root-CA publishers react to a write as soon as it lands; modelling their few
milliseconds of latency would only make the twin slower and less
deterministic. Reactions run after the write that triggered them, one at a
time and in order, under the store lock, and never inside a write.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Callable

from ..apiserver.registry import ResourceAPI
from ..apiserver.resources import Resource

log = logging.getLogger(__name__)

Reaction = Callable[[str, Resource, dict, "dict | None"], None]


class Reactor:
    def __init__(self, api: ResourceAPI):
        self.api = api
        self._reactions: list[tuple[str, Reaction]] = []
        self._queue: deque = deque()
        self._draining = False
        api.after_write.append(self._on_write)

    def register(self, name: str, reaction: Reaction) -> None:
        self._reactions.append((name, reaction))

    def _on_write(self, op: str, res: Resource, obj: dict, old: dict | None) -> None:
        self._queue.append((op, res, obj, old))
        if self._draining:
            return
        self._draining = True
        try:
            while self._queue:
                item = self._queue.popleft()
                for name, reaction in self._reactions:
                    try:
                        reaction(*item)
                    except Exception:  # one broken reaction must not stop the others
                        log.exception("reaction %s failed on %s %s", name, item[0], item[1].group_resource)
        finally:
            self._draining = False
