"""Simulated hosts for the tests: built once per module, playbooks run through the real ansible-playbook."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_itbench.hosts import HostsUnavailable, SimulatedHosts, parse_hosts, preflight

SSHD_CONFIG = "# RHEL 9 sshd_config (abridged)\nPermitRootLogin yes\nX11Forwarding yes\nMaxAuthTries 6\n"

RHEL_HOST = {
    "name": "rhel9-a",
    "groups": ["servers"],
    "files": [
        {"path": "/etc/ssh/sshd_config", "content": SSHD_CONFIG, "mode": "0600"},
        {"path": "/etc/sysctl.d/99-forward.conf", "content": "net.ipv4.ip_forward = 1\n"},
        {"path": "/etc/login.defs", "content": "PASS_MAX_DAYS\t99999\nPASS_MIN_LEN\t5\n"},
        {"path": "/etc/security/pwquality.conf", "content": "minlen = 8\n", "mode": "0644"},
        {"path": "/etc/audit/rules.d/audit.rules", "content": "-w /etc/passwd -p wa -k identity\n",
         "owner": "root", "group": "root", "mode": "0640"},
    ],
    "sysctl": {"net.ipv4.ip_forward": 1, "kernel.randomize_va_space": 0},
    "packages": ["openssh-server", {"name": "telnet-server", "version": "0.17", "release": "85.el9"}],
    "services": [{"name": "sshd"}, {"name": "auditd", "enabled": False, "active": False}],
    "users": [{"name": "alice", "uid": 1000}],
}


def playbook(text: str, tmp: Path, name: str = "playbook.yml") -> Path:
    path = tmp / name
    path.write_text(textwrap.dedent(text))
    return path


def run_and_collect(hosts: SimulatedHosts, text: str, tmp: Path) -> dict:
    """Run a playbook that writes its results to ``{{ out }}`` on the controller; return that JSON."""
    out = tmp / "out.json"
    result = hosts.run_playbook(playbook(text, tmp), extra=["-e", f"out={out}"], timeout=240)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> SimulatedHosts:
    try:
        preflight()
    except HostsUnavailable as exc:
        pytest.skip(f"simulated hosts unavailable here: {exc}")
    work = tmp_path_factory.mktemp("hosts")
    return SimulatedHosts(work, parse_hosts([RHEL_HOST])).build()
