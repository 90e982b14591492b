"""Every ``eval`` in tests/telemetry/promql/*.test is a test of its own."""

from __future__ import annotations

from pathlib import Path

import promql_parser
import pytest

from pytest_itbench.twin.telemetry.promql import Engine, Vector
from pytest_itbench.twin.telemetry.promql.numeric import almost_equal

from .promqltest import EPSILON, Eval, build_store, parse_script, run

SCRIPTS = sorted((Path(__file__).parent / "promql").glob("*.test"))
CASES: list[Eval] = [case for path in SCRIPTS for case in parse_script(path)]
_stores: dict[tuple[str, int, int], object] = {}


def _store(case: Eval):
    # Cases of one script segment share a store as long as no `load` came between them.
    key = (case.path, case.segment, len(case.loads))
    if key not in _stores:
        _stores[key] = build_store(case.loads)
    return _stores[key]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_eval(case: Eval) -> None:
    run(case, _store(case))


@pytest.mark.parametrize("case", [c for c in CASES if not c.kinds("fail")], ids=lambda c: c.id)
def test_query_is_valid_promql(case: Eval) -> None:
    """The same query is valid for a real Prometheus: promql-parser accepts it as written."""
    promql_parser.parse(case.query)


def test_scripts_cover_every_function() -> None:
    from pytest_itbench.twin.telemetry.promql.signatures import SIGNATURES
    queries = " ".join(c.query for c in CASES)
    missing = [name for name, sig in SIGNATURES.items() if not sig.experimental and f"{name}(" not in queries]
    assert not missing, f"functions without a test case: {missing}"


_INSTANT = [c for c in CASES if not c.step and not c.kinds("fail") and c.range_vector is None and c.string is None]


@pytest.mark.parametrize("case", _INSTANT, ids=lambda c: c.id)
def test_range_query_agrees_with_instant_query(case: Eval) -> None:
    """The all-steps evaluation gives, at each step, what the one-step evaluation gives."""
    engine = Engine(_store(case))
    instant = engine.instant_query(case.query, case.start).value
    expected = ({s.labels: s.value for s in instant.samples} if isinstance(instant, Vector)
                else {(): instant.value})
    for step in (7, 60):
        at = round(case.start * 1000)
        series = engine.range_query(case.query, case.start - 2 * step, case.start, step).value.series
        got = {s.labels: v for s in series for t, v in s.points if t == at}
        assert got.keys() == expected.keys()
        assert all(almost_equal(got[k], v, EPSILON) for k, v in expected.items()), (got, expected)
