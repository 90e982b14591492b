"""A runner for PromQL test scripts in the style of Prometheus' promqltest.

A script is a sequence of commands::

    # comment
    load 1m
        http_requests_total{job="api"} 0+10x10 _ stale 1x3
    clear
    eval instant at 5m sum(http_requests_total)
        expect no_warn
        {} 50
    eval range from 0 to 10m step 5m http_requests_total
        http_requests_total{job="api"} 0 50 100
    eval instant at 5m foo(
        expect fail msg: parse error: unclosed left parenthesis

Series values use promtool's expanding notation: ``a+bxn`` (a, then n more
values stepping by b), ``a-bxn``, ``axn`` (a, n+1 times), ``_`` (no sample),
``_xn`` (n missing samples) and ``stale`` (a staleness marker). An expected
scalar is a bare number; an expected string is ``expect string "text"``; an
instant query of a range vector expects ``expect range vector from <t> to <t>
step <d>`` and the series' points. ``expect fail|warn|info [msg: …|regex: …]``,
``expect no_warn``, ``expect no_info`` and ``expect ordered`` work as in
promqltest, as do the older ``eval_fail``/``eval_ordered`` spellings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import promql_parser

from pytest_itbench.twin.telemetry import labels as lbl
from pytest_itbench.twin.telemetry.promql import Engine, Matrix, PromQLError, Scalar, String, Vector
from pytest_itbench.twin.telemetry.promql.numeric import almost_equal
from pytest_itbench.twin.telemetry.promql.values import format_value
from pytest_itbench.twin.telemetry.tsdb import STALE_NAN, TSDB

EPSILON = 1e-6  # promqltest's relative tolerance for sample values
MISSING = None

_NUMBER = r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[Ii]nf|NaN|nan)"
_EXPAND_STEP = re.compile(rf"^({_NUMBER})([-+])({_NUMBER})x(\d+)$")
_EXPAND_REPEAT = re.compile(rf"^({_NUMBER})x(\d+)$")
_MISSING_REPEAT = re.compile(r"^_x(\d+)$")
_LOAD = re.compile(r"^load\s+(\S+)$")
_EVAL_INSTANT = re.compile(r"^eval(?:_(fail|ordered|warn|info))?\s+instant\s+at\s+(\S+)\s+(.+)$")
_EVAL_RANGE = re.compile(r"^eval(?:_(fail|warn|info))?\s+range\s+from\s+(\S+)\s+to\s+(\S+)\s+step\s+(\S+)\s+(.+)$")
_EXPECT = re.compile(r"^expect\s+(fail|warn|info|no_warn|no_info|ordered)(?:\s+(msg|regex):\s?(.*))?$")
_EXPECT_STRING = re.compile(r"^expect\s+string\s+(\"(?:[^\"\\]|\\.)*\"|`[^`]*`)$")
_EXPECT_RANGE = re.compile(r"^expect\s+range\s+vector\s+from\s+(\S+)\s+to\s+(\S+)\s+step\s+(\S+)$")


class ScriptError(Exception):
    pass


def parse_time(text: str) -> float:
    """Seconds from a duration (``5m``, ``1h30m``) or a plain number of seconds."""
    try:
        return float(text)
    except ValueError:
        if re.fullmatch(r"(?:0+(?:ms|s|m|h|d|w|y))+", text):
            return 0.0  # promql-parser refuses a zero duration; promqltest's model.ParseDuration allows it
        return promql_parser.parse_duration(text).total_seconds()


def parse_number(text: str) -> float:
    return float(text)


def expand_values(tokens: list[str]) -> list[Optional[float]]:
    """promtool's expanding notation: a list of values, None for a missing sample."""
    out: list[Optional[float]] = []
    for token in tokens:
        if token == "_":
            out.append(MISSING)
        elif token == "stale":
            out.append(STALE_NAN)
        elif m := _MISSING_REPEAT.match(token):
            out.extend([MISSING] * int(m.group(1)))
        elif m := _EXPAND_STEP.match(token):
            start, sign, step, times = parse_number(m.group(1)), m.group(2), parse_number(m.group(3)), int(m.group(4))
            step = step if sign == "+" else -step
            out.extend(start + i * step for i in range(times + 1))
        elif m := _EXPAND_REPEAT.match(token):
            out.extend([parse_number(m.group(1))] * (int(m.group(2)) + 1))
        else:
            out.append(parse_number(token))
    return out


