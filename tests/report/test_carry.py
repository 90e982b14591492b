"""Results ride on the report and come back on the xdist controller, where the leaderboard is drawn."""

from types import SimpleNamespace

import pytest

from pytest_itbench.report import carry

from .test_figures import catalog
from .test_leaderboard import cells
from .trials import ISOLATED, full_trial, trial, write_project


def test_a_report_carries_a_plain_dict_that_reads_back(tmp_path):
    result = full_trial(tmp_path)
    report = SimpleNamespace(nodeid="t::x", when="call")
    assert carry.result_of(report) is None
    carry.put(report, result)
    assert isinstance(report.itbench, dict)
    assert carry.result_of(report) == result


def test_stats_give_each_test_once_from_its_latest_phase():
    first, second = trial("a", 1, "P"), trial("a", 1, "F")
    call = SimpleNamespace(nodeid="t::a1", when="call", itbench=first.to_dict())
    teardown = SimpleNamespace(nodeid="t::a1", when="teardown", itbench=second.to_dict())
    other = SimpleNamespace(nodeid="t::b1", when="call", itbench=trial("b", 1, "E").to_dict())
    plain = SimpleNamespace(nodeid="t::c", when="call")  # a test that is no trial
    stats = {"passed": [call], "": [teardown], "error": [other], "warnings": [plain]}
    found = carry.results_from_stats(stats)
    assert [(r.scenario_id, r.outcome) for r in found] == [("a", "failed"), ("b", "error")]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_the_leaderboard_covers_every_trial(pytester, workers):
    write_project(pytester, catalog())
    run = pytester.runpytest_subprocess(*ISOLATED, *workers)
    run.assert_outcomes(passed=6, failed=6)  # the environment error is raised in the test body here
    lines = [line.rstrip() for line in run.outlines]
    start = lines.index(next(line for line in lines if "itbench leaderboard" in line))
    rows = cells(lines[start + 1:], "group")
    assert rows["all"]["trials"] == "12" and rows["all"]["pass@1"] == "50.0±28.9"
    assert rows["all"]["MTTD"] == "60.0s" and rows["all"]["err"] == "1"
