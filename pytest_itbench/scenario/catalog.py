"""Where scenario files are: which YAML files are scenarios, and the catalog pytest-itbench ships.

A YAML file is a scenario when it says so at top level (``domain: sre|ciso|finops`` or ``apiVersion:
itbench.io/...``): other YAML files beside scenarios (a CISO scenario's reference solution, manifests)
are left alone. A file that claims to be a scenario and does not validate fails collection.
"""

from __future__ import annotations

import re
from pathlib import Path

_CLAIM = re.compile(r"^(domain:\s*['\"]?(sre|ciso|finops)\b|apiVersion:\s*['\"]?itbench\.io/)", re.MULTILINE)
SUFFIXES = (".yaml", ".yml")


def is_scenario_file(path: Path) -> bool:
    if path.suffix not in SUFFIXES:
        return False
    try:
        head = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return _CLAIM.search(head) is not None


def bundled() -> Path | None:
    """The shipped catalog: the checkout's ``scenarios/`` (readable node ids), else the installed package's copy."""
    package = Path(__file__).resolve().parents[1]
    checkout = package.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "scenarios").is_dir():
        return checkout / "scenarios"
    installed = package / "catalog"
    return installed if installed.is_dir() else None
