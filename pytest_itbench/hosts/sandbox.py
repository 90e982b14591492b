"""Run one command inside a simulated host's private view of this machine. Standard library only.

Invoked by the ``itbench_host`` connection as the first process of fresh mount, PID, UTS and IPC
namespaces (``unshare ... python -I sandbox.py HOSTDIR --hide DIR -- /bin/sh -c CMD``), it:

1. mounts an overlay with this machine's root as the read-only lower layer and ``HOSTDIR/upper`` as the
   upper one, so the host's declared files shadow the machine's and *every write lands in the host's
   layer* (a write to /etc/passwd copies it up; the real file is never opened for writing);
2. gives it a fresh /proc (only this command's processes, so no /proc/PID/root leads to the real root),
   with /proc/sys read-only except the host's declared kernel parameters, bound from ``HOSTDIR/sysctl``;
   a /dev holding only null, zero, full, random, urandom and tty (no disks); /sys read-only;
3. hides the directory of all hosts (``--hide``), makes the overlay the root (pivot_root) and detaches the
   machine's root, sets the host name;
4. execs the command through ``setpriv`` with a capability bounding set that keeps what root needs to read
   and write files (dac_override, chown, fowner, ...) and drops mounting, module loading, raw I/O,
   network administration and ptrace, so the command cannot undo steps 1-3.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
MNT_DETACH = 0x2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}

# Capabilities the command keeps: root's file access, identity changes for su/sudo-like tools, signals.
KEEP_CAPS = ["chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid", "setuid",
             "net_bind_service", "audit_write"]
DEVICES = ["null", "zero", "full", "random", "urandom", "tty"]

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                       data.encode() if data else None), f"mount {target}")


def bind_readonly(path: str) -> None:
    mount(path, path, None, MS_BIND)
    mount(path, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _touch(path: str) -> None:
    with open(path, "a"):
        pass


def build_view(hostdir: str, hide: list[str]) -> dict:
    with open(os.path.join(hostdir, "host.json"), encoding="utf-8") as fh:
        info = json.load(fh)
    root = os.path.join(hostdir, "root")
    mount("none", "/", None, MS_REC | MS_PRIVATE)  # nothing done here propagates back to the machine
    mount("overlay", root, "overlay", 0,
          f"lowerdir=/,upperdir={hostdir}/upper,workdir={hostdir}/work")

    proc = root + "/proc"
    mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for path in ("sys", "sysrq-trigger", "irq", "bus", "fs", "kcore"):
        if os.path.exists(f"{proc}/{path}"):
            bind_readonly(f"{proc}/{path}")
    for key in info["sysctl"]:  # declared kernel parameters shadow the machine's, writable (sysctl -w)
        target = f"{proc}/sys/" + key.replace(".", "/")
        if os.path.isfile(target):
            mount(f"{hostdir}/sysctl/{key}", target, None, MS_BIND)

    dev = root + "/dev"
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=1m")
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            _touch(f"{dev}/{name}")
            mount(f"/dev/{name}", f"{dev}/{name}", None, MS_BIND)
    for name, to in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                     ("stderr", "/proc/self/fd/2")):
        os.symlink(to, f"{dev}/{name}")
    for name in ("pts", "shm"):
        os.mkdir(f"{dev}/{name}")
    mount("tmpfs", f"{dev}/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=16m")

    if os.path.isdir(root + "/sys"):
        mount("/sys", root + "/sys", None, MS_BIND)
        mount("/sys", root + "/sys", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for path in hide:  # the hosts' own layers (other hosts' shadow files, this host's upper) stay out of view
        if os.path.isdir(root + path):
            mount("tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=700,size=64k")

    os.chdir(root)
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise OSError(f"unsupported architecture {os.uname().machine}")
    _check(_libc.syscall(number, b".", b"."), "pivot_root")  # the old root now sits under the new one ...
    _check(_libc.umount2(b".", MNT_DETACH), "detach the machine's root")  # ... and is gone from this view
    os.chdir("/")
    socket.sethostname(info["name"])
    return info


def main(argv: list[str]) -> int:
    if "--" not in argv or len(argv) < 3:
        sys.stderr.write("usage: sandbox.py HOSTDIR [--hide DIR]... -- COMMAND...\n")
        return 2
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    hostdir, hide = options[0], []
    rest = options[1:]
    while rest:
        flag, value, *rest = rest
        if flag != "--hide":
            sys.stderr.write(f"sandbox.py: unknown option {flag}\n")
            return 2
        hide.append(value)
    try:
        build_view(os.path.abspath(hostdir), hide)
    except OSError as exc:
        sys.stderr.write(f"itbench simulated host: cannot set up the host's view: {exc}\n")
        return 125
    home = os.environ.get("HOME", "/root")
    try:
        os.chdir(home)
    except OSError:
        pass
    bounding = "-all," + ",".join("+" + c for c in KEEP_CAPS)
    os.execv("/usr/bin/setpriv", ["setpriv", f"--bounding-set={bounding}", "--inh-caps=-all", "--"] + command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
