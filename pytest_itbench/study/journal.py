"""The in-flight journal: what a running trial has so far, on disk, so that a process killed outright loses none of it.

A trial's record reaches the results file when its last report does (report/jsonl.py). A process killed
outright (SIGKILL, the OOM killer, a segfault) sends no report and runs no ``finally``, so whatever the
trial had (the agent's steps, the tokens it paid for) would die with it. So while a trial runs, its
process keeps one file, ``<results>.in-flight/<key>.json``: the trial's result as it would stand if the
process died now (``Trial.so_far``: an error, with the trajectory, tokens and cost up to then), written
when each phase starts and, during the agent's turn, each second the trajectory has changed. It is
replaced whole (written aside, then renamed), so a reader finds the last complete version, never half of
one. It is not fsynced: it must outlive its process, which a rename in the page cache does; a machine
that loses power loses the journal of the trial it was running.

The journal is discarded once the trial's own record is in the results file. One that is left was left
by a process that died, and becomes that trial's record, an error:

- under xdist, at once: the controller, told that a worker crashed while running the trial
  (``pytest_handlecrashitem``), records it from the journal;
- otherwise (the whole session was killed), when the next session on this machine writes to the same
  results file: it records every journal whose process is gone, at its start.

Whether a process is gone is told by its pid and its start time within this boot of this machine;
a journal from another machine (another host name or boot) is left alone, since its process may be
running. An ``exec:`` agent left running by its dead worker is ended when its trial is recorded.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from pytest_itbench.agents import process_group
from pytest_itbench.report.jsonl import ResultsFile
from pytest_itbench.results import STEPS, TOKENS, TrialResult

SCHEMA = "pytest-itbench/in-flight/1"
REFRESH = 1.0  # seconds between looks at the agent's trajectory during its turn
GRACE = 2.0  # seconds an orphaned agent's group gets between SIGTERM and SIGKILL


def directory(results: Path) -> Path:
    """Where the journals of the trials writing to ``results`` are kept: beside it."""
    return results.with_name(results.name + ".in-flight")


@dataclass(frozen=True)
class Process:
    """A process as this machine knows it: a pid means something only with its start time, in one boot."""

    host: str
    boot: str
    pid: int
    started: int | None

    @classmethod
    def of(cls, pid: int) -> "Process":
        return cls(socket.gethostname(), process_group.boot_id(), pid, process_group.start_ticks(pid))

    def here(self) -> bool:
        """On this machine, in this boot: only then can its being gone be told."""
        return self.host == socket.gethostname() and self.boot == process_group.boot_id()

    def gone(self) -> bool:
        """True when it surely ended: on this machine and boot, its pid is not running or is a later process."""
        if not self.here():
            return False
        if self.started is None:  # no procfs: the pid alone
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return True
            except PermissionError:
                return False
            return False
        return process_group.start_ticks(self.pid) != self.started

    def to_dict(self) -> dict:
        return {"host": self.host, "boot": self.boot, "pid": self.pid, "started": self.started}


@dataclass
class Entry:
    """One journal read back."""

    path: Path
    session: str
    nodeid: str
    process: Process
    agent_group: Process | None  # an exec agent's process group, while it ran
    written_at: float
    result: TrialResult


class Journal:
    """The journal of one trial (a test of one session) writing to the results file ``results``."""

    def __init__(self, results: Path, session: str, nodeid: str):
        self.path = path_of(results, session, nodeid)
        self.session = session
        self.nodeid = nodeid
        self.process = Process.of(os.getpid())
        self._lock = threading.Lock()  # the trial's thread and the refresher's write the same file

    def write(self, result: TrialResult, agent_group: int | None = None) -> None:
        group = Process.of(agent_group) if agent_group else None
        record = {"schema": SCHEMA, "session": self.session, "nodeid": self.nodeid, "process": self.process.to_dict(),
                  "agent_group": group.to_dict() if group else None, "written_at": time.time(),
                  "result": result.to_dict()}
        data = orjson.dumps(record)
        aside = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}")
        with self._lock:
            for _ in range(3):  # another trial's discard may remove the emptied folder in between
                self.path.parent.mkdir(parents=True, exist_ok=True)
                try:
                    aside.write_bytes(data)
                    break
                except FileNotFoundError:
                    continue
            os.replace(aside, self.path)

    def discard(self) -> None:
        with self._lock:
            remove(self.path)


def remove(path: Path) -> None:
    """A journal removed, and its folder too once it holds no other: a finished study leaves nothing beside."""
    path.unlink(missing_ok=True)
    try:
        path.parent.rmdir()
    except OSError:  # others still in flight, or gone already
        pass


def path_of(results: Path, session: str, nodeid: str) -> Path:
    """The journal of the test ``nodeid`` of ``session``, writing to ``results``."""
    name = hashlib.sha256(f"{session}\0{nodeid}".encode()).hexdigest()[:24]
    return directory(results) / f"{name}.json"


def read(path: Path) -> Entry:
    """A journal file read back; ValueError names the file and what is wrong with it."""
    try:
        data = orjson.loads(path.read_bytes())
        if data.get("schema") != SCHEMA:
            raise ValueError(f"not an in-flight journal (schema {data.get('schema')!r}, expected {SCHEMA!r})")
        group = data.get("agent_group")
        return Entry(path=path, session=data["session"], nodeid=data["nodeid"], process=Process(**data["process"]),
                     agent_group=Process(**group) if group else None, written_at=float(data["written_at"]),
                     result=TrialResult.from_dict(data["result"]))
    except (orjson.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None


def settle(entry: Entry, results: ResultsFile) -> TrialResult:
    """Record a dead process's trial from its journal (an error keeping what it had), end the exec agent it
    left running, and discard the journal."""
    group = entry.agent_group
    if group is not None and group.here():
        # Its members started with or after its leader; anything older holding the number is not the agent's.
        members = [pid for pid in process_group.members(group.pid)
                   if group.started is None or (process_group.start_ticks(pid) or 0) >= group.started]
        if members:
            process_group.end(group.pid, GRACE)
    result = entry.result
    result.finished_at = entry.written_at  # its last sign of life
    results.append(result, nodeid=entry.nodeid, session=entry.session)  # the session that ran it
    remove(entry.path)
    return result


@dataclass
class Recovery:
    """What a look at the journals left behind found."""

    recorded: list[Entry]
    elsewhere: list[Entry]  # of processes on another machine (or boot): perhaps running, left alone
    unreadable: list[str]  # problems, naming each file


def recover(results: ResultsFile) -> Recovery:
    """Record the trial of every journal beside ``results`` whose process is gone; leave the others."""
    found = Recovery([], [], [])
    folder = directory(results.path)
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        try:
            entry = read(path)
        except ValueError as exc:
            found.unreadable.append(str(exc))
            continue
        except FileNotFoundError:  # its trial ended and discarded it while we looked
            continue
        if entry.process.gone():
            settle(entry, results)
            found.recorded.append(entry)
        elif not entry.process.here():
            found.elsewhere.append(entry)
    return found


def describe(found: Recovery, results: str) -> list[str]:
    """The lines a session prints about the journals it found left behind at its start."""
    lines = []
    if found.recorded:
        trials = "; ".join(f"{e.nodeid} (pid {e.process.pid}; kept {e.result.figures.get(STEPS) or 0:g} step(s), "
                           f"{e.result.figures.get(TOKENS) or 0:g} token(s))" for e in found.recorded)
        lines.append(f"itbench: {_count(len(found.recorded), 'trial')} left in flight by a process that died "
                     f"recorded as errors in {results} (resume runs them again): {trials}")
    if found.elsewhere:
        hosts = ", ".join(sorted({e.process.host for e in found.elsewhere}))
        lines.append(f"itbench: {_count(len(found.elsewhere), 'in-flight journal')} in {directory(Path(results))} "
                     f"of processes on another machine or boot ({hosts}) left alone: they may still be running")
    lines += [f"itbench: an in-flight journal was left alone, unreadable: {problem}" for problem in found.unreadable]
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


class Keeper:
    """A trial's ``Progress`` (run.py) that keeps its journal: written as each phase starts and, during the
    agent's turn, rewritten by a thread each ``REFRESH`` seconds in which the record changed (a step, tokens,
    an MCP call). Set ``trial`` before the trial starts; it must have ``so_far()`` and ``agent``."""

    AGENT = "agent"

    def __init__(self, inner, journal: Journal):
        self.inner = inner
        self.journal = journal
        self.trial = None
        self.failure = ""  # why the journal could not be written, if it could not
        self._last = b""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def started(self, phase: str, note: str = "") -> None:
        self.inner.started(phase, note)
        self._write()
        if phase == self.AGENT:
            self._stop.clear()
            self._thread = threading.Thread(target=self._refresh, name="itbench-journal", daemon=True)
            self._thread.start()

    def finished(self, phase: str, seconds: float, ok: bool = True) -> None:
        if phase == self.AGENT and self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        self.inner.finished(phase, seconds, ok)

    def _refresh(self) -> None:
        while not self._stop.wait(REFRESH) and not self.failure:
            self._write(only_changed=True)

    def _write(self, only_changed: bool = False) -> None:
        if self.trial is None or self.failure:
            return
        result = self.trial.so_far()
        content = _content(result)
        if only_changed and content == self._last:
            return
        try:
            self.journal.write(result, getattr(self.trial.agent, "process_group", None))
        except OSError as exc:  # a full disk: the trial goes on; only a killed worker would lose it
            self.failure = f"{type(exc).__name__}: {exc}"
            return
        self._last = content


def _content(result: TrialResult) -> bytes:
    """The record without the moment it was taken, which changes at every look."""
    data = result.to_dict()
    data.pop("finished_at", None)
    return orjson.dumps(data)
