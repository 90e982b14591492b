"""How a trial's result crosses from the process that ran it to the one that reports it.

The result goes on the report as a plain dict (``report.itbench``), as Hypothesis does with its
statistics: xdist serialises every JSON-safe attribute of a report, so the controller's
``pytest_runtest_logreport`` and ``pytest_terminal_summary`` see the same dict the worker set, while
``config.stash`` never leaves the worker. ``user_properties`` holds only the flat JUnit properties
(``junit.properties``); a dict there would be written into the XML as its Python repr.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from pytest_itbench.results import TrialResult

KEY = "itbench"


def is_controller(config: Any) -> bool:
    """True in the process that sees every report: the xdist controller, or the only process.

    Session-wide outputs (the JSONL file, Allure's environment.properties and categories.json, the
    leaderboard) are written here and only here.
    """
    return not hasattr(config, "workerinput")


def put(report: Any, result: TrialResult) -> None:
    """Carry ``result`` on a ``TestReport`` (call this from ``pytest_runtest_makereport``)."""
    report.__dict__[KEY] = result.to_dict()


def result_of(report: Any) -> TrialResult | None:
    """The result a report carries, on the worker or on the xdist controller; None if it carries none."""
    data = getattr(report, KEY, None)
    return TrialResult.from_dict(data) if isinstance(data, dict) else None


def results_from_stats(stats: Mapping[str, Iterable[Any]]) -> list[TrialResult]:
    """Every trial in ``terminalreporter.stats``, once per test even if several phases carry it.

    A test's setup, call and teardown reports sit in different categories of ``stats``, and the plugin
    may put the result on more than one of them; the test's node id (unique per run and scenario)
    keeps one, the last phase's.
    """
    order = {"setup": 0, "call": 1, "teardown": 2}
    latest: dict[str, tuple[int, TrialResult]] = {}
    for reports in stats.values():
        for report in reports:
            result = result_of(report)
            if result is None:
                continue
            phase = order.get(getattr(report, "when", ""), -1)
            nodeid = getattr(report, "nodeid", "")
            if nodeid not in latest or phase >= latest[nodeid][0]:
                latest[nodeid] = (phase, result)
    return [result for _, result in (latest[n] for n in sorted(latest))]
