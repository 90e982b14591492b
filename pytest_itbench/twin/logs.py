"""Container logs: what each container has written, on the twin's clock.

The kubelet (and the workload simulation behind it) calls :meth:`LogStore.append`
as containers write and :meth:`LogStore.restart` when a container restarts;
the API server reads the current or previous instance to answer ``pods/log``.
A pod's logs are dropped when the pod leaves the store, so a pod re-created
under the same name starts empty, as on a node.

:func:`read` applies the kubelet's log options (tail, since, byte limit,
timestamps) to the lines of one instance, in the order the kubelet's
log reader does: tail first, then since, then the byte limit.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

from .clock import SimClock
from .store import Change, Store

STREAMS = ("stdout", "stderr")
# The kubelet rotates a container's log at 10 MiB (containerLogMaxSize); reads see the current file only.
MAX_BYTES_PER_INSTANCE = 10 * 1024 * 1024

Key = tuple[str, str, str]  # (namespace, pod, container)


@dataclass(frozen=True)
class LogLine:
    """One line a container wrote, without its newline."""

    time_ns: int  # twin-clock nanoseconds since the epoch
    stream: str  # stdout or stderr
    text: str

    def render(self, timestamps: bool) -> bytes:
        line = self.text + "\n"
        if timestamps:
            line = f"{rfc3339_nano_fixed(self.time_ns)} {line}"
        return line.encode()


Follower = Callable[["LogLine | None"], None]


@dataclass
class _Instance:
    """One run of a container: its lines and whoever follows them."""

    lines: deque[LogLine] = field(default_factory=deque)
    size: int = 0
    followers: list[Follower] = field(default_factory=list)

    def add(self, line: LogLine) -> None:
        self.lines.append(line)
        self.size += len(line.text) + 1
        while self.size > MAX_BYTES_PER_INSTANCE and len(self.lines) > 1:
            self.size -= len(self.lines.popleft().text) + 1
        for follower in list(self.followers):
            follower(line)

    def finish(self) -> None:
        for follower in self.followers:
            follower(None)
        self.followers.clear()


@dataclass
class _Container:
    current: _Instance = field(default_factory=_Instance)
    previous: _Instance | None = None


class Subscription:
    """A follower of one container instance; ``cancel()`` stops the callbacks."""

    def __init__(self, logs: "LogStore", instance: _Instance, follower: Follower):
        self._logs = logs
        self._instance = instance
        self._follower = follower

    def cancel(self) -> None:
        with self._logs._lock:
            if self._follower in self._instance.followers:
                self._instance.followers.remove(self._follower)


class LogStore:
    """Per namespace, pod and container: the current instance's lines and the previous instance's."""

    def __init__(self, clock: SimClock, store: Store):
        self.clock = clock
        self._lock = threading.Lock()
        self._containers: dict[Key, _Container] = {}
        store.on_write(self._forget_deleted_pods)

    # ---- writing (the kubelet's side) ------------------------------------------------------------
    def append(self, namespace: str, pod: str, container: str, text: str, *, stream: str = "stdout",
               at: float | None = None) -> None:
        """Record what a container wrote; each line of ``text`` becomes one log entry."""
        if stream not in STREAMS:
            raise ValueError(f"stream must be one of {STREAMS}, got {stream!r}")
        time_ns = round((self.clock.now() if at is None else at) * 1e6) * 1000
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        with self._lock:
            instance = self._containers.setdefault((namespace, pod, container), _Container()).current
            for line in lines:
                instance.add(LogLine(time_ns, stream, line))

    def restart(self, namespace: str, pod: str, container: str) -> None:
        """The container restarted: its current log becomes the previous one and a new, empty one begins."""
        with self._lock:
            entry = self._containers.setdefault((namespace, pod, container), _Container())
            entry.current.finish()
            entry.previous = entry.current
            entry.current = _Instance()

    def drop_pod(self, namespace: str, pod: str) -> None:
        """Forget every log of a pod (its containers are gone from the node)."""
        with self._lock:
            for key in [k for k in self._containers if k[:2] == (namespace, pod)]:
                self._containers.pop(key).current.finish()

    def _forget_deleted_pods(self, change: Change) -> None:
        if change.bucket == "pods" and change.type == "DELETED":
            meta = change.obj["metadata"]
            self.drop_pod(meta.get("namespace", ""), meta["name"])

    # ---- reading (the API server's side) -----------------------------------------------------------
    def lines(self, namespace: str, pod: str, container: str, *, previous: bool = False) -> list[LogLine]:
        """The lines of the current (or previous) instance; empty if the container has written nothing."""
        with self._lock:
            entry = self._containers.get((namespace, pod, container))
            if entry is None:
                return []
            instance = entry.previous if previous else entry.current
            return list(instance.lines) if instance is not None else []

    def follow(self, namespace: str, pod: str, container: str, follower: Follower) -> tuple[list[LogLine],
                                                                                          Subscription]:
        """The current instance's lines so far, and a subscription that passes on every later line.

        ``follower(None)`` means the instance ended: the container restarted or the pod was removed.
        Followers are called with the store's lock held and must only hand the line on.
        """
        with self._lock:
            instance = self._containers.setdefault((namespace, pod, container), _Container()).current
            instance.followers.append(follower)
            return list(instance.lines), Subscription(self, instance, follower)


@dataclass(frozen=True)
class LogQuery:
    """The kubelet's reading of PodLogOptions (no limit is ``None``)."""

    tail_lines: int | None = None
    since_ns: int | None = None  # lines written before this instant are skipped
    limit_bytes: int | None = None
    timestamps: bool = False


class LogReader:
    """Renders lines for one request, keeping the byte budget across a followed stream."""

    def __init__(self, query: LogQuery):
        self.query = query
        self.remaining = query.limit_bytes

    @property
    def exhausted(self) -> bool:
        return self.remaining is not None and self.remaining <= 0

    def initial(self, lines: list[LogLine]) -> bytes:
        """What the first read returns: the last ``tail_lines`` lines, then the since and byte filters."""
        tail = self.query.tail_lines
        if tail is not None:
            lines = lines[len(lines) - tail:] if tail else []
        return b"".join(self.more(line) for line in lines)

    def more(self, line: LogLine) -> bytes:
        """One further line, filtered and cut to the remaining byte budget."""
        if self.exhausted:
            return b""
        if self.query.since_ns is not None and line.time_ns < self.query.since_ns:
            return b""
        data = line.render(self.query.timestamps)
        if self.remaining is not None:
            data = data[:self.remaining]
            self.remaining -= len(data)
        return data


def rfc3339_nano_fixed(time_ns: int) -> str:
    """The kubelet's log timestamp: RFC 3339 with exactly nine fractional digits, in UTC."""
    seconds, nanos = divmod(time_ns, 10 ** 9)
    stamp = datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{nanos:09d}Z"