def parse_series_line(line: str) -> tuple[lbl.Labels, list[str]]:
    """``metric{a="b"} 1 2 3`` -> (labels, value tokens)."""
    if "{" in line.split()[0] or line.startswith("{"):
        close = _closing_brace(line)
        descriptor, rest = line[:close + 1], line[close + 1:]
    else:
        descriptor, _, rest = line.partition(" ")
    return parse_labels(descriptor.strip()), rest.split()


def _closing_brace(line: str) -> int:
    in_string = False
    escaped = False
    for i, ch in enumerate(line):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            in_string = not in_string
        elif ch == "}" and not in_string:
            return i
    raise ScriptError(f"unclosed braces in {line!r}")


def parse_labels(descriptor: str) -> lbl.Labels:
    if descriptor == "{}":
        return lbl.EMPTY
    node = promql_parser.parse(descriptor)
    if not isinstance(node, promql_parser.VectorSelector):
        raise ScriptError(f"not a series descriptor: {descriptor!r}")
    labels = {m.name: m.value for m in node.matchers.matchers}
    if node.name:
        labels[lbl.METRIC_NAME] = node.name
    return lbl.from_mapping(labels)


@dataclass
class Load:
    line: int
    interval: float
    series: list[tuple[lbl.Labels, list[Optional[float]]]]
    unsupported: str = ""  # lenient parsing only: a load command the harness does not know
    dropped: int = 0  # lenient parsing only: series lines it could not load (native histograms) and left out
    dropped_names: set[str] = field(default_factory=set)  # their metric names ("" when a line's name is unknown)


@dataclass
class Expectation:
    kind: str  # fail, warn, info, no_warn, no_info, ordered
    match: Optional[str] = None  # msg or regex
    text: str = ""

    def accepts(self, message: str) -> bool:
        if self.match is None:
            return True
        if self.match == "msg":
            return message == self.text
        return re.search(self.text, message) is not None


@dataclass
class Eval:
    path: str
    line: int
    query: str
    start: float
    end: float
    step: float  # 0 for an instant query
    expectations: list[Expectation] = field(default_factory=list)
    series: list[tuple[lbl.Labels, list[Optional[float]]]] = field(default_factory=list)
    scalar: Optional[float] = None
    string: Optional[str] = None
    range_vector: Optional[tuple[float, float, float]] = None
    segment: int = 0  # which stretch between `clear`s the query runs in
    loads: list[Load] = field(default_factory=list)
    unsupported: str = ""  # lenient parsing only: why the case cannot run here (e.g. native histograms)

    @property
    def partial_load(self) -> bool:
        """Lenient parsing left out of this case's store series that its query may select: a query naming one
        of their metrics, or selecting by ``__name__`` or by labels alone, cannot be judged on what is left."""
        names = set().union(*(load.dropped_names for load in self.loads)) if self.loads else set()
        if not names:
            return False
        if "" in names or "__name__" in self.query or re.search(r"(?:^|[^\w\s])\s*\{", self.query):
            return True
        return any(re.search(rf"(?<![\w:]){re.escape(name)}(?![\w:])", self.query) for name in names)

    @property
    def id(self) -> str:
        return f"{Path(self.path).name}:{self.line}"

    def kinds(self, kind: str) -> list[Expectation]:
        return [e for e in self.expectations if e.kind == kind]

    @property
    def expects_failure(self) -> bool:
        return bool(self.kinds("fail"))


