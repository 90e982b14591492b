"""SPDY/3.1 framing, as kubectl and the kubelet speak it for port-forward (and exec before WebSockets).

Written from the SPDY/3.1 draft (Belshe, Peon, Thomson, Melnikov). A frame starts with a control
bit. A control frame is ``1 | version (15) | type (16) | flags (8) | length (24) | data``; a data
frame is ``0 | stream id (31) | flags (8) | length (24) | data``. Header blocks (SYN_STREAM,
SYN_REPLY, HEADERS) are ``count (32)`` then ``name length (32) name value length (32) value`` per
pair, values joined by NUL; each direction compresses them with one zlib stream over the whole
connection, primed with the draft's dictionary and flushed (``Z_SYNC_FLUSH``) after every block.

This module only encodes and decodes; :class:`FrameReader` takes bytes as they arrive and hands
back whole frames. Flow control (WINDOW_UPDATE, SETTINGS_INITIAL_WINDOW_SIZE) is read and ignored,
as the Go implementation both ends use (spdystream) does.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

VERSION = 3

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
FLAG_UNIDIRECTIONAL = 0x02

# RST_STREAM status codes
PROTOCOL_ERROR, INVALID_STREAM, REFUSED_STREAM, UNSUPPORTED_VERSION, CANCEL, INTERNAL_ERROR = 1, 2, 3, 4, 5, 6
FLOW_CONTROL_ERROR, STREAM_IN_USE, STREAM_ALREADY_CLOSED, FRAME_TOO_LARGE = 7, 8, 9, 11
# GOAWAY status codes
GOAWAY_OK, GOAWAY_PROTOCOL_ERROR, GOAWAY_INTERNAL_ERROR = 0, 1, 2

MAX_LENGTH = 0xFFFFFF
_STREAM_MASK = 0x7FFFFFFF

# The header compression dictionary of SPDY/3 (section 2.6.10.1): the common header names and values
# as length-prefixed words, then a run of status codes, reason phrases, dates and media types.
_DICTIONARY_WORDS = (
    "options", "head", "post", "put", "delete", "trace", "accept", "accept-charset", "accept-encoding",
    "accept-language", "accept-ranges", "age", "allow", "authorization", "cache-control", "connection",
    "content-base", "content-encoding", "content-language", "content-length", "content-location", "content-md5",
    "content-range", "content-type", "date", "etag", "expect", "expires", "from", "host", "if-match",
    "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified", "location",
    "max-forwards", "pragma", "proxy-authenticate", "proxy-authorization", "range", "referer", "retry-after",
    "server", "te", "trailer", "transfer-encoding", "upgrade", "user-agent", "vary", "via", "warning",
    "www-authenticate", "method", "get", "status", "200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie",
    "keep-alive", "origin",
)
_DICTIONARY_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
    "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)
DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _DICTIONARY_WORDS) + _DICTIONARY_TAIL.encode()


class ProtocolError(Exception):
    """The peer sent something that is not SPDY/3.1 (the session ends with GOAWAY PROTOCOL_ERROR)."""


Headers = dict[str, list[str]]


@dataclass
class Frame:
    type: int  # a control frame type, or 0 for DATA
    flags: int = 0
    stream_id: int = 0
    headers: Headers = field(default_factory=dict)  # SYN_STREAM, SYN_REPLY, HEADERS
    data: bytes = b""  # DATA
    status: int = 0  # RST_STREAM, GOAWAY
    ping_id: int = 0  # PING
    associated_id: int = 0  # SYN_STREAM
    priority: int = 0  # SYN_STREAM
    delta: int = 0  # WINDOW_UPDATE
    settings: list[tuple[int, int, int]] = field(default_factory=list)  # SETTINGS: (flags, id, value)
    version: int = VERSION

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)

    def header(self, name: str) -> str:
        """The first value of header ``name`` (names are lower case on the wire), or ''."""
        values = self.headers.get(name.lower())
        return values[0] if values else ""


# ---- encoding ---------------------------------------------------------------------------------------------

class HeaderCompressor:
    """One direction's header compression: a zlib stream for the life of the connection."""

    def __init__(self) -> None:
        self._z = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, 15, 8, zlib.Z_DEFAULT_STRATEGY,
                                   DICTIONARY)

    def compress(self, headers: Headers) -> bytes:
        block = [struct.pack(">I", len(headers))]
        for name, values in headers.items():
            value = "\x00".join(values).encode()
            raw = name.lower().encode()
            block.append(struct.pack(">I", len(raw)) + raw + struct.pack(">I", len(value)) + value)
        return self._z.compress(b"".join(block)) + self._z.flush(zlib.Z_SYNC_FLUSH)


class HeaderDecompressor:
    def __init__(self) -> None:
        self._z = zlib.decompressobj(15, DICTIONARY)

    def decompress(self, data: bytes) -> Headers:
        try:
            raw = self._z.decompress(data)
        except zlib.error as exc:
            raise ProtocolError(f"header block does not decompress: {exc}") from None
        return parse_header_block(raw)


def parse_header_block(raw: bytes) -> Headers:
    try:
        (count,), at = struct.unpack_from(">I", raw), 4
        headers: Headers = {}
        for _ in range(count):
            (size,) = struct.unpack_from(">I", raw, at)
            name = raw[at + 4:at + 4 + size].decode("latin-1").lower()
            at += 4 + size
            (size,) = struct.unpack_from(">I", raw, at)
            value = raw[at + 4:at + 4 + size].decode("latin-1")
            at += 4 + size
            if at > len(raw):
                raise ProtocolError("header block is truncated")
            headers.setdefault(name, []).extend(value.split("\x00"))
    except struct.error:
        raise ProtocolError("header block is truncated") from None
    return headers


