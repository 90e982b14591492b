"""The kubelet's answer for containers that poll the API server in a loop, and their CPU as the engine shares it.

A container whose command is a shell running kubectl forever (:mod:`.clientloops`), written on the
command line or in a script file a ConfigMap or Secret volume holds (:mod:`.scripts`), does what the
default container model says (it runs, writes what the loop writes, never exits); its CPU is what the
loop burns, as far as its node lets it: the traffic engine weighs it with the application's instances
on the same node (:mod:`.contention`) and sets what it gets on the run's :class:`ContainerLoad`, which
its process reports to the kubelet (``kubectl top``, cAdvisor).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from .. import quantity
from ..containers.behaviour import SHELLS, ContainerContext, DefaultBehaviour, Process
from .clientloops import ClientLoop, Cost, parse
from .instances import ContainerLoad, Instances
from .scripts import script_text


@dataclass(eq=False)
class LoopRun:
    """One start of a looping client container (the same bookkeeping as an application's :class:`Instance`)."""

    namespace: str
    pod: str
    pod_uid: str
    container: str
    attempt: int
    started: float
    loop: ClientLoop
    cpu_request: float | None
    cpu_limit: float | None
    load: ContainerLoad
    cost: Cost = Cost(0.0, 0.0)  # what the loop costs with the cluster as it was at the engine's last refresh

    @property
    def key(self) -> tuple[str, str, str]:
        return self.namespace, self.pod, self.container


@dataclass(frozen=True)
class LoopProcess(Process):
    """The default model's process, with the CPU the engine grants the loop."""

    load: ContainerLoad | None = None

    def cpu_at(self, t: float) -> float:
        return self.load.cpu


class ClientLoopBehaviour:
    """The kubelet's behaviour provider for looping API clients; records each start in ``runs``."""

    def __init__(self, runs: Instances):
        self.runs = runs
        self._default = DefaultBehaviour()

    def process(self, ctx: ContainerContext) -> Process | None:
        if ctx.kind != "regular":
            return None
        argv = list(ctx.container.get("command") or []) + list(ctx.container.get("args") or [])
        if len(argv) < 2 or argv[0].rsplit("/", 1)[-1] not in SHELLS:
            return None
        if "kubectl" not in ctx.image.config.programs:
            return None  # the shell would only report "kubectl: not found" each turn
        script = script_text(ctx.store, ctx.pod, ctx.container, argv)
        if script is None and argv[1] == "-c" and len(argv) > 2:
            script = argv[2]
        namespace = ctx.pod["metadata"].get("namespace", "")
        loop = parse(_expand(script, ctx.env), namespace) if script is not None else None
        if loop is None:
            return None
        base = self._default.process(ctx)
        if base.start_error is not None or base.exit_after is not None:
            return base
        resources = ctx.container.get("resources") or {}
        memory = ctx.image.config.profile.memory  # kubectl's resident set, nearly always running
        load = ContainerLoad(ctx.started, 0.0, memory, updated=ctx.started)
        meta = ctx.pod["metadata"]
        self.runs.add(LoopRun(namespace, meta["name"], meta["uid"], ctx.container["name"], ctx.restart_count,
                              ctx.started, loop, _cores((resources.get("requests") or {}).get("cpu")),
                              _cores((resources.get("limits") or {}).get("cpu")), load))
        values = {f.name: getattr(base, f.name) for f in fields(base)}
        values.update(memory_start=memory, memory=memory, load=load)
        return LoopProcess(**values)


def _expand(script: str, env) -> str:
    """``$NAME`` and ``${NAME}`` from the container's environment, as the shell expands them."""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), ""), script)


def _cores(value) -> float | None:
    return None if value is None else float(quantity.value(value))
