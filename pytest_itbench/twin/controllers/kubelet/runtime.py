"""The containers of one pod as the node's runtime and the kubelet hold them.

An :class:`Instance` is one container as containerd keeps it (created,
running, exited, with its exit code and reason). A :class:`Slot` is the
kubelet's view of one container of the pod spec: its current and previous
instance, the reason its last start failed (the kubelet's reason cache, which
becomes the ``waiting`` state), an image pull in flight and its probes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...containers.behaviour import Process
from ...images import Image
from .probes import LIVENESS, READINESS, STARTUP, ProbeState

INIT, SIDECAR, REGULAR = "init", "sidecar", "regular"


@dataclass
class Instance:
    id: str  # containerd's 64 hex digits
    attempt: int  # the restart count it carries
    image: Image | None
    process: Process | None
    created: float
    started: float | None = None
    finished: float | None = None
    exit_code: int | None = None
    reason: str | None = None
    message: str | None = None
    logged_until: float = -1.0  # seconds since start up to which its output is in the log
    stop_at: float | None = None  # SIGTERM sent: it is gone by then
    stop_code: int = 0
    usage: tuple[float, int] | None = None  # (cores, bytes) last reported to metrics
    usage_due: float | None = None  # when its usage changes next (start-up ramp, growth)

    @property
    def running(self) -> bool:
        return self.started is not None and self.finished is None

    @property
    def exited(self) -> bool:
        return self.finished is not None

    @property
    def succeeded(self) -> bool:
        return self.exited and self.exit_code == 0

    def since_start(self, now: float) -> float:
        return now - (self.started or now)


@dataclass
class PendingPull:
    requested: float
    done: float
    duration: float
    image: Image | None
    error: str | None


@dataclass
class Slot:
    name: str
    kind: str  # INIT, SIDECAR or REGULAR
    spec: dict
    current: Instance | None = None
    previous: Instance | None = None
    waiting: tuple[str, str] | None = None  # (reason, message) of the last failed start
    pull: PendingPull | None = None
    probes: dict[str, ProbeState] = field(default_factory=dict)
    kill_requested: tuple[str, int | None] | None = None  # the Killing message and the probe's grace period
    hash: str = ""  # what the current instance was created from

    @property
    def field_path(self) -> str:
        section = "containers" if self.kind == REGULAR else "initContainers"
        return f"spec.{section}{{{self.name}}}"

    def begin_probes(self, started: float, ticking_since: float) -> None:
        self.probes = {}
        for kind, key in ((STARTUP, "startupProbe"), (READINESS, "readinessProbe"), (LIVENESS, "livenessProbe")):
            spec = self.spec.get(key)
            if spec and self.kind != INIT:
                self.probes[kind] = ProbeState.begin(kind, spec, started, ticking_since)

    @property
    def started_ok(self) -> bool:
        """Running, and past its startup probe if it has one."""
        if self.current is None or not self.current.running:
            return False
        startup = self.probes.get(STARTUP)
        return startup is None or startup.result

    @property
    def ready(self) -> bool:
        if self.kind == INIT:
            return self.current is not None and self.current.succeeded
        if not self.started_ok:
            return False
        readiness = self.probes.get(READINESS)
        return readiness is None or readiness.result


def spec_hash(container: dict) -> str:
    """What makes the kubelet replace a running container: for a pod, only the image may change."""
    return container.get("image", "")
