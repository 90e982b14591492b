"""String literals' byte escapes, decoded as Go decodes them.

In PromQL, as in Go, ``\\xHH`` and ``\\NNN`` (octal) write one byte, so
``"\\xc3\\xa9"`` is ``é`` and ``"\\xff"`` is a string that is not valid UTF-8
(an invalid label name, which ``label_replace`` refuses). promql-parser reads
them as code points instead (``"\\xc3\\xa9"`` becomes ``Ã©``) and cannot hold
invalid UTF-8 at all. So before parsing, every quoted literal holding such an
escape is rewritten with ``\\U`` escapes of what Go would decode; a byte that
is not part of valid UTF-8 travels through the parser as a private-use
stand-in and comes back as Python's surrogate escape for that byte
(``bytes.decode("utf-8", "surrogateescape")``), which :func:`valid_utf8`
tells apart.
"""

from __future__ import annotations

import re

_STAND_IN = 0x10FF00  # + the byte: Supplementary Private Use Area-B, which no query writes in practice
_STAND_IN_CHAR = chr(_STAND_IN)
_SIMPLE = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, "'": 39, '"': 34}
_BYTE_ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|[0-7]{3})")


def rewrite(query: str) -> str:
    """``query`` with its byte-escaped literals rewritten for promql-parser (``query`` itself if it has none)."""
    if not _BYTE_ESCAPE.search(query):
        return query
    out: list[str] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch == "#":
            end = query.find("\n", i)
            end = n if end < 0 else end
        elif ch == "`":
            end = query.find("`", i + 1)
            end = n if end < 0 else end + 1
        elif ch in "\"'":
            end = _literal_end(query, i)
            literal = query[i:end]
            out.append(_reencoded(literal) if _BYTE_ESCAPE.search(literal) else literal)
            i = end
            continue
        else:
            end = i + 1
        out.append(query[i:end])
        i = end
    return "".join(out)


def restore(text: str) -> str:
    """A parsed string with each stand-in turned back into its byte's surrogate escape."""
    if not text or max(text) < _STAND_IN_CHAR:  # the common case, checked at C speed
        return text
    return "".join(chr(0xDC00 + ord(c) - _STAND_IN) if ord(c) >= _STAND_IN else c for c in text)


def valid_utf8(text: str) -> bool:
    """Whether ``text`` came from valid UTF-8 (no byte of it needed a surrogate escape)."""
    return not any(0xDC80 <= ord(c) <= 0xDCFF for c in text)


def printable(text: str) -> str:
    """``text`` with invalid bytes as U+FFFD, as Go's JSON encoder writes a string that is not valid UTF-8."""
    return "".join("\ufffd" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


def _literal_end(query: str, i: int) -> int:
    quote = query[i]
    j = i + 1
    while j < len(query):
        if query[j] == "\\":
            j += 2
        elif query[j] == quote:
            return j + 1
        else:
            j += 1
    return len(query)  # unterminated: the parser reports it


def _reencoded(literal: str) -> str:
    """A quoted literal decoded as Go decodes it, then written with ``\\U`` escapes promql-parser reads as is."""
    quote, body = literal[0], literal[1:-1] if len(literal) > 1 and literal[-1] == literal[0] else literal[1:]
    data = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            data += ch.encode()
            i += 1
            continue
        kind = body[i + 1]
        if kind == "x":
            data.append(int(body[i + 2:i + 4], 16))
            i += 4
        elif kind in "01234567":
            value = int(body[i + 1:i + 4], 8)
            if value > 0xFF:
                return literal  # Go refuses an octal escape above 255: leave it to the parser
            data.append(value)
            i += 4
        elif kind in "uU":
            width = 4 if kind == "u" else 8
            data += chr(int(body[i + 2:i + 2 + width], 16)).encode("utf-8", "surrogatepass")
            i += 2 + width
        elif kind in _SIMPLE:
            data.append(_SIMPLE[kind])
            i += 2
        else:
            return literal  # an escape Go refuses: leave it for the parser's own error
    text = data.decode("utf-8", "surrogateescape")
    chars = []
    for c in text:
        code = ord(c)
        if 0xDC80 <= code <= 0xDCFF:
            chars.append(f"\\U{_STAND_IN + code - 0xDC00:08X}")
        elif c in (quote, "\\") or code < 0x20 or code > 0x7E:
            chars.append(f"\\U{code:08X}")
        else:
            chars.append(c)
    return quote + "".join(chars) + quote
