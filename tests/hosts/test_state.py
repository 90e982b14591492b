"""The host-state model: YAML loading, defaults, and errors that name the wrong field."""

from __future__ import annotations

import pytest

from pytest_itbench.hosts import HostStateError, load_hosts, parse_hosts
from pytest_itbench.hosts import accounts

HOSTS_YAML = """
hosts:
  - name: web1
    groups: [webservers]
    files:
      - path: /etc/ssh/sshd_config
        content: "PermitRootLogin no\\n"
        mode: 0600
      - path: /etc/login.defs
        content: "PASS_MAX_DAYS 365\\n"
        mode: "0644"
    sysctl: {net.ipv4.ip_forward: 0, kernel/randomize_va_space: 2}
    packages: [openssh-server, {name: telnet-server, version: "0.17", release: "85.el9"}]
    services: [{name: sshd}, {name: telnet.socket, enabled: false, active: false}]
    users: [{name: alice, uid: 1000, password: ""}]
"""


def test_yaml_loads_with_defaults_and_normalised_values():
    (host,) = load_hosts(HOSTS_YAML)
    assert host.name == "web1" and host.groups == ["webservers"] and host.os_release == "9.4"
    assert host.file("/etc/ssh/sshd_config").mode == 0o600  # YAML octal literal
    assert host.file("/etc/login.defs").mode == 0o644  # octal string
    assert host.file("/etc/login.defs").owner == "root"
    assert host.sysctl == {"net.ipv4.ip_forward": "0", "kernel.randomize_va_space": "2"}
    assert [p.nvra for p in host.packages] == ["openssh-server-1.0-1.el9.x86_64", "telnet-server-0.17-85.el9.x86_64"]
    assert [s.name for s in host.services] == ["sshd.service", "telnet.socket"]


def test_account_files_hold_system_and_declared_users():
    (host,) = load_hosts(HOSTS_YAML)
    passwd = accounts.passwd_text(host).splitlines()
    assert passwd[0] == "root:x:0:0::/root:/bin/bash"
    assert "alice:x:1000:1000::/home/alice:/bin/bash" in passwd
    assert "alice::19700:0:99999:7:::" in accounts.shadow_text(host).splitlines()
    assert "alice:x:1000:" in accounts.group_text(host).splitlines()


@pytest.mark.parametrize("bad, field", [
    ({"name": "a b"}, "hosts[0].name"),
    ({"name": "h", "files": [{"path": "etc/x"}]}, "hosts[0].files[0].path"),
    ({"name": "h", "files": [{"path": "/etc/x", "mode": "rwx"}]}, "hosts[0].files[0].mode"),
    ({"name": "h", "files": [{"path": "/proc/sys/x"}]}, "hosts[0].files[0].path"),
    ({"name": "h", "files": [{"path": "/etc/x", "colour": "red"}]}, "hosts[0].files[0].colour"),
    ({"name": "h", "users": [{"name": "bob", "uid": -1}]}, "hosts[0].users[0].uid"),
    ({"name": "h", "services": [{"name": "sshd", "enabled": "maybe"}]}, "hosts[0].services[0].enabled"),
    ({"name": "h", "sysctl": {"net.ipv4.ip_forward": [1]}}, "hosts[0].sysctl"),
    ({"name": "h", "os_release": "8.9"}, "hosts[0].os_release"),
])
def test_validation_errors_name_the_field(bad, field):
    with pytest.raises(HostStateError) as info:
        parse_hosts([bad])
    assert field + ":" in str(info.value)


def test_duplicate_hosts_and_files_are_refused():
    with pytest.raises(HostStateError, match="'h' is used twice"):
        parse_hosts([{"name": "h"}, {"name": "h"}])
    with pytest.raises(HostStateError, match="'/etc/x' is declared twice"):
        parse_hosts([{"name": "h", "files": [{"path": "/etc/x"}, {"path": "/etc/x"}]}])
