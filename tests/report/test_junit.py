"""JUnit XML: figures as testcase properties under every family, without warnings; the verdict as the message."""

import xml.etree.ElementTree as ET

import pytest

from pytest_itbench.report.junit import failure_message, properties

from .trials import ISOLATED, analysed_trial, full_trial, trial, write_project


def test_properties_are_flat_strings(tmp_path):
    pairs = dict(properties(full_trial(tmp_path)))
    assert pairs["itbench.scenario"] == "sre-scaled-to-zero"
    assert (pairs["itbench.run"], pairs["itbench.seed"], pairs["itbench.outcome"]) == ("2", "7", "failed")
    assert (pairs["itbench.check.diagnosis"], pairs["itbench.check.mitigation"]) == ("pass", "fail")
    assert (pairs["itbench.mttd"], pairs["itbench.ntam"], pairs["itbench.tokens"]) == ("41.5", "0.75", "1834")
    assert "itbench.mttr" not in pairs  # not measured: no property rather than "None"
    assert pairs["itbench.phase.agent"] == "3.250"
    assert all(isinstance(v, str) for v in pairs.values())


def test_trajectory_figures_and_calls_per_tool_are_properties():
    pairs = dict(properties(analysed_trial()))
    assert {k: pairs[k] for k in ("itbench.tool_calls", "itbench.repeated_actions", "itbench.longest_repeat",
                                  "itbench.unknown_tools", "itbench.failed_commands", "itbench.tokens_in",
                                  "itbench.tokens_out", "itbench.cost_usd")} == {
        "itbench.tool_calls": "4.0", "itbench.repeated_actions": "1.0", "itbench.longest_repeat": "2.0",
        "itbench.unknown_tools": "1.0", "itbench.failed_commands": "2.0", "itbench.tokens_in": "1000.0",
        "itbench.tokens_out": "100.0", "itbench.cost_usd": "0.0035"}
    assert (pairs["itbench.calls.kubectl"], pairs["itbench.calls.fetch_logs"]) == ("3", "1")
    unpriced = analysed_trial()
    unpriced.figures["cost_usd"] = None
    assert "itbench.cost_usd" not in dict(properties(unpriced))
    assert not [k for k, _ in properties(trial("a", 1, "P")) if k.startswith("itbench.calls.")]  # no analysis
    assert all(isinstance(v, str) for v in pairs.values())


def test_the_failure_message_leads_with_the_failed_checks(tmp_path):
    message = failure_message(full_trial(tmp_path))
    assert message.splitlines() == [
        "sre-scaled-to-zero run 2 (seed 7, agent oracle): failed mitigation",
        "PASS diagnosis: diagnosis held",
        "FAIL mitigation: mitigation missed",
    ]
    assert failure_message(trial("a", 1, "F")).splitlines() == [
        "a run 1 (seed 7, agent oracle): no required check was evaluated"]


@pytest.mark.parametrize("family", ["xunit2", "xunit1", "legacy"])
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_junit_xml_carries_the_figures_and_the_verdict(pytester, tmp_path, family, workers):
    passed = trial("a", 1, "P", checks={"diagnosis": True, "mitigation": True}, mttd=12.5, steps=3)
    missed = full_trial(tmp_path)
    write_project(pytester, [passed, missed])
    run = pytester.runpytest_subprocess(*ISOLATED, *workers, "--junitxml=junit.xml", "-o", f"junit_family={family}")
    run.assert_outcomes(passed=1, failed=1)
    assert "incompatible with junit_family" not in run.stdout.str()  # record_property's warning
    cases = {case.get("name"): case for case in ET.parse(pytester.path / "junit.xml").iter("testcase")}
    props = {name: {p.get("name"): p.get("value") for p in case.iter("property")} for name, case in cases.items()}
    assert props["test_trial[a-1]"]["itbench.mttd"] == "12.5"
    assert props["test_trial[a-1]"]["itbench.outcome"] == "passed"
    assert props["test_trial[sre-scaled-to-zero-2]"]["itbench.check.mitigation"] == "fail"
    assert cases["test_trial[a-1]"].find("failure") is None
    failure = cases["test_trial[sre-scaled-to-zero-2]"].find("failure")
    assert failure.get("message") == "Failed: " + failure_message(missed)
