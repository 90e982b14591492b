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
_INITIAL_EVENTS_END = object()
BOOKMARK_INTERVAL = 60.0  # seconds between bookmarks on an idle watch that asked for them


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
    bookmarks = q.get("allowWatchBookmarks", "").lower() in ("true", "1")
    initial_events = q.get("sendInitialEvents", "").lower() in ("true", "1")
    if initial_events and (not bookmarks or since is not None or q.get("resourceVersionMatch") != "NotOlderThan"):
        raise StatusError("sendInitialEvents requires allowWatchBookmarks=true, resourceVersionMatch=NotOlderThan "
                          "and an empty or \"0\" resourceVersion", code=422, reason="Invalid")
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

    def bookmark(annotations: dict | None = None) -> bytes:
        meta: dict = {"resourceVersion": str(server.store.resource_version), "creationTimestamp": None}
        if annotations:
            meta["annotations"] = annotations
        obj = {"kind": res.kind, "apiVersion": res.api_version, "metadata": meta}
        return orjson.dumps({"type": "BOOKMARK", "object": obj}) + b"\n"

    if initial_events:
        # WatchList: the initial ADDED events (already scheduled by the sink) end with a bookmark saying so.
        loop.call_soon_threadsafe(queue.put_nowait, _INITIAL_EVENTS_END)
    try:
        await response.prepare(request)
        deadline = loop.time() + timeout_s if timeout_s else None
        while True:
            wait = None if deadline is None else max(0.0, deadline - loop.time())
            if bookmarks:
                wait = BOOKMARK_INTERVAL if wait is None else min(wait, BOOKMARK_INTERVAL)
            try:
                item = await asyncio.wait_for(queue.get(), wait)
            except asyncio.TimeoutError:
                if deadline is not None and loop.time() >= deadline:
                    break
                await response.write(bookmark())
                continue
            if item is _STOP:
                break
            if item is _INITIAL_EVENTS_END:
                await response.write(bookmark({"k8s.io/initial-events-end": "true"}))
                continue
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
