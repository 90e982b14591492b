"""Each Chaos Mesh experiment kind: what it selects, what applying and recovering one record does, and the
faults its injected records put on traffic.

PodChaos acts through the API as Chaos Mesh's controller does (``pod-kill`` deletes the pod;
``pod-failure`` swaps every container's image for the pause image, keeping the original in an
annotation, and swaps it back on recovery), so the kubelet and everything downstream see it.
The other kinds act below the API, where chaos-daemon does: their faults live on a pod's network
(NetworkChaos, HTTPChaos: they last as long as the pod) or inside one run of a container
(StressChaos, JVMChaos, IOChaos: a restart of the container ends them, as the processes and
agents chaos-daemon put there die with it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..units import parse_go_duration, parse_stress_size
from .faults import HttpFault, Injected, IoFault, JvmFault, NetFault, Stress
from .selection import Target

if TYPE_CHECKING:
    from .experiments import ChaosController

PAUSE_IMAGE = "gcr.io/google-containers/pause:latest"
ANNOTATION_PREFIX = "chaos-mesh"
NODE_MEMORY = 8 * 1024 ** 3  # what a memory stressor's percentage is of when the container has no limit


class ApplyError(Exception):
    """Applying or recovering one record failed; the text becomes the record's event and a Failed event."""


@dataclass(frozen=True)
class Injection:
    """One injected record: its selector key, its target, the run of the container it went into."""

    key: str  # "." or ".Target"
    target: Target
    container_id: str = ""  # the container run (for faults that die with it)
    memory_limit: int | None = None  # the container's, for a stressor's percentage


@dataclass(frozen=True)
class Kind:
    kind: str
    plural: str
    embedded: str  # its key in a Schedule's spec
    containers: bool = False  # records are containers (namespace/pod/container), not pods

    @property
    def bucket(self) -> str:
        return f"{self.plural}.chaos-mesh.org"

    def selectors(self, spec: dict) -> dict[str, dict]:
        """The selector specs by record key, as ``GetSelectorSpecs`` gives them."""
        return {".": spec}

    def containers_for(self, key: str, spec: dict) -> bool:
        return self.containers

    def one_shot(self, spec: dict) -> bool:
        return False

    def apply(self, controller: "ChaosController", obj: dict, target: Target) -> None:
        """Inject the experiment into one target (faults below the API need nothing here)."""

    def recover(self, controller: "ChaosController", obj: dict, target: Target) -> None:
        """Take the experiment out of one target."""

    def faults(self, obj: dict, injected: list[Injection], into: Injected) -> None:
        """Add what the injected records (key, target, container id) do to traffic."""


class PodChaosKind(Kind):
    def containers_for(self, key: str, spec: dict) -> bool:
        return spec.get("action") == "container-kill"

    def one_shot(self, spec: dict) -> bool:
        return spec.get("action") in ("pod-kill", "container-kill")

    def apply(self, controller: "ChaosController", obj: dict, target: Target) -> None:
        action = obj["spec"].get("action")
        if action == "pod-kill":
            controller.delete_pod(target, obj["spec"].get("gracePeriod"))
        elif action == "pod-failure":
            controller.swap_images(target, _image_key(obj), to_pause=True)
        else:
            raise ApplyError(f"{action} is not supported in this cluster")

    def recover(self, controller: "ChaosController", obj: dict, target: Target) -> None:
        if obj["spec"].get("action") == "pod-failure":
            controller.swap_images(target, _image_key(obj), to_pause=False)


class NetworkChaosKind(Kind):
    def selectors(self, spec: dict) -> dict[str, dict]:
        out = {".": spec}
        if spec.get("target"):
            out[".Target"] = spec["target"]
        return out

    def faults(self, obj: dict, injected: list[Injection], into: Injected) -> None:
        spec = obj["spec"]
        fault = _netem(spec)
        if fault is None:
            return
        sources = [(i.target.namespace, i.target.pod) for i in injected if i.key == "."]
        targets = [(i.target.namespace, i.target.pod) for i in injected if i.key == ".Target"] \
            if spec.get("target") else [None]
        direction = spec.get("direction") or "to"
        for source in sources:
            for target in targets:
                if direction in ("to", "both"):
                    _add_path(into, (source, target), fault)
                if direction in ("from", "both"):
                    _add_path(into, (target, source), fault)


