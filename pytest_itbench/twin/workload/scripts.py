"""Wrapper scripts around a service's program, read from the ConfigMap or Secret volume that holds them.

Operators (and faults) replace a container's command with a script from a mounted ConfigMap:
``sh -c /data/scripts/start.sh`` that does some work and then runs the server. What the container
then does depends on the script's text: whether it ends by running the service's own program, and
whether it also writes into the service's store in a loop (``head -c 1m /dev/urandom | valkey-cli
-x SET key`` every second after a first ``sleep 20``), which makes the store's memory grow at a
steady rate until the container's limit kills it.
"""

from __future__ import annotations

import base64
import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Iterable

from ..store import Store
from .units import parse_bytes

SHELLS = frozenset({"sh", "bash", "ash", "dash"})
_SLEEP = re.compile(r"\bsleep\s+(\d+(?:\.\d+)?)\b")
_HEAD = re.compile(r"\bhead\s+-c\s*(\d+)([kKmMgG]?)\b")


@dataclass(frozen=True)
class Fill:
    """Bytes written into the store per second, from ``after`` seconds past the start."""

    after: float
    rate: float


def script_text(store: Store, pod: dict, container: dict, argv: list[str]) -> str | None:
    """The text of the script file the command line runs, when a ConfigMap or Secret volume provides it."""
    path = _script_path(argv)
    if path is None:
        return None
    namespace = pod["metadata"].get("namespace", "")
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or ()}
    for mount in container.get("volumeMounts") or ():
        root = mount.get("mountPath", "").rstrip("/")
        if not path.startswith(root + "/"):
            continue
        relative = path[len(root) + 1:]
        volume = volumes.get(mount.get("name")) or {}
        source = volume.get("configMap") or volume.get("secret")
        if source is None:
            continue
        kind, name_key = ("configmaps", "name") if "configMap" in volume else ("secrets", "secretName")
        obj = store.get(kind, namespace, source.get(name_key) or "") or {}
        data = dict(obj.get("data") or {})
        if kind == "secrets":
            data = {k: base64.b64decode(v).decode(errors="replace") for k, v in data.items()}
        key = next((item.get("key") for item in source.get("items") or () if item.get("path") == relative),
                   relative if not source.get("items") else None)
        if key in data:
            return data[key]
    return None


def runs(script: str, programs: Iterable[str]) -> bool:
    """Whether the script runs one of ``programs`` as a command of its own (in the foreground or by exec)."""
    names = "|".join(re.escape(p) for p in programs)
    return bool(names) and re.search(rf"^\s*(?:exec\s+)?(?:\S*/)?(?:{names})\b", script, re.MULTILINE) is not None


def fill(script: str, writers: Iterable[str]) -> Fill | None:
    """The steady write into the store a looping script makes, if it pipes data into one of ``writers``."""
    names = "|".join(re.escape(w) for w in writers)
    if not names:
        return None
    writes = [line for line in script.splitlines() if _HEAD.search(line) and re.search(rf"\b(?:{names})\b", line)]
    loop = re.search(r"^\s*while\s", script, re.MULTILINE)
    if not writes or loop is None:
        return None
    size_match = _HEAD.search(writes[0])
    size = parse_bytes(size_match.group(1) + {"": "", "k": "Ki", "m": "Mi", "g": "Gi"}[size_match.group(2).lower()])
    before = [float(s) for s in _SLEEP.findall(script[:loop.start()])]
    inside = [float(s) for s in _SLEEP.findall(script[loop.start():])]
    period = sum(inside) if inside else 1.0
    return Fill(sum(before), size / period)


def _script_path(argv: list[str]) -> str | None:
    if not argv:
        return None
    if posixpath.basename(argv[0]) in SHELLS:
        args = argv[1:]
        if "-c" in args:
            index = args.index("-c")
            if index + 1 >= len(args):
                return None
            try:
                words = shlex.split(args[index + 1])
            except ValueError:
                return None
            return words[0] if words and words[0].startswith("/") else None
        return args[0] if args and args[0].startswith("/") else None
    return argv[0] if argv[0].startswith("/") else None
