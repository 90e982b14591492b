"""Query parameters as Jaeger's query service (Go) parses them, with Go's error messages.

Jaeger answers a bad parameter with the text of the Go error that refused it
(``unable to parse param 'start': strconv.ParseInt: parsing "x": invalid
syntax``), and clients show that text; so the parsers here reproduce
``strconv.ParseInt``/``ParseUint``/``ParseBool``, ``time.ParseDuration``,
``json.Unmarshal`` into ``map[string]string`` and jaeger-idl's trace ids,
including what each of them accepts.
"""

from __future__ import annotations

import base64
import re

from ..apiserver import gojson


class ParamError(ValueError):
    """A parameter Jaeger refuses; ``str()`` is Jaeger's message."""


_INT_RE = re.compile(r"[+-]?[0-9]+")
_HEX_RE = re.compile(r"[0-9a-fA-F]+")


def parse_int(text: str, bits: int = 64) -> int:
    """``strconv.ParseInt(text, 10, bits)``."""
    if not _INT_RE.fullmatch(text):
        raise ParamError(f"strconv.ParseInt: parsing {gojson.quote(text)}: invalid syntax")
    value = int(text)
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise ParamError(f"strconv.ParseInt: parsing {gojson.quote(text)}: value out of range")
    return value


def parse_hex_uint64(text: str) -> int:
    """``strconv.ParseUint(text, 16, 64)`` (no sign, no prefix)."""
    if not _HEX_RE.fullmatch(text):
        raise ParamError(f"strconv.ParseUint: parsing {gojson.quote(text)}: invalid syntax")
    value = int(text, 16)
    if value >= 1 << 64:
        raise ParamError(f"strconv.ParseUint: parsing {gojson.quote(text)}: value out of range")
    return value


_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
          "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def parse_bool(text: str) -> bool:
    """``strconv.ParseBool``."""
    if text not in _BOOLS:
        raise ParamError(f"strconv.ParseBool: parsing {gojson.quote(text)}: invalid syntax")
    return _BOOLS[text]


# ---- time.ParseDuration ------------------------------------------------------------------------------

_UNITS_NS = {"ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
             "m": 60_000_000_000, "h": 3_600_000_000_000}
_MAX_NS = 1 << 63


def _time_quote(text: str) -> str:
    """The ``time`` package's own quoting: non-ASCII and control bytes as ``\\xNN``."""
    out = ['"']
    for ch in text:
        if ord(ch) >= 0x80 or ord(ch) < 0x20:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + ch if ch in '"\\' else ch)
    out.append('"')
    return "".join(out)


def parse_duration(text: str) -> int:
    """``time.ParseDuration``: nanoseconds of ``1.5h``, ``300ms``, ``-2m3s``; raises with Go's message."""
    invalid = ParamError("time: invalid duration " + _time_quote(text))
    rest, negative = text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if rest == "":
        raise invalid
    total = 0
    while rest:
        if not (rest[0] == "." or rest[0].isascii() and rest[0].isdigit()):
            raise invalid
        whole_digits = len(rest) - len(rest.lstrip("0123456789"))
        whole = int(rest[:whole_digits] or "0")
        if whole > _MAX_NS:  # leadingInt's overflow
            raise invalid
        rest = rest[whole_digits:]
        fraction, scale, fraction_digits = 0, 1.0, 0
        if rest[:1] == ".":
            rest = rest[1:]
            fraction_digits = len(rest) - len(rest.lstrip("0123456789"))
            for digit in rest[:fraction_digits]:
                # leadingFraction stops accumulating digits once one more would overflow.
                if fraction > (_MAX_NS - 1) // 10 or fraction * 10 + int(digit) > _MAX_NS:
                    break
                fraction, scale = fraction * 10 + int(digit), scale * 10
            rest = rest[fraction_digits:]
        if not whole_digits and not fraction_digits:
            raise invalid
        unit_length = next((i for i, ch in enumerate(rest) if ch == "." or ch in "0123456789"), len(rest))
        if unit_length == 0:
            raise ParamError("time: missing unit in duration " + _time_quote(text))
        unit_text, rest = rest[:unit_length], rest[unit_length:]
        unit = _UNITS_NS.get(unit_text)
        if unit is None:
            raise ParamError(f"time: unknown unit {_time_quote(unit_text)} in duration {_time_quote(text)}")
        if whole > _MAX_NS // unit:
            raise invalid
        value = whole * unit
        if fraction:
            # Go adds the fraction through float64, truncating to whole nanoseconds.
            value += int(float(fraction) * (float(unit) / scale))
            if value > _MAX_NS:
                raise invalid
        total += value
        if total > _MAX_NS:
            raise invalid
    if negative:
        return -total
    if total > _MAX_NS - 1:
        raise invalid
    return total


