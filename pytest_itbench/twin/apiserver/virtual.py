"""Resources that are not stored: access reviews, token reviews, metrics, bindings.

Each registers a handler for its bucket; a request for one without a handler
is answered 405, as a real server answers a verb it does not serve.
"""

from __future__ import annotations

from typing import Awaitable, Callable

from aiohttp import web

from ..errors import MethodNotAllowed
from .negotiation import Accept, respond
from .registry import Ctx
from .requestinfo import RequestInfo
from .resources import Resource

Handler = Callable[[web.Request, RequestInfo, Resource, Ctx, Accept], Awaitable[web.StreamResponse]]


class VirtualResources:
    def __init__(self, server):
        self.server = server
        self._routes: dict[str, Handler] = {"bindings": self._binding}

    def register(self, bucket: str, handler: Handler) -> None:
        self._routes[bucket] = handler

    async def handle(self, request: web.Request, info: RequestInfo, res: Resource, ctx: Ctx,
                     accept: Accept) -> web.StreamResponse:
        if info.verb not in res.verbs:
            raise MethodNotAllowed()
        handler = self._routes.get(res.bucket)
        if handler is None:
            raise MethodNotAllowed()
        return await handler(request, info, res, ctx, accept)

    async def _binding(self, request, info, res, ctx, accept):
        """POST /api/v1/namespaces/{ns}/bindings: the old way to bind a pod to a node."""
        body, _ = await self.server.handlers.read_body(request)
        name = ((body or {}).get("metadata") or {}).get("name", "")
        self.server.subresources.bind(info.namespace, name, body, ctx)
        return respond({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
                       accept, 201)
