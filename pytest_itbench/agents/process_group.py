"""Ending a process group and proving nothing of it survives.

An ``exec:`` agent is the leader of its own process group, so everything it starts (kubectl, curl, a
Python interpreter, a backgrounded ``sleep``) can be signalled at once. A process that calls
``setsid`` leaves the group and escapes this; containing that would need cgroups.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

_POLL = 0.05


def members(pgid: int) -> list[int]:
    """Live processes of the group. Zombies are not counted: they run nothing, and once reparented
    they wait for an init process to reap them, which in a container may never happen."""
    try:
        entries = os.listdir("/proc")
    except FileNotFoundError:  # no procfs (macOS): ask the kernel whether the group has anyone left
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    found = []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:  # it ended while we looked
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ")".
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] != b"Z":
            found.append(int(entry))
    return sorted(found)


def wait_empty(pgid: int, timeout: float) -> list[int]:
    """Wait up to ``timeout`` seconds for the group to empty; returns who is left."""
    end = time.monotonic() + timeout
    while True:
        left = members(pgid)
        if not left or time.monotonic() >= end:
            return left
        time.sleep(_POLL)


def end(pgid: int, grace: float) -> tuple[list[int], list[int]]:
    """SIGTERM the group, then SIGKILL whoever is left after ``grace`` seconds.

    Returns (the processes that were still running, the processes that survived even SIGKILL).
    Does nothing when the group is already empty.
    """
    running = members(pgid)
    if not running:
        return [], []
    _signal(pgid, signal.SIGTERM)
    if wait_empty(pgid, grace):
        _signal(pgid, signal.SIGKILL)
    # SIGKILL cannot be caught; only a process stuck in the kernel (uninterruptible I/O) outlives this.
    return running, wait_empty(pgid, 2.0)


def _signal(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:  # everyone ended in the meantime
        pass


def kill_leader(proc: subprocess.Popen, wait: float = 5.0) -> None:
    """SIGKILL the group ``proc`` leads (what it left running in the background too) and reap ``proc``."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        pass


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat``, field 22); None if it is gone or
    there is no procfs. With the boot's id this tells a process from a later one given the same pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    return int(fields[19]) if len(fields) > 19 else None


def boot_id() -> str:
    """This boot of this machine's kernel ("" without procfs): pids and start ticks mean something only within it."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            return fh.read().strip()
    except OSError:
        return ""
