"""The running copies of an application's services: one per container start the kubelet made.

When the kubelet starts a container that a behaviour sheet recognises, the sheet's behaviour
provider records an :class:`Instance`: which service it runs, the environment and command line
it started with (a program reads its configuration once, so a changed ConfigMap or Secret only
matters after a restart), the ports it listens on and the live :class:`ContainerLoad` its
process reports to the kubelet. Whether an instance still runs is read from the pod's status, as
any client of the API would: the container is running with the restart count it started with.
"""

from __future__ import annotations

from dataclasses import dataclass

from .scripts import Fill
from .sheet import Service, Sheet


@dataclass
class ContainerLoad:
    """What the engine last decided a container uses; the container's process reports it to the kubelet."""

    started: float
    cpu: float  # cores
    memory: int  # bytes
    updated: float = 0.0  # when the engine last set it
    reported: tuple[float, int] = (0.0, 0)  # what the kubelet was last asked to look at
    reported_at: float = -1e18


@dataclass(eq=False)
class Instance:
    sheet: Sheet
    service_name: str
    service: Service
    namespace: str
    pod: str
    pod_uid: str
    container: str
    attempt: int  # the restart count the container started with
    started: float
    env: dict[str, str]
    argv: tuple[str, ...]
    ports: dict[int, str]  # port -> protocol
    memory_limit: int | None
    cpu_limit: float | None
    load: ContainerLoad
    flag_config: tuple[str, str] | None = None  # flagd: the ConfigMap (name, key) its flag definitions come from
    flag_snapshot: str | None = None  # flagd: the definitions as copied at start; None: it reads the ConfigMap live
    fill: Fill | None = None  # a wrapper script that keeps writing into its store
    cpu_request: float | None = None  # cores; its weight when its node's CPU is contended

    @property
    def key(self) -> tuple[str, str, str]:
        return self.namespace, self.pod, self.container

    @property
    def listening_from(self) -> float:
        return self.started + self.service.startup

    @property
    def otel_name(self) -> str:
        """The service name its telemetry carries (OTEL_SERVICE_NAME, as the demo sets it from a pod label)."""
        return self.env.get("OTEL_SERVICE_NAME") or self.service_name

    def __repr__(self) -> str:
        return f"Instance({self.service_name} {self.namespace}/{self.pod}#{self.attempt})"


class Instances:
    """Every instance started, the latest per container; ``running`` checks them against the pods' status."""

    def __init__(self) -> None:
        self._latest: dict[tuple[str, str, str], Instance] = {}

    def add(self, instance: Instance) -> None:
        self._latest[instance.key] = instance

    def running(self, pods: dict[tuple[str, str], dict]) -> list[Instance]:
        """Instances whose container runs now, given the pods by (namespace, name); forgets the others' pods."""
        out = []
        for key, instance in list(self._latest.items()):
            pod = pods.get((instance.namespace, instance.pod))
            if pod is None or pod["metadata"].get("uid") != instance.pod_uid:
                del self._latest[key]
                continue
            if _runs(pod, instance):
                out.append(instance)
        out.sort(key=lambda i: (i.namespace, i.pod, i.container))
        return out


def _runs(pod: dict, instance: Instance) -> bool:
    for status in (pod.get("status") or {}).get("containerStatuses") or ():
        if status.get("name") == instance.container:
            return (status.get("state") or {}).get("running") is not None \
                and status.get("restartCount", 0) == instance.attempt
    return False
