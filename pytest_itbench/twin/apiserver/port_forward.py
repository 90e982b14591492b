"""pods/portforward: the API server's checks, the kubelet's, then the streams to the pod's ports.

Three ways in, as kube-apiserver v1.31 and its kubelet serve them:

* **WebSocket channels** (the official Python client): ``?ports=80,8080``; for the i-th port, channel
  ``2i`` carries data both ways and ``2i+1`` errors to the client; the first message on each is the
  port as 2 bytes little-endian. Subprotocols ``v4.channel.k8s.io``, ``v4.base64.channel.k8s.io``
  or none (binary). One forward per port, made when the connection opens; the WebSocket closes once
  every port's forward has ended.
* **SPDY/3.1** (kubectl, ``Upgrade: SPDY/3.1``, ``X-Stream-Protocol-Version: portforward.k8s.io``):
  the client opens an error and a data stream per connection (headers ``streamType``, ``port``,
  ``requestID``); each complete pair is one forward (:mod:`.spdy` has the framing).
* **SPDY tunnelled over WebSocket** (kubectl 1.31 tries it first: subprotocol
  ``SPDY/3.1+portforward.k8s.io``): the same SPDY session carried in binary messages.

A forward connects to the port inside the pod's network namespace at once, as containerd does: a
running container whose process listens there (the kubelet's view, :mod:`..containers.behaviour`)
accepts and answers (:mod:`..containers.listeners`); otherwise containerd's ``connection refused``
error goes to the error stream or channel. It ends when the client side ends, or, once the pod's
side has closed, after at most a second (containerd's wait for the other direction).
"""

from __future__ import annotations

import asyncio
import hashlib
import struct
import uuid
from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Callable

from aiohttp import web

from ..errors import BadRequest, NotFound
from . import channels, spdy
from .channels import ChannelProtocol
from .registry import Ctx
from .requestinfo import RequestInfo
from .resources import Resource

if TYPE_CHECKING:
    from ..containers.listeners import Listener

PORTFORWARD_PROTOCOL = "portforward.k8s.io"
TUNNEL_PREFIX = "SPDY/3.1+"
WEBSOCKET_PROTOCOLS = ("v4.channel.k8s.io", "v4.base64.channel.k8s.io")
STREAM_CREATION_TIMEOUT = 30.0  # the kubelet's DefaultStreamCreationTimeout
CLOSE_WAIT = 1.0  # containerd waits this long for the second direction once the first has ended

Send = Callable[[bytes], Awaitable[None]]


class KubeletRefusal(Exception):
    """The kubelet answered without upgrading: relayed by the API server as it came (plain text)."""

    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status, self.text = status, text

    def response(self) -> web.Response:
        return web.Response(status=self.status, text=self.text, content_type="text/plain", charset="utf-8")


