"""pods/log and pods/exec: the API server's checks, then the kubelet's, then the stream.

The API server resolves the pod and container and refuses what it refuses
(Status errors); the kubelet's refusals come back as it sends them (plain
text, relayed by the API server). Logs are read from :class:`LogStore`,
exec runs against the container's view built from cluster state
(:mod:`exec_commands`), over the WebSocket channel protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, AsyncIterator, Iterator

from aiohttp import web

from .. import containers
from ..clock import parse_time
from ..errors import BadRequest, FieldError, Gone, Invalid, NotFound, forbidden as forbidden_field, invalid
from ..logs import LogQuery, LogReader, LogStore
from . import channels
from .channels import ChannelProtocol
from .registry import Ctx
from .requestinfo import RequestInfo
from .resources import Resource

if TYPE_CHECKING:
    from ..containers.exec_commands import Execution
    from ..containers.stdin import Stdin


_TRUE = ("1", "t", "T", "TRUE", "true", "True")  # Go's strconv.ParseBool
_FALSE = ("0", "f", "F", "FALSE", "false", "False")
# How often a quiet follow checks that its client is still there (the kubelet re-checks every second too).
_LIVENESS_CHECK = 1.0


@dataclass(frozen=True)
class ExecOptions:
    command: list[str]
    stdin: bool
    stdout: bool
    stderr: bool
    tty: bool


class PodIO:
    def __init__(self, server, logs: LogStore):
        self.server = server
        self.logs = logs
        self._execs = 0
        self._tokens: dict[tuple, tuple[float, str]] = {}  # projected token files: (issued at, token)

    # ---- shared checks ----------------------------------------------------------------------------
    def _pod_and_container(self, info: RequestInfo, container: str | None) -> tuple[dict, containers.ContainerRef]:
        pods = self.server.catalog.lookup("", "v1", "pods")
        pod = self.server.api.get(pods, info.namespace, info.name)
        try:
            return pod, containers.resolve(pod, container)
        except containers.InvalidContainer as exc:
            raise BadRequest(str(exc)) from None

    def _require_node(self, pod: dict) -> None:
        node = pod["spec"]["nodeName"]
        if self.server.store.get("nodes", "", node) is None:
            raise NotFound("nodes", node)

    # ---- pods/log --------------------------------------------------------------------------------
    async def log(self, request: web.Request, info: RequestInfo, res: Resource, ctx: Ctx) -> web.StreamResponse:
        follow, previous, query = _log_options(request.query, info.name, self.server.clock.now())
        pod, ref = self._pod_and_container(info, request.query.get("container"))
        if not pod["spec"].get("nodeName"):
            # The API server has no kubelet to ask and streams nothing.
            return web.Response(status=204)
        self._require_node(pod)
        try:
            instance = containers.log_instance(pod, ref, previous)
        except containers.ContainerUnavailable as exc:
            raise BadRequest(str(exc)) from None
        namespace, name = info.namespace, info.name
        reader = LogReader(query)
        if not (follow and instance == "current" and containers.is_running(pod, ref)):
            lines = self.logs.lines(namespace, name, ref.name, previous=instance == "previous")
            return _text_response(reader.initial(lines))
        return await self._follow(request, pod, ref, reader)

    async def _follow(self, request: web.Request, pod: dict, ref: containers.ContainerRef,
                      reader: LogReader) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        events: asyncio.Queue = asyncio.Queue()

        def deliver(*event) -> None:
            try:
                loop.call_soon_threadsafe(events.put_nowait, event)
            except RuntimeError:  # the loop is closing: the stream is over anyway
                pass

        meta = pod["metadata"]
        namespace, name, uid = meta["namespace"], meta["name"], meta["uid"]
        backlog, subscription = self.logs.follow(namespace, name, ref.name, lambda line: deliver("line", line))
        pod_watch = self._watch_pod(pod, lambda kind, obj: deliver("pod", kind, obj))
        response = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
        response.enable_chunked_encoding()
        try:
            with self._until_shutdown(events):
                await response.prepare(request)
                await response.write(reader.initial(backlog))
                await self._stream_new_lines(response, reader, _events(events, request), uid, ref)
            await response.write_eof()
        except ConnectionResetError:  # the client went away
            pass
        finally:
            subscription.cancel()
            pod_watch.stop()
        return response

    @staticmethod
    async def _stream_new_lines(response: web.StreamResponse, reader: LogReader, events: AsyncIterator[tuple],
                                uid: str, ref: containers.ContainerRef) -> None:
        if reader.exhausted:
            return
        async for event in events:
            if not _still_following(event, uid, ref):
                return
            if event[0] == "line":
                await response.write(reader.more(event[1]))
                if reader.exhausted:
                    return

    def _watch_pod(self, pod: dict, sink):
        meta = pod["metadata"]
        store = self.server.store

        def matches(obj: dict) -> bool:
            return obj["metadata"].get("namespace") == meta["namespace"] and obj["metadata"]["name"] == meta["name"]
        try:
            return store.watch("pods", sink, matches, int(meta["resourceVersion"]))
        except Gone:
            return store.watch("pods", sink, matches, store.resource_version)

    @contextlib.contextmanager
    def _until_shutdown(self, queue: asyncio.Queue) -> Iterator[None]:
        """While open, the server's shutdown puts a stop marker on ``queue``."""
        self.server.watches.add(queue)
        try:
            yield
        finally:
            self.server.watches.discard(queue)

    def _service_account_token(self, namespace: str, account: str, audiences: list[str], seconds: int) -> str:
        """The token a projected volume holds; like the kubelet, renew it once 80% of its lifetime has passed."""
        key = (namespace, account, tuple(audiences), seconds)
        now = self.server.clock.now()
        issued = self._tokens.get(key)
        if issued is None or now - issued[0] > 0.8 * seconds:
            issued = (now, self.server.issue_service_account_token(namespace, account, audiences, seconds))
            self._tokens[key] = issued
        return issued[1]

    # ---- pods/exec ---------------------------------------------------------------------------------
    async def exec(self, request: web.Request, info: RequestInfo, res: Resource, ctx: Ctx) -> web.StreamResponse:
        options = _exec_options(request.query)
        pod, ref = self._pod_and_container(info, request.query.get("container"))
        if not pod["spec"].get("nodeName"):
            raise BadRequest(f"pod {info.name} does not have a host assigned")
        self._require_node(pod)
        # From here on the kubelet answers, in plain text.
        if not (options.stdin or options.stdout or options.stderr):
            return web.Response(status=400, text="you must specify at least 1 of stdin, stdout, stderr")
        try:
            containers.require_running(pod, ref)
        except containers.ContainerUnavailable as exc:
            return web.Response(status=500, text=str(exc))
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return web.Response(status=400, text="Unable to upgrade: the itbench twin serves exec over WebSocket "
                                                 f"only ({', '.join(channels.PROTOCOLS)})")
        protocol = channels.negotiate(request.headers.get("Sec-WebSocket-Protocol"))
        if protocol is None:
            return web.Response(status=400, text="unable to upgrade: unable to negotiate protocol: client "
                                                 f"supports {request.headers.get('Sec-WebSocket-Protocol')!r}, "
                                                 f"server supports {list(channels.PROTOCOLS)}")
        return await self._exec_session(request, protocol, pod, ref, options)

    async def _exec_session(self, request: web.Request, protocol: ChannelProtocol, pod: dict,
                            ref: containers.ContainerRef, options: ExecOptions) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(protocols=channels.PROTOCOLS)
        await ws.prepare(request)
        first = channels.STDOUT if options.stdout else channels.STDERR if options.stderr else channels.ERROR
        await _send(ws, protocol.frames(first, b""))
        # The command emulation is only loaded by the first exec: most twins never see one.
        from ..containers.exec_commands import ExecStartError, needs_stdin, sandbox_for, start
        from ..containers.layers import apply_layer, commit_writes
        from ..containers.stdin import Stdin
        self._execs += 1
        serial = self._execs
        store = self.server.store
        sandbox = sandbox_for(store, pod, ref, self._service_account_token, self.server.clock.now(),
                              exec_pid=6 + serial)
        apply_layer(store, pod, ref, sandbox.fs)  # what earlier execs wrote in this container
        files_before = dict(sandbox.fs.nodes)
        if options.tty and needs_stdin(sandbox, options.command):
            status = _internal_error(protocol, "error executing command in container: interactive terminal "
                                               "sessions are not supported by the itbench twin; run a command "
                                               "instead, e.g. kubectl exec POD -- sh -c '...'")
            await _send(ws, protocol.status_frames(status))
            await ws.close()
            return ws
        # Without stdin=true the process's stdin is empty (/dev/null); with it, it is what the client sends.
        stdin = Stdin(closed=not options.stdin)
        try:
            execution = start(sandbox, options.command, stdin)
        except ExecStartError as exc:
            exec_id = hashlib.sha256(f"{pod['metadata']['uid']}/{ref.name}/{serial}".encode()).hexdigest()
            status = _internal_error(protocol, "error executing command in container: failed to exec in "
                                               f'container: failed to start exec "{exec_id}": {exc}')
        else:
            exit_code = await self._run_process(ws, protocol, execution, stdin, options)
            if exit_code is None:  # the twin is stopping
                await ws.close()
                return ws
            commit_writes(store, pod, ref, files_before, sandbox.fs)
            status = _exit_status(protocol, exit_code, options.command)
        if not ws.closed:
            await _send(ws, protocol.status_frames(status))
            await ws.close()
        return ws

    async def _run_process(self, ws: web.WebSocketResponse, protocol: ChannelProtocol, execution: Execution,
                           stdin: Stdin, options: ExecOptions) -> int | None:
        """Run the process, its output streamed as it writes; its exit code, or ``None`` if the twin stops.

        While it waits for input, the next message from the client is read: stdin data is fed to it, the
        close signal (v5) on stdin or the end of the connection closes its stdin (end of file), as the
        kubelet's stream does. Once the process exits, its status goes out whatever stdin still holds.
        """
        loop = asyncio.get_running_loop()
        stop: asyncio.Queue = asyncio.Queue()
        written = 0
        with self._until_shutdown(stop):
            stopping = loop.create_task(stop.get())
            try:
                while True:
                    try:
                        next(execution.steps)
                    except StopIteration as done:
                        exit_code = done.value
                        break
                    if not ws.closed:
                        await _send(ws, _output_frames(protocol, execution.output[written:], options))
                    written = len(execution.output)
                    if ws.closed:
                        stdin.close()  # the client is gone: the process reads end of file and exits unseen
                        continue
                    receiving = loop.create_task(ws.receive())
                    done_tasks, _ = await asyncio.wait({receiving, stopping}, return_when=asyncio.FIRST_COMPLETED)
                    if stopping in done_tasks:
                        receiving.cancel()
                        execution.steps.close()
                        return None
                    _deliver_stdin(protocol, receiving.result(), stdin)
            finally:
                stopping.cancel()
        if not ws.closed:
            await _send(ws, _output_frames(protocol, execution.output[written:], options))
        return exit_code