class StressChaosKind(Kind):
    def faults(self, obj: dict, injected: list[Injection], into: Injected) -> None:
        stressors = obj["spec"].get("stressors") or {}
        cpu = stressors.get("cpu") or {}
        memory = stressors.get("memory") or {}
        cores = cpu.get("workers", 0) * (cpu.get("load", 100) or 0) / 100 if cpu else 0.0
        for injection in injected:
            size = parse_stress_size(str(memory.get("size") or "256MB"), injection.memory_limit or NODE_MEMORY) \
                if memory else 0
            into.stress[(_container(injection.target), injection.container_id)] = Stress(cores, size)


class HTTPChaosKind(Kind):
    def faults(self, obj: dict, injected: list[Injection], into: Injected) -> None:
        spec = obj["spec"]
        replace, patch = spec.get("replace") or {}, spec.get("patch") or {}
        fault = HttpFault(target=spec.get("target") or "Request", port=spec.get("port") or 0,
                          method=spec.get("method"), path=spec.get("path"), code=spec.get("code"),
                          abort=bool(spec.get("abort")), delay=_duration(spec.get("delay")),
                          replace_code=replace.get("code"), tamper_body=bool(replace.get("body") or patch.get("body")))
        for injection in injected:
            into.http.setdefault((injection.target.namespace, injection.target.pod), []).append(fault)


class JVMChaosKind(Kind):
    def apply(self, controller: "ChaosController", obj: dict, target: Target) -> None:
        if not controller.runs_java(target):
            raise ApplyError(f"no java process found in container {target.container} of pod {target.pod}")

    def faults(self, obj: dict, injected: list[Injection], into: Injected) -> None:
        fault = jvm_fault(obj["spec"])
        for injection in injected:
            into.jvm.setdefault((_container(injection.target), injection.container_id), []).append(fault)


class IOChaosKind(Kind):
    def apply(self, controller: "ChaosController", obj: dict, target: Target) -> None:
        volume = obj["spec"].get("volumePath") or ""
        if not controller.mounts(target, volume):
            raise ApplyError(f"volume path {volume} is not a mount point of container {target.container}")

    def faults(self, obj: dict, injected: list[Injection], into: Injected) -> None:
        spec = obj["spec"]
        action = spec.get("action")
        fault = IoFault(volume=spec.get("volumePath") or "", delay=_duration(spec.get("delay")) if action == "latency"
                        else 0.0, errno=(spec.get("errno") or 5) if action == "fault" else 0,
                        percent=float(spec.get("percent") or 100), path=spec.get("path"))
        for injection in injected:
            into.io.setdefault((_container(injection.target), injection.container_id), []).append(fault)


KINDS: dict[str, Kind] = {k.bucket: k for k in (
    PodChaosKind("PodChaos", "podchaos", "podChaos"), NetworkChaosKind("NetworkChaos", "networkchaos", "networkChaos"),
    StressChaosKind("StressChaos", "stresschaos", "stressChaos", containers=True),
    HTTPChaosKind("HTTPChaos", "httpchaos", "httpChaos"),
    JVMChaosKind("JVMChaos", "jvmchaos", "jvmChaos", containers=True),
    IOChaosKind("IOChaos", "iochaos", "ioChaos", containers=True))}
BY_KIND: dict[str, Kind] = {k.kind: k for k in KINDS.values()}


# ---- the faults -------------------------------------------------------------------------------------------------

