"""What a TCP connection to a port inside a pod gets, byte by byte: the far end of a port-forward.

The container behaviour model (:mod:`.behaviour`) says which ports a process listens on, from when,
what they speak (``http``, ``grpc`` or plain ``tcp``) and what an HTTP request to a path gets (a
status, a body size). A :class:`Conversation` turns that into bytes: it is fed what the client sends
and returns what the server writes back and whether it has closed the connection.

* **HTTP** (:class:`HttpConversation`): HTTP/1.x requests are parsed as they complete (pipelining,
  ``Content-Length`` and chunked bodies); each gets the status the process's model gives for its
  path, asked at the moment it arrives, so a process that stops listening resets the connection.
  Persistence follows HTTP/1.x (1.1 keeps the connection unless ``Connection: close``, 1.0 closes
  unless ``keep-alive``); a request that does not parse gets ``400 Bad Request`` and the connection
  closes. A server that keeps an access log (nginx) logs the request with client ``127.0.0.1``.
  An nginx image answers as nginx does (its ``Server`` header, the default welcome page for a 200,
  its error pages, of the sizes the model gives); other servers' bodies are not modelled and are a
  short plain-text line naming the status.
* **gRPC**: the server's HTTP/2 SETTINGS frame at once; anything but the HTTP/2 client preface
  then closes the connection (as grpc-go does).
* **Plain TCP** (databases, caches): the connection is accepted and held open; the twin does not
  speak those protocols, so nothing is ever written back.
"""

from __future__ import annotations

import email.utils
import re
from dataclasses import dataclass
from typing import Callable, Protocol

from ..images import NGINX, Image, profile_for
from .behaviour import Process, access_line

GRPC_SETTINGS = b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x05\x00\x00\x40\x00"  # SETTINGS MAX_FRAME_SIZE 16384
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
MAX_HEADER_BYTES = 32 * 1024  # nginx: large_client_header_buffers 4 8k

REASONS = {200: "OK", 201: "Created", 204: "No Content", 301: "Moved Permanently", 302: "Found",
           304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           405: "Not Allowed", 408: "Request Time-out", 429: "Too Many Requests", 500: "Internal Server Error",
           502: "Bad Gateway", 503: "Service Temporarily Unavailable", 504: "Gateway Time-out"}

NGINX_WELCOME = """<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
""".encode()


@dataclass(frozen=True)
class Listener:
    """The process that accepted a connection, and how to ask about it now."""

    process: Process
    port: int
    image: Image | None
    since_start: Callable[[], float | None]  # seconds since the process started; None once it is gone
    now: Callable[[], float]  # the twin's clock
    write_log: Callable[[str], None]  # a line in the container's log (access logs)

    def still_listening(self) -> bool:
        t = self.since_start()
        return t is not None and self.process.listens(self.port, t)


class Conversation(Protocol):
    def opening(self) -> bytes:
        """What the server writes as soon as the connection is made."""

    def feed(self, data: bytes) -> tuple[bytes, bool]:
        """The server's answer to ``data``, and whether it has now closed the connection."""

    def end(self) -> bytes:
        """The client will send no more (half-close): the server's last words before it closes."""


def conversation(listener: Listener) -> Conversation:
    protocol = listener.process.protocol
    if protocol == "grpc":
        return GrpcConversation()
    if protocol == "http":
        return HttpConversation(listener)
    return SilentConversation()


class SilentConversation:
    def opening(self) -> bytes:
        return b""

    def feed(self, data: bytes) -> tuple[bytes, bool]:
        return b"", False

    def end(self) -> bytes:
        return b""


class GrpcConversation:
    def __init__(self) -> None:
        self._seen = b""

    def opening(self) -> bytes:
        return GRPC_SETTINGS

    def feed(self, data: bytes) -> tuple[bytes, bool]:
        if len(self._seen) >= len(HTTP2_PREFACE):
            return b"", False  # HTTP/2 proper: not modelled, held open
        self._seen += data
        prefix = self._seen[:len(HTTP2_PREFACE)]
        return b"", not HTTP2_PREFACE.startswith(prefix)

    def end(self) -> bytes:
        return b""


_REQUEST_LINE = re.compile(rb"^([A-Z]+) (\S+) HTTP/(\d)\.(\d)$")