def _deliver_stdin(protocol: ChannelProtocol, message: web.WSMessage, stdin: Stdin) -> None:
    """One client message, as the kubelet's stream handles it: stdin data, a close signal, or the end."""
    if message.type not in (web.WSMsgType.BINARY, web.WSMsgType.TEXT):
        stdin.close()  # the connection closed (or failed): every channel the client wrote ends
        return
    decoded = protocol.decode(message.data)
    if decoded is None:
        return
    channel, payload = decoded
    if channel == channels.CLOSE_SIGNAL and protocol.supports_close:
        if payload == bytes([channels.STDIN]):
            stdin.close()
        elif len(payload) != 1:
            stdin.close()  # a malformed close signal ends the kubelet's reading of the connection
        return
    if channel == channels.STDIN and not stdin.closed:
        stdin.feed(payload)


async def _events(queue: asyncio.Queue, request: web.Request) -> AsyncIterator[tuple]:
    """Events from ``queue`` until the client disconnects; anything that is not our event means stop."""
    while True:
        try:
            event = await asyncio.wait_for(queue.get(), _LIVENESS_CHECK)
        except asyncio.TimeoutError:
            if request.transport is None or request.transport.is_closing():
                return
            continue
        if not isinstance(event, tuple):
            return
        yield event


def _still_following(event: tuple, uid: str, ref: containers.ContainerRef) -> bool:
    """A follow ends with the instance, the pod, or the container's run (as the kubelet's does)."""
    if event[0] == "line":
        return event[1] is not None
    kind, obj = event[1], event[2]
    if kind == "DELETED" or obj["metadata"].get("uid") != uid:
        return False
    return containers.is_running(obj, ref)


