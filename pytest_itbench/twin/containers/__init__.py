"""A pod's containers as the API server and the kubelet look them up, from the Pod object alone.

The API server picks the container a log or exec request is for (the only
container, or the one named); the kubelet then decides from the pod's
status whether that container has a log to read or a process to exec in.
The messages are theirs, word for word, because clients show them as-is.
"""

from __future__ import annotations

from dataclasses import dataclass


class ContainerUnavailable(Exception):
    """The kubelet cannot serve the request for this container (the message is the kubelet's)."""


class InvalidContainer(Exception):
    """The API server rejects the container named (or not named) in the request (HTTP 400)."""


@dataclass(frozen=True)
class ContainerRef:
    kind: str  # "initContainers", "containers" or "ephemeralContainers"
    spec: dict

    @property
    def name(self) -> str:
        return self.spec["name"]


_KINDS = ("initContainers", "containers", "ephemeralContainers")
_STATUS_FIELDS = {"containers": "containerStatuses", "initContainers": "initContainerStatuses",
                  "ephemeralContainers": "ephemeralContainerStatuses"}


def all_containers(pod: dict) -> list[ContainerRef]:
    """Init containers, then containers, then ephemeral containers, as the API server visits them."""
    spec = pod.get("spec") or {}
    return [ContainerRef(kind, c) for kind in _KINDS for c in spec.get(kind) or []]


def resolve(pod: dict, name: str | None) -> ContainerRef:
    """The container a request addresses: the named one, or the pod's only container."""
    name_of_pod = pod["metadata"]["name"]
    refs = all_containers(pod)
    if not name:
        regular = [r for r in refs if r.kind == "containers"]
        if len(regular) == 1:
            return regular[0]
        if not regular:
            raise InvalidContainer(f"a container name must be specified for pod {name_of_pod}")
        names = " ".join(r.name for r in refs)
        raise InvalidContainer(f"a container name must be specified for pod {name_of_pod}, choose one of: [{names}]")
    for ref in refs:
        if ref.name == name:
            return ref
    raise InvalidContainer(f"container {name} is not valid for pod {name_of_pod}")


def status_of(pod: dict, ref: ContainerRef) -> dict | None:
    """The container's status as the kubelet last reported it (regular, then init, then ephemeral)."""
    status = pod.get("status") or {}
    for kind in ("containers", "initContainers", "ephemeralContainers"):
        for entry in status.get(_STATUS_FIELDS[kind]) or []:
            if entry.get("name") == ref.name:
                return entry
    return None


def is_running(pod: dict, ref: ContainerRef) -> bool:
    status = status_of(pod, ref)
    return bool(status and (status.get("state") or {}).get("running") is not None)


def log_instance(pod: dict, ref: ContainerRef, previous: bool) -> str:
    """Which run of the container a log request reads: ``"current"`` or ``"previous"``.

    Raises :class:`ContainerUnavailable` when the kubelet has no log to show yet.
    """
    container, pod_name = ref.name, pod["metadata"]["name"]
    status = status_of(pod, ref)
    if status is None:
        raise ContainerUnavailable(f'container "{container}" in pod "{pod_name}" is not available')
    state = status.get("state") or {}
    last_terminated = (status.get("lastState") or {}).get("terminated")
    if previous:
        if not last_terminated or not last_terminated.get("containerID"):
            raise ContainerUnavailable(f'previous terminated container "{container}" in pod "{pod_name}" not found')
        return "previous"
    if state.get("running") is not None:
        return "current"
    terminated = state.get("terminated")
    if terminated is not None:
        if terminated.get("containerID"):
            return "current"
        if last_terminated and last_terminated.get("containerID"):
            return "previous"
        raise ContainerUnavailable(f'container "{container}" in pod "{pod_name}" is terminated')
    if last_terminated is not None:
        if not last_terminated.get("containerID"):
            raise ContainerUnavailable(f'container "{container}" in pod "{pod_name}" is terminated')
        return "previous"
    waiting = state.get("waiting")
    if waiting is not None:
        reason = waiting.get("reason", "")
        detail = {"ErrImagePull": "image can't be pulled",
                  "ImagePullBackOff": "trying and failing to pull image"}.get(reason, reason)
        raise ContainerUnavailable(f'container "{container}" in pod "{pod_name}" is waiting to start: {detail}')
    raise ContainerUnavailable(f'container "{container}" in pod "{pod_name}" is waiting to start - no logs yet')


def require_running(pod: dict, ref: ContainerRef) -> None:
    """Exec needs a running process; the kubelet only finds containers the runtime reports as running."""
    if not is_running(pod, ref):
        raise ContainerUnavailable(f'container not found ("{ref.name}")')
