"""The watch stream: one JSON event per line, chunked, until timeout, disconnect or shutdown."""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

import orjson
from aiohttp import web

from ..errors import Gone, StatusError
from ..selectors import FieldSelector, LabelSelector
from .negotiation import Accept
from .resources import Resource

log = logging.getLogger(__name__)

_STOP = object()


class WatchHub:
    """Tracks open watch streams so that shutdown can end them at once."""

    def __init__(self) -> None:
        self._queues: set[asyncio.Queue] = set()

    def add(self, queue: asyncio.Queue) -> None:
        self._queues.add(queue)

    def discard(self, queue: asyncio.Queue) -> None:
        self._queues.discard(queue)

    def stop_all(self) -> None:
        for q in list(self._queues):
            q.put_nowait(_STOP)

    def __len__(self) -> int:
        return len(self._queues)


async def serve_watch(request: web.Request, server, res: Resource, namespace: str | None, accept: Accept,
                      render_table: Callable[[Resource, list[dict], bool], dict]) -> web.StreamResponse:
    q = request.query
    labels = LabelSelector.parse(q.get("labelSelector"))
    fields = FieldSelector.parse(q.get("fieldSelector"))
    getters = res.field_getters()
    fields.check_supported(getters, res.kind, res.version)
    api = server.api
    ns = namespace if res.namespaced else None
    rv_param = q.get("resourceVersion", "")
    since: int | None
    if rv_param in ("", "0"):
        since = None
    else:
        try:
            since = int(rv_param)
        except ValueError:
            raise StatusError(f'Invalid value: "{rv_param}": resourceVersion must be an integer', code=400,
                              reason="BadRequest") from None
    timeout = q.get("timeoutSeconds")
    try:
        timeout_s = float(timeout) if timeout else None
    except ValueError:
        timeout_s = None

    def matches(obj: dict) -> bool:
        meta = obj["metadata"]
        if ns and meta.get("namespace") != ns:
            return False
        if not labels.empty and not labels.matches(meta.get("labels")):
            return False
        if not fields.empty and not fields.matches(api.to_version(obj, res), getters):
            return False
        return True

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    def sink(event_type: str, obj: dict) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, (event_type, obj))
        except RuntimeError:  # the loop is closing: the stream is over anyway
            pass

    response = web.StreamResponse(status=200)
    response.content_type = "application/json"
    response.enable_chunked_encoding()
    try:
        watch = server.store.watch(res.bucket, sink, matches, since)
    except Gone as exc:
        await response.prepare(request)
        await response.write(orjson.dumps({"type": "ERROR", "object": exc.status()}) + b"\n")
        await response.write_eof()
        return response
    server.watches.add(queue)
    first = True
    try:
        await response.prepare(request)
        deadline = loop.time() + timeout_s if timeout_s else None
        while True:
            wait = None if deadline is None else max(0.0, deadline - loop.time())
            try:
                item = await asyncio.wait_for(queue.get(), wait)
            except asyncio.TimeoutError:
                break
            if item is _STOP:
                break
            event_type, obj = item
            view = api.to_version(obj, res)
            if accept.table:
                payload = render_table(res, [view], first)
                first = False
            else:
                payload = view
            await response.write(orjson.dumps({"type": event_type, "object": payload}) + b"\n")
        await response.write_eof()
    except ConnectionResetError:  # the client went away
        pass
    finally:
        watch.stop()
        server.watches.discard(queue)
    return response