async def _send(ws: web.WebSocketResponse, frames: list[bytes | str]) -> None:
    for frame in frames:
        if isinstance(frame, str):
            await ws.send_str(frame)
        else:
            await ws.send_bytes(frame)


def _output_frames(protocol: ChannelProtocol, output: list[tuple[int, bytes]],
                   options: ExecOptions) -> list[bytes | str]:
    frames: list[bytes | str] = []
    for fd, data in output:
        if not data:
            continue
        if options.tty:
            # A terminal has one output stream and turns newlines into CR LF.
            if options.stdout:
                frames += protocol.frames(channels.STDOUT, data.replace(b"\n", b"\r\n"))
        elif fd == 1 and options.stdout:
            frames += protocol.frames(channels.STDOUT, data)
        elif fd == 2 and options.stderr:
            frames += protocol.frames(channels.STDERR, data)
    return frames


def _exit_status(protocol: ChannelProtocol, exit_code: int, command: list[str]) -> dict:
    if exit_code == 0:
        return {"metadata": {}, "status": "Success"}
    if protocol.supports_close:
        # The API server translates the kubelet's stream and reports the exit as client-go saw it.
        cause = f"command terminated with exit code {exit_code}"
    else:
        cause = f"error executing command [{' '.join(command)}], exit code {exit_code}"
    return {"metadata": {}, "status": "Failure", "message": f"command terminated with non-zero exit code: {cause}",
            "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(exit_code)}]}}


def _internal_error(protocol: ChannelProtocol, message: str) -> dict:
    text = f"Internal error occurred: {message}"
    if protocol.supports_close:
        # The API server wraps the kubelet's internal error in one of its own.
        text = f"Internal error occurred: {text}"
        message = f"Internal error occurred: {message}"
    return {"metadata": {}, "status": "Failure", "message": text, "reason": "InternalError",
            "details": {"causes": [{"message": message}]}, "code": 500}


def _text_response(data: bytes) -> web.Response:
    return web.Response(body=data, headers={"Content-Type": "text/plain"})


# ---- request options ---------------------------------------------------------------------------------

def _bool(query, name: str) -> bool:
    value = query.get(name)
    if value is None or value == "":
        return False
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise BadRequest(f'strconv.ParseBool: parsing "{value}": invalid syntax')


def _int(query, name: str) -> int | None:
    value = query.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise BadRequest(f'strconv.ParseInt: parsing "{value}": invalid syntax') from None


def _log_options(query, pod: str, now: float) -> tuple[bool, bool, LogQuery]:
    """PodLogOptions from the query, validated as the API server validates them."""
    tail, limit, since_seconds = _int(query, "tailLines"), _int(query, "limitBytes"), _int(query, "sinceSeconds")
    since_time = query.get("sinceTime")
    problems: list[FieldError] = []
    if tail is not None and tail < 0:
        problems.append(invalid("tailLines", tail, "must be greater than or equal to 0"))
    if limit is not None and limit < 1:
        problems.append(invalid("limitBytes", limit, "must be greater than 0"))
    if since_seconds is not None and since_time:
        problems.append(forbidden_field("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
    elif since_seconds is not None and since_seconds < 1:
        problems.append(invalid("sinceSeconds", since_seconds, "must be greater than 0"))
    if problems:
        raise Invalid("PodLogOptions", "", pod, problems)
    since_ns = None
    if since_seconds is not None:
        since_ns = round((now - since_seconds) * 1e6) * 1000
    elif since_time:
        try:
            since_ns = round(parse_time(since_time) * 1e6) * 1000
        except ValueError:
            raise BadRequest(f'parsing time "{since_time}" as "2006-01-02T15:04:05Z07:00": cannot parse') from None
    query_obj = LogQuery(tail_lines=tail, limit_bytes=limit, timestamps=_bool(query, "timestamps"),
                         since_ns=since_ns)
    return _bool(query, "follow"), _bool(query, "previous"), query_obj


def _exec_options(query) -> ExecOptions:
    command = query.getall("command", [])
    if not command:
        raise BadRequest("you must specify at least one command for the container")
    tty = _bool(query, "tty")
    return ExecOptions(command=list(command), stdin=_bool(query, "stdin"), stdout=_bool(query, "stdout"),
                       stderr=_bool(query, "stderr") and not tty, tty=tty)

