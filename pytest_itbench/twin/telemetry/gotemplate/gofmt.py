"""Go's fmt for template values: ``Sprint``, ``Sprintln`` and ``Sprintf`` with Go's verbs and error forms.

Templates print values through fmt (``{{ $value }}`` is ``fmt.Fprint``), and
alert annotations commonly use ``printf``, so the output must be Go's: floats
in shortest ``%g`` form (``1e+06``), maps as ``map[k:v]``, wrong verbs as
``%!d(float64=0.5)``, missing arguments as ``%!d(MISSING)``.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..promql.values import format_g
from .lexer import go_quote
from .values import GoStringer, GoStruct, go_type_name, is_string_kind


def sprint(args: Sequence[Any]) -> str:
    """``fmt.Sprint``: a space between operands when neither is a string."""
    out = []
    for i, arg in enumerate(args):
        if i and not is_string_kind(arg) and not is_string_kind(args[i - 1]):
            out.append(" ")
        out.append(format_value(arg, "v", _Flags()))
    return "".join(out)


def sprintln(args: Sequence[Any]) -> str:
    return " ".join(format_value(arg, "v", _Flags()) for arg in args) + "\n"


class _Flags:
    __slots__ = ("minus", "plus", "sharp", "space", "zero", "width", "precision")

    def __init__(self) -> None:
        self.minus = self.plus = self.sharp = self.space = self.zero = False
        self.width: int | None = None
        self.precision: int | None = None


def sprintf(format: str, args: Sequence[Any]) -> str:
    """``fmt.Sprintf``, with Go's ``%!verb(type=value)`` forms for what does not fit."""
    out: list[str] = []
    arg_index = 0
    i, end = 0, len(format)
    while i < end:
        start = i
        while i < end and format[i] != "%":
            i += 1
        out.append(format[start:i])
        if i >= end:
            break
        i += 1
        flags = _Flags()
        while i < end and format[i] in "#0+- ":
            setattr(flags, {"#": "sharp", "0": "zero", "+": "plus", "-": "minus", " ": "space"}[format[i]], True)
            i += 1
        flags.zero = flags.zero and not flags.minus  # Go: "-" overrides "0"
        flags.width, i, arg_index, bad = _number_or_star(format, i, args, arg_index)
        if bad:
            out.append("%!(BADWIDTH)")
        if flags.width is not None and flags.width < 0:
            flags.minus, flags.width = True, -flags.width
        if i < end and format[i] == ".":
            i += 1
            flags.precision, i, arg_index, bad = _number_or_star(format, i, args, arg_index)
            if bad or (flags.precision is not None and flags.precision < 0):
                out.append("%!(BADPREC)")
                flags.precision = None
            elif flags.precision is None:
                flags.precision = 0
        if i >= end:
            out.append("%!(NOVERB)")
            break
        verb = format[i]
        i += 1
        if verb == "%":
            out.append("%")
        elif arg_index >= len(args):
            out.append(f"%!{verb}(MISSING)")
        else:
            out.append(format_value(args[arg_index], verb, flags))
            arg_index += 1
    if arg_index < len(args):
        extra = ", ".join("<nil>" if a is None else f"{go_type_name(a)}={format_value(a, 'v', _Flags())}"
                          for a in args[arg_index:])
        out.append(f"%!(EXTRA {extra})")
    return "".join(out)


def _number_or_star(format: str, i: int, args: Sequence[Any], arg_index: int) -> tuple[int | None, int, int, bool]:
    if i < len(format) and format[i] == "*":
        if arg_index < len(args) and isinstance(args[arg_index], int) and not isinstance(args[arg_index], bool):
            return args[arg_index], i + 1, arg_index + 1, False
        return None, i + 1, arg_index + 1, True
    start = i
    while i < len(format) and format[i].isdigit():
        i += 1
    return (int(format[start:i]) if i > start else None), i, arg_index, False


def format_value(value: Any, verb: str, flags: _Flags) -> str:
    """One operand formatted with one verb."""
    if verb == "T":
        return _pad(go_type_name(value), flags)
    if value is None:
        return _pad("<nil>", flags) if verb == "v" else f"%!{verb}(<nil>)"
    if isinstance(value, GoStringer) and verb in "vsqxX":
        return _format_string(value.string(), verb, flags)
    if isinstance(value, bool):
        if verb in "tv":
            return _pad("true" if value else "false", flags)
        return _bad_verb(value, verb)
    if isinstance(value, int):
        return _format_int(value, verb, flags)
    if isinstance(value, float):
        return _format_float(value, verb, flags)
    if isinstance(value, str):
        return _format_string(value, verb, flags)
    if isinstance(value, dict):
        inner = " ".join(f"{format_value(k, verb, flags)}:{format_value(value[k], verb, flags)}"
                         for k in sorted(value))
        return _pad(f"map[{inner}]", flags)
    if isinstance(value, list):
        return _pad("[" + " ".join(_nested(v, verb, flags, i) for i, v in enumerate(value)) + "]", flags)
    if isinstance(value, GoStruct):
        inner = " ".join(_nested(v, verb, flags, i) for i, v in enumerate(value.field_values()))
        return _pad(("&{" if value.go_type.startswith("*") else "{") + inner + "}", flags)
    return _bad_verb(value, verb)