# ---- tags ------------------------------------------------------------------------------------------------

def parse_tags(simple: list[str], as_json: list[str]) -> dict[str, str]:
    """The ``tag=key:value`` and ``tags={json}`` parameters, merged as Jaeger merges them (JSON last)."""
    tags: dict[str, str] = {}
    for tag in simple:
        key, sep, value = tag.partition(":")
        if not sep:
            raise ParamError(f"malformed 'tag' parameter, expecting key:value, received: {tag}")
        tags[key] = value
    for text in as_json:
        try:
            tags.update(_string_map(text))
        except (gojson.GoJSONError, ParamError) as exc:
            raise ParamError(f"malformed 'tags' parameter, cannot unmarshal JSON: {exc}") from None
    return tags


def _string_map(text: str) -> dict[str, str]:
    """``json.Unmarshal`` into ``map[string]string``: a null value is the empty string, another type an error."""
    value = gojson.loads(text)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ParamError(f"json: cannot unmarshal {gojson.json_kind(value)} into Go value of type map[string]string")
    for item in value.values():
        if item is not None and not isinstance(item, str):
            raise ParamError(f"json: cannot unmarshal {gojson.json_kind(item)} into Go value of type string")
    return {key: item or "" for key, item in value.items()}


# ---- trace ids ---------------------------------------------------------------------------------------------

def trace_id_from_hex(text: str) -> int:
    """jaeger-idl's ``model.TraceIDFromString``: up to 32 hex digits, the high half first, as one 128-bit int."""
    if len(text) > 32:
        raise ParamError(f"TraceID cannot be longer than 32 hex characters: {text}")
    if len(text) > 16:
        split = len(text) - 16
        return parse_hex_uint64(text[:split]) << 64 | parse_hex_uint64(text[split:])
    return parse_hex_uint64(text)


_STD = re.compile(r"[A-Za-z0-9+/]*")
_URL = re.compile(r"[A-Za-z0-9_-]*")


def trace_id_from_path(text: str) -> int:
    """The id in ``/api/traces/{id}`` (``apiv3.TraceIDFromString``): hex, or else the 8 or 16 bytes in base64."""
    try:
        return trace_id_from_hex(text)
    except ParamError as hex_error:
        if len(text) > 24:
            raise
        raw = _base64_bytes(text)
        if raw is None:
            raise hex_error from None
    if len(raw) not in (8, 16):
        raise ParamError("invalid length for TraceID")
    return int.from_bytes(raw, "big")


def _base64_bytes(text: str) -> bytes | None:
    """What the first of Go's StdEncoding, URLEncoding, RawStdEncoding, RawURLEncoding to accept decodes."""
    body = text.rstrip("=")
    padded = len(text) % 4 == 0 and len(text) - len(body) <= 2
    for alphabet, altchars in ((_STD, None), (_URL, b"-_")):
        if padded and alphabet.fullmatch(body) and (len(text) - len(body)) == (-len(body)) % 4:
            return _decode(body, altchars)
    for alphabet, altchars in ((_STD, None), (_URL, b"-_")):
        if alphabet.fullmatch(text) and len(text) % 4 != 1:
            return _decode(text, altchars)
    return None


def _decode(body: str, altchars: bytes | None) -> bytes:
    # The patterns above admit only the alphabet, so Python's decoder accepts what Go's does.
    return base64.b64decode(body + "=" * (-len(body) % 4), altchars=altchars)
