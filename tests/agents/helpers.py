"""Process checks shared by the agent tests."""

from __future__ import annotations

import os

import pytest


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie runs nothing and counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat_line = fh.read()
    except FileNotFoundError:
        return False
    return stat_line[stat_line.rfind(b")") + 2:].split()[0] != b"Z"


requires_procfs = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="checks processes through /proc")
