"""Phase lines under -v, written past output capture while the test runs; silent otherwise."""

import pytest

from .trials import ISOLATED, trial, write_project

PHASES = ["    a run 1: provision          0.12s",
          "    a run 1: deploy             0.50s",
          "    a run 1: agent ... (limit 900s)",
          "    a run 1: agent              3.25s"]


@pytest.mark.parametrize("capture", ["fd", "sys"])
def test_verbose_shows_each_phase_between_the_test_id_and_its_outcome(pytester, capture):
    write_project(pytester, [trial("a", 1, "P")])
    run = pytester.runpytest_subprocess(*ISOLATED, "-v", f"--capture={capture}")
    lines = [line.rstrip() for line in run.outlines]
    first = lines.index(PHASES[0])
    assert lines[first:first + 4] == PHASES
    assert lines[first - 1].startswith("test_trials.py::test_trial[a-1]")
    assert any(line.startswith("test_trials.py::test_trial[a-1] PASSED") for line in lines[first + 4:])


@pytest.mark.parametrize("args", [[], ["-v", "-n", "2"]], ids=["quiet", "xdist workers"])
def test_silent_where_no_terminal_shows_it(pytester, args):
    write_project(pytester, [trial("a", 1, "P"), trial("a", 2, "P")])
    run = pytester.runpytest_subprocess(*ISOLATED, *args)
    run.assert_outcomes(passed=2)
    assert not any(": provision " in line for line in run.outlines)
