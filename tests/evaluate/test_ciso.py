"""The CISO evaluator's verdicts on bad artifacts, through the plugin on a real kubectl-opa scenario.

Each agent below writes one kind of broken artifact (a missing file, a Rego syntax error, a script that
hangs, exits non-zero or writes no JSON, a policy whose result is undefined, a policy right on one side
only); every one must give a *failed* trial (never an error) whose verdict names what is wrong. The
scenario's loading errors (a missing referenced file, an unknown category) are checked without a cluster.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_itbench.report.jsonl import load
from pytest_itbench.scenario import ScenarioError, load as load_scenario

from ..conftest import KUBECTL

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "ciso" / "kubectl-opa" / "ciso-opa-5.2.2-privileged"

AGENTS = r'''
import os
import shutil

from pytest_itbench.agents import Submission

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenario", "reference")
SCRIPT = open(os.path.join(REFERENCE, "script.sh")).read()
POLICY = open(os.path.join(REFERENCE, "policy.rego")).read()


def hand_in(task, script=SCRIPT, policy=POLICY):
    artifacts = {}
    for role, name, text in (("script", "script.sh", script), ("policy", "policy.rego", policy)):
        if text is not None:
            with open(os.path.join(task.workdir, name), "w") as fh:
                fh.write(text)
            artifacts[role] = name
    return Submission(artifacts=artifacts)


class Reference:
    def run(self, task, trajectory):
        return hand_in(task)


class FilesOnly:
    """Writes the files the task names and hands in nothing: graded on those files."""
    def run(self, task, trajectory):
        hand_in(task)
        return Submission()


class MissingPolicy:
    def run(self, task, trajectory):
        return hand_in(task, policy=None)


class RegoSyntaxError:
    def run(self, task, trajectory):
        return hand_in(task, policy="package check\n\nresult := {\n")


class HangingScript:
    def run(self, task, trajectory):
        return hand_in(task, script="#!/usr/bin/env bash\nsleep 600\n")


class FailingScript:
    def run(self, task, trajectory):
        return hand_in(task, script="#!/usr/bin/env bash\necho 'cannot reach the cluster' >&2\nexit 3\n")


class NoEvidence:
    def run(self, task, trajectory):
        return hand_in(task, script="#!/usr/bin/env bash\nkubectl get pods --namespace ledger >/dev/null\n")


class InvalidJson:
    def run(self, task, trajectory):
        return hand_in(task, script="#!/usr/bin/env bash\necho '{pods: [' > collected_data.json\n")


class Undefined:
    def run(self, task, trajectory):
        return hand_in(task, policy="package check\n\nresult := true if input.nothing_here\n")


class AlwaysFalse:
    """Right on the violating cluster, wrong on the compliant variant."""
    def run(self, task, trajectory):
        return hand_in(task, policy="package check\n\nresult := false\n")


class AlwaysTrue:
    """Wrong on the violating cluster, right on the compliant variant."""
    def run(self, task, trajectory):
        return hand_in(task, policy="package check\n\nresult := true\n")
'''

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="the reference script needs kubectl (and jq) on PATH")


@pytest.fixture
def bench(pytester):
    shutil.copytree(SCENARIO, pytester.path / "scenario")
    scenario_file = pytester.path / "scenario" / "scenario.yaml"
    text = scenario_file.read_text()
    # A short limit for the agent's script, so that the hanging one is stopped quickly.
    scenario_file.write_text(text.replace("ciso:\n", "ciso:\n  script_timeout: 3s\n", 1))
    (pytester.path / "agents_ciso.py").write_text(AGENTS)
    pytester.syspathinsert()
    return pytester


def trial(bench, agent: str):
    result = bench.runpytest("-p", "no:cacheprovider", f"--itbench-agent=agents_ciso:{agent}",
                             "--itbench-results=results.jsonl", "scenario/scenario.yaml")
    [record] = load(bench.path / "results.jsonl")
    return result, record, {c.name: c for c in record.checks}


def test_reference_solution_passes_and_reports_ttp(bench):
    result, record, checks = trial(bench, "Reference")
    result.assert_outcomes(passed=1)
    assert record.category == "kubectl-opa"
    assert checks["posture"].detail == "violating cluster: false (right); compliant variant: true (right)"
    assert record.figures["ttp"] >= 0


def test_files_named_in_the_task_are_graded_without_a_submission(bench):
    result, _, checks = trial(bench, "FilesOnly")
    result.assert_outcomes(passed=1)
    assert checks["policy"].passed


@pytest.mark.parametrize("agent, check, words", [
    ("MissingPolicy", "policy", "missing: policy.rego"),
    ("RegoSyntaxError", "policy", "policy.rego: does not compile"),
    ("HangingScript", "posture", "script.sh did not finish within 3 s and was stopped"),
    ("FailingScript", "posture", "script.sh exited with status 3: cannot reach the cluster"),
    ("NoEvidence", "posture", "exited 0 but wrote no collected_data.json"),
    ("InvalidJson", "posture", "collected_data.json is not valid JSON"),
    ("Undefined", "posture", "data.check.result is undefined"),
    ("AlwaysFalse", "posture", "violating cluster: false (right); compliant variant: false, should be true"),
    ("AlwaysTrue", "posture", "violating cluster: true, should be false; compliant variant: true (right)"),
])
def test_bad_artifacts_fail_with_a_verdict_that_says_which(bench, agent, check, words):
    result, record, checks = trial(bench, agent)
    result.assert_outcomes(failed=1)
    assert record.outcome == "failed"
    assert not checks[check].passed
    assert words in checks[check].detail, checks[check].detail
    assert not checks["posture"].passed
    assert record.figures["ttp"] in (None, float("inf"))  # infinite: JSON null in the results file


# ---- loading: file:line errors for the CISO fields -------------------------------------------------------------------
def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "scenario"
    shutil.copytree(SCENARIO, target)
    return target / "scenario.yaml"


def test_a_missing_referenced_file_is_a_loading_error_naming_it(tmp_path):
    path = _copy(tmp_path)
    (path.parent / "compliant" / "cluster.yaml").unlink()
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    lines = path.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "- compliant/cluster.yaml" in text)
    assert f"{path}:{line}: ciso.compliant_manifests[0]: compliant/cluster.yaml does not exist" in message


def test_ciso_fields_are_checked_with_their_lines(tmp_path):
    path = _copy(tmp_path)
    text = path.read_text().replace("category: kubectl-opa", "category: rhel9-ansible")
    text = text.replace("  - kind: Pod\n    name: node-debugger", "  - kind: Pod\n    nam: node-debugger")
    path.write_text(text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert "unknown ciso category 'rhel9-ansible'" in message
    lines = text.splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "nam: node-debugger" in t)
    assert f":{line}: ground_truth.violating[0].nam: unknown field" in message
