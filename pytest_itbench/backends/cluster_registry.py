"""A record, on this machine, of every cluster pytest-itbench created, so that none outlives its run.

A cluster is deleted by the trial or session that made it, and at interpreter exit (atexit) if that was
skipped. A process killed outright (SIGKILL, a crashed xdist worker, a lost machine) runs neither; its
record stays, naming its process, and the next kind or k3s session on this machine deletes the clusters
of processes that are gone (``sweep``). By hand: ``python -m pytest_itbench.backends.cluster_registry``
lists them and deletes the abandoned ones (docs/real-clusters.md, "Cleaning up").

One JSON file per cluster in ``$TMPDIR/pytest-itbench-clusters``; ``users`` lists the processes using it
(several xdist workers share a cluster with ``--itbench-fresh=session``), and the last to leave deletes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator

DIRECTORY = Path(tempfile.gettempdir()) / "pytest-itbench-clusters"


@dataclass
class Record:
    backend: str  # kind or k3s
    name: str
    delete: list[str]  # the command that deletes it
    host: str = field(default_factory=socket.gethostname)
    users: list[int] = field(default_factory=list)  # pids
    created_at: float = field(default_factory=time.time)
    kubeconfig: str = ""
    urls: dict[str, str] = field(default_factory=dict)  # its observability URLs, for workers that join it


class ClusterRegistry:
    def __init__(self, directory: Path = DIRECTORY):
        self.directory = Path(directory)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One process at a time reads and writes the records (and creates a shared cluster)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _path(self, name: str) -> Path:
        return self.directory / f"{name}.json"

    def get(self, name: str) -> Record | None:
        try:
            return Record(**json.loads(self._path(name).read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def put(self, record: Record) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(record.name)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(record)))
        tmp.replace(path)

    def add(self, record: Record) -> None:
        """Record a cluster about to be created by this process (before it exists: a crash mid-create counts)."""
        record.users = [os.getpid()]
        self.put(record)

    def join(self, name: str) -> Record | None:
        record = self.get(name)
        if record is not None and os.getpid() not in record.users:
            record.users.append(os.getpid())
            self.put(record)
        return record

    def leave(self, name: str) -> bool:
        """This process stops using the cluster; True when nobody alive uses it any more."""
        record = self.get(name)
        if record is None:
            return False
        record.users = [pid for pid in record.users if pid != os.getpid() and _alive(pid)]
        self.put(record)
        return not record.users

    def remove(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(name).unlink()

    def records(self) -> list[Record]:
        if not self.directory.is_dir():
            return []
        found = []
        for path in sorted(self.directory.glob("*.json")):
            record = self.get(path.stem)
            if record is not None:
                found.append(record)
        return found

    def abandoned(self) -> list[Record]:
        """Clusters of this machine whose every user process is gone."""
        host = socket.gethostname()
        return [r for r in self.records() if r.host == host and not any(_alive(p) for p in r.users)]

    def sweep(self, run: Callable[..., subprocess.CompletedProcess] = subprocess.run) -> list[str]:
        """Delete the abandoned clusters; return one problem per cluster that could not be deleted."""
        problems = []
        with self.locked():
            for record in self.abandoned():
                try:
                    done = run(record.delete, capture_output=True, text=True, timeout=300)
                except (OSError, subprocess.TimeoutExpired) as exc:
                    problems.append(f"{record.backend} cluster {record.name}: {' '.join(record.delete)}: {exc}")
                    continue
                if done.returncode == 0:
                    self.remove(record.name)
                else:
                    problems.append(f"{record.backend} cluster {record.name}: {' '.join(record.delete)} failed: "
                                    f"{(done.stderr or done.stdout).strip()[:300]}")
        return problems


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(argv: list[str] | None = None) -> int:
    """List the recorded clusters; delete those whose processes are gone."""
    registry = ClusterRegistry()
    for record in registry.records():
        users = ", ".join(str(p) for p in record.users) or "none"
        print(f"{record.backend} {record.name} (host {record.host}, processes {users}): {' '.join(record.delete)}")
    problems = registry.sweep()
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