def parse_script(path: Path, lenient: bool = False) -> list[Eval]:
    """The script's eval cases. ``lenient`` (for running Prometheus' own testdata) keeps going past what the
    harness cannot represent (native histogram samples, ``load_with_nhcb``, unknown commands): the affected
    cases come back with ``unsupported`` set instead of the whole script raising."""
    lines = path.read_text().splitlines()
    evals: list[Eval] = []
    loads: list[Load] = []
    segment = 0
    i = 0
    while i < len(lines):
        raw = lines[i]
        text = raw.strip()
        i += 1
        if not text or text.startswith("#"):
            continue
        if text == "clear":
            loads = []
            segment += 1
            continue
        m = _LOAD.match(text)
        if m is None and lenient and text.split()[0].startswith("load"):
            m = re.match(r"^\S+\s+(\S+)", text)
            unsupported = f"{text.split()[0]} is not supported"
        else:
            unsupported = ""
        if m:
            load = Load(i, parse_time(m.group(1)), [], unsupported)
            while i < len(lines) and lines[i].strip() and lines[i][:1].isspace():
                try:
                    labels, tokens = parse_series_line(lines[i].strip())
                    load.series.append((labels, expand_values(tokens)))
                except (ValueError, ScriptError) as exc:
                    if not lenient:
                        raise
                    load.dropped += 1
                    load.dropped_names.add(_metric_name_of(lines[i].strip()))
                i += 1
            loads = [*loads, load]
            continue
        try:
            case = _eval_header(str(path), i, text)
        except (ValueError, ScriptError) as exc:
            if not lenient:
                raise
            case = Eval(str(path), i, text, 0.0, 0.0, 0.0, unsupported=str(exc))
        case.segment, case.loads = segment, loads
        case.unsupported = case.unsupported or next((load.unsupported for load in loads if load.unsupported), "")
        while i < len(lines) and lines[i].strip() and (lines[i][:1].isspace() or lines[i].startswith("expect")):
            if lines[i].strip().startswith("#"):  # a comment inside a case's body, as promqltest allows
                i += 1
                continue
            try:
                _eval_body_line(case, lines[i].strip())
            except (ValueError, ScriptError) as exc:
                if not lenient:
                    raise
                case.unsupported = case.unsupported or f"line {i + 1}: {exc}"
            i += 1
        evals.append(case)
    return evals


def _metric_name_of(line: str) -> str:
    m = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line)
    return m.group(0) if m else ""


def _eval_header(path: str, line: int, text: str) -> Eval:
    if m := _EVAL_INSTANT.match(text):
        variant, at, query = m.groups()
        case = Eval(path, line, query, parse_time(at), parse_time(at), 0.0)
    elif m := _EVAL_RANGE.match(text):
        variant, start, end, step, query = m.groups()
        case = Eval(path, line, query, parse_time(start), parse_time(end), parse_time(step))
    else:
        raise ScriptError(f"{path}:{line}: unknown command {text!r}")
    if variant:
        case.expectations.append(Expectation(variant))
    return case


def _eval_body_line(case: Eval, text: str) -> None:
    if m := _EXPECT_STRING.match(text):
        quoted = m.group(1)
        case.string = quoted[1:-1] if quoted.startswith("`") else promql_parser.parse(quoted).val
    elif m := _EXPECT_RANGE.match(text):
        case.range_vector = (parse_time(m.group(1)), parse_time(m.group(2)), parse_time(m.group(3)))
    elif m := _EXPECT.match(text):
        kind, match, message = m.groups()
        case.expectations.append(Expectation(kind, match, (message or "").strip()))
    elif re.fullmatch(_NUMBER, text):
        case.scalar = parse_number(text)
    else:
        labels, tokens = parse_series_line(text)
        case.series.append((labels, expand_values(tokens)))


# ---- running -------------------------------------------------------------------------------------

def build_store(loads: list[Load]) -> TSDB:
    db = TSDB(retention=10 ** 9)
    for load in loads:
        for labels, values in load.series:
            for k, value in enumerate(values):
                if value is not MISSING:
                    db.append(labels, k * load.interval, value)
    return db


