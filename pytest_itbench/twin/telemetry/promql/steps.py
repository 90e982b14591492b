"""How the evaluator holds intermediate results: every node is evaluated at all steps at once.

Prometheus evaluates a range query step by step, building a vector per
step. In Python that means a sample object per series per step. Here an
instant-vector node evaluates to a list of :class:`StepSeries`, each with
one value slot per step (``None`` where the series has no sample), and a
scalar node to a list of floats. Labels are computed once per series, not
once per step, and per-step work is list comprehensions over these slots.
An instant query is the one-step case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Protocol, Sequence

from ..labels import Labels
from .errors import EvaluationError
from .positions import line_col

Slot = Optional[float]

METADATA_LABELS = frozenset(("__name__", "__type__", "__unit__"))  # Prometheus' schema.IsMetadataLabel


def drop_metric_name(labels: Labels) -> Labels:
    """``labels`` without the metric name and the ``__type__``/``__unit__`` labels that describe it, as
    Prometheus' ``DropReserved(schema.IsMetadataLabel)`` drops them where a function or operator drops the
    name. Label sets are sorted, so a metric name that is not first (``__address__`` sorts before it) is
    still found; the common case, a leading name and no type or unit, is a slice."""
    if labels and labels[0][0] == "__name__" and (len(labels) == 1 or labels[1][0] > "__unit__"):
        return labels[1:]
    for name, _ in labels:
        if name > "__unit__":  # past every metadata label
            return labels
        if name in METADATA_LABELS:
            return tuple([pair for pair in labels if pair[0] not in METADATA_LABELS])
    return labels


@dataclass(slots=True)
class StepSeries:
    labels: Labels
    values: list[Slot]


@dataclass(slots=True)
class RangeSamples:
    """One series' samples (no staleness markers) for range-vector functions.

    ``resets`` lists the indexes whose value is below the previous one. The fields are those of
    the store's series (``tsdb.SeriesSamples``), so a stored series without staleness markers is
    handed to the functions as it is, without a copy.
    """

    labels: Labels
    timestamps: Sequence[int]
    values: Sequence[float]
    resets: Sequence[int]


@dataclass
class Annotations:
    """Warnings and infos, in the order first raised (Prometheus' annotations).

    Each is kept with the offset in ``query`` of the expression it is about, and read out as Prometheus'
    API writes it, ``message (line:col)``. As in Prometheus, annotations are told apart by their message
    alone: raised again at another position, an annotation keeps one entry and the last position.
    """

    query: str = ""
    _warnings: dict[str, tuple[Optional[int], Optional["Detail"]]] = field(default_factory=dict)
    _infos: dict[str, tuple[Optional[int], Optional["Detail"]]] = field(default_factory=dict)

    def warn(self, message: str, pos: Optional[int] = None) -> None:
        self._warnings["PromQL warning: " + message] = (pos, None)

    def info(self, message: str, pos: Optional[int] = None, detail: Optional["Detail"] = None) -> None:
        """``detail``: figures that accumulate over the occurrences of one info (Prometheus' monotonicity
        info counts its samples); merged, the info keeps its first position, as Prometheus' does."""
        key = "PromQL info: " + message
        earlier = self._infos.get(key)
        if detail is not None and earlier is not None and earlier[1] is not None:
            self._infos[key] = (earlier[0], earlier[1].merge(detail))
        else:
            self._infos[key] = (pos, detail)

    @property
    def warnings(self) -> list[str]:
        return [self._written(m, *entry) for m, entry in self._warnings.items()]

    @property
    def infos(self) -> list[str]:
        return [self._written(m, *entry) for m, entry in self._infos.items()]

    def _written(self, message: str, pos: Optional[int], detail: Optional["Detail"]) -> str:
        if detail is not None:
            message = f"{message}, {detail.text()}"
        return message if pos is None or not self.query else f"{message} ({line_col(self.query, pos)})"


class Detail(Protocol):
    def merge(self, later: "Detail") -> "Detail": ...

    def text(self) -> str: ...


DUPLICATE_LABELSET = "vector cannot contain metrics with the same labelset"


def merge_by_labels(series: list[StepSeries]) -> list[StepSeries]:
    """Series with equal labels merged into one; two values at the same step are an error."""
    position: dict[Labels, int] = {}
    out: list[StepSeries] = []
    for s in series:
        i = position.get(s.labels)
        if i is None:
            position[s.labels] = len(out)
            out.append(s)
            continue
        merged = list(out[i].values)  # a copy: the inputs may be referenced elsewhere
        for step, v in enumerate(s.values):
            if v is not None:
                if merged[step] is not None:
                    raise EvaluationError(DUPLICATE_LABELSET)
                merged[step] = v
        out[i] = StepSeries(s.labels, merged)
    return out


def require_unique_labels(series: list[StepSeries]) -> None:
    """Range-vector function results may not share a labelset at all, as in Prometheus."""
    if len({s.labels for s in series}) != len(series):
        raise EvaluationError(DUPLICATE_LABELSET)


def has_values(values: list[Slot]) -> bool:
    return values.count(None) != len(values)
