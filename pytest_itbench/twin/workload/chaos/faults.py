"""What the Chaos Mesh experiments injected right now do to traffic, as the traffic engine asks it.

The experiment controllers (:mod:`.experiments`) keep, for each injected record, a fault on a pod
or a container; this module is the read side: per connection between two pods, per HTTP request
arriving at a pod, per container. It knows nothing of experiments' lifecycles, only what is
injected.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

PodKey = tuple[str, str]  # (namespace, name)
ContainerKey = tuple[str, str, str]  # (namespace, pod, container)


@dataclass(frozen=True)
class NetFault:
    """tc netem on the path between two pods (one direction of one experiment)."""

    delay: float = 0.0  # seconds per packet
    jitter: float = 0.0
    loss: float = 0.0  # share of packets dropped
    partition: bool = False  # every packet dropped

    def plus(self, other: "NetFault") -> "NetFault":
        return NetFault(self.delay + other.delay, self.jitter + other.jitter,
                        1 - (1 - self.loss) * (1 - other.loss), self.partition or other.partition)


NO_NET = NetFault()


@dataclass(frozen=True)
class HttpFault:
    """HTTPChaos's proxy in front of a pod's port, for the requests it matches."""

    target: str  # "Request" or "Response"
    port: int
    method: str | None
    path: str | None
    code: int | None  # for Response: only responses with this status
    abort: bool = False
    delay: float = 0.0
    replace_code: int | None = None
    tamper_body: bool = False  # body patched or replaced

    def matches(self, port: int, method: str | None, path: str | None) -> bool:
        if self.port and port != self.port:
            return False
        if self.method and method and self.method.upper() != method.upper():
            return False
        if self.path and path and not fnmatch.fnmatchcase(path, self.path):
            return False
        return True


@dataclass(frozen=True)
class JvmFault:
    """A Byteman rule (or an agent action) in a JVM."""

    action: str  # latency, exception, return, stress, gc
    methods: frozenset[str] = frozenset()  # "Class.method"; empty: the whole JVM
    latency: float = 0.0
    exception: str = ""  # the exception's text
    cpu: float = 0.0
    heap: bool = False


@dataclass(frozen=True)
class IoFault:
    """A fuse layer over a volume: delayed or failing file operations."""

    volume: str
    delay: float = 0.0
    errno: int = 0
    percent: float = 100.0
    path: str | None = None


@dataclass(frozen=True)
class Stress:
    cpu: float = 0.0  # cores the stressors burn
    memory: int = 0  # bytes the stressors hold


@dataclass
class Injected:
    """Everything injected now; the controllers rebuild it and bump ``version`` on each change."""

    # (source, destination): packets from source to destination; None on either side: any pod
    network: dict[tuple[PodKey | None, PodKey | None], NetFault] = field(default_factory=dict)
    http: dict[PodKey, list[HttpFault]] = field(default_factory=dict)
    # (container, container id): what runs inside a container dies with that run of it
    stress: dict[tuple[ContainerKey, str], Stress] = field(default_factory=dict)
    jvm: dict[tuple[ContainerKey, str], list[JvmFault]] = field(default_factory=dict)
    io: dict[tuple[ContainerKey, str], list[IoFault]] = field(default_factory=dict)
    version: int = 0

    def path(self, source: PodKey, destination: PodKey) -> NetFault:
        """The faults on packets from ``source`` to ``destination``."""
        fault = NO_NET
        for key in ((source, destination), (source, None), (None, destination)):
            found = self.network.get(key)
            if found is not None:
                fault = fault.plus(found)
        return fault

    def connection(self, caller: PodKey, callee: PodKey) -> NetFault:
        """A request and its response: both directions of the path add up."""
        there, back = self.path(caller, callee), self.path(callee, caller)
        return NetFault(there.delay + back.delay, there.jitter + back.jitter,
                        1 - (1 - there.loss) * (1 - back.loss), there.partition or back.partition)

    def http_faults(self, pod: PodKey, port: int, method: str | None, path: str | None) -> list[HttpFault]:
        return [f for f in self.http.get(pod, ()) if f.matches(port, method, path)]

    def stress_on(self, container: ContainerKey, container_id: str) -> Stress:
        return self.stress.get((container, container_id), Stress())

    def jvm_in(self, container: ContainerKey, container_id: str) -> list[JvmFault]:
        return self.jvm.get((container, container_id), [])

    def io_in(self, container: ContainerKey, container_id: str) -> list[IoFault]:
        return self.io.get((container, container_id), [])

    def replace(self, other: "Injected") -> None:
        """Take ``other``'s faults (the controllers rebuild them whole) and mark the change."""
        self.network, self.http, self.stress, self.jvm, self.io = (other.network, other.http, other.stress,
                                                                   other.jvm, other.io)
        self.version += 1