def run(case: Eval, db: TSDB) -> None:
    """Evaluate ``case`` against ``db``; AssertionError with a readable account if it does not hold."""
    engine = Engine(db)
    try:
        if case.step:
            result = engine.range_query(case.query, case.start, case.end, case.step)
        else:
            result = engine.instant_query(case.query, case.start)
    except PromQLError as exc:
        failures = case.kinds("fail")
        assert failures, f"{case.id}: {case.query!r} failed unexpectedly: {exc}"
        for expectation in failures:
            assert expectation.accepts(str(exc)), (
                f"{case.id}: {case.query!r} failed with {str(exc)!r}, expected {expectation.match} {expectation.text!r}")
        return
    assert not case.expects_failure, f"{case.id}: {case.query!r} succeeded, expected it to fail"
    _check_annotations(case, "warn", "no_warn", result.warnings)
    _check_annotations(case, "info", "no_info", result.infos)
    value = result.value
    if case.string is not None:
        assert isinstance(value, String) and value.value == case.string, f"{case.id}: got {value!r}"
    elif case.scalar is not None:
        assert isinstance(value, Scalar), f"{case.id}: expected a scalar, got {value!r}"
        assert almost_equal(case.scalar, value.value, EPSILON), f"{case.id}: expected {case.scalar}, got {value.value}"
    elif isinstance(value, Vector):
        got = [(s.labels, [s.value]) for s in value.samples]
        _compare(case, [(labels, values[:1]) for labels, values in case.series], got, bool(case.kinds("ordered")))
    elif isinstance(value, Matrix):
        _compare(case, _expected_points(case), [(s.labels, s.points) for s in value.series], ordered=False,
                 points=True)
    else:
        raise AssertionError(f"{case.id}: unexpected result {value!r}")


def _check_annotations(case: Eval, kind: str, forbid: str, messages: list[str]) -> None:
    expectations = case.kinds(kind)
    if case.kinds(forbid):
        assert not messages, f"{case.id}: expected no {kind} annotations, got {messages}"
    for expectation in expectations:
        assert any(expectation.accepts(m) for m in messages), (
            f"{case.id}: expected a {kind} annotation {expectation.match or ''} {expectation.text!r}, got {messages}")


def _expected_points(case: Eval) -> list[tuple[lbl.Labels, list[tuple[int, float]]]]:
    if case.step:
        start, step = case.start, case.step
    elif case.range_vector is not None:
        start, _, step = case.range_vector
    else:
        raise AssertionError(f"{case.id}: the query returns a range vector; add `expect range vector ...`")
    out = []
    for labels, values in case.series:
        points = [(round((start + k * step) * 1000), v) for k, v in enumerate(values) if v is not MISSING]
        out.append((labels, points))
    return out


def _same(a: float, b: float) -> bool:
    return almost_equal(a, b, EPSILON)


def _compare(case: Eval, expected: list, got: list, ordered: bool, points: bool = False) -> None:
    def show(items: list) -> str:
        if points:
            return "\n".join(f"  {lbl.format_labels(l)} {[(t / 1000, format_value(v)) for t, v in p]}"
                             for l, p in items)
        return "\n".join(f"  {lbl.format_labels(l)} {[format_value(v) for v in p]}" for l, p in items)

    context = f"{case.id}: {case.query}\nexpected:\n{show(expected)}\ngot:\n{show(got)}"
    assert len(expected) == len(got), context
    if ordered:
        assert [l for l, _ in expected] == [l for l, _ in got], context
    got_by_labels = dict(got)
    assert len(got_by_labels) == len(got), context
    for labels, values in expected:
        assert labels in got_by_labels, context
        actual = got_by_labels[labels]
        assert len(actual) == len(values), context
        for want, have in zip(values, actual):
            if points:
                assert want[0] == have[0] and _same(want[1], have[1]), context
            else:
                assert _same(want, have), context