def _netem(spec: dict) -> NetFault | None:
    action = spec.get("action")
    if action == "partition":
        return NetFault(partition=True)
    delay, loss = spec.get("delay") or {}, spec.get("loss") or {}
    corrupt, duplicate = spec.get("corrupt") or {}, spec.get("duplicate") or {}
    if action in ("delay", "loss", "corrupt", "duplicate", "netem", "bandwidth", "rate"):
        lost = _percent(loss.get("loss")) if loss else 0.0
        lost = 1 - (1 - lost) * (1 - (_percent(corrupt.get("corrupt")) if corrupt else 0.0))
        return NetFault(delay=_duration(delay.get("latency")) if delay else 0.0,
                        jitter=_duration(delay.get("jitter")) if delay else 0.0, loss=lost)
    return None


def _add_path(into: Injected, key, fault: NetFault) -> None:
    found = into.network.get(key)
    into.network[key] = fault if found is None else found.plus(fault)


def _container(target: Target) -> tuple[str, str, str]:
    return target.namespace, target.pod, target.container or ""


_RULE_CLASS = re.compile(r"^\s*CLASS\s+(\S+)", re.MULTILINE)
_RULE_METHOD = re.compile(r"^\s*METHOD\s+(\S+)", re.MULTILINE)
_RULE_DO = re.compile(r"^\s*DO\s+(.+)$", re.MULTILINE)


def jvm_fault(spec: dict) -> JvmFault:
    """The fault a JVMChaos spec (or its Byteman rule) puts into the JVM."""
    action = spec.get("action") or ""
    methods = _methods(spec.get("class"), spec.get("method"))
    if action == "latency":
        return JvmFault("latency", methods, latency=(spec.get("latency") or 0) / 1000)
    if action == "exception":
        return JvmFault("exception", methods, exception=spec.get("exception") or "java.lang.Exception")
    if action == "return":
        null = (spec.get("returnValue") or "").strip() in ("null", "")
        return JvmFault("return", methods, exception="java.lang.NullPointerException" if null else "")
    if action == "stress":
        return JvmFault("stress", frozenset(), cpu=float(spec.get("cpuCount") or 0),
                        heap=(spec.get("memType") or "") == "heap")
    if action == "gc":
        return JvmFault("gc", frozenset(), latency=0.3)
    if action == "ruleData":
        return _byteman(spec.get("ruleData") or "")
    return JvmFault(action, methods)


def _byteman(rule: str) -> JvmFault:
    klass, method, do = _RULE_CLASS.search(rule), _RULE_METHOD.search(rule), _RULE_DO.search(rule)
    methods = _methods(klass.group(1) if klass else None, method.group(1) if method else None)
    action = (do.group(1) if do else "").strip().rstrip(";")
    sleep = re.search(r"Thread\.sleep\((\d+)\)", action)
    if sleep:
        return JvmFault("latency", methods, latency=int(sleep.group(1)) / 1000)
    thrown = re.match(r"throw\s+new\s+([\w.$]+)\((?:\"([^\"]*)\")?\)", action)
    if thrown:
        message = f"{thrown.group(1)}: {thrown.group(2)}" if thrown.group(2) else thrown.group(1)
        return JvmFault("exception", methods, exception=message)
    if action.startswith("return"):
        null = action[len("return"):].strip() in ("null", "")
        return JvmFault("return", methods, exception="java.lang.NullPointerException" if null else "")
    return JvmFault("rule", methods)


def _methods(klass: str | None, method: str | None) -> frozenset[str]:
    if not klass or not method:
        return frozenset()
    return frozenset({f"{klass.rpartition('.')[2]}.{method}"})


def _image_key(obj: dict) -> str:
    return f"{ANNOTATION_PREFIX}-{obj['metadata']['name']}-{obj['spec'].get('action')}"


def _duration(text) -> float:
    return parse_go_duration(str(text)) if text else 0.0


def _percent(text) -> float:
    try:
        return min(max(float(text or 0), 0.0), 100.0) / 100
    except ValueError:
        return 0.0
