"""An inventory of simulated RHEL 9 hosts that the real ``ansible-playbook`` runs against.

    hosts = SimulatedHosts(workdir, load_hosts("hosts.yaml")).build()
    result = hosts.run_playbook("evidence.yml")       # or: ansible-playbook -i {inventory} playbook.yml
                                                      #     with ANSIBLE_CONFIG={ansible_cfg}

``workdir`` receives ``inventory.ini`` (every host, its groups, ``ansible_connection=itbench_host``),
``ansible.cfg`` (the plugin directory shipped in this package, no host key checks, pipelining) and
``hosts/NAME/`` for each host (:mod:`.tree`). ``ansible-playbook`` run from ``workdir`` picks up the
``ansible.cfg`` by itself; elsewhere pass ``ANSIBLE_CONFIG`` (see :meth:`SimulatedHosts.env`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .state import HostState
from .tree import HOST_PYTHON, HostTree

PLUGINS = Path(__file__).with_name("ansible_plugins")
SANDBOX = Path(__file__).with_name("sandbox.py")


class HostsUnavailable(RuntimeError):
    """This machine cannot run simulated hosts (not root, no overlayfs or namespaces, no ansible)."""


def preflight() -> None:
    """Raise :class:`HostsUnavailable` saying what is missing."""
    if os.geteuid() != 0:
        raise HostsUnavailable("simulated hosts need root (mount namespaces and overlayfs)")
    for tool in ("unshare", "setpriv"):
        if shutil.which(tool) is None:
            raise HostsUnavailable(f"simulated hosts need util-linux's {tool}")
    if playbook_command() is None:
        raise HostsUnavailable("ansible-playbook is not installed (pip install ansible-core)")
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True)
    if probe.returncode != 0:
        raise HostsUnavailable("cannot create a mount namespace: " + probe.stderr.decode(errors="replace").strip())


def playbook_command() -> str | None:
    """ansible-playbook of this interpreter's environment, else the one on PATH."""
    beside = Path(sys.executable).with_name("ansible-playbook")
    return str(beside) if beside.exists() else shutil.which("ansible-playbook")


@dataclass(frozen=True)
class PlaybookRun:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False


class SimulatedHosts:
    def __init__(self, workdir: str | Path, hosts: list[HostState]):
        self.workdir = Path(workdir).resolve()
        self.hosts = list(hosts)
        self.hosts_root = self.workdir / "hosts"
        self.inventory = self.workdir / "inventory.ini"
        self.ansible_cfg = self.workdir / "ansible.cfg"

    def host_dir(self, name: str) -> Path:
        return self.hosts_root / name

    def build(self) -> "SimulatedHosts":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.hosts_root.mkdir(exist_ok=True)
        self.hosts_root.chmod(0o700)
        for host in self.hosts:
            HostTree(self.host_dir(host.name), host).build()
        self.inventory.write_text(self.inventory_text())
        self.ansible_cfg.write_text(self.ansible_cfg_text())
        return self

    def inventory_text(self) -> str:
        sandbox = f"{sys.executable} -I {SANDBOX}"
        lines = ["[all]"]
        for h in self.hosts:
            lines.append(f"{h.name} ansible_connection=itbench_host itbench_host_dir={self.host_dir(h.name)} "
                         f"ansible_python_interpreter={HOST_PYTHON}")
        lines += ["", "[all:vars]", f"itbench_hosts_root={self.hosts_root}", f"itbench_sandbox='{sandbox}'"]
        groups: dict[str, list[str]] = {}
        for h in self.hosts:
            for g in h.groups:
                groups.setdefault(g, []).append(h.name)
        for g, names in groups.items():
            lines += ["", f"[{g}]", *names]
        return "\n".join(lines) + "\n"

    def ansible_cfg_text(self) -> str:
        return ("[defaults]\n"
                f"inventory = {self.inventory}\n"
                f"connection_plugins = {PLUGINS / 'connection'}\n"
                "host_key_checking = False\n"
                "retry_files_enabled = False\n"
                "interpreter_python = auto_silent\n"
                "\n[connection]\npipelining = True\n")

    def env(self) -> dict[str, str]:
        """The environment for ansible-playbook: this ansible.cfg, no colours in captured output."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
        env.update(ANSIBLE_CONFIG=str(self.ansible_cfg), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                   ANSIBLE_LOCAL_TEMP=str(self.workdir / ".ansible-local"))
        return env

    def run_playbook(self, playbook: str | Path, *, timeout: float = 300, extra: list[str] | None = None,
                     cwd: str | Path | None = None) -> PlaybookRun:
        command = playbook_command()
        if command is None:
            raise HostsUnavailable("ansible-playbook is not installed (pip install ansible-core)")
        argv = [command, "-i", str(self.inventory), str(playbook), *(extra or [])]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, env=self.env(), timeout=timeout,
                                  cwd=str(cwd or self.workdir))
        except subprocess.TimeoutExpired as exc:
            def text(b):
                return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
            return PlaybookRun(-1, text(exc.stdout), text(exc.stderr), timed_out=True)
        return PlaybookRun(proc.returncode, proc.stdout, proc.stderr)


__all__ = ["HostsUnavailable", "PlaybookRun", "SimulatedHosts", "playbook_command", "preflight"]
