"""pods/log and pods/exec."""

from __future__ import annotations

from ..errors import MethodNotAllowed


class PodIO:
    def __init__(self, server, logs):
        self.server = server
        self.logs = logs

    async def log(self, request, info, res, ctx):
        raise MethodNotAllowed()

    async def exec(self, request, info, res, ctx):
        raise MethodNotAllowed()
