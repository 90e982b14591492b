"""A playbook cannot change the real machine through a simulated host: every write lands in the host's
own layer. The playbook tries the usual ways (copy, lineinfile, file absent, shell rm and redirections,
sysctl -w, mount, a new file under /etc/ssh) and the real files must be byte-identical afterwards."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from .conftest import run_and_collect

WATCHED = [Path("/etc/passwd"), Path("/etc/shadow"), Path("/etc/group"), Path("/etc/ssh")]
KERNEL = ["/proc/sys/kernel/randomize_va_space", "/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/ipv4/tcp_syncookies"]

WRITE_EVERYTHING = """
- hosts: all
  gather_facts: false
  become: true
  tasks:
    - {name: overwrite passwd, copy: {dest: /etc/passwd, content: "root:x:0:0:pwned:/root:/bin/bash\\n"}}
    - {name: append to shadow, shell: "echo 'evil::0:0:99999:7:::' >> /etc/shadow"}
    - name: edit sshd_config for real (no check mode)
      lineinfile: {path: /etc/ssh/sshd_config, regexp: '^PermitRootLogin', line: PermitRootLogin no}
    - {name: edit the machine's own ssh_config, lineinfile: {path: /etc/ssh/ssh_config, line: "Host *.evil"}}
    - {name: new file under /etc/ssh, copy: {dest: /etc/ssh/sshd_config.d/50-evil.conf, content: "PermitRootLogin yes\\n"}}
    - {name: remove a directory, file: {path: /etc/ssh/ssh_config.d, state: absent}}
    - {name: rm a file, shell: rm -f /etc/ssh/ssh_config /etc/group}
    - {name: chmod, file: {path: /etc/ssh, mode: "0777"}}
    - name: kernel parameters
      shell: sysctl -w kernel.randomize_va_space=1 net.ipv4.ip_forward=0 net.ipv4.tcp_syncookies=0 2>&1; true
    - {name: mount over /etc, shell: "mount -t tmpfs none /etc 2>&1; echo rc=$?", register: mounted}
    - {name: reach the machine's root through /proc/1/root, shell: "ls /proc/1/root/etc/passwd /proc/*/root/work 2>&1; true"}
    - {name: what the host sees now, shell: "cat /etc/passwd; ls /etc/ssh; sysctl -n net.ipv4.ip_forward", register: seen}
    - delegate_to: localhost
      copy: {dest: "{{ out }}", content: "{{ {'seen': seen.stdout_lines, 'mounted': mounted.stdout} | to_json }}"}
"""


def fingerprint(paths) -> dict:
    """Content, mode and owner of every file under ``paths`` (directories walked, symlinks not followed)."""
    out = {}
    for root in paths:
        walk = [(str(root), [], [root.name])] if root.is_file() else os.walk(root)
        for dirpath, _dirs, files in walk:
            st = os.lstat(dirpath)
            out[dirpath] = ("dir", st.st_mode, st.st_uid, st.st_gid)
            for name in files:
                p = os.path.join(dirpath, name) if not root.is_file() else str(root)
                st = os.lstat(p)
                data = open(p, "rb").read() if os.path.isfile(p) and not os.path.islink(p) else os.readlink(p).encode()
                out[p] = (hashlib.sha256(data).hexdigest(), st.st_mode, st.st_uid, st.st_gid)
    for k in KERNEL:
        out[k] = Path(k).read_text()
    return out


@pytest.fixture
def real_files_kept():
    """The fingerprint before, and a copy of the files to put back should the test fail (so a failure
    does not leave this machine broken)."""
    before = fingerprint(WATCHED)
    saved = {p: p.read_bytes() for p in WATCHED if p.is_file()}
    yield before
    for p, data in saved.items():
        if p.read_bytes() != data:
            p.write_bytes(data)


def test_writes_through_a_simulated_host_never_reach_the_real_files(simulated, real_files_kept, tmp_path):
    results = run_and_collect(simulated, WRITE_EVERYTHING, tmp_path)
    assert fingerprint(WATCHED) == real_files_kept
    # The writes did happen, on the host: it now sees its own changed files and kernel parameter.
    seen = results["seen"]
    assert seen[0] == "root:x:0:0:pwned:/root:/bin/bash"
    assert "50-evil.conf" not in seen and "sshd_config" in seen  # 50-evil.conf lives in sshd_config.d
    assert "ssh_config" not in seen and seen[-1] == "0"
    assert "rc=0" not in results["mounted"]  # no capability to mount
    layer = simulated.host_dir("rhel9-a") / "upper"
    assert (layer / "etc/ssh/sshd_config.d/50-evil.conf").read_text() == "PermitRootLogin yes\n"
