"""JSON as Go's encoding/json reads and prints it, for messages that must match a real API server's.

Patch bodies are decoded by kube-apiserver with Go's JSON decoder, and many
patch errors embed values printed with Go's ``%v`` verb. This module gives
the same syntax-error texts (``invalid character 'x' looking for beginning of
value``) and the same renderings (``map[name:web replicas:3]``).
"""

from __future__ import annotations

import decimal
import json
import re

_CONTEXT_OF_PYTHON_ERROR = {
    "Expecting value": "looking for beginning of value",
    "Expecting ':' delimiter": "after object key",
    "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
    "Extra data": "after top-level value",
    "Invalid control character at": "in string literal",
    "Invalid \\escape": "in string escape code",
}


class GoJSONError(ValueError):
    """A body Go's decoder would refuse; ``str()`` is Go's message."""


def loads(body: bytes | str):
    """Decode like Go's json.Unmarshal into ``interface{}`` (integers stay integers)."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise GoJSONError(_syntax_message(text, exc)) from None


def _refuse_constant(name: str):
    raise json.JSONDecodeError("Expecting value", name, 0)


def _syntax_message(text: str, exc: json.JSONDecodeError) -> str:
    pos = exc.pos
    if exc.msg == "Expecting value" and exc.doc != text:  # NaN/Infinity, refused by Go
        pos = text.find(exc.doc)
    if pos >= len(text.rstrip()) and exc.msg != "Extra data":
        return "unexpected end of JSON input"
    if exc.msg == "Unterminated string starting at":
        return "unexpected end of JSON input"
    char = text[pos]
    if exc.msg == "Expecting ',' delimiter":
        context = "after array element" if _innermost_bracket(text, pos) == "[" else "after object key:value pair"
    elif exc.msg == "Invalid \\escape":
        char = text[pos + 1] if pos + 1 < len(text) else char
        context = _CONTEXT_OF_PYTHON_ERROR[exc.msg]
    else:
        context = next((v for k, v in _CONTEXT_OF_PYTHON_ERROR.items() if exc.msg.startswith(k)),
                       "looking for beginning of value")
    return f"invalid character {quote_char(char)} {context}"


def _innermost_bracket(text: str, pos: int) -> str:
    """The bracket ('[' or '{') that encloses ``pos``, found by a scan that skips strings."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text[:pos]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            stack.append(ch)
        elif ch in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def quote_char(ch: str) -> str:
    """Go's quoteChar: the offending character as the JSON decoder names it."""
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + quote(ch)[1:-1] + "'"


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
            "\\": "\\\\", '"': '\\"'}


def quote(text: str) -> str:
    """Go's strconv.Quote (the ``%q`` verb)."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif not ch.isprintable() and ch != " ":
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def format_float(value: float) -> str:
    """Go's ``%v`` for a float64: the shortest digits, in exponent form below 1e-4 and from 1e6 on."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    sign, digits, exponent = decimal.Decimal(repr(value)).normalize().as_tuple()
    mantissa = "".join(map(str, digits))
    point = len(mantissa) + exponent  # position of the decimal point
    exp = point - 1
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:
        head = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
        return f"{prefix}{head}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{mantissa}"
    if point >= len(mantissa):
        return prefix + mantissa + "0" * (point - len(mantissa))
    return f"{prefix}{mantissa[:point]}.{mantissa[point:]}"


def format_value(value) -> str:
    """Go's ``%v`` for a value decoded from JSON (maps print with sorted keys)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, list):
        return "[" + " ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{format_value(value[k])}" for k in sorted(value)) + "]"
    return str(value)


def type_name(value) -> str:
    """The Go type a JSON value decodes to (``map[string]interface {}``, ``int64``, ...)."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return "%!s(<nil>)"


def json_kind(value) -> str:
    """The JSON kind Go's unmarshal errors name: object, array, string, number, bool."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null"


_HTML_ESCAPES = re.compile("[<>&\u2028\u2029]")


def dumps(value) -> str:
    """Compact JSON with sorted keys and Go's HTML-safe escaping, as json.Marshal writes a map."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return _HTML_ESCAPES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
