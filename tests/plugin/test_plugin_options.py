"""Option errors: usage errors before any trial, each naming the option and what would work."""

from __future__ import annotations

import pytest

from pytest_itbench.agents.registry import available


def usage_error(bench, *args) -> str:
    bench.scenario("budget")
    result = bench.run(*args, ".")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    assert "collected" not in result.stdout.str()  # nothing was collected, let alone run
    return result.stderr.str()


def test_an_unknown_agent_lists_the_available_ones(bench):
    message = usage_error(bench, "--itbench-agent=oracel")
    assert "--itbench-agent=oracel: unknown agent 'oracel' (did you mean oracle?)" in message
    assert f"Available agents: {', '.join(available())}" in message
    assert "noop" in available() and "oracle" in available()
    assert "exec:COMMAND" in message and "module:attribute" in message  # the other forms


def test_an_agent_module_that_is_not_there(bench):
    message = usage_error(bench, "--itbench-agent=no_such_module_here:Agent")
    assert "cannot import 'no_such_module_here'" in message


def test_an_exec_program_that_is_not_there(bench):
    message = usage_error(bench, "--itbench-agent=exec:./missing.sh")
    assert "exec: program './missing.sh' not found" in message


@pytest.mark.parametrize("runs", ["0", "-2"])
def test_runs_must_be_at_least_one(bench, runs):
    message = usage_error(bench, "--itbench-agent=noop", f"--itbench-runs={runs}")
    assert f"--itbench-runs must be at least 1, got {runs}" in message


def test_runs_must_be_a_number(bench):
    bench.scenario("budget")
    result = bench.run("--itbench-runs=many", ".")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--itbench-runs" in result.stderr.str() and "invalid int value: 'many'" in result.stderr.str()


@pytest.mark.parametrize("value", ["soon", "0", "-5s", "10x"])
def test_a_bad_timeout(bench, value):
    message = usage_error(bench, "--itbench-agent=noop", f"--itbench-timeout={value}")
    assert f"--itbench-timeout={value}:" in message and "90s, 15m or 1h30m" in message


def test_an_unknown_backend(bench):
    message = usage_error(bench, "--itbench-agent=noop", "--itbench-backend=kind8")
    assert "--itbench-backend=kind8: unknown backend; available: twin" in message


def test_an_unknown_signal_to_withhold(bench):
    bench.scenario("budget")
    result = bench.run("--itbench-agent=noop", "--itbench-without=dashboards", ".")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "invalid choice: 'dashboards'" in result.stderr.str()


def test_option_errors_stop_the_session_even_without_an_agent(bench):
    # a mistyped option is an error whether or not the session runs trials
    message = usage_error(bench, "--itbench-runs=0")
    assert "--itbench-runs must be at least 1" in message


def test_a_bad_price_file_names_the_file_and_the_line(bench):
    bench.write("prices.yaml", "read_on: 2026-11-30\nmodels:\n  gpt-4o: {input: 2.5, output: lots}\n")
    message = usage_error(bench, "--itbench-agent=noop", "--itbench-prices=prices.yaml")
    assert (f"--itbench-prices=prices.yaml: {bench.path / 'prices.yaml'}:3: models.gpt-4o.output must be a number "
            f"of US dollars per million tokens (0 or more), got 'lots'") in message


def test_a_missing_price_file(bench):
    message = usage_error(bench, "--itbench-agent=noop", "--itbench-prices=nowhere.yaml")
    assert "--itbench-prices=nowhere.yaml: " in message and "nowhere.yaml: cannot be read" in message


def test_a_bad_price_file_in_the_ini_names_the_setting(bench):
    bench.write("pytest.ini", "[pytest]\nitbench_prices = prices/mine.yaml\n")
    bench.write("prices/mine.yaml", "models:\n  gpt-4o: {input: 2.5, output: 10}\n")
    message = usage_error(bench, "--itbench-agent=noop")
    # relative to the ini file; read_on is what makes a price table trustworthy
    assert (f"itbench_prices = prices/mine.yaml: {bench.path / 'prices' / 'mine.yaml'}:1: read_on (the date the "
            f"prices were read) and models are required; read_on is missing") in message
