"""The CISO evaluator on rhel9-ansible-opa (simulated RHEL 9 hosts), through the plugin on a shipped scenario.

The agent finds inventory.ini and ansible.cfg in its workdir; its playbook is run against fresh builds of the
violating and the compliant hosts. A playbook that fails, hangs or writes no collected_data.json gives a
*failed* trial whose verdict says which.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_itbench.hosts import HostsUnavailable, preflight
from pytest_itbench.report.jsonl import load
from pytest_itbench.scenario import ScenarioError, load as load_scenario

SCENARIO = (Path(__file__).resolve().parents[2] / "scenarios" / "ciso" / "rhel9-ansible-opa"
            / "ciso-rhel9-5.1.20-permitrootlogin")

AGENTS = r'''
import os
import subprocess

from pytest_itbench.agents import Submission
from pytest_itbench.hosts.runtime import playbook_command

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenario", "reference")
PLAYBOOK = open(os.path.join(REFERENCE, "playbook.yml")).read()
POLICY = open(os.path.join(REFERENCE, "policy.rego")).read()


def hand_in(task, playbook=PLAYBOOK, policy=POLICY):
    for name, text in (("playbook.yml", playbook), ("policy.rego", policy)):
        with open(os.path.join(task.workdir, name), "w") as fh:
            fh.write(text)
    return Submission(artifacts={"playbook": "playbook.yml", "policy": "policy.rego"})


class Reference:
    """Runs its playbook in the workdir as the task says, then hands it in."""
    def run(self, task, trajectory):
        hand_in(task)
        assert os.path.isfile(os.path.join(task.workdir, "ansible.cfg"))
        done = subprocess.run([playbook_command(), "-i", "inventory.ini", "playbook.yml"], cwd=task.workdir,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "rhel9-db" in open(os.path.join(task.workdir, "collected_data.json")).read()
        return Submission(artifacts={"playbook": "playbook.yml", "policy": "policy.rego"})


class HangingPlaybook:
    def run(self, task, trajectory):
        # (a command on a host is stopped by the host after 10 s; the whole playbook by ciso.script_timeout)
        return hand_in(task, playbook="- hosts: localhost\n  gather_facts: false\n  tasks:\n    - pause: {seconds: 600}\n")


class FailingPlaybook:
    def run(self, task, trajectory):
        return hand_in(task, playbook="- hosts: all\n  gather_facts: false\n  tasks:\n    - command: /bin/false\n")


class NoEvidence:
    def run(self, task, trajectory):
        return hand_in(task, playbook="- hosts: all\n  gather_facts: false\n  tasks:\n    - command: /bin/true\n")


class AlwaysTrue:
    def run(self, task, trajectory):
        return hand_in(task, policy="package check\n\nresult := true\n")
'''


@pytest.fixture
def bench(pytester):
    try:
        preflight()
    except HostsUnavailable as exc:
        pytest.skip(f"simulated hosts unavailable here: {exc}")
    shutil.copytree(SCENARIO, pytester.path / "scenario")
    scenario_file = pytester.path / "scenario" / "scenario.yaml"
    scenario_file.write_text(scenario_file.read_text().replace("script_timeout: 120s", "script_timeout: 15s"))
    (pytester.path / "agents_hosts.py").write_text(AGENTS)
    pytester.syspathinsert()
    return pytester


def trial(bench, agent: str):
    result = bench.runpytest("-p", "no:cacheprovider", f"--itbench-agent=agents_hosts:{agent}",
                             "--itbench-results=results.jsonl", "scenario/scenario.yaml")
    [record] = load(bench.path / "results.jsonl")
    return result, record, {c.name: c for c in record.checks}


def test_the_agent_runs_its_playbook_in_its_workdir_and_passes(bench):
    result, record, checks = trial(bench, "Reference")
    result.assert_outcomes(passed=1)
    assert record.category == "rhel9-ansible-opa"
    assert checks["posture"].detail == "violating hosts: false (right); compliant hosts: true (right)"


@pytest.mark.parametrize("agent, words", [
    ("HangingPlaybook", "playbook.yml did not finish within 4 s and was stopped"),
    ("FailingPlaybook", "ansible-playbook playbook.yml failed (status 2)"),
    ("NoEvidence", "ansible-playbook playbook.yml exited 0 but wrote no collected_data.json"),
    ("AlwaysTrue", "violating hosts: true, should be false; compliant hosts: true (right)"),
])
def test_bad_playbooks_fail_with_a_verdict_that_says_which(bench, agent, words):
    if agent == "HangingPlaybook":  # a short limit: the playbook would pause for 600 s
        scenario_file = bench.path / "scenario" / "scenario.yaml"
        scenario_file.write_text(scenario_file.read_text().replace("script_timeout: 15s", "script_timeout: 4s"))
    result, record, checks = trial(bench, agent)
    result.assert_outcomes(failed=1)
    assert checks["policy"].passed
    assert not checks["posture"].passed
    assert words in checks["posture"].detail, checks["posture"].detail


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "scenario"
    shutil.copytree(SCENARIO, target)
    return target / "scenario.yaml"


def test_hosts_files_are_required_and_validated(tmp_path):
    path = _copy(tmp_path)
    path.write_text(path.read_text().replace("  compliant_hosts: compliant-hosts.yaml\n", ""))
    with pytest.raises(ScenarioError, match="gives ciso.hosts and ciso.compliant_hosts"):
        load_scenario(path)
    path = _copy(tmp_path / "again")
    (path.parent / "hosts.yaml").write_text("hosts:\n- name: web1\n  files:\n  - path: etc/motd\n")
    with pytest.raises(ScenarioError, match=r"ciso.hosts: hosts.yaml is not a valid list of hosts: .*files\[0\].path"):
        load_scenario(path)