class PodTarget:
    """The pod a port-forward goes to, as its node's kubelet and container runtime know it."""

    def __init__(self, server, kubelet, pod: dict):
        self.server, self.kubelet, self.pod = server, kubelet, pod
        meta = pod["metadata"]
        self.namespace, self.name, self.uid = meta["namespace"], meta["name"], meta["uid"]
        # containerd's names for the pod's sandbox and network namespace (stable for the pod's life).
        digest = hashlib.sha256(f"sandbox/{self.uid}".encode()).hexdigest()
        self.sandbox_id = digest
        self.netns = "host" if pod["spec"].get("hostNetwork") else \
            f"/var/run/netns/cni-{uuid.UUID(digest[:32])}"

    def check(self) -> None:
        """The kubelet's refusals before it upgrades (:class:`KubeletRefusal`)."""
        worker = self.kubelet.workers.get((self.namespace, self.name)) if self.kubelet is not None else None
        if worker is None or worker.uid != self.uid:
            raise KubeletRefusal(404, "pod does not exist")
        if not worker.sandbox_ready:
            # The runtime has no sandbox for it yet (the kubelet looks the pod up among the runtime's pods).
            raise KubeletRefusal(500, f'pod not found ("{self.name}_{self.namespace}")')
        if (self.pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            raise KubeletRefusal(500, "rpc error: code = Unknown desc = sandbox container is not running")

    def connect(self, port: int) -> "Listener | None":
        """The process that accepts a connection to localhost:``port`` in the pod now, or None (refused)."""
        from ..containers.listeners import Listener
        worker = self.kubelet.workers.get((self.namespace, self.name))
        if worker is None:
            return None
        clock = self.server.clock
        now = clock.now()
        for slot in worker.slots:
            instance = slot.current
            if instance is None or not instance.running or instance.process is None:
                continue
            if instance.process.listens(port, instance.since_start(now)):
                container = slot.name

                def since_start(instance=instance):
                    return instance.since_start(clock.now()) if instance.running else None

                def write_log(text: str, container=container) -> None:
                    self.kubelet.logs.append(self.namespace, self.name, container, text, at=clock.now())
                return Listener(instance.process, port, instance.image, since_start, clock.now, write_log)
        return None

    def refused(self, port: int) -> str:
        """The kubelet's error text for a port nothing listens on (containerd 1.7's words)."""
        return (f"error forwarding port {port} to pod {self.sandbox_id}, uid : failed to execute portforward in "
                f'network namespace "{self.netns}": failed to connect to localhost:{port} inside namespace '
                f'"{self.sandbox_id}", IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused IPv6 dial '
                f"tcp6 [::1]:{port}: connect: connection refused ")

    async def forward(self, port: int, inbound: asyncio.Queue, send: Send) -> str | None:
        """Copy between the client (``inbound``: bytes, None at its end) and the pod's port; the error, if any."""
        from ..containers.listeners import conversation
        listener = self.connect(port)
        if listener is None:
            return self.refused(port)
        peer = conversation(listener)
        opening = peer.opening()
        if opening:
            await send(opening)
        closed = False
        while not closed:
            data = await inbound.get()
            if data is None:
                last = peer.end()
                if last:
                    await send(last)
                return None
            reply, closed = peer.feed(data)
            if reply:
                await send(reply)
        try:
            await asyncio.wait_for(_until_end(inbound), CLOSE_WAIT)
        except asyncio.TimeoutError:
            pass
        return None


async def _until_end(inbound: asyncio.Queue) -> None:
    while await inbound.get() is not None:
        pass


class PortForwarding:
    def __init__(self, server, kubelet):
        self.server = server
        self.kubelet = kubelet

    async def handle(self, request: web.Request, info: RequestInfo, res: Resource, ctx: Ctx) -> web.StreamResponse:
        ports = _api_ports(request.query)
        pods = self.server.catalog.lookup("", "v1", "pods")
        pod = self.server.api.get(pods, info.namespace, info.name)
        node = pod["spec"].get("nodeName")
        if not node:
            raise BadRequest(f"pod {info.name} does not have a host assigned")
        if self.server.store.get("nodes", "", node) is None:
            raise NotFound("nodes", node)
        target = PodTarget(self.server, self.kubelet, pod)
        # From here on the kubelet answers, in plain text, relayed as it came.
        websocket = request.headers.get("Upgrade", "").lower() == "websocket"
        offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
        tunnel = websocket and any(p.startswith(TUNNEL_PREFIX) for p in offered)
        if not websocket and "upgrade" not in request.headers.get("Connection", "").lower():
            raise BadRequest("Upgrade request required")
        try:
            if websocket and not tunnel:
                kubelet_ports = _kubelet_ports(ports)
            target.check()
            if tunnel:
                return await self._tunnel(request, offered, target)
            if websocket:
                return await self._channels(request, offered, kubelet_ports, target)
            return await self._spdy(request, target)
        except KubeletRefusal as refusal:
            return refusal.response()

    # ---- WebSocket channels ----------------------------------------------------------------------------
    async def _channels(self, request: web.Request, offered: list[str], ports: list[int],
                        target: PodTarget) -> web.StreamResponse:
        if offered and not any(p in WEBSOCKET_PROTOCOLS for p in offered):
            return web.Response(status=403)  # the kubelet's websocket handshake refuses, with no body
        ws = web.WebSocketResponse(protocols=WEBSOCKET_PROTOCOLS)
        await ws.prepare(request)
        protocol = ChannelProtocol(ws.ws_protocol or "v4.channel.k8s.io")
        inbound = [asyncio.Queue() for _ in ports]
        for i, port in enumerate(ports):
            prefix = struct.pack("<H", port)
            await _send_ws(ws, protocol.frames(2 * i, prefix) + protocol.frames(2 * i + 1, prefix))

        async def one(i: int, port: int) -> None:
            async def send(data: bytes) -> None:
                if not ws.closed:
                    await _send_ws(ws, protocol.frames(2 * i, data))
            error = await target.forward(port, inbound[i], send)
            if error and not ws.closed:
                await _send_ws(ws, protocol.frames(2 * i + 1, error.encode()))

        async def read() -> None:
            async for message in ws:
                if message.type not in (web.WSMsgType.BINARY, web.WSMsgType.TEXT):
                    break
                decoded = protocol.decode(message.data)
                if decoded is None:
                    continue
                channel, data = decoded
                if channel % 2 == 0 and channel // 2 < len(ports) and data:
                    inbound[channel // 2].put_nowait(data)
            for queue in inbound:
                queue.put_nowait(None)

        forwards = asyncio.gather(*(one(i, port) for i, port in enumerate(ports)))
        reader = asyncio.ensure_future(read())
        await self._until_done_or_shutdown(forwards, reader)
        await ws.close()
        return ws

    # ---- SPDY, plain and tunnelled -------------------------------------------------------------------------
    async def _spdy(self, request: web.Request, target: PodTarget) -> web.StreamResponse:
        protocol = _negotiate(request.headers.getall("X-Stream-Protocol-Version", []))
        if "spdy/3.1" not in request.headers.get("Upgrade", "").lower():
            return web.Response(status=400, text="unable to upgrade: missing upgrade headers in request: "
                                                 f"{dict(request.headers)!r}", content_type="text/plain")
        response = web.StreamResponse(status=101, headers={"Connection": "Upgrade", "Upgrade": "SPDY/3.1",
                                                           "X-Stream-Protocol-Version": protocol})
        response.force_close()
        await response.prepare(request)
        transport = request.transport
        if transport is None:
            return response
        incoming: asyncio.Queue = asyncio.Queue()
        transport.set_protocol(_RawStream(incoming))

        async def write(data: bytes) -> None:
            if not transport.is_closing():
                transport.write(data)

        session = SpdySession(target, write)
        await self._until_done_or_shutdown(session.run(_chunks(incoming)))
        transport.close()
        return response

    async def _tunnel(self, request: web.Request, offered: list[str], target: PodTarget) -> web.StreamResponse:
        spdy_protocols = [p[len(TUNNEL_PREFIX):] for p in offered
                          if p.startswith(TUNNEL_PREFIX) and p.endswith(".k8s.io")]
        if not spdy_protocols:
            return web.Response(status=400, text="unable to upgrade: no tunneling spdy protocols provided\n",
                                content_type="text/plain")
        protocol = _negotiate(spdy_protocols)
        ws = web.WebSocketResponse(protocols=(TUNNEL_PREFIX + protocol,))
        await ws.prepare(request)

        async def incoming() -> AsyncIterator[bytes]:
            async for message in ws:
                if message.type != web.WSMsgType.BINARY:
                    break
                yield message.data

        async def write(data: bytes) -> None:
            if not ws.closed:
                await ws.send_bytes(data)

        session = SpdySession(target, write)
        await self._until_done_or_shutdown(session.run(incoming()))
        await ws.close()
        return ws

    async def _until_done_or_shutdown(self, work: Awaitable, *helpers: asyncio.Future) -> None:
        """Run ``work``; the twin's shutdown ends it early. ``helpers`` are cancelled afterwards."""
        stop: asyncio.Queue = asyncio.Queue()
        self.server.watches.add(stop)
        main = asyncio.ensure_future(work)
        stopping = asyncio.ensure_future(stop.get())
        try:
            await asyncio.wait({main, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.server.watches.discard(stop)
            for task in (main, stopping, *helpers):
                if not task.done():
                    task.cancel()
            await asyncio.gather(main, stopping, *helpers, return_exceptions=True)


class _RawStream(asyncio.Protocol):
    """The connection after the 101: its bytes go to a queue (None at its end)."""

    def __init__(self, queue: asyncio.Queue):
        self.queue = queue

    def data_received(self, data: bytes) -> None:
        self.queue.put_nowait(data)

    def eof_received(self) -> bool:
        self.queue.put_nowait(None)
        return False

    def connection_lost(self, exc) -> None:
        self.queue.put_nowait(None)


async def _chunks(queue: asyncio.Queue) -> AsyncIterator[bytes]:
    while True:
        data = await queue.get()
        if data is None:
            return
        yield data


class _Stream:
    def __init__(self, stream_id: int, headers: spdy.Headers):
        self.id = stream_id
        self.headers = headers
        self.inbound: asyncio.Queue = asyncio.Queue()
        self.remote_done = False  # FIN or RST from the client
        self.local_done = False  # FIN or RST sent

    def header(self, name: str) -> str:
        values = self.headers.get(name.lower())
        return values[0] if values else ""


class _Pair:
    def __init__(self, request_id: str):
        self.request_id = request_id
        self.data: _Stream | None = None
        self.error: _Stream | None = None
        self.timer: asyncio.TimerHandle | None = None


class SpdySession:
    """The kubelet's side of one SPDY port-forward connection (httpstream.go's handler)."""

    def __init__(self, target: PodTarget, write: Send):
        self.target = target
        self._write = write
        self._lock = asyncio.Lock()
        self._compressor = spdy.HeaderCompressor()
        self._reader = spdy.FrameReader()
        self.streams: dict[int, _Stream] = {}
        self.pairs: dict[str, _Pair] = {}
        self._tasks: set[asyncio.Task] = set()
        self._last_stream = 0

    async def run(self, incoming: AsyncIterator[bytes]) -> None:
        try:
            async for chunk in incoming:
                try:
                    frames = self._reader.feed(chunk)
                except spdy.ProtocolError:
                    await self._send(spdy.goaway(self._last_stream, spdy.GOAWAY_PROTOCOL_ERROR))
                    return
                for frame in frames:
                    if not await self._frame(frame):
                        return
        finally:
            for pair in self.pairs.values():
                if pair.timer is not None:
                    pair.timer.cancel()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _send(self, frame: bytes | Callable[[], bytes]) -> None:
        async with self._lock:  # header blocks are compressed in the order they go out
            await self._write(frame() if callable(frame) else frame)

    async def _frame(self, frame: spdy.Frame) -> bool:
        """Handle one frame; False ends the session."""
        if frame.type == 0:
            stream = self.streams.get(frame.stream_id)
            if stream is not None and not stream.remote_done:
                if frame.data:
                    stream.inbound.put_nowait(frame.data)
                if frame.fin:
                    stream.remote_done = True
                    stream.inbound.put_nowait(None)
        elif frame.type == spdy.SYN_STREAM:
            await self._syn_stream(frame)
        elif frame.type == spdy.RST_STREAM:
            stream = self.streams.get(frame.stream_id)
            if stream is not None:
                stream.remote_done = stream.local_done = True
                stream.inbound.put_nowait(None)
        elif frame.type == spdy.PING:
            if frame.ping_id & 1:  # the client's (odd) pings are echoed
                await self._send(spdy.ping(frame.ping_id))
        elif frame.type == spdy.GOAWAY:
            return False
        return True  # SETTINGS, WINDOW_UPDATE, HEADERS: nothing to do

    async def _syn_stream(self, frame: spdy.Frame) -> None:
        stream = _Stream(frame.stream_id, frame.headers)
        self._last_stream = max(self._last_stream, frame.stream_id)
        problem = _stream_problem(stream)
        if problem is not None:
            # The handler refuses the stream and spdystream resets it.
            await self._send(spdy.rst_stream(stream.id, spdy.CANCEL))
            return
        self.streams[stream.id] = stream
        if frame.fin:
            stream.remote_done = True
            stream.inbound.put_nowait(None)
        await self._send(lambda: spdy.syn_reply(stream.id, {}, self._compressor))
        request_id = stream.header("requestID")
        kind = stream.header("streamType")
        if not request_id:  # an old client: pair consecutive stream ids
            request_id = str(stream.id if kind == "error" else stream.id - 2)
        pair = self.pairs.get(request_id)
        if pair is None:
            pair = self.pairs[request_id] = _Pair(request_id)
            pair.timer = asyncio.get_running_loop().call_later(STREAM_CREATION_TIMEOUT, self._timed_out, pair)
        slot = "error" if kind == "error" else "data"
        if getattr(pair, slot) is not None:
            message = f"error processing stream for request {request_id}: {slot} stream already assigned"
            if pair.error is not None:
                await self._send_data(pair.error, message.encode())
            return
        setattr(pair, slot, stream)
        if pair.data is not None and pair.error is not None:
            if pair.timer is not None:
                pair.timer.cancel()
            self.pairs.pop(request_id, None)
            task = asyncio.ensure_future(self._forward(pair.data, pair.error))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _timed_out(self, pair: _Pair) -> None:
        self.pairs.pop(pair.request_id, None)
        if pair.error is not None:
            message = f"(conn=&{{spdy}}, request={pair.request_id}) timed out waiting for streams"
            task = asyncio.ensure_future(self._send_data(pair.error, message.encode()))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _forward(self, data: _Stream, error: _Stream) -> None:
        port = int(data.header("port"))
        try:
            message = await self.target.forward(port, data.inbound, lambda chunk: self._send_data(data, chunk))
            if message:
                await self._send_data(error, message.encode())
        finally:
            await self._close(error)
            await self._close(data)
            self.streams.pop(data.id, None)
            self.streams.pop(error.id, None)

    async def _send_data(self, stream: _Stream, data: bytes) -> None:
        if stream.local_done:
            return
        for frame in spdy.data_frames(stream.id, data):
            await self._send(frame)

    async def _close(self, stream: _Stream) -> None:
        if not stream.local_done:
            stream.local_done = True
            await self._send(spdy.data_frames(stream.id, b"", fin=True)[0])


def _stream_problem(stream: _Stream) -> str | None:
    """Why the kubelet refuses a new stream (httpStreamReceived), or None."""
    port = stream.header("port")
    if not port:
        return '"port" header is required'
    if not port.isdigit() or int(port) > 65535:
        return f'unable to parse "{port}" as a port'
    if int(port) < 1:
        return f'port "{port}" must be > 0'
    kind = stream.header("streamType")
    if not kind:
        return '"streamType" header is required'
    if kind not in ("error", "data"):
        return f'invalid stream type "{kind}"'
    return None


def _negotiate(client: list[str]) -> str:
    """httpstream.Handshake: the kubelet speaks portforward.k8s.io only."""
    names = [p.strip() for value in client for p in value.split(",") if p.strip()]
    if not names:
        raise KubeletRefusal(400, "unable to upgrade: X-Stream-Protocol-Version is required")
    if PORTFORWARD_PROTOCOL not in names:
        raise KubeletRefusal(403, f"unable to upgrade: unable to negotiate protocol: client supports "
                                  f"[{' '.join(names)}], server accepts [{PORTFORWARD_PROTOCOL}]")
    return PORTFORWARD_PROTOCOL


async def _send_ws(ws: web.WebSocketResponse, frames: list[bytes | str]) -> None:
    for frame in frames:
        if ws.closed:
            return
        if isinstance(frame, str):
            await ws.send_str(frame)
        else:
            await ws.send_bytes(frame)


def _api_ports(query) -> list[int]:
    """PodPortForwardOptions.ports: every ``ports`` value, comma-separated values split, as int32."""
    ports = []
    for value in query.getall("ports", []):
        for part in value.split(","):
            try:
                number = int(part.strip())
            except ValueError:
                raise BadRequest(f'strconv.ParseInt: parsing "{part}": invalid syntax') from None
            if not -2**31 <= number < 2**31:
                raise BadRequest(f'strconv.ParseInt: parsing "{part}": value out of range')
            ports.append(number)
    return ports


def _kubelet_ports(ports: list[int]) -> list[int]:
    """The kubelet's reading of the ports it is sent (NewV4Options), for WebSocket requests."""
    if not ports:
        raise KubeletRefusal(400, 'query parameter "port" is required')
    for port in ports:
        if port > 65535:
            raise KubeletRefusal(400, f'unable to parse "{port}" as a port: strconv.ParseUint: parsing "{port}": '
                                      "value out of range")
        if port < 0:
            raise KubeletRefusal(400, f'unable to parse "{port}" as a port: strconv.ParseUint: parsing "{port}": '
                                      "invalid syntax")
        if port == 0:
            raise KubeletRefusal(400, f'port "{port}" must be > 0')
    return ports


__all__ = ["PortForwarding", "SpdySession", "PodTarget", "channels"]
