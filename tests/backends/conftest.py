"""Fixtures of the backend tests: an in-process twin standing in for a cluster that outlives trials, and fake
executables (docker, kind, helm) on PATH for the preflight and command tests on a machine without Docker."""

from __future__ import annotations

import shutil
import stat
import subprocess
import textwrap
from pathlib import Path

import pytest

from pytest_itbench.twin import Twin


@pytest.fixture
def live_twin(tmp_path):
    """A twin with every controller, its clock following wall time (as a real cluster's would), and its admin
    kubeconfig at ``live_twin.kubeconfig_path``."""
    with Twin(seed=11, nodes=2) as twin:
        twin.clock.follow_wall_time()
        twin.kubeconfig_path = twin.write_kubeconfig(tmp_path / "admin.kubeconfig")
        yield twin


@pytest.fixture
def fake_bin(tmp_path, monkeypatch):
    """A directory first on PATH (with only /usr/bin and /bin after it) to put fake executables in:
    ``fake_bin.add("docker", "echo ...")``."""
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", f"{directory}:/usr/bin:/bin")

    class Bin:
        path = directory

        def add(self, name: str, body: str) -> Path:
            script = directory / name
            script.write_text("#!/bin/sh\n" + textwrap.dedent(body))
            script.chmod(script.stat().st_mode | stat.S_IXUSR)
            return script

    return Bin()


def docker_available() -> bool:
    docker = shutil.which("docker")
    if docker is None:
        return False
    try:
        return subprocess.run([docker, "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
