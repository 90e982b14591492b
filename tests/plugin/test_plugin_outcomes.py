"""Outcomes: passed when every required check holds, failed when the agent missed, error when the
environment broke (with the command that reruns the trial)."""

from __future__ import annotations

import shlex

from pytest_itbench.report.jsonl import load

from .conftest import ANSWERING_SCRIPT


def test_passed_failed_and_error(bench):
    bench.scenario("solved")
    bench.scenario("missed", answer="43")  # the agent answers 42
    bench.scenario("broken", expected_alerts=("BudgetExceeded",))  # nothing ever raises this alert
    bench.program("agent.sh", ANSWERING_SCRIPT)
    result = bench.run("--itbench-agent=exec:./agent.sh", "--itbench-results=results.jsonl", "-rA", ".")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines([
        "*= ERRORS =*",
        "*ERROR at setup of finops-broken (broken.yaml)*",
        "the expected alert(s) BudgetExceeded did not fire within 1200 s of cluster time after the faults were "
        "injected (firing: none); the scenario or its faults are broken",
        f"rerun this trial alone: pytest {shlex.quote(str(bench.path / 'broken.yaml'))} "
        "--itbench-agent=exec:./agent.sh --itbench-seed=0",
        "*= FAILURES =*",
        "*finops-missed (missed.yaml)*",
        "missed run 1 (seed *, agent exec:./agent.sh): failed answer",
        "FAIL answer: submitted '42', expected '43'",
    ])
    records = {r.scenario_id: r for r in load(bench.path / "results.jsonl")}
    assert {sid: r.outcome for sid, r in records.items()} == {"solved": "passed", "missed": "failed",
                                                              "broken": "error"}
    # the broken trial never reached the agent; the others went through every phase
    assert "agent" not in records["broken"].phases and "alerts" in records["broken"].phases
    assert {"provision", "access", "agent", "evaluate", "teardown"} <= set(records["solved"].phases)
    assert "teardown" in records["broken"].phases  # torn down all the same


def test_the_rerun_command_of_a_later_run_names_that_run(bench):
    bench.scenario("broken", expected_alerts=("BudgetExceeded",))
    result = bench.run("--itbench-agent=noop", "--itbench-runs=3", "--itbench-seed=5", "-k", "run2",
                       "--itbench-results=first.jsonl", ".")
    result.assert_outcomes(errors=1)
    target = shlex.quote(f"{bench.path / 'broken.yaml'}::finops-broken[run2]")
    command = f"pytest {target} --itbench-agent=noop --itbench-seed=5 --itbench-runs=3"
    result.stdout.fnmatch_lines([f"rerun this trial alone: {command}"])
    # the command reruns that very trial (run 2, with its seed), and only it
    rerun = bench.run(*shlex.split(command)[1:], "--itbench-results=rerun.jsonl")
    rerun.assert_outcomes(errors=1)
    [first] = load(bench.path / "first.jsonl")
    [again] = load(bench.path / "rerun.jsonl")
    assert (again.run, again.seed) == (first.run, first.seed) == (2, first.seed)


def test_required_checks_decide_informative_ones_do_not(bench):
    bench.scenario("budget")
    # a second implementation of the hook, from a plugin of its own: its checks are added to the conftest's
    bench.python_agent("style_checks", '''
        from pytest_itbench.results import CheckResult


        def pytest_itbench_evaluate(trial):
            return [CheckResult("style", False, "too terse")]  # not in the scenario's require: informative
        ''')
    bench.program("agent.sh", ANSWERING_SCRIPT)
    result = bench.run("-p", "style_checks", "--itbench-agent=exec:./agent.sh", "--itbench-results=results.jsonl",
                       ".")
    result.assert_outcomes(passed=1)
    [record] = load(bench.path / "results.jsonl")
    assert {(c.name, c.passed, c.required) for c in record.checks} == {("answer", True, True),
                                                                       ("style", False, False)}


def test_a_required_check_nobody_evaluates_fails_the_trial(bench):
    bench.write("budget.yaml", bench.scenario("budget").read_text().replace("[answer]", "[answer, posture]"))
    bench.program("agent.sh", ANSWERING_SCRIPT)
    result = bench.run("--itbench-agent=exec:./agent.sh", ".")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAIL posture: required by the scenario, but no evaluator produced it"])
