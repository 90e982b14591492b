# An Ansible connection plugin shipped with pytest-itbench; the ansible.cfg the harness writes points
# connection_plugins at this directory. It must import nothing from pytest_itbench: ansible loads it by
# file path, possibly from another interpreter than the harness's.
"""Connection to a simulated RHEL 9 host: every command runs in the host's private view of this machine."""

from __future__ import annotations

DOCUMENTATION = """
    name: itbench_host
    short_description: run on a pytest-itbench simulated host (a private overlay view of this machine)
    description:
        - Each command runs in fresh mount, PID, UTS and IPC namespaces whose root is an overlay of this
          machine's root under the host's own layer (its declared files, RHEL 9 release files, rpm and
          systemctl stand-ins), without the capabilities to mount or change kernel settings. Writes land
          in the host's layer, never in the machine's files. Needs root and util-linux (unshare, setpriv).
    author: pytest-itbench
    options:
      host_dir:
        description: the host's directory, built by pytest_itbench.hosts
        vars:
          - name: itbench_host_dir
      hide:
        description: a directory kept out of the host's view (the directory of all hosts)
        default: ''
        vars:
          - name: itbench_hosts_root
      sandbox:
        description: the python interpreter and script that set up the view
        default: ''
        vars:
          - name: itbench_sandbox
      timeout:
        description: seconds one command may run before it is killed
        default: 300
        type: int
        vars:
          - name: itbench_command_timeout
"""

import fcntl
import os
import re
import shlex
import subprocess
import sys

from ansible.errors import AnsibleConnectionFailure, AnsibleError, AnsibleFileNotFound
from ansible.plugins.connection import ConnectionBase
from ansible.utils.display import Display

display = Display()

SANDBOX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sandbox.py")
# What a root login shell on RHEL 9 has; the controller's environment (its venv, its PYTHONPATH) stays out.
HOST_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
            "USER": "root", "LOGNAME": "root", "SHELL": "/bin/bash", "LANG": "C.UTF-8", "TERM": "dumb"}
NAMESPACES = ["--mount", "--uts", "--ipc", "--pid", "--fork", "--kill-child", "--propagation", "private"]
_BECOME_MARK = re.compile(rb"^BECOME-SUCCESS-[a-z0-9]+\r?\n", re.MULTILINE)


class Connection(ConnectionBase):
    transport = "itbench_host"
    has_pipelining = True
    default_user = "root"

    def _connect(self):
        if not self._connected:
            host_dir = self.get_option("host_dir")
            if not host_dir or not os.path.isfile(os.path.join(host_dir, "host.json")):
                raise AnsibleConnectionFailure(f"itbench_host: {host_dir!r} is not a simulated host's directory")
            self._connected = True
        return self

    def _argv(self, command):
        sandbox = self.get_option("sandbox")
        prefix = shlex.split(sandbox) if sandbox else [sys.executable, "-I", os.path.normpath(SANDBOX)]
        hide = self.get_option("hide")
        return (["unshare", *NAMESPACES, "--", *prefix, self.get_option("host_dir")]
                + (["--hide", hide] if hide else []) + ["--", *command])

    def _run(self, command, in_data=None):
        # One command at a time per host: the overlay's upper layer must not be mounted twice at once.
        self._connect()
        with open(os.path.join(self.get_option("host_dir"), "lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                proc = subprocess.run(self._argv(command), input=in_data or b"", capture_output=True,
                                      env=HOST_ENV, timeout=self.get_option("timeout"))
            except subprocess.TimeoutExpired as exc:
                raise AnsibleError(f"itbench_host: the command ran past {exc.timeout} s and was killed") from None
        if proc.returncode == 125 and b"cannot set up the host's view" in proc.stderr:
            raise AnsibleConnectionFailure(proc.stderr.decode(errors="replace").strip())
        return proc.returncode, proc.stdout, proc.stderr

    def exec_command(self, cmd, in_data=None, sudoable=True):
        super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
        display.vvv(f"EXEC {cmd}", host=self._play_context.remote_addr)
        rc, stdout, stderr = self._run(["/bin/sh", "-c", cmd], in_data)
        if sudoable and self.become is not None:  # the host's sudo needs no password: drop the marker line
            stdout = _BECOME_MARK.sub(b"", stdout, count=1)
        return rc, stdout, stderr

    def put_file(self, in_path, out_path):
        super().put_file(in_path, out_path)
        display.vvv(f"PUT {in_path} TO {out_path}", host=self._play_context.remote_addr)
        if not os.path.isfile(in_path):
            raise AnsibleFileNotFound(f"file or module does not exist: {in_path}")
        with open(in_path, "rb") as fh:
            data = fh.read()
        rc, _, stderr = self._run(["/bin/sh", "-c", 'cat > "$0"', out_path], data)
        if rc != 0:
            raise AnsibleError(f"failed to transfer file to {out_path}: {stderr.decode(errors='replace').strip()}")

    def fetch_file(self, in_path, out_path):
        super().fetch_file(in_path, out_path)
        display.vvv(f"FETCH {in_path} TO {out_path}", host=self._play_context.remote_addr)
        rc, stdout, stderr = self._run(["/bin/cat", "--", in_path])
        if rc != 0:
            raise AnsibleError(f"failed to fetch {in_path}: {stderr.decode(errors='replace').strip()}")
        with open(out_path, "wb") as fh:
            fh.write(stdout)

    def reset(self):
        pass

    def close(self):
        self._connected = False
