"""Query results (scalar, string, instant vector, range vector) and their JSON form.

The JSON is the ``data`` object of Prometheus' query API:
``{"resultType": "vector", "result": [{"metric": {...}, "value": [<t>, "<v>"]}]}``,
with times as Unix seconds and values as strings written the way Go's
``strconv.FormatFloat(v, 'f', -1, 64)`` writes them (``"+Inf"``, ``"NaN"``,
``"1000000000000000000000"`` rather than ``1e+21``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Union

from ..labels import Labels, to_dict


@dataclass(frozen=True)
class Scalar:
    t_ms: int
    value: float
    result_type = "scalar"

    def to_json(self) -> list:
        return [json_time(self.t_ms), format_value(self.value)]


@dataclass(frozen=True)
class String:
    t_ms: int
    value: str
    result_type = "string"

    def to_json(self) -> list:
        return [json_time(self.t_ms), self.value]


@dataclass(frozen=True)
class Sample:
    labels: Labels
    value: float
    t_ms: int


@dataclass
class Vector:
    samples: list[Sample] = field(default_factory=list)
    result_type = "vector"

    def to_json(self) -> list:
        return [{"metric": to_dict(s.labels), "value": [json_time(s.t_ms), format_value(s.value)]}
                for s in self.samples]


@dataclass
class Series:
    labels: Labels
    points: list[tuple[int, float]]  # (t_ms, value), ascending


@dataclass
class Matrix:
    series: list[Series] = field(default_factory=list)
    result_type = "matrix"

    def to_json(self) -> list:
        return [{"metric": to_dict(s.labels), "values": [[json_time(t), format_value(v)] for t, v in s.points]}
                for s in self.series]


Value = Union[Scalar, String, Vector, Matrix]


def result_json(value: Value) -> dict:
    """The ``data`` object of a successful query response."""
    return {"resultType": value.result_type, "result": value.to_json()}


def json_time(t_ms: int) -> int | float:
    """Unix seconds with millisecond precision; whole seconds as integers, as Prometheus writes them."""
    seconds, millis = divmod(t_ms, 1000)
    return seconds if millis == 0 else t_ms / 1000


def format_value(value: float) -> str:
    """``value`` as Go's ``strconv.FormatFloat(value, 'f', -1, 64)``: shortest digits, no exponent."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 2 ** 53:
        text = str(int(value))
        return "-0" if text == "0" and math.copysign(1.0, value) < 0 else text
    text = repr(value)
    return text if "e" not in text else format(Decimal(text), "f")


_EXPONENT = re.compile(r"e([+-])(\d)$")


def format_exponent(value: float) -> str:
    """``value`` as Go's ``strconv.FormatFloat(value, 'e', -1, 64)``: ``1e+00``, ``1.5e-07``."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "+Inf" if value > 0 else "-Inf"
    text = format(Decimal(repr(value)).normalize(), "e")
    return _EXPONENT.sub(r"e\g<1>0\2", text)


def format_g(value: float) -> str:
    """``value`` as Go's ``%g`` verb writes it (annotations use it): ``1.5``, ``1e+06``, ``1e-05``."""
    if value != value or value in (math.inf, -math.inf):
        return format_value(value)
    exponent = Decimal(repr(value)).normalize().adjusted() if value else 0
    if exponent < -4 or exponent >= 6:  # the shortest form switches to an exponent past 6 digits
        return format_exponent(value)
    return format_value(value)
