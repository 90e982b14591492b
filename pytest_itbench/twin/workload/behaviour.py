"""The behaviour sheets' answer to the kubelet: what a recognised container's process does.

The kubelet asks its behaviour providers about every container it starts
(:mod:`pytest_itbench.twin.containers.behaviour`). For a container a sheet recognises, this provider
first asks the default what the runtime makes of the command: a command that cannot start or
exits (a bad command, a missing image file) is left exactly as the default says. Otherwise the
service runs: it exits at once with the sheet's message when a variable it requires is unset;
else it listens on the ports its environment names, speaks its protocol, writes its start-up
lines, and uses the CPU and memory the traffic engine computes from its load
(:class:`LiveProcess`), so ``kubectl top``, cAdvisor and OOM kills follow the traffic.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from .. import quantity
from ..containers.behaviour import COMMON_HEALTH_PATHS, ContainerContext, DefaultBehaviour, HttpAnswer, Line, \
    Process
from .addresses import expand_argv, peer
from .errors import render
from .instances import ContainerLoad, Instance, Instances
from .scripts import fill, runs, script_text
from .sheet import Service, Sheet

MiB = 1024 * 1024


@dataclass(frozen=True)
class LiveProcess(Process):
    """A service's process whose CPU and memory follow the load the traffic engine gives it."""

    load: ContainerLoad | None = None
    port_protocols: tuple[tuple[int, str], ...] = ()

    def cpu_at(self, t: float) -> float:
        return self.startup_cpu if t < self.startup else self.load.cpu

    def memory_at(self, t: float) -> int:
        if t < self.startup:
            return super().memory_at(t)
        return self.load.memory

    def oom_after(self, limit: int) -> float | None:
        if self.load.memory <= limit:
            return None
        return max(self.load.updated - self.load.started, self.startup)

    def http(self, port: int, path: str, t: float) -> HttpAnswer:
        return Process.http(replace(self, protocol=self._protocol(port)), port, path, t)

    def grpc_health(self, port: int, t: float) -> str | None:
        return Process.grpc_health(replace(self, protocol=self._protocol(port)), port, t)

    def _protocol(self, port: int) -> str:
        return dict(self.port_protocols).get(port, self.protocol)


