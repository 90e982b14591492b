"""Versions of what produced a result, recorded with every trial so results stay comparable.

The backend's version (the twin's Kubernetes version, a kind node image) is known only to the run,
which puts it in ``TrialResult.versions["backend"]``; these are the ones any process can read.
"""

from __future__ import annotations

import platform
from functools import cache
from importlib.metadata import PackageNotFoundError, version


def runtime_versions() -> dict[str, str]:
    return dict(_read())  # a copy: callers add the backend's version to it


@cache
def _read() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for key, distribution in (("pytest-itbench", "pytest-itbench"), ("pytest", "pytest"),
                              ("kubernetes-client", "kubernetes")):
        try:
            found[key] = version(distribution)
        except PackageNotFoundError:  # running from a source tree that was never installed
            found[key] = "unknown"
    return found