def _nested(value: Any, verb: str, flags: _Flags, index: int) -> str:
    """A value inside a slice or struct: pointers to structs print as addresses there, as in Go."""
    if isinstance(value, GoStruct) and value.go_type.startswith("*"):
        return f"0xc{0x000010000 + 0x30 * index:09x}"
    return format_value(value, verb, flags)


def _bad_verb(value: Any, verb: str) -> str:
    return f"%!{verb}({go_type_name(value)}={format_value(value, 'v', _Flags())})"


def _pad(text: str, flags: _Flags, zero_ok: bool = False) -> str:
    width = flags.width
    if width is None or len(text) >= width:
        return text
    if flags.minus:
        return text + " " * (width - len(text))
    if flags.zero and zero_ok:
        sign = text[0] if text[:1] in ("+", "-", " ") else ""
        return sign + "0" * (width - len(text)) + text[len(sign):]
    return " " * (width - len(text)) + text


def _signed(text: str, negative: bool, flags: _Flags) -> str:
    if negative:
        return "-" + text
    if flags.plus:
        return "+" + text
    if flags.space:
        return " " + text
    return text


def _format_int(value: int, verb: str, flags: _Flags) -> str:
    magnitude = abs(value)
    if verb in "vd":
        digits = str(magnitude)
    elif verb == "b":
        digits = format(magnitude, "b")
    elif verb in "oO":
        digits = format(magnitude, "o")
        if verb == "O":
            digits = "0o" + digits
        elif flags.sharp:
            digits = "0" + digits
    elif verb in "xX":
        digits = format(magnitude, "x" if verb == "x" else "X")
        if flags.sharp:
            digits = ("0x" if verb == "x" else "0X") + digits
    elif verb == "c":
        return _pad(chr(value), flags)
    elif verb == "q":
        return _pad("'" + go_quote(chr(value))[1:-1].replace("'", "\\'").replace('\\"', '"') + "'", flags)
    elif verb == "U":
        return _pad(f"U+{value:04X}", flags)
    else:
        return _bad_verb(value, verb)
    if flags.precision is not None:
        digits = digits.rjust(flags.precision, "0") if flags.precision or value else ""
    return _pad(_signed(digits, value < 0, flags), flags, zero_ok=flags.precision is None)


def _format_float(value: float, verb: str, flags: _Flags) -> str:
    if verb not in "vbeEfFgGxX":
        return _bad_verb(value, verb)
    if math.isnan(value) or math.isinf(value):
        text = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        if text == "NaN" and (flags.plus or flags.space):
            text = ("+" if flags.plus else " ") + text
        elif text == "+Inf" and not flags.plus:
            text = " Inf" if flags.space else "+Inf"
        return _pad(text, flags)
    negative = math.copysign(1.0, value) < 0
    magnitude = abs(value)
    precision = flags.precision
    if verb in "vgG":
        text = format_g(magnitude) if precision is None else _format_g_precision(magnitude, precision)
        if verb == "G":
            text = text.upper()
    elif verb in "eE":
        text = format(magnitude, f".{6 if precision is None else precision}e")
        text = text.upper() if verb == "E" else text
    elif verb in "fF":
        text = format(magnitude, f".{6 if precision is None else precision}f")
    elif verb in "xX":
        text = _hex_float(magnitude, precision)
        text = text.upper() if verb == "X" else text
    else:
        mantissa, exponent = math.frexp(magnitude)
        text = f"{int(mantissa * 2 ** 53)}p{exponent - 53:+d}"
    return _pad(_signed(text, negative, flags), flags, zero_ok=True)


def _format_g_precision(value: float, precision: int) -> str:
    """``%.Ng``: Python's ``g`` agrees with Go's except that Go keeps ``%e`` exponents of two digits."""
    return format(value, f".{max(precision, 1)}g")


def _hex_float(value: float, precision: int | None) -> str:
    if value == 0:
        return "0x0p+00"
    mantissa, exponent = math.frexp(value)  # value = mantissa * 2**exponent, 0.5 <= mantissa < 1
    bits = int(mantissa * 2 ** 53)  # 53 significant bits, the leading one first
    fraction = format(bits & ((1 << 52) - 1), "013x")
    if precision is not None:
        fraction = fraction[:precision] if precision < 13 else fraction.ljust(precision, "0")
    else:
        fraction = fraction.rstrip("0")
    text = "0x1" + ("." + fraction if fraction else "")
    exp = exponent - 1
    return f"{text}p{'+' if exp >= 0 else '-'}{abs(exp):02d}"


def _format_string(value: str, verb: str, flags: _Flags) -> str:
    if flags.precision is not None and verb in "svq":
        value = value[:flags.precision]
    if verb in "sv":
        return _pad(value, flags)
    if verb == "q":
        return _pad(go_quote(value), flags)
    if verb in "xX":
        data = value.encode()
        if flags.precision is not None:
            data = data[:flags.precision]
        text = data.hex()
        return _pad(text.upper() if verb == "X" else text, flags)
    return _bad_verb(value, verb)