class SheetBehaviour:
    """The kubelet's behaviour provider for the containers of every loaded sheet."""

    def __init__(self, sheets: Iterable[Sheet], instances: Instances):
        self.sheets = list(sheets)
        self.instances = instances
        self._default = DefaultBehaviour()

    def match(self, pod: dict, container: str) -> tuple[Sheet, str, Service] | None:
        labels = pod["metadata"].get("labels") or {}
        for sheet in self.sheets:
            for name, service in sheet.services.items():
                if service.pods.container == container and \
                        all(labels.get(k) == v for k, v in service.pods.labels.items()):
                    return sheet, name, service
        return None

    def process(self, ctx: ContainerContext) -> Process | None:
        if ctx.kind != "regular":
            return None
        found = self.match(ctx.pod, ctx.container["name"])
        if found is None:
            return None
        sheet, name, service = found
        base = self._default.process(ctx)
        script = script_text(ctx.store, ctx.pod, ctx.container, list(base.argv)) if service.programs else None
        wrapped = script is not None and runs(script, service.programs)
        if not wrapped and (base.start_error is not None or base.exit_after is not None):
            return base  # the runtime's verdict on the command stands: the service never runs
        if not wrapped and base.executable == "/pause":
            return base  # the image is a pause image (Chaos Mesh's pod-failure swaps it in): it pauses, nothing serves
        missing = next((r for r in service.required_env if not ctx.env.get(r.name)), None)
        if missing is not None:
            return Process(base.argv, base.executable, lines=(Line(0.1, missing.message, "stderr"),),
                           exit_after=0.2, exit_code=missing.exit_code, memory_start=2 * MiB, memory=2 * MiB)
        unreachable = _unreachable(service, ctx)
        if unreachable is not None:
            need, address = unreachable
            lines = tuple(Line(min(need.after, 0.05 * i), render(text, {**ctx.env}))
                          for i, text in enumerate(service.startup_logs[:1]))
            return Process(base.argv, base.executable,
                           lines=(*lines, Line(need.after, render(need.message, {"address": address}), "stderr")),
                           exit_after=need.after + 0.01, exit_code=need.exit_code, memory_start=2 * MiB,
                           memory=min(service.memory, 8 * MiB))
        ports = listen_ports(service, ctx.env)
        instance = self._record(ctx, sheet, name, service, ports)
        if wrapped:
            instance.fill = fill(script, service.store_writers)
        values = {"port": str(next(iter(ports), "")), **ctx.env}
        lines = tuple(Line(min(service.startup, 0.05 * i), render(text, values))
                      for i, text in enumerate(service.startup_logs))
        protocols = tuple(sorted(ports.items()))
        return LiveProcess(base.argv, base.executable, lines=lines, startup=service.startup,
                           ports=frozenset(ports), protocol=protocols[0][1] if protocols else "tcp",
                           http_paths=COMMON_HEALTH_PATHS | frozenset(service.paths),
                           memory_start=min(service.memory, 2 * MiB), memory=service.memory,
                           startup_cpu=0.2, cpu=service.cpu, stop_seconds=base.stop_seconds,
                           stop_exit_code=base.stop_exit_code, load=instance.load, port_protocols=protocols)

    def _record(self, ctx: ContainerContext, sheet: Sheet, name: str, service: Service,
                ports: dict[int, str]) -> Instance:
        meta = ctx.pod["metadata"]
        resources = ctx.container.get("resources") or {}
        limits = resources.get("limits") or {}
        argv = tuple(expand_argv(list(ctx.container.get("command") or []) + list(ctx.container.get("args") or []),
                                 ctx.env))
        instance = Instance(sheet, name, service, meta.get("namespace", ""), meta["name"], meta["uid"],
                            ctx.container["name"], ctx.restart_count, ctx.started, dict(ctx.env), argv, ports,
                            _quantity(limits.get("memory"), int), _quantity(limits.get("cpu"), float),
                            ContainerLoad(ctx.started, service.cpu, service.memory, updated=ctx.started),
                            cpu_request=_quantity((resources.get("requests") or {}).get("cpu"), float))
        if service.serves_flags:
            instance.flag_config, instance.flag_snapshot = flag_definitions(ctx, service.serves_flags)
        self.instances.add(instance)
        return instance


def _unreachable(service: Service, ctx: ContainerContext):
    """The first peer the program needs at its start that does not accept its connection now, with its address."""
    if not service.needs_at_start or ctx.network is None:
        return None
    for need in service.needs_at_start:
        target = peer(need.address, ctx.env)
        if target is None or target.port is None:
            continue
        if not ctx.network.connect(ctx.pod, target.host, target.port).ok:
            return need, target.text()
    return None


def listen_ports(service: Service, env: dict[str, str]) -> dict[int, str]:
    """The ports the program binds, as it reads them from its environment (the listener's default otherwise)."""
    out: dict[int, str] = {}
    for listener in service.listen:
        text = env.get(listener.port_env) if listener.port_env else None
        port = int(text) if text is not None and text.strip().isdigit() else listener.port
        if port is not None:
            out[port] = listener.protocol
    return out


def flag_definitions(ctx: ContainerContext, key: str) -> tuple[tuple[str, str] | None, str | None]:
    """Where flagd's definitions come from: a ConfigMap mounted into it (read live), or copied into its
    filesystem by an init container before it started (read once, now)."""
    pod = ctx.pod
    namespace = pod["metadata"].get("namespace", "")
    volumes = {v.get("name"): (v.get("configMap") or {}).get("name") for v in (pod.get("spec") or {}).get("volumes")
               or () if v.get("configMap")}
    holding = {volume: cm for volume, cm in volumes.items()
               if key in ((ctx.store.get("configmaps", namespace, cm) or {}).get("data") or {})}
    if not holding:
        return None, None
    mounted = {m.get("name") for m in ctx.container.get("volumeMounts") or ()}
    live = next((cm for volume, cm in holding.items() if volume in mounted), None)
    if live is not None:
        return (live, key), None
    name = next(iter(holding.values()))
    data = (ctx.store.get("configmaps", namespace, name) or {}).get("data") or {}
    return (name, key), data.get(key, "")


def _quantity(value, kind):
    return None if value is None else kind(quantity.value(value))
