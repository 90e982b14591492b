"""The modules an engineer reads a RHEL host with, run by the real ansible-playbook against a simulated
host, each compared with what it would answer on that host (the state in conftest.RHEL_HOST)."""

from __future__ import annotations

import base64

import pytest

from .conftest import SSHD_CONFIG, run_and_collect

READ_EVERYTHING = """
- hosts: all
  gather_facts: true
  tasks:
    - {name: cat, command: cat /etc/ssh/sshd_config, register: cat}
    - {name: grep, shell: "grep -E '^PermitRootLogin' /etc/ssh/sshd_config", register: grep}
    - {name: sysctl, command: sysctl -n net.ipv4.ip_forward kernel.randomize_va_space, register: sysctl}
    - {name: proc, command: cat /proc/sys/net/ipv4/ip_forward, register: proc}
    - {name: stat cli, command: "stat -c '%a %U %G' /etc/ssh/sshd_config /etc/shadow", register: statcli}
    - {name: rpm installed, command: rpm -q openssh-server telnet-server, register: rpm_yes}
    - {name: rpm absent, command: rpm -q rsh-server xinetd, register: rpm_no, failed_when: false}
    - {name: is-enabled, command: systemctl is-enabled sshd, register: enabled}
    - {name: is-enabled no, command: systemctl is-enabled auditd, register: disabled, failed_when: false}
    - {name: slurp, slurp: {src: /etc/ssh/sshd_config}, register: slurped}
    - {name: stat, stat: {path: /etc/ssh/sshd_config}, register: st}
    - {name: stat missing, stat: {path: /etc/hosts.equiv}, register: st_missing}
    - name: lineinfile check mode, compliant line absent
      lineinfile: {path: /etc/ssh/sshd_config, regexp: '^PermitRootLogin', line: PermitRootLogin no}
      check_mode: true
      register: li_change
    - name: lineinfile check mode, line already there
      lineinfile: {path: /etc/ssh/sshd_config, regexp: '^MaxAuthTries', line: MaxAuthTries 6}
      check_mode: true
      register: li_same
    - {name: packages, package_facts: {}}
    - {name: services, service_facts: {}}
    - name: results to the controller
      delegate_to: localhost
      copy:
        dest: "{{ out }}"
        content: "{{ {'cat': cat.stdout, 'grep': grep.stdout, 'sysctl': sysctl.stdout_lines, 'proc': proc.stdout,
                     'statcli': statcli.stdout_lines, 'rpm_yes': rpm_yes.stdout_lines, 'rpm_no': [rpm_no.rc] + rpm_no.stdout_lines,
                     'enabled': [enabled.rc, enabled.stdout], 'disabled': [disabled.rc, disabled.stdout],
                     'slurp': slurped.content, 'stat': st.stat, 'stat_missing': st_missing.stat.exists,
                     'li_change': li_change.changed, 'li_same': li_same.changed,
                     'packages': ansible_facts.packages, 'services': ansible_facts.services,
                     'facts': {'distribution': ansible_facts.distribution, 'major': ansible_facts.distribution_major_version,
                               'version': ansible_facts.distribution_version, 'family': ansible_facts.os_family,
                               'hostname': ansible_facts.hostname, 'pkg_mgr': ansible_facts.pkg_mgr}} | to_json }}"
"""


@pytest.fixture(scope="module")
def results(simulated, tmp_path_factory):
    return run_and_collect(simulated, READ_EVERYTHING, tmp_path_factory.mktemp("modules"))


def test_command_and_shell_read_the_hosts_files(results):
    assert results["cat"] == SSHD_CONFIG.rstrip("\n")
    assert results["grep"] == "PermitRootLogin yes"


def test_sysctl_and_proc_report_the_declared_kernel_parameters(results):
    assert results["sysctl"] == ["1", "0"]
    assert results["proc"] == "1"


def test_stat_command_reports_declared_owner_and_mode(results):
    assert results["statcli"] == ["600 root root", "0 root root"]


def test_rpm_q_answers_from_declared_packages(results):
    assert results["rpm_yes"] == ["openssh-server-1.0-1.el9.x86_64", "telnet-server-0.17-85.el9.x86_64"]
    assert results["rpm_no"] == [2, "package rsh-server is not installed", "package xinetd is not installed"]


def test_systemctl_is_enabled_answers_from_declared_services(results):
    assert results["enabled"] == [0, "enabled"]
    assert results["disabled"] == [1, "disabled"]


def test_slurp_returns_the_file(results):
    assert base64.b64decode(results["slurp"]).decode() == SSHD_CONFIG


def test_stat_module(results):
    st = results["stat"]
    assert (st["exists"], st["mode"], st["pw_name"], st["gr_name"], st["size"]) == (
        True, "0600", "root", "root", len(SSHD_CONFIG))
    assert results["stat_missing"] is False


def test_lineinfile_in_check_mode_reports_what_it_would_change(results):
    assert results["li_change"] is True
    assert results["li_same"] is False


def test_package_facts_lists_only_the_declared_rpms(results):
    assert sorted(results["packages"]) == ["openssh-server", "telnet-server"]
    (telnet,) = results["packages"]["telnet-server"]
    assert (telnet["version"], telnet["release"], telnet["arch"], telnet["source"]) == ("0.17", "85.el9", "x86_64", "rpm")


def test_service_facts_lists_the_declared_services(results):
    assert results["services"] == {
        "auditd.service": {"name": "auditd.service", "state": "stopped", "status": "disabled", "source": "systemd"},
        "sshd.service": {"name": "sshd.service", "state": "running", "status": "enabled", "source": "systemd"},
    }


def test_setup_facts_report_rhel_9(results):
    assert results["facts"] == {"distribution": "RedHat", "major": "9", "version": "9.4", "family": "RedHat",
                                "hostname": "rhel9-a", "pkg_mgr": "dnf"}