def _control(frame_type: int, flags: int, payload: bytes) -> bytes:
    if len(payload) > MAX_LENGTH:
        raise ValueError("control frame too large")
    return struct.pack(">HHI", 0x8000 | VERSION, frame_type, (flags << 24) | len(payload)) + payload


def data_frames(stream_id: int, data: bytes, fin: bool = False, chunk: int = 32 * 1024) -> list[bytes]:
    """DATA frames carrying ``data`` (one empty frame when there is none), the last with FIN if asked."""
    pieces = [data[i:i + chunk] for i in range(0, len(data), chunk)] or [b""]
    out = []
    for i, piece in enumerate(pieces):
        flags = FLAG_FIN if fin and i == len(pieces) - 1 else 0
        out.append(struct.pack(">II", stream_id & _STREAM_MASK, (flags << 24) | len(piece)) + piece)
    return out


def syn_stream(stream_id: int, headers: Headers, compressor: HeaderCompressor, *, fin: bool = False,
               priority: int = 0, associated: int = 0) -> bytes:
    body = struct.pack(">IIBB", stream_id & _STREAM_MASK, associated & _STREAM_MASK, (priority & 7) << 5, 0)
    return _control(SYN_STREAM, FLAG_FIN if fin else 0, body + compressor.compress(headers))


def syn_reply(stream_id: int, headers: Headers, compressor: HeaderCompressor, *, fin: bool = False) -> bytes:
    return _control(SYN_REPLY, FLAG_FIN if fin else 0,
                    struct.pack(">I", stream_id & _STREAM_MASK) + compressor.compress(headers))


def rst_stream(stream_id: int, status: int) -> bytes:
    return _control(RST_STREAM, 0, struct.pack(">II", stream_id & _STREAM_MASK, status))


def ping(ping_id: int) -> bytes:
    return _control(PING, 0, struct.pack(">I", ping_id))


def goaway(last_good: int, status: int = GOAWAY_OK) -> bytes:
    return _control(GOAWAY, 0, struct.pack(">II", last_good & _STREAM_MASK, status))


def settings(entries: list[tuple[int, int, int]], flags: int = 0) -> bytes:
    body = struct.pack(">I", len(entries)) + b"".join(
        struct.pack(">II", (f << 24) | (i & 0xFFFFFF), v) for f, i, v in entries)
    return _control(SETTINGS, flags, body)


def window_update(stream_id: int, delta: int) -> bytes:
    return _control(WINDOW_UPDATE, 0, struct.pack(">II", stream_id & _STREAM_MASK, delta & _STREAM_MASK))


# ---- decoding ---------------------------------------------------------------------------------------------

class FrameReader:
    """Whole frames out of a byte stream fed in arbitrary pieces."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._headers = HeaderDecompressor()

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames = []
        while len(self._buffer) >= 8:
            first, second = struct.unpack_from(">II", self._buffer)
            length = second & 0xFFFFFF
            if len(self._buffer) < 8 + length:
                break
            payload = bytes(self._buffer[8:8 + length])
            del self._buffer[:8 + length]
            frames.append(self._frame(first, second >> 24, payload))
        return frames

    def _frame(self, first: int, flags: int, payload: bytes) -> Frame:
        if not first & 0x80000000:
            return Frame(0, flags, stream_id=first & _STREAM_MASK, data=payload)
        version, frame_type = (first >> 16) & 0x7FFF, first & 0xFFFF
        if version != VERSION:
            raise ProtocolError(f"unsupported SPDY version {version}")
        frame = Frame(frame_type, flags, version=version)
        try:
            if frame_type == SYN_STREAM:
                stream, associated, priority, _slot = struct.unpack_from(">IIBB", payload)
                frame.stream_id, frame.associated_id, frame.priority = stream & _STREAM_MASK, \
                    associated & _STREAM_MASK, priority >> 5
                frame.headers = self._headers.decompress(payload[10:])
                if frame.stream_id == 0:
                    raise ProtocolError("SYN_STREAM on stream 0")
            elif frame_type in (SYN_REPLY, HEADERS):
                (stream,) = struct.unpack_from(">I", payload)
                frame.stream_id = stream & _STREAM_MASK
                frame.headers = self._headers.decompress(payload[4:])
            elif frame_type == RST_STREAM:
                stream, frame.status = struct.unpack_from(">II", payload)
                frame.stream_id = stream & _STREAM_MASK
            elif frame_type == SETTINGS:
                (count,) = struct.unpack_from(">I", payload)
                for i in range(count):
                    flag_id, value = struct.unpack_from(">II", payload, 4 + 8 * i)
                    frame.settings.append((flag_id >> 24, flag_id & 0xFFFFFF, value))
            elif frame_type == PING:
                (frame.ping_id,) = struct.unpack_from(">I", payload)
            elif frame_type == GOAWAY:
                stream, frame.status = struct.unpack_from(">II", payload)
                frame.stream_id = stream & _STREAM_MASK
            elif frame_type == WINDOW_UPDATE:
                stream, delta = struct.unpack_from(">II", payload)
                frame.stream_id, frame.delta = stream & _STREAM_MASK, delta & _STREAM_MASK
            # Any other type (CREDENTIAL, future ones) is ignored, as the draft asks.
        except struct.error:
            raise ProtocolError(f"control frame of type {frame_type} is too short") from None
        return frame
