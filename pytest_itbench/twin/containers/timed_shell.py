"""A container's shell command run over time: what ``sh -c 'echo start; sleep 30; exit 3'`` does when.

The exec emulation (:mod:`exec_commands`) runs a script at one instant. A
container's main process is a script that lives: it prints, sleeps, touches
files and finally exits, or hands over to a long-running program (``exec
nginx``, ``python app.py``, ``tail -f /dev/null``). :class:`TimedShell` runs
the same parsed script with a clock of its own: ``sleep`` advances it, every
write is stamped with it, file writes are recorded as changes over time, and
a command that runs until stopped ends the script there.

A command that looks at the world outside the container (``nc -z kafka 9092``,
``nslookup db``) suspends the run first: the generator (:meth:`steps`) yields
the script's clock, and the caller resumes it once the cluster's clock has
reached that moment, so the answer comes from the cluster as it is then. That
is how ``until nc -z kafka 9092; do sleep 2; done`` notices kafka at its next
attempt. A loop that polls without pausing is paced at one attempt a second
(:data:`MIN_POLL_SECONDS`); a loop that looks at nothing and repeats itself is
recognised as endless (``forever``) instead of being run on.

``while true; do ...; done`` is the usual way to keep a container busy;
:func:`split_forever_loop` finds it so the caller can run the loop's body once
and repeat what it does.
"""

from __future__ import annotations

import math
import posixpath
import re
from dataclasses import dataclass
from typing import Callable

from . import shell
from .exec_commands import ShellSession
from .fs import File
from .net_tools import NET_TOOLS
from .programs import BUSYBOX, Invocation

FOREVER = math.inf
MIN_POLL_SECONDS = 1.0  # the twin does not follow thousands of connection attempts a second


@dataclass(frozen=True)
class Written:
    at: float  # seconds since the script started
    fd: int
    data: bytes


@dataclass(frozen=True)
class FileChange:
    at: float
    path: str
    content: bytes | None  # None: removed


@dataclass
class Handover:
    """The script ended by running a long-lived program in the foreground (``argv``) at ``at``."""

    argv: list[str]
    at: float


# What a command does to the script's timeline, as the caller's image knowledge classifies it.
SLEEPS, RUNS_FOREVER, RUNS_BRIEFLY, BUILTIN = "sleeps", "forever", "briefly", "builtin"
Classifier = Callable[[list[str]], str]


class _Stamped(list):
    """An output list that remembers the script clock of every write."""

    def __init__(self, clock: Callable[[], float]):
        super().__init__()
        self.clock = clock
        self.stamped: list[Written] = []

    def append(self, item) -> None:
        super().append(item)
        self.stamped.append(Written(self.clock(), item[0], item[1]))

    def extend(self, items) -> None:
        for item in items:
            self.append(item)


class TimedShell(ShellSession):
    """Runs a script as a container's main process; see the module docstring."""

    def __init__(self, inv: Invocation, classify: Classifier):
        self.clock = 0.0
        stamped = _Stamped(lambda: self.clock)
        inv.output = stamped
        super().__init__(inv)
        self.stamped = stamped
        self.classify = classify
        self.files: list[FileChange] = []
        self.handover: Handover | None = None

    @property
    def written(self) -> list[Written]:
        return self.stamped.stamped

    def _clock(self) -> float:
        return self.clock

    def _world_may_change(self) -> bool:
        return True

    def _spent(self, seconds: float) -> None:
        self.clock += seconds

    def _turn_done(self, seconds: float, observed: bool):
        if observed and seconds < MIN_POLL_SECONDS:
            self.clock += MIN_POLL_SECONDS - seconds
        return
        yield

    def _command(self, command: shell.Command, stdin: bytes, output: list[tuple[int, bytes]]):
        argv = [f for word in command.words for f in self._expand(word)]
        if argv and argv[0] == "exec":
            argv = argv[1:]
        if not argv:
            return self._simple_command(command, stdin, output)
        name = posixpath.basename(argv[0])
        if name in NET_TOOLS and self.inv.sandbox.flavor == BUSYBOX:
            yield self.clock  # resumed once the cluster's clock is here: the network answers as of then
            return self._recorded(command, stdin, output)
        kind = self.classify(argv)
        if kind == SLEEPS:
            seconds = sleep_seconds(argv[1:])
            if seconds is None:
                output.append((2, f"sleep: invalid time interval ‘{' '.join(argv[1:])}’\n".encode()))
                return 1
            self.clock += seconds
            if seconds == FOREVER:
                self.exit_requested = 0
            return 0
        if kind == RUNS_FOREVER:
            self.handover = Handover(argv, self.clock)
            self.exit_requested = 0
            return 0
        if name == "touch":
            for path in (a for a in argv[1:] if not a.startswith("-")):
                self._record(path, b"")
            return 0
        if name == "rm":
            for path in (a for a in argv[1:] if not a.startswith("-")):
                self._record(path, None)
            return 0
        if kind == RUNS_BRIEFLY:
            self.clock += 0.1
            return 0
        return self._recorded(command, stdin, output)

    def _recorded(self, command: shell.Command, stdin: bytes, output: list[tuple[int, bytes]]) -> int:
        """Run a command at once, recording the files it wrote (``cp``, redirections) at this moment."""
        fs = self.inv.sandbox.fs
        before = dict(fs.nodes)
        status = self._simple_command(command, stdin, output)
        for path, node in fs.nodes.items():
            if isinstance(node, File) and before.get(path) != node and path != "/dev/null":
                self.files.append(FileChange(self.clock, path, node.content))
        for path, node in before.items():
            if isinstance(node, File) and path not in fs.nodes:
                self.files.append(FileChange(self.clock, path, None))
        return status

    def _record(self, path: str, content: bytes | None) -> None:
        full = posixpath.normpath(posixpath.join(self.cwd, path))
        self.files.append(FileChange(self.clock, full, content))
        fs = self.inv.sandbox.fs
        if content is None:
            fs.nodes.pop(full, None)
        else:
            fs.add(full, File(content))


_DURATION = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def sleep_seconds(args: list[str]) -> float | None:
    """What ``sleep ARGS`` waits, summed as GNU sleep does; ``infinity`` is forever; None if invalid."""
    if not args:
        return None
    total = 0.0
    for arg in args:
        if arg in ("infinity", "inf"):
            return FOREVER
        match = _DURATION.match(arg)
        if match is None:
            return None
        total += float(match.group(1)) * _UNIT[match.group(2)]
    return total


_LOOP = re.compile(r"^(?P<before>.*?)(?:^|[;\n&|]\s*)while\s+(?:true|:|\[\s*1\s*\])\s*;?\s*do\b(?P<body>.*)"
                   r"\bdone\s*;?\s*$", re.S)


def split_forever_loop(script: str) -> tuple[str, str] | None:
    """``(what runs before, the loop's body)`` when the script ends in ``while true; do ...; done``."""
    match = _LOOP.match(script.strip())
    if match is None:
        return None
    body = match.group("body").strip().rstrip(";")
    return match.group("before").strip().rstrip(";&"), body