class HttpConversation:
    def __init__(self, listener: Listener):
        self.listener = listener
        self.nginx = listener.image is not None and profile_for(listener.image) is NGINX
        self.version = listener.image.version if listener.image is not None else ""
        self._buffer = b""

    def opening(self) -> bytes:
        return b""

    def end(self) -> bytes:
        return b""

    def feed(self, data: bytes) -> tuple[bytes, bool]:
        self._buffer += data
        out = []
        while True:
            request = self._next_request()
            if request is None:
                if len(self._buffer) > MAX_HEADER_BYTES:
                    out.append(self._response(400, "GET", keep_alive=False))
                    return b"".join(out), True
                return b"".join(out), False
            if request == "bad":
                out.append(self._response(400, "GET", keep_alive=False))
                return b"".join(out), True
            method, path, keep_alive, agent = request
            if not self.listener.still_listening():
                return b"".join(out), True  # the process is gone: the connection is reset
            answer = self.listener.process.http(self.listener.port, path, self.listener.since_start() or 0.0)
            if answer.status is None:
                return b"".join(out), True
            response = self._response(answer.status, method, keep_alive, body_bytes=answer.body_bytes)
            self._log(method, path, answer.status, response, agent)
            out.append(response)
            if not keep_alive:
                return b"".join(out), True

    def _next_request(self):
        """(method, path, keep-alive, user agent) of the next complete request, "bad", or None (incomplete)."""
        buffer = self._buffer.lstrip(b"\r\n")  # nginx skips empty lines before a request
        end = buffer.find(b"\r\n\r\n")
        sep = 4
        if end < 0:
            end, sep = buffer.find(b"\n\n"), 2
            if end < 0:
                return None
        head = buffer[:end].replace(b"\r\n", b"\n").split(b"\n")
        match = _REQUEST_LINE.match(head[0])
        if match is None:
            return "bad"
        method, target, major, minor = match.group(1).decode(), match.group(2).decode("latin-1"), \
            int(match.group(3)), int(match.group(4))
        if major != 1:
            return "bad"
        headers: dict[str, str] = {}
        for line in head[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not name or name != name.strip():
                return "bad"
            headers[name.decode("latin-1").lower()] = value.strip().decode("latin-1")
        if minor >= 1 and "host" not in headers:
            return "bad"
        body_start = end + sep
        length = headers.get("content-length")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            terminator = buffer.find(b"0\r\n\r\n", body_start)
            if terminator < 0:
                return None
            consumed = terminator + 5
        elif length is not None:
            if not length.isdigit():
                return "bad"
            consumed = body_start + int(length)
            if len(buffer) < consumed:
                return None
        else:
            consumed = body_start
        self._buffer = buffer[consumed:]
        connection = headers.get("connection", "").lower()
        keep_alive = "keep-alive" in connection if minor == 0 else "close" not in connection
        path = target
        if "://" in path:
            path = "/" + path.split("://", 1)[1].partition("/")[2]
        return method, path, keep_alive, headers.get("user-agent", "-")

    def _response(self, status: int, method: str, keep_alive: bool, body_bytes: int | None = None) -> bytes:
        reason = REASONS.get(status, "Unknown")
        now = self.listener.now()
        date = email.utils.formatdate(now, usegmt=True)
        if self.nginx:
            if status == 200:
                body, kind = NGINX_WELCOME, "text/html"
            else:
                body, kind = (f"<html>\r\n<head><title>{status} {reason}</title></head>\r\n<body>\r\n<center><h1>"
                              f"{status} {reason}</h1></center>\r\n<hr><center>nginx/{self.version}</center>\r\n"
                              "</body>\r\n</html>\r\n").encode(), "text/html"
            lines = [f"HTTP/1.1 {status} {reason}", f"Server: nginx/{self.version}", f"Date: {date}",
                     f"Content-Type: {kind}", f"Content-Length: {len(body)}",
                     f"Connection: {'keep-alive' if keep_alive else 'close'}"]
            if status == 200:
                lines.append("Accept-Ranges: bytes")
        else:
            body = f"{status} {reason}\n".encode()
            lines = [f"HTTP/1.1 {status} {reason}", "Content-Type: text/plain; charset=utf-8", f"Date: {date}",
                     f"Content-Length: {len(body)}"]
            if not keep_alive:
                lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode()
        return head if method == "HEAD" else head + body

    def _log(self, method: str, path: str, status: int, response: bytes, agent: str) -> None:
        template = self.listener.process.access_log
        if not template:
            return
        size = len(response) - response.index(b"\r\n\r\n") - 4
        line = access_line(template, client="127.0.0.1", when=self.listener.now(), path=path, status=status,
                           size=size, agent=agent)
        if method != "GET":
            line = line.replace('"GET ', f'"{method} ', 1)
        self.listener.write_log(line)
