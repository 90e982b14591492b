"""The traffic engine: every step, the load generators' users drive requests through the running services.

A step (every few simulated seconds) works on counts, not requests:

1. when the cluster changed (a write to pods, Services, Endpoints, NetworkPolicies, namespaces or
   ConfigMaps, a Chaos Mesh injection, an instance coming up), the router recomputes every route
   and the outcomes are rebuilt; when only saturation or a leak moved, only the outcomes are;
2. the load generators' task rates (from their users and the tasks' current durations) and the
   consumer groups' reads become root request counts (Poisson draws from the engine's seeded
   generator), and the counts flow down the call graph in topological order through each call's
   attempts and the share of them that reach each callee;
3. each (instance, operation)'s count becomes span-metrics increments (server and client spans, by
   status, with their duration buckets), log lines, Kafka writes, CPU and memory for its container
   (which its process reports to the kubelet), and a few sampled traces;
4. what the instances and the looping API clients (:mod:`.clientpods`) on one node ask of its CPU is
   shared as the CFS shares it (:mod:`.contention`): an instance that gets less than it asks falls
   behind (:func:`.usage.saturate`).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from typing import Iterable

from .. import quantity
from ..store import Change, Store
from ..telemetry.appmetrics import AppSample
from ..telemetry.spans import SpanKey, SpanSeries, TraceSink
from ..telemetry.topology import ServiceCall, ServiceRef
from . import contention
from . import flags as flag_values
from .applogs import AppLogs
from .behaviour import SheetBehaviour
from .chaos.faults import Injected
from .clientloops import cost as loop_cost
from .clientpods import ClientLoopBehaviour, LoopRun
from .contention import Claim, shares
from .instances import ContainerLoad, Instance, Instances
from .kafka import Kafka
from .load import task_rates, users
from .network.connections import ClusterNetwork
from .outcomes import Conditions, Outcome, Outcomes
from .routing import Router
from .sheet import Call, Sheet
from .spanmetrics import SpanMetrics
from .traces import KINDS, TraceSampler
from .usage import InstanceState, mark_seen, outcomes_stale, saturate

STEP = 5.0
WATCHED = frozenset({"pods", "services", "endpoints", "networkpolicies.networking.k8s.io", "namespaces",
                     "configmaps"})
DEFAULT_NODE_CPU = 4.0
USAGE_REPORT_EVERY = 15.0  # metrics-server's resolution: reporting usage more often shows nothing more
MiB = 1024 * 1024

Node = tuple[Instance, str]  # (instance, operation name)


class Workload:
    """The traffic engine of one twin; also its span-metrics and application-metrics source."""

    def __init__(self, store: Store, clock, rng: random.Random, logs, kubelet, sheets: Iterable[Sheet], *,
                 step: float = STEP):
        self.store = store
        self.clock = clock
        self.rng = rng
        self.kubelet = kubelet
        self.sheets = list(sheets)
        self.step_seconds = step
        self.instances = Instances()
        self.loops = Instances()  # the looping API clients' runs, kept as the instances are
        self.behaviour = SheetBehaviour(self.sheets, self.instances)
        if kubelet is not None:
            kubelet.behaviours.add(ClientLoopBehaviour(self.loops))
            kubelet.behaviours.add(self.behaviour)  # asked first: a sheet's container is the sheet's
            # Containers' own connections (init containers' `nc -z kafka 9092`) follow this engine's network model.
            kubelet.network = ClusterNetwork(store, kubelet.listening)
        self.chaos = Injected()
        self.router = Router(store, self.chaos)
        self.spans = SpanMetrics()
        self.kafka = Kafka()
        self.logs = AppLogs(logs, self.rng)
        self.traces: TraceSampler | None = None
        self.outcomes: Outcomes | None = None
        self.running: list[Instance] = []
        self.running_loops: list[LoopRun] = []
        self._nodes: dict[tuple[str, str, str], str] = {}  # container key -> its node's name
        self._node_cpus: dict[str, float] = {}  # node -> allocatable cores
        self._states: dict[Instance, InstanceState] = {}
        self._conditions: dict[Instance, Conditions] = {}
        self._order: list[Node] = []
        self._pods: dict[tuple[str, str], dict] = {}
        self._users: dict[Instance, float] = {}
        self._floor: dict[Instance, float] = {}  # each instance's factor on its sheet's floor, this period
        self._floor_until: dict[Instance, float] = {}
        self._dirty = True
        self._chaos_version = -1
        self._last: float | None = None
        store.on_write(self._on_write)
        clock.on_tick(self.step, name="workload", every=step)

    # ---- the sources the exporters read ------------------------------------------------------------------------
    def span_series(self) -> dict[SpanKey, SpanSeries]:
        return self.spans.span_series()

    def app_samples(self) -> list[AppSample]:
        return self.kafka.samples()

    def service_calls(self) -> list[ServiceCall]:
        """Which Service calls which: the Services in front of each running caller, and where its calls resolve
        (a :class:`~pytest_itbench.twin.telemetry.topology.CallGraphSource`)."""
        self._refresh(self.clock.now())
        fronting: dict[Instance, list[ServiceRef]] = {}
        for service in self.store.list("services")[0]:
            selector = (service.get("spec") or {}).get("selector")
            if not selector:
                continue
            ref = ServiceRef(service["metadata"].get("namespace", ""), service["metadata"]["name"])
            for instance in self.running:
                labels = (self._pods.get((instance.namespace, instance.pod)) or {}).get("metadata", {}).get("labels")
                if instance.namespace == ref.namespace and all((labels or {}).get(k) == v for k, v in selector.items()):
                    fronting.setdefault(instance, []).append(ref)
        calls: set[ServiceCall] = set()
        for instance in self.running:
            for name in instance.service.operations:
                for plan in self.outcomes.of(instance, name).calls:
                    if plan.route.service is None:
                        continue
                    callee = ServiceRef(*plan.route.service)
                    calls.update(ServiceCall(caller, callee) for caller in fronting.get(instance, ()))
        return sorted(calls, key=lambda c: (c.caller.namespace, c.caller.name, c.callee.namespace, c.callee.name))

    def send_traces(self, sink: TraceSink, per_step: int = 1) -> None:
        """Hand sampled traces to ``sink`` from now on."""
        self.traces = TraceSampler(sink, self.rng, per_step)

    def outcome(self, instance: Instance, operation: str) -> Outcome:
        """The current outcome of an operation of a running instance (refreshing what changed)."""
        self._refresh(self.clock.now())
        return self.outcomes.of(instance, operation)

    # ---- a step -------------------------------------------------------------------------------------------------
    def step(self, now: float) -> None:
        dt = self.step_seconds if self._last is None else now - self._last
        self._last = now
        if dt <= 0:
            return
        self._refresh(now)
        if self._draw_floor(now):
            self._rebuild()
        roots = self._roots(now, dt)
        counts = self._flow(roots)
        self._record(counts, now - dt, now, dt)
        if self.traces is not None:
            self.traces.sample([(self.outcomes.of(i, op), n) for (i, op), n in roots.items()], self.outcomes,
                               now - dt, now)

    def _on_write(self, change: Change) -> None:
        if change.bucket in WATCHED:
            self._dirty = True

    # ---- refreshing routes and outcomes ---------------------------------------------------------------------------
    def _refresh(self, now: float) -> None:
        upcoming = self.router.next_change
        if self._dirty or self._chaos_version != self.chaos.version or (upcoming is not None and upcoming <= now):
            self._dirty = False
            self._chaos_version = self.chaos.version
            self._pods = {(p["metadata"].get("namespace", ""), p["metadata"]["name"]): p
                          for p in self.store.list("pods")[0]}
            self.running = self.instances.running(self._pods)
            self.running_loops = self.loops.running(self._pods)
            self._place()
            self.router.refresh(self._pods, self.running, now)
            self._states = {i: self._states.get(i) or InstanceState() for i in self.running}
            self.logs.forget(set(self.running))
            self._rebuild()
        elif self.outcomes is None or any(outcomes_stale(s) for s in self._states.values()):
            self._rebuild()

    def _place(self) -> None:
        """Where each running container is, its node's CPU, and what the looping clients cost now."""
        self._nodes = {}
        for run in [*self.running, *self.running_loops]:
            pod = self._pods.get((run.namespace, run.pod)) or {}
            self._nodes[run.key] = (pod.get("spec") or {}).get("nodeName") or ""
        self._node_cpus = {name: self._node_cpu(name) for name in set(self._nodes.values())}
        counted: dict[tuple[str, str | None], int] = {}

        def count(bucket: str, namespace: str | None) -> int:
            if (bucket, namespace) not in counted:
                counted[(bucket, namespace)] = (len(self.store.list(bucket, namespace)[0]) if namespace
                                                else self.store.count(bucket))
            return counted[(bucket, namespace)]

        for run in self.running_loops:
            run.cost = loop_cost(run.loop, count)

    def _rebuild(self) -> None:
        self._conditions = {}
        for instance in self.running:
            state = self._states[instance]
            mark_seen(state)
            self._conditions[instance] = Conditions(
                flags=self._flags(instance), factor=state.factor, wait=state.wait, speed=state.speed,
                leaked=state.leaked,
                jvm=list(self.chaos.jvm_in(instance.key, self._container_id(instance))),
                io=list(self.chaos.io_in(instance.key, self._container_id(instance))),
                floor=self._floor.get(instance, 1.0))
        self.outcomes = Outcomes(self.router, self.chaos, lambda i: self._conditions.get(i) or Conditions())
        self._order = self._topological()

    def _draw_floor(self, now: float) -> bool:
        """Draw the factor on the background floor of each running instance whose period ended; whether any moved.

        The draws come from the engine's seeded generator in the instances' order, so a seed gives the same floor."""
        moved = False
        for instance in sorted(self.running, key=lambda i: (i.key, i.attempt)):
            background = instance.sheet.background
            if not background.floor or self._floor_until.get(instance, -1.0) > now:
                continue
            self._floor[instance] = math.exp(self.rng.gauss(-background.variation ** 2 / 2, background.variation))
            self._floor_until[instance] = now + background.period
            moved = True
        if moved:
            alive = set(self.running)
            for gone in [i for i in self._floor if i not in alive]:
                self._floor.pop(gone)
                self._floor_until.pop(gone, None)
        return moved

    def _flags(self, instance: Instance) -> flag_values.FlagValues:
        """The flags as the flagd instance this one reaches serves them (none reached: all off)."""
        service = instance.service
        if service.flagd is None:
            return {}
        flagd = next((name for name, s in instance.sheet.services.items() if s.serves_flags), None)
        if flagd is None:
            return {}
        wording = instance.sheet.clients[service.client or next(iter(instance.sheet.clients))]
        route = self.router.route(instance, Call(f"{flagd}.flags", service.flagd), service.flagd, wording, flagd)
        for hop in route.hops:
            if hop.instance is not None and not hop.net.partition and hop.net.loss < 0.999:
                return flag_values.served(hop.instance, self.store)
        return {}

    def _topological(self) -> list[Node]:
        order: list[Node] = []
        seen: set[Node] = set()

        def visit(node: Node) -> None:
            if node in seen:
                return
            seen.add(node)
            for plan in self.outcomes.of(*node).calls:
                for callee, _ in plan.deliveries:
                    visit((callee, plan.call.operation))
            order.append(node)

        for instance in self.running:
            for name, op in instance.service.operations.items():
                if op.consumes is not None or self._generates(instance):
                    visit((instance, name))
        order.reverse()
        return order

    @staticmethod
    def _generates(instance: Instance) -> bool:
        load = instance.sheet.load
        return load is not None and load.service == instance.service_name

    # ---- counts ---------------------------------------------------------------------------------------------------------
    def _roots(self, now: float, dt: float) -> dict[Node, float]:
        roots: dict[Node, float] = defaultdict(float)
        groups: dict[tuple[str, str, str], list[tuple[Instance, str, float]]] = defaultdict(list)
        for instance in self.running:
            if self._generates(instance) and now >= instance.listening_from:
                self._generate(instance, now, dt, roots)
            for name, op in instance.service.operations.items():
                if op.consumes is not None:
                    broker = self._broker(instance, op.consumes)
                    if broker is not None:
                        mean = self.outcomes.of(instance, name).latency.mean
                        groups[(broker.namespace, op.consumes.topic, op.consumes.group)].append(
                            (instance, name, 1.0 / max(mean, 1e-4)))
                    else:
                        self.kafka.group(instance.namespace, op.consumes.topic, op.consumes.group).members = 0
        for (namespace, topic, group), members in groups.items():
            rate = sum(r for _, _, r in members) / len(members)
            read = self.kafka.consume(namespace, topic, group, len(members), rate, dt)
            for instance, name, _ in members:
                roots[(instance, name)] += read / len(members)
        return roots

    def _generate(self, instance: Instance, now: float, dt: float, roots: dict[Node, float]) -> None:
        spec = instance.sheet.load
        crowd = users(spec, instance, now)
        rates = task_rates(spec, crowd, lambda task: self.outcomes.of(instance, task).latency.mean)
        for task, rate in rates.items():
            roots[(instance, task)] += _poisson(self.rng, rate * dt)
        total = crowd.http + crowd.browser
        spawned = math.floor(total) - math.floor(self._users.get(instance, 0.0))
        self._users[instance] = total
        if spec.on_start and spawned > 0:
            roots[(instance, spec.on_start)] += spawned

    def _broker(self, instance: Instance, consumes) -> Instance | None:
        sheet = instance.sheet
        wording = sheet.clients[consumes.client or instance.service.client or next(iter(sheet.clients))]
        call = Call(f"{consumes.broker}.consume", consumes.address)
        route = self.router.route(instance, call, consumes.address, wording, consumes.broker)
        for hop in route.hops:
            if hop.instance is not None and not hop.net.partition and hop.net.loss < 0.999:
                return hop.instance
        return None

    def _flow(self, roots: dict[Node, float]) -> dict[Node, float]:
        counts: dict[Node, float] = defaultdict(float, roots)
        for node in self._order:
            n = counts.get(node)
            if not n:
                continue
            for plan in self.outcomes.of(*node).calls:
                attempts = n * plan.attempts
                for callee, share in plan.deliveries:
                    counts[(callee, plan.call.operation)] += attempts * share
        return counts

    # ---- what the counts produce ------------------------------------------------------------------------------------
    def _record(self, counts: dict[Node, float], start: float, end: float, dt: float) -> None:
        arrivals: dict[Instance, float] = defaultdict(float)
        cpu_time: dict[Instance, float] = defaultdict(float)
        for (instance, name), n in counts.items():
            if n <= 0:
                continue
            outcome = self.outcomes.of(instance, name)
            self._spans(instance, outcome, n)
            self._calls(instance, outcome, n, start, end)
            self._logs(instance, outcome, n, start, end)
            arrivals[instance] += n
            cpu_time[instance] += n * outcome.op.cpu
            for effect in outcome.effects:
                if effect.memory_growth:
                    self._states[instance].leaked += n * effect.memory_growth
        self._usage(arrivals, cpu_time, end, dt)

    def _spans(self, instance: Instance, outcome: Outcome, n: float) -> None:
        op = outcome.op
        if not op.span:
            return
        kind, namespace, service = KINDS[op.kind], instance.namespace, instance.otel_name
        ok_status = "STATUS_CODE_OK" if op.ok_status == "ok" else "STATUS_CODE_UNSET"
        self.spans.record(SpanKey(service, op.span, kind, ok_status, namespace), n * outcome.ok, outcome.ok_latency)
        for failed in outcome.failures:
            self.spans.record(SpanKey(service, op.span, kind, failed.error.status_code, namespace), n * failed.share,
                              failed.latency)

    def _calls(self, instance: Instance, outcome: Outcome, n: float, start: float, end: float) -> None:
        namespace, service = instance.namespace, instance.otel_name
        for plan in outcome.calls:
            call = plan.call
            attempts = n * plan.attempts
            if attempts <= 0:
                continue
            if call.span:
                kind = KINDS[call.kind]
                self.spans.record(SpanKey(service, call.span, kind, "STATUS_CODE_UNSET", namespace),
                                  attempts * plan.ok, plan.ok_latency)
                for failed in plan.failures:
                    status = "STATUS_CODE_ERROR"
                    if failed.error.http is not None and failed.error.http < 500 and not plan.wording.errors_4xx:
                        status = "STATUS_CODE_UNSET"
                    self.spans.record(SpanKey(service, call.span, kind, status, namespace),
                                      attempts * failed.share, failed.latency)
            if call.log:
                for failed in plan.failures:
                    self.logs.write(instance, call.log, attempts * failed.share, start, end, stream="stderr",
                                    error=failed.error.message)
            if call.kind == "producer":
                delivered = sum(share for _, share in plan.deliveries)
                if delivered > 0:
                    broker = plan.deliveries[0][0]
                    self.kafka.produce(broker.namespace, call.topic, attempts * plan.ok * plan.messages)

    def _logs(self, instance: Instance, outcome: Outcome, n: float, start: float, end: float) -> None:
        logs = outcome.op.logs
        for template in logs.success:
            self.logs.write(instance, template, n * outcome.ok / logs.every, start, end, stream=logs.stream)
        for failed in outcome.failures:
            for template in logs.failure:
                self.logs.write(instance, template, n * failed.share, start, end, stream=logs.failure_stream,
                                error=failed.error.message)
        for effect in outcome.effects:
            for template in effect.logs:
                self.logs.write(instance, template, n, start, end, stream=logs.stream)

    # ---- CPU and memory -----------------------------------------------------------------------------------------------
    def _usage(self, arrivals: dict[Instance, float], cpu_time: dict[Instance, float], now: float,
               dt: float) -> None:
        """Each container's ask of its node's CPU, shared out; then each instance's queue and memory."""
        asks: dict[Instance, tuple] = {}  # instance -> (arrival rate, CPU per request, background, its stressors)
        claims: dict[tuple[str, str, str], Claim] = {}
        nodes: dict[str, list[Claim]] = defaultdict(list)
        for instance in self.running:
            arrived = arrivals.get(instance, 0.0)
            per_request = cpu_time.get(instance, 0.0) / arrived if arrived > 0 else 0.0
            stress = self.chaos.stress_on(instance.key, self._container_id(instance))
            background = self._background(instance, stress)
            asks[instance] = (arrived / dt, per_request, background, stress)
            # A queued request wants the CPU as much as a new one: a process with a backlog runs flat out.
            state = self._states[instance]
            demand = background + (arrived + state.backlog) / dt * (per_request or state.per_request)
            claims[instance.key] = Claim(demand, shares(instance.cpu_request), instance.cpu_limit)
        for run in self.running_loops:
            claims[run.key] = Claim(run.cost.cpu, shares(run.cpu_request), run.cpu_limit)
        for key, claim in claims.items():
            nodes[self._nodes.get(key, "")].append(claim)
        for node, shared in nodes.items():
            contention.share(self._node_cpus.get(node, DEFAULT_NODE_CPU), shared)
        for instance in self.running:
            claim = claims[instance.key]
            self._states[instance].speed = claim.speed
            self._saturate(instance, *asks[instance], claim.capacity, now, dt)
        for run in self.running_loops:
            run.load.cpu, run.load.updated = claims[run.key].granted, now
            self._report(run.load, run.key, None, now)

    def _background(self, instance: Instance, stress) -> float:
        """Cores the instance burns whatever its traffic: idle work, a flag's busy threads, stressors."""
        cond = self._conditions.get(instance) or Conditions()
        background = instance.service.cpu
        for effect in instance.service.flags:
            if effect.cpu and flag_values.active(cond.flags.get(effect.flag)):
                background += effect.cpu
        return background + stress.cpu + sum(f.cpu for f in cond.jvm if f.action == "stress")

    def _saturate(self, instance: Instance, rate: float, per_request: float, background: float, stress,
                  capacity: float, now: float, dt: float) -> None:
        state = self._states[instance]
        cond = self._conditions.get(instance) or Conditions()
        saturate(state, rate, per_request, background, capacity, dt)
        memory = instance.service.memory + int(state.leaked) + stress.memory
        if instance.fill is not None:
            memory += int(instance.fill.rate * max(0.0, now - instance.started - instance.fill.after))
        if any(f.action == "stress" and f.heap for f in cond.jvm):
            memory += int(0.8 * ((instance.memory_limit or memory * 2) - memory))
        load = instance.load
        load.cpu, load.memory, load.updated = state.cpu, memory, now
        self._report(load, instance.key, instance.memory_limit, now)

    def _report(self, load: ContainerLoad, key: tuple[str, str, str], memory_limit: int | None, now: float) -> None:
        """Have the kubelet look at the container when its usage moved (or it went over its memory limit)."""
        if self.kubelet is None:
            return
        over = memory_limit is not None and load.memory > memory_limit
        cpu0, memory0 = load.reported
        moved = abs(load.cpu - cpu0) > 0.02 * max(cpu0, 0.001) or abs(load.memory - memory0) > 0.02 * memory0
        if over or (moved and now - load.reported_at >= USAGE_REPORT_EVERY):
            load.reported, load.reported_at = (load.cpu, load.memory), now
            self.kubelet.enqueue(("pod", key[0], key[1]))

    def _container_id(self, instance: Instance) -> str:
        """The runtime's id of the instance's container run, as the pod's status reports it."""
        pod = self._pods.get((instance.namespace, instance.pod)) or {}
        for status in (pod.get("status") or {}).get("containerStatuses") or ():
            if status.get("name") == instance.container:
                return status.get("containerID") or ""
        return ""

    def _node_cpu(self, name: str) -> float:
        node = self.store.get("nodes", "", name) or {}
        allocatable = ((node.get("status") or {}).get("allocatable") or {}).get("cpu")
        return float(quantity.value(allocatable)) if allocatable else DEFAULT_NODE_CPU


def _poisson(rng: random.Random, mean: float) -> int:
    if mean <= 0:
        return 0
    if mean > 30:
        return max(0, round(rng.gauss(mean, math.sqrt(mean))))
    limit, k, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k
