"""Variables passed through to an exec agent (``--itbench-agent-env``), and keeping their values out of records.

An agent needs its model's API key; the harness passes the named variables of pytest's environment
through, and nothing else of it (exec_agent.py). Their values must never be written where others read:
every text the trial records (trajectory, evidence, submission, check details, logs in the workdir) has
each value replaced by ``[NAME redacted]``, as CI systems mask their secrets.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MIN_LENGTH = 4  # a shorter value would mask ordinary text ("1", "on") wherever it occurs
# What the harness sets for every exec agent: passing the parent's would hand it another trial's, or the harness'.
RESERVED = re.compile(r"KUBECONFIG|KUBECACHEDIR|ITBENCH_.*")


class SecretsError(ValueError):
    """A name that cannot be passed: says which and why."""


def parse_names(values: Iterable[str]) -> tuple[str, ...]:
    """Names given as ``A,B`` (repeatable), checked; raises SecretsError naming the bad one."""
    names: list[str] = []
    for value in values:
        for name in (part.strip() for part in value.split(",")):
            if not name:
                continue
            if not NAME.fullmatch(name):
                raise SecretsError(f"{name!r} is not an environment variable name (letters, digits and _, not "
                                   f"starting with a digit)")
            if RESERVED.fullmatch(name):
                raise SecretsError(f"{name} is set by the harness for each trial and cannot be passed through")
            if name not in names:
                names.append(name)
    return tuple(names)


class Secrets:
    """The values of ``names`` in ``environ``, and their redaction."""

    def __init__(self, names: Iterable[str] = (), environ: Mapping[str, str] | None = None, *, strict: bool = True):
        """``strict``: a name not set, or a value too short to mask, raises SecretsError; else it is skipped."""
        environ = os.environ if environ is None else environ
        self.names = tuple(names)
        missing = [n for n in self.names if n not in environ]
        if not strict:
            self.names = tuple(n for n in self.names if n in environ and len(environ[n]) >= MIN_LENGTH)
        elif missing:
            raise SecretsError(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set in pytest's "
                               f"environment")
        short = [n for n in self.names if 0 < len(environ[n]) < MIN_LENGTH]
        if short and strict:
            raise SecretsError(f"the value of {', '.join(short)} is shorter than {MIN_LENGTH} characters, too short "
                               f"to be kept out of the reports without masking ordinary text")
        # Longest first: a value that contains another is masked whole.
        self._values = sorted(((environ[n], n) for n in self.names if environ[n]), key=lambda p: -len(p[0]))

    def __bool__(self) -> bool:
        return bool(self._values)

    def text(self, text: str) -> str:
        for value, name in self._values:
            if value in text:
                text = text.replace(value, f"[{name} redacted]")
        return text

    def data(self, value: Any) -> Any:
        """``value`` (JSON-like data) with every string redacted, keys included."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.data(v) for v in value)
        return value

    def file(self, path: str | os.PathLike) -> None:
        """Redact a text file in place (a log, a trajectory); a missing file is left missing."""
        if not self:
            return
        path = Path(path)
        try:
            raw = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return
        text = raw.decode("utf-8", "surrogateescape")
        clean = self.text(text)
        if clean != text:
            path.write_bytes(clean.encode("utf-8", "surrogateescape"))
