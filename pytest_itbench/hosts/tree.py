"""Build one simulated host's directory: the overlay layer that makes the machine look like that host.

``HOSTDIR/upper`` becomes the upper layer of an overlay whose lower layer is this machine's root
(:mod:`.sandbox`), so everything the host declares (its files, its account databases, RHEL 9 release
files, the ``rpm``/``systemctl`` stand-ins) shadows the machine's own, every other path reads as the
machine's, and every write of a command on the host lands in ``upper`` instead of the real file.

    HOSTDIR/upper/    the host's layer (owners and modes as declared)
    HOSTDIR/work/     overlayfs's work directory
    HOSTDIR/root/     mount point of the host's root inside its namespace
    HOSTDIR/sysctl/   one file per declared kernel parameter, bound over /proc/sys/... in the namespace
    HOSTDIR/host.json the sandbox's instructions (host name, sysctl paths)
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import stat
import sys
from pathlib import Path

from . import accounts
from .state import HostState

SHIMS = Path(__file__).with_name("shims")
STATE_DIR = "/usr/lib/itbench-host"  # inside the host: the declared packages and services for the shims
# The interpreter that runs the shims and Ansible's modules inside the host (it is this machine's).
HOST_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
# Files that would betray the machine underneath as another distribution: hidden (overlay whiteouts).
# Globs: the apt python bindings would make package_facts list the machine's Debian packages, and
# sysvinit scripts would make service_facts list the machine's services.
DEBIAN_MARKERS = ["/etc/debian_version", "/etc/lsb-release", "/usr/bin/apt", "/usr/bin/apt-get", "/usr/bin/dpkg",
                  "/usr/bin/lsb_release", "/usr/lib/python3/dist-packages/apt*", "/usr/lib/python3/dist-packages/python_apt*",
                  "/etc/init.d/*"]


def os_release(version: str) -> str:
    return (f'NAME="Red Hat Enterprise Linux"\nVERSION="{version} (Plow)"\nID="rhel"\nID_LIKE="fedora"\n'
            f'VERSION_ID="{version}"\nPLATFORM_ID="platform:el9"\n'
            f'PRETTY_NAME="Red Hat Enterprise Linux {version} (Plow)"\nANSI_COLOR="0;31"\n'
            f'CPE_NAME="cpe:/o:redhat:enterprise_linux:9::baseos"\nHOME_URL="https://www.redhat.com/"\n'
            f'REDHAT_SUPPORT_PRODUCT="Red Hat Enterprise Linux"\nREDHAT_SUPPORT_PRODUCT_VERSION="{version}"\n')


def _site_packages() -> str:
    """Where HOST_PYTHON finds packages, so the stand-in ``rpm`` bindings are importable by modules."""
    import subprocess
    out = subprocess.run([HOST_PYTHON, "-c", "import site; print(site.getsitepackages()[0])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return out


class HostTree:
    """The directory of one simulated host (see the module docstring)."""

    def __init__(self, hostdir: Path, host: HostState):
        self.dir = Path(hostdir)
        self.host = host
        self.upper = self.dir / "upper"
        self._uids, self._gids = accounts.owner_ids(host)

    # -- building --------------------------------------------------------------------------------------
    def build(self) -> "HostTree":
        if self.dir.exists():
            shutil.rmtree(self.dir)
        for sub in ("upper", "work", "root", "sysctl"):
            (self.dir / sub).mkdir(parents=True)
        self.dir.chmod(0o700)  # the layer holds /etc/shadow: nobody else on the machine reads it through here
        h = self.host
        self.write("/etc/os-release", os_release(h.os_release))
        self.write("/etc/redhat-release", f"Red Hat Enterprise Linux release {h.os_release} (Plow)\n")
        self.symlink("/etc/system-release", "redhat-release")
        self.write("/etc/hostname", h.name + "\n")
        self.write("/etc/passwd", accounts.passwd_text(h))
        self.write("/etc/group", accounts.group_text(h))
        self.write("/etc/shadow", accounts.shadow_text(h), mode=0o000)
        self.write("/etc/gshadow", "".join(f"{n}:!::\n" for n, _ in accounts.groups_of(h)), mode=0o000)
        for pattern in DEBIAN_MARKERS:
            for path in sorted(glob.glob(pattern)) if "*" in pattern else [pattern]:
                self.whiteout(path)
        self.mkdir("/etc/ssh/sshd_config.d")  # RHEL 9's sshd_config includes this drop-in directory
        self.mkdir("/run/systemd/system")  # what ansible's service_facts looks for to trust systemctl
        self._install_shims()
        for i, f in enumerate(h.files):  # declared files last: a scenario may replace any of the above
            try:
                self.write(f.path, f.content, owner=f.owner, group=f.group, mode=f.mode)
            except ValueError as exc:
                raise ValueError(f"host {h.name}: files[{i}] ({f.path}): {exc}") from None
        for key, value in h.sysctl.items():
            (self.dir / "sysctl" / key).write_text(value + "\n")
        (self.dir / "host.json").write_text(json.dumps({"name": h.name, "sysctl": sorted(h.sysctl)}))
        return self

    def _install_shims(self) -> None:
        state = {"name": self.host.name,
                 "packages": [p.model_dump() for p in self.host.packages],
                 "services": [s.model_dump() for s in self.host.services]}
        self.write(f"{STATE_DIR}/host.json", json.dumps(state, indent=1))
        self.write(f"{STATE_DIR}/common.py", (SHIMS / "common.py").read_text())
        shebang = f"#!{HOST_PYTHON} -I\n"  # -I: a PYTHONPATH in a task's environment must not change the shim
        self.write("/usr/bin/rpm", shebang + (SHIMS / "rpm_cli.py").read_text(), mode=0o755)
        self.write("/usr/bin/systemctl", shebang + (SHIMS / "systemctl.py").read_text(), mode=0o755)
        self.write("/usr/bin/sudo", shebang + (SHIMS / "sudo.py").read_text(), mode=0o755)
        # dnf's presence is how ansible's setup decides ansible_pkg_mgr on RHEL 9; installing is refused.
        self.write("/usr/bin/dnf", "#!/bin/sh\necho 'dnf: this simulated host cannot install or remove packages' >&2\n"
                   "exit 1\n", mode=0o755)
        self.write(f"{_site_packages()}/rpm/__init__.py", (SHIMS / "rpm_bindings.py").read_text())

    # -- primitives: each keeps the lower layer's directories as they are --------------------------------
    def _target(self, path: str) -> Path:
        # Resolve symlinked directories of the machine (/sbin -> usr/sbin): a real directory at /sbin in the
        # upper layer would hide the machine's symlink and everything behind it.
        parent = os.path.realpath(os.path.dirname(path))
        return self.upper / parent.lstrip("/") / os.path.basename(path)

    def _parents(self, target: Path) -> None:
        rel = target.parent.relative_to(self.upper)
        current, lower = self.upper, Path("/")
        for part in rel.parts:
            current, lower = current / part, lower / part
            if current.is_dir():
                continue
            current.mkdir()
            try:  # an upper directory's owner and mode replace the lower one's: copy them
                st = lower.stat()
                os.chown(current, st.st_uid, st.st_gid)
                current.chmod(stat.S_IMODE(st.st_mode))
            except FileNotFoundError:
                current.chmod(0o755)

    def write(self, path: str, content: str, *, owner: str = "root", group: str = "root", mode: int = 0o644) -> None:
        target = self._target(path)
        self._parents(target)
        if target.is_symlink() or target.exists():
            target.unlink()
        target.write_text(content, encoding="utf-8")
        os.chown(target, self._id(self._uids, owner), self._id(self._gids, group))
        target.chmod(mode)

    def symlink(self, path: str, to: str) -> None:
        target = self._target(path)
        self._parents(target)
        if target.is_symlink() or target.exists():
            target.unlink()
        target.symlink_to(to)

    def mkdir(self, path: str) -> None:
        target = self._target(path + "/x").parent
        self._parents(target / "x")

    def whiteout(self, path: str) -> None:
        """Hide ``path`` of the machine: overlayfs shows no file where the upper layer has a 0/0 device."""
        if not os.path.lexists(path):
            return
        target = self._target(path)
        self._parents(target)
        os.mknod(target, stat.S_IFCHR | 0o000, os.makedev(0, 0))

    @staticmethod
    def _id(table: dict[str, int], name: str) -> int:
        if name.isdigit():
            return int(name)
        if name not in table:
            raise ValueError(f"{name!r} is not a user or group of the host (declare it under users)")
        return table[name]


__all__ = ["HOST_PYTHON", "HostTree", "os_release"]
