"""ITBench's CISO Ansible-and-OPA shape end to end on simulated hosts: a playbook collects evidence
(sshd's PermitRootLogin, a kernel parameter) into collected_data.json, and a Rego policy (package
``check``, rule ``result``) judges it: false for a violating host, true for a compliant one."""

from __future__ import annotations

import json

import pytest

from pytest_itbench.hosts import HostsUnavailable, SimulatedHosts, parse_hosts, preflight
from pytest_itbench.policy.rego import evaluate

from .conftest import playbook

EVIDENCE_PLAYBOOK = """
- name: collect evidence for CIS 5.1.20 (PermitRootLogin) and 3.3.1 (ip_forward)
  hosts: all
  gather_facts: true
  become: true
  tasks:
    - name: PermitRootLogin as sshd_config sets it (first match wins, as in sshd)
      shell: "grep -Ei '^[[:space:]]*PermitRootLogin[[:space:]]' /etc/ssh/sshd_config | head -n1 | awk '{print $2}'"
      register: permit_root_login
      changed_when: false
    - name: running value of net.ipv4.ip_forward
      command: sysctl -n net.ipv4.ip_forward
      register: ip_forward
      changed_when: false
    - set_fact:
        evidence:
          os: "{{ ansible_facts.distribution }} {{ ansible_facts.distribution_major_version }}"
          permit_root_login: "{{ permit_root_login.stdout | lower }}"
          ip_forward: "{{ ip_forward.stdout | int }}"
    - name: write collected_data.json on the controller
      run_once: true
      delegate_to: localhost
      copy:
        dest: "{{ playbook_dir }}/collected_data.json"
        content: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'evidence'))) | to_nice_json }}"
"""

POLICY = """
package check

default result := false

violations contains host if {
    some host, ev in input
    ev.permit_root_login != "no"
}

violations contains host if {
    some host, ev in input
    ev.ip_forward != 0
}

result if {
    count(input) > 0
    count(violations) == 0
}
"""


def host(name, permit, forward):
    return {"name": name,
            "files": [{"path": "/etc/ssh/sshd_config", "content": f"# sshd\nPermitRootLogin {permit}\n", "mode": "0600"}],
            "sysctl": {"net.ipv4.ip_forward": forward}}


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    try:
        preflight()
    except HostsUnavailable as exc:
        pytest.skip(f"simulated hosts unavailable here: {exc}")
    work = tmp_path_factory.mktemp("evidence")
    hosts = SimulatedHosts(work / "env", parse_hosts([
        host("compliant", "no", 0), host("root-login", "yes", 0), host("forwarding", "no", 1)])).build()
    agent_dir = work / "agent"
    agent_dir.mkdir()
    run = hosts.run_playbook(playbook(EVIDENCE_PLAYBOOK, agent_dir), timeout=240)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    return json.loads((agent_dir / "collected_data.json").read_text())


def test_the_playbook_collects_each_hosts_evidence(collected):
    assert collected == {
        "compliant": {"os": "RedHat 9", "permit_root_login": "no", "ip_forward": 0},
        "root-login": {"os": "RedHat 9", "permit_root_login": "yes", "ip_forward": 0},
        "forwarding": {"os": "RedHat 9", "permit_root_login": "no", "ip_forward": 1},
    }


@pytest.mark.parametrize("hosts, expected", [
    (["compliant"], True),
    (["root-login"], False),
    (["forwarding"], False),
    (["compliant", "root-login", "forwarding"], False),
])
def test_the_policy_judges_the_evidence(collected, hosts, expected):
    result = evaluate(POLICY, {h: collected[h] for h in hosts})
    assert result.defined and result.value is expected
