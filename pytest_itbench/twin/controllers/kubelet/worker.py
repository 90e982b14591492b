"""One pod on one node, synced as the kubelet's pod worker syncs it.

Each sync moves the pod as far as it can at this moment and says when it
needs to look again:

1. admission (the node's allocatable resources), then the pod's volumes
   (``FailedMount`` until they can be set up), then its sandbox and address;
2. what the running containers did meanwhile: output (into the log store),
   exits, OOM kills, the end of a stop, probe results (without writes
   unless a result flips);
3. which containers to start: the next init container, then every regular
   container that should run, each through the image manager, the
   container's configuration and the runtime, with the restart back-off;
4. the pod status, written only when it differs from what the API holds.

Start attempts follow the kubelet's rhythm: right after a container dies (the
PLEG relist) and, after a failed attempt, when the pod worker's back-off
(10 to 15 s) expires, so ``ImagePullBackOff`` and ``CrashLoopBackOff`` unfold
on the clock as they do on a node. Deleting the pod stops its containers
(``Killing``, preStop, SIGTERM, SIGKILL at the grace deadline), writes the
final status and removes the pod.
"""

from __future__ import annotations

import math
import posixpath
import re
from typing import TYPE_CHECKING, AbstractSet

from ... import quantity
from ...apiserver.registry import DeleteOptions
from ...clock import format_go_duration
from ...containers.behaviour import RUNC_START, ContainerContext, exec_format_error
from ...containers.env import environment
from ...containers.exec_commands import sandbox_for
from ...containers.pod_volumes import empty_dirs
from ...containers.timed_shell import sleep_seconds
from . import status as pod_status
from .backoff import Backoff
from .container_config import config_error
from .eviction import EVICTED, Candidate
from .node import NodeAgent
from .probes import LIVENESS, READINESS, STARTUP, TITLES, ProbeTarget, check
from .pulls import Failure
from .runtime import INIT, REGULAR, SIDECAR, Instance, Slot, spec_hash
from .volumes import ATTACH_AND_MOUNT_TIMEOUT, MOUNT_RETRY_INITIAL, MOUNT_RETRY_MAX, mount_problems, timeout_message

if TYPE_CHECKING:
    from .controller import Kubelet

PLEG_RELIST = 1.0  # seconds until the kubelet notices a container's death
SANDBOX_SECONDS = 1.0  # creating the sandbox and setting up its network
WORKER_BACKOFF = 10.0  # a failed sync is retried after this, jittered by up to half
MINIMUM_GRACE = 2  # the kubelet never gives a container less
OOM_EXIT_CODE = 137
START_ERROR_EXIT_CODE = 128
RUNC_MINIMUM_MEMORY = 4 * 1024 * 1024  # below this, runc's own init is OOM-killed
DEADLINE_MESSAGE = "Pod was active on the node longer than the specified deadline"
# What a start attempt came to; a start error is retried at the next relist, other failures after a resync.
STARTED, PENDING, FAILED, START_ERROR = "started", "pending", "failed", "start-error"


class PodWorker:
    def __init__(self, kubelet: "Kubelet", node: NodeAgent, pod: dict):
        self.kubelet = kubelet
        self.node = node
        meta = pod["metadata"]
        self.namespace, self.name, self.uid = meta.get("namespace", ""), meta["name"], meta["uid"]
        self.full_name = f"{self.name}_{self.namespace}({self.uid})"
        self.pod = pod
        spec = pod["spec"]
        self.slots = [Slot(c["name"], SIDECAR if c.get("restartPolicy") == "Always" else INIT, c)
                      for c in spec.get("initContainers") or ()]
        self.slots += [Slot(c["name"], REGULAR, c) for c in spec.get("containers") or ()]
        self.last_spec = spec
        self.crash_backoff = Backoff()
        self.start_time: float | None = None
        self.admitted = False
        self.rejection: tuple[str, str] | None = None
        self.volumes_ready = False
        self.mount_retry_at: float | None = None
        self.mount_delay = MOUNT_RETRY_INITIAL
        self.mount_timeout_at: float | None = None
        self.sandbox_at: float | None = None
        self.sandbox_ready = False
        self.pod_ip = ""
        self.initialized = not any(s.kind != REGULAR for s in self.slots)
        self.retry_at: float | None = None
        self.terminal = False  # no container of the pod will run again
        self.phase_reason: tuple[str, str] | None = None  # a pod-level verdict (DeadlineExceeded)
        self.stop_deadline: float | None = None  # the pod is being deleted: everything is gone by then
        self.gone = False
        self.dirty = True
        self.seen_status = pod.get("status")
        self.relist_at: float | None = None  # a container started: its state is reported from the next relist

    # ---- the sync --------------------------------------------------------------------------------------------
    def sync(self, pod: dict, now: float) -> float | None:
        self.pod = pod
        if pod["spec"] is not self.last_spec:
            self._spec_changed(pod["spec"], now)
        finished_before = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") and not self.admitted
        if pod["metadata"].get("deletionTimestamp"):
            self._terminate(now)
        elif self.rejection is None and not finished_before:
            if not self.admitted:
                self._admit(now)
            if self.admitted:
                self._run(now)
        self._flush(now)
        if self.gone:
            return None
        self._write_status(now)
        if self.stop_deadline is not None and self.terminal:
            self._remove()
            return None
        return self._next_due(now)

    def _spec_changed(self, spec: dict, now: float) -> None:
        """The pod was updated: the kubelet syncs at once, and replaces containers whose image changed."""
        self.last_spec = spec
        by_name = {c["name"]: c for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])}
        for slot in self.slots:
            slot.spec = by_name.get(slot.name, slot.spec)
            current = slot.current
            if current is not None and current.running and slot.hash != spec_hash(slot.spec) \
                    and slot.kill_requested is None:
                slot.kill_requested = (f"Container {slot.name} definition changed, will be restarted", None)
        self.retry_at = now
        self.dirty = True

    def _run(self, now: float) -> None:
        self._observe(now)
        self._probe(now)
        self._stop_requested(now)
        self._check_deadline(now)
        self._check_terminal(now)
        if self.terminal:
            self._stop_remaining(now, self._pod_grace())
            return
        if not self._volumes(now) or not self._sandbox(now):
            return
        pulling = next((s for s in self.slots if s.pull is not None), None)
        if pulling is not None:
            if now + 1e-9 < pulling.pull.done:
                return
            # The pull blocked this sync; when it ends, the sync goes on with the other containers.
            outcome = self._create(pulling, self.kubelet.images.complete(self.node, self.uid, pulling, now,
                                                                         self._recorder(pulling)), now)
            self._start_containers(now, {pulling.name}, outcome if outcome != STARTED else None)
            return
        if self.retry_at is not None and now + 1e-9 < self.retry_at:
            return
        self.retry_at = None
        self._start_containers(now)

    # ---- admission ---------------------------------------------------------------------------------------------
    def _admit(self, now: float) -> None:
        self.start_time = now
        self.dirty = True
        node = self.kubelet.store.get("nodes", "", self.node.name) or {}
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        cpu, memory = pod_requests(self.pod["spec"])
        used_cpu = sum(c for c, _ in self.node.admitted.values())
        used_memory = sum(m for _, m in self.node.admitted.values())
        checks = (("pods", 1, len(self.node.admitted), _count(allocatable.get("pods"))),
                  ("cpu", cpu, used_cpu, _milli(allocatable.get("cpu"))),
                  ("memory", memory, used_memory, _bytes(allocatable.get("memory"))))
        for resource, requested, used, capacity in checks:
            if capacity is not None and requested and used + requested > capacity:
                message = (f"Node didn't have enough resource: {resource}, requested: {requested}, used: {used}, "
                           f"capacity: {capacity}")
                self.rejection = (f"OutOf{resource}", message)
                self._event(None, "Warning", f"OutOf{resource}", message)
                return
        self.node.admitted[self.uid] = (cpu, memory)
        self.admitted = True
        self.retry_at = now

    # ---- volumes and sandbox -------------------------------------------------------------------------------
    def _volumes(self, now: float) -> bool:
        if self.volumes_ready:
            return True
        problems = mount_problems(self.kubelet.store, self.pod)
        if not problems:
            self.volumes_ready = True
            return True
        if self.mount_retry_at is None:
            self.mount_retry_at = now
            self.mount_timeout_at = now + ATTACH_AND_MOUNT_TIMEOUT
        if now + 1e-9 >= self.mount_retry_at:
            for problem in problems:
                if problem.message:
                    self._event(None, "Warning", "FailedMount", problem.message)
            self.mount_retry_at = now + self.mount_delay
            self.mount_delay = min(self.mount_delay * 2, MOUNT_RETRY_MAX)
        if now + 1e-9 >= self.mount_timeout_at:
            self._event(None, "Warning", "FailedMount", timeout_message(problems))
            self.mount_timeout_at = now + ATTACH_AND_MOUNT_TIMEOUT
        return False

    def _sandbox(self, now: float) -> bool:
        if self.sandbox_ready:
            return True
        if self.sandbox_at is None:
            self.sandbox_at = now + SANDBOX_SECONDS
            return False
        if now + 1e-9 < self.sandbox_at:
            return False
        self.sandbox_ready = True
        self.pod_ip = self.node.host_ip if self.pod["spec"].get("hostNetwork") else self.node.allocate_ip()
        self.dirty = True
        return True

    # ---- starting containers -----------------------------------------------------------------------------------
    def _start_containers(self, now: float, attempted: AbstractSet[str] = frozenset(),
                          failed: str | None = None) -> None:
        for slot in self._to_start():
            if slot.name in attempted:
                continue
            outcome = self._start(slot, now)
            if outcome == PENDING:
                return
            if outcome != STARTED:
                failed = outcome
        if failed is not None:
            self._failed_attempt(now, failed)

    def _failed_attempt(self, now: float, outcome: str) -> None:
        if outcome == START_ERROR:
            delay = PLEG_RELIST  # the runtime reports the dead container at its next relist
        else:
            delay = WORKER_BACKOFF * (1 + 0.5 * self.kubelet.rng.random())
        self.retry_at = now + delay if self.retry_at is None else min(self.retry_at, now + delay)

    def _to_start(self) -> list[Slot]:
        policy = self.pod["spec"].get("restartPolicy", "Always")
        if not self.initialized:
            for slot in self.slots:
                current = slot.current
                if slot.kind == SIDECAR:
                    if current is None or current.exited:
                        return [slot]
                    if not slot.started_ok:
                        return []
                    continue
                if slot.kind != INIT:
                    break
                if current is not None and current.succeeded:
                    continue
                if current is not None and current.running:
                    return []
                if current is not None and policy == "Never":
                    return []  # a failed init container of a pod that never restarts: the pod has failed
                return [slot]
            self.initialized = True
            self.dirty = True
        out = [s for s in self.slots if s.kind == SIDECAR and (s.current is None or s.current.exited)]
        out += [s for s in self.slots if s.kind == REGULAR and self._should_run(s, policy)]
        return out

    @staticmethod
    def _should_run(slot: Slot, policy: str) -> bool:
        current = slot.current
        if current is None:
            return True
        if not current.exited:
            return False
        return policy == "Always" or (policy == "OnFailure" and current.exit_code != 0)

    def _start(self, slot: Slot, now: float) -> str:
        current = slot.current
        if current is not None and current.exited:
            key = (slot.name, spec_hash(slot.spec))
            if self.crash_backoff.in_backoff_since(key, current.finished, now):
                delay = format_go_duration(self.crash_backoff.delay(key))
                self._event(slot, "Warning", "BackOff",
                            f"Back-off restarting failed container {slot.name} in pod {self.full_name}")
                self._waiting(slot, "CrashLoopBackOff", f"back-off {delay} restarting failed container="
                                                        f"{slot.name} pod={self.full_name}")
                return FAILED
            self.crash_backoff.next(key, current.finished)
        image = self.kubelet.images.ensure(self.node, self.uid, slot, now, self._recorder(slot))
        if image is None:
            return PENDING
        return self._create(slot, image, now)

    def _create(self, slot: Slot, image, now: float) -> str:
        if isinstance(image, Failure):
            self._event(slot, "Warning", "Failed", f"Error: {image.reason}")
            self._waiting(slot, image.reason, image.message)
            return FAILED
        problem = config_error(self.kubelet.store, self.pod, slot.spec)
        if problem is not None:
            self._event(slot, "Warning", "Failed", f"Error: {problem}")
            self._waiting(slot, "CreateContainerConfigError", problem)
            return FAILED
        attempt = 0 if slot.current is None else slot.current.attempt + 1
        if slot.current is not None:
            self.kubelet.logs.restart(self.namespace, self.name, slot.name)
        instance = Instance(self.kubelet.new_container_id(), attempt, image, None, now)
        slot.previous, slot.current = slot.current, instance
        slot.hash = spec_hash(slot.spec)
        slot.kill_requested = None
        slot.probes = {}
        self.dirty = True
        self._event(slot, "Normal", "Created", f"Created container {slot.name}")
        env = environment(self.kubelet.store, self.pod, _ref(slot))
        process = self.kubelet.behaviours.process(ContainerContext(
            self.pod, slot.spec, slot.kind, image, env, attempt, self.kubelet.store, now, self.kubelet.network))
        start_error = process.start_error
        limit = memory_limit(slot.spec)
        if start_error is None and limit is not None and limit < RUNC_MINIMUM_MEMORY:
            start_error = RUNC_START + "container init was OOM-killed (memory limit too low?): unknown"
        if start_error is not None:
            instance.finished, instance.exit_code = now, START_ERROR_EXIT_CODE
            instance.reason, instance.message = "StartError", start_error
            self._event(slot, "Warning", "Failed", f"Error: {start_error}")
            self._waiting(slot, "RunContainerError", start_error)
            return START_ERROR
        if image.architecture != self.node.architecture:
            process = exec_format_error(process)
        instance.process = process
        instance.started = now
        slot.waiting = None
        slot.begin_probes(now, self.start_time)
        # The status shows the container from the PLEG relist after its start: a container gone before that
        # (``echo hi``) is never seen running, one that lives a second or more is.
        self.relist_at = self.node.next_relist(now)
        self._event(slot, "Normal", "Started", f"Started container {slot.name}")
        return STARTED

    def _waiting(self, slot: Slot, reason: str, message: str) -> None:
        slot.waiting = (reason, message)
        self.dirty = True

    # ---- running containers ----------------------------------------------------------------------------------
    def _observe(self, now: float) -> None:
        """Exits, OOM kills and finished stops since the last look."""
        for slot in self.slots:
            instance = slot.current
            if instance is None or not instance.running:
                continue
            t = instance.since_start(now)
            # A script waiting on the cluster (``until nc -z kafka 9092``) makes its next attempt now.
            process = instance.process = instance.process.resumed(t)
            limit = memory_limit(slot.spec)
            oom = process.oom_after(limit) if limit is not None else None
            if oom is not None and oom <= t + 1e-9 and (process.exit_after is None or oom < process.exit_after):
                if not self._relisted_since(instance.started + oom, now):
                    continue
                self._system_oom(slot)
                self._finish(slot, now, OOM_EXIT_CODE, "OOMKilled", min(t, oom))
            elif process.exited_by(t + 1e-9):
                if not self._relisted_since(instance.started + process.exit_after, now):
                    continue
                self._finish(slot, now, process.exit_code, None, process.exit_after)
            elif instance.stop_at is not None and now + 1e-9 >= instance.stop_at:
                self._finish(slot, now, instance.stop_code, None, t)

    def _relisted_since(self, t: float, now: float) -> bool:
        """Whether a relist has run since ``t``: a container's end is known to the kubelet only from then."""
        return self.node.next_relist(t) <= now + 1e-6

    def _finish(self, slot: Slot, now: float, code: int, reason: str | None, at: float) -> None:
        instance = slot.current
        self._flush_instance(slot, instance, at)
        instance.finished, instance.exit_code = now, code
        instance.reason = reason or ("Completed" if code == 0 else "Error")
        instance.message = self._termination_message(slot, instance, at)
        # What it wrote into the pod's emptyDir volumes stays there for the pod's other containers.
        empty_dirs(self.kubelet.store).commit(self.pod, slot.spec, instance.process.files_at(at))
        slot.kill_requested = None
        self._clear_usage(slot)
        self.dirty = True
        self.retry_at = now + PLEG_RELIST if self.retry_at is None else min(self.retry_at, now + PLEG_RELIST)

    def _termination_message(self, slot: Slot, instance: Instance, at: float) -> str | None:
        path = slot.spec.get("terminationMessagePath") or "/dev/termination-log"
        written = instance.process.files_at(at).get(path)
        if written:
            return written.decode(errors="replace")[:4096]
        if instance.exit_code and slot.spec.get("terminationMessagePolicy") == "FallbackToLogsOnError":
            lines = self.kubelet.logs.lines(self.namespace, self.name, slot.name)[-80:]
            text = "".join(line.text + "\n" for line in lines)
            return text[-2048:] or None
        return None

    def _system_oom(self, slot: Slot) -> None:
        node = self.kubelet.store.get("nodes", "", self.node.name)
        if node is not None:
            victim = posixpath.basename(slot.current.process.executable) or slot.name
            pid = 1000 + self.kubelet.rng.randrange(60000)
            self.kubelet.events.record(node, "Warning", "SystemOOM",
                                       f"System OOM encountered, victim process: {victim}, pid: {pid}",
                                       self.node.source)

    def _probe(self, now: float) -> None:
        for slot in self.slots:
            instance = slot.current
            if instance is None or not instance.running or instance.stop_at is not None or not slot.probes:
                continue
            for kind in (STARTUP, READINESS, LIVENESS):
                state = slot.probes.get(kind)
                if state is None or state.next_at > now + 1e-9:
                    continue
                state.next_at += math.floor((now - state.next_at) / state.period + 1) * state.period
                startup = slot.probes.get(STARTUP)
                if kind == STARTUP and state.result:
                    continue
                if kind != STARTUP and startup is not None and not startup.result:
                    continue
                result = check(state.spec, self._target(slot, instance, now))
                if not result.ok:
                    verb = "errored and resulted in unknown state" if result.errored else "failed"
                    self._event(slot, "Warning", "Unhealthy", f"{TITLES[kind]} probe {verb}: {result.message}")
                if state.record(result.ok):
                    self.dirty = True
                    if not state.result and kind in (LIVENESS, STARTUP):
                        slot.kill_requested = (f"Container {slot.name} failed {kind} probe, will be restarted",
                                               state.spec.get("terminationGracePeriodSeconds"))
                        break

    def _target(self, slot: Slot, instance: Instance, now: float) -> ProbeTarget:
        kubelet = self.kubelet

        def sandbox():
            # Exec'd probe commands do not read the service account token; the file holds a placeholder.
            return sandbox_for(kubelet.store, self.pod, _ref(slot), lambda *_: "", now, exec_pid=100,
                               network=kubelet.network)

        def write_log(text: str) -> None:
            kubelet.logs.append(self.namespace, self.name, slot.name, text, at=now)

        return ProbeTarget(instance.process, instance.since_start(now), now, self.pod_ip, slot.spec,
                           self.node.gateway, sandbox, write_log)

    def _stop_requested(self, now: float) -> None:
        for slot in self.slots:
            instance = slot.current
            if slot.kill_requested and instance is not None and instance.running and instance.stop_at is None:
                message, probe_grace = slot.kill_requested
                self._stop(slot, now, probe_grace or self._pod_grace(), message)

    def _stop(self, slot: Slot, now: float, grace: float, message: str) -> None:
        instance = slot.current
        grace = max(grace, MINIMUM_GRACE)
        self._event(slot, "Normal", "Killing", message)
        hook = min(_pre_stop_seconds(slot.spec), grace)
        process = instance.process
        if process.stop_seconds is None or hook + process.stop_seconds >= grace:
            instance.stop_at, instance.stop_code = now + grace, OOM_EXIT_CODE  # SIGKILL: 128 + 9
        else:
            instance.stop_at, instance.stop_code = now + hook + process.stop_seconds, process.stop_exit_code

    def _check_deadline(self, now: float) -> None:
        deadline = self.pod["spec"].get("activeDeadlineSeconds")
        if deadline is None or self.terminal or self.start_time is None or now < self.start_time + deadline:
            return
        self.phase_reason = ("DeadlineExceeded", DEADLINE_MESSAGE)
        self._event(None, "Warning", "DeadlineExceeded", DEADLINE_MESSAGE)
        self.terminal = True
        self.dirty = True

    def _check_terminal(self, now: float) -> None:
        """A pod that does not restart its containers is done once its regular containers are."""
        if self.terminal:
            return
        policy = self.pod["spec"].get("restartPolicy", "Always")
        if policy == "Always":
            return
        if not self.initialized:
            failed_init = any(s.kind == INIT and s.current is not None and s.current.exited
                              and s.current.exit_code != 0 for s in self.slots)
            if failed_init and policy == "Never":
                self.terminal = True
                self.dirty = True
            return
        regular = [s for s in self.slots if s.kind == REGULAR]
        if all(s.current is not None and s.current.exited and not self._should_run(s, policy) for s in regular):
            self.terminal = True
            self.dirty = True

    def _stop_remaining(self, now: float, grace: float) -> None:
        """Stop what still runs: regular containers first, sidecars once they are gone."""
        running = [s for s in self.slots if s.current is not None and s.current.running]
        regular = [s for s in running if s.kind == REGULAR]
        for slot in regular or running:
            if slot.current.stop_at is None:
                self._stop(slot, now, grace, f"Stopping container {slot.name}")
        if not running:
            self._release()

    def _pod_grace(self) -> float:
        grace = self.pod["spec"].get("terminationGracePeriodSeconds")
        return 30 if grace is None else grace

    def _release(self) -> None:
        """The pod's sandbox is gone: its resources and address go back to the node."""
        self.node.admitted.pop(self.uid, None)
        if self.pod_ip and not self.pod["spec"].get("hostNetwork"):
            self.node.release_ip(self.pod_ip)

    # ---- node-pressure eviction (:mod:`.eviction`) ------------------------------------------------------------
    def evictable(self) -> bool:
        return self.admitted and not self.terminal and self.stop_deadline is None and self._anything_running()

    def eviction_candidate(self) -> Candidate:
        containers = []
        for slot in self.slots:
            used = self.node.usage.get((self.namespace, self.name, slot.name))
            if used is None:
                continue
            request = _bytes(((slot.spec.get("resources") or {}).get("requests") or {}).get("memory")) or 0
            containers.append((slot.name, used[1], request))
        return Candidate((self.namespace, self.name), int(self.pod["spec"].get("priority") or 0),
                         pod_requests(self.pod["spec"])[1], sum(u for _, u, _ in containers), tuple(containers))

    def evict(self, message: str, now: float) -> None:
        """A hard eviction threshold was crossed: the pod fails, its containers are killed without grace."""
        self.phase_reason = (EVICTED, message)
        self._event(None, "Warning", EVICTED, message)
        self.terminal = True
        self.dirty = True
        self._stop_remaining(now, 0)

    # ---- deletion -----------------------------------------------------------------------------------------------
    def _terminate(self, now: float) -> None:
        if self.stop_deadline is None:
            grace = max(int(self.pod["metadata"].get("deletionGracePeriodSeconds") or 0), MINIMUM_GRACE)
            self.stop_deadline = now + grace
            for slot in self.slots:
                slot.pull = None
        self._observe(now)
        self._stop_remaining(now, max(self.stop_deadline - now, MINIMUM_GRACE))
        if not any(s.current is not None and s.current.running for s in self.slots):
            self.terminal = True
            self.dirty = True

    def _remove(self) -> None:
        self.gone = True
        try:
            self.kubelet.api.delete(self.kubelet.pods, self.namespace, self.name,
                                    DeleteOptions(grace_period=0, uid=self.uid), self.node.ctx)
        except Exception:  # already gone, or re-created under the same name: nothing of ours to remove
            pass

    # ---- output and usage ----------------------------------------------------------------------------------
    def _flush(self, now: float) -> None:
        usage_changed = False
        for slot in self.slots:
            instance = slot.current
            if instance is None or not instance.running:
                continue
            t = instance.since_start(now)
            self._flush_instance(slot, instance, t)
            usage_changed |= self._report_usage(slot, instance, t, now)
        if usage_changed:
            cpu, memory = self.node.node_usage()
            self.kubelet.metrics.set_node_usage(self.node.name, cpu=cpu, memory=memory)
            self.kubelet.enqueue(("node", self.node.name))  # the eviction manager looks at the new usage

    def _flush_instance(self, slot: Slot, instance: Instance, until: float) -> None:
        process = instance.process
        if process is None or until <= instance.logged_until:
            return
        logs = self.kubelet.logs
        for line in process.output_between(instance.logged_until, until):
            logs.append(self.namespace, self.name, slot.name, line.text, stream=line.stream,
                        at=instance.started + line.at)
        instance.logged_until = until

    def _report_usage(self, slot: Slot, instance: Instance, t: float, now: float) -> bool:
        process = instance.process
        cpu = process.cpu_at(t)
        limit = cpu_limit(slot.spec)
        if limit is not None:
            cpu = min(cpu, limit)  # the CFS quota caps what the container can use
        usage = (round(cpu, 6), process.memory_at(t))
        if t < process.startup:
            instance.usage_due = instance.started + process.startup
        elif process.memory_growth > 0:
            instance.usage_due = now + self.kubelet.metrics.resolution
        else:
            instance.usage_due = None
        if usage == instance.usage:
            return False
        instance.usage = usage
        self.kubelet.metrics.set_pod_usage(self.namespace, self.name, slot.name, cpu=usage[0], memory=usage[1])
        self.node.usage[(self.namespace, self.name, slot.name)] = usage
        return True

    def _clear_usage(self, slot: Slot) -> None:
        self.kubelet.metrics.clear_pod_usage(self.namespace, self.name, slot.name)
        if self.node.usage.pop((self.namespace, self.name, slot.name), None) is not None:
            cpu, memory = self.node.node_usage()
            self.kubelet.metrics.set_node_usage(self.node.name, cpu=cpu, memory=memory)

    def forget(self) -> None:
        """The pod left the node: free what it held."""
        self._release()
        empty_dirs(self.kubelet.store).forget(self.uid)
        for slot in self.slots:
            if self.node.usage.pop((self.namespace, self.name, slot.name), None) is not None:
                cpu, memory = self.node.node_usage()
                self.kubelet.metrics.set_node_usage(self.node.name, cpu=cpu, memory=memory)

    # ---- status -------------------------------------------------------------------------------------------------
    def _write_status(self, now: float) -> None:
        if self.pod.get("status") is not self.seen_status:
            self.dirty = True  # someone else wrote the status: the kubelet's status manager puts its own back
        if not self.dirty:
            return
        if self.relist_at is not None:
            if now + 1e-9 < self.relist_at:
                return
            self.relist_at = None
        if self.rejection is not None:
            status = pod_status.rejected(self.pod, *self.rejection, self.start_time or now)
        elif self.start_time is None:
            self.dirty = False
            return
        else:
            finished = self.terminal and not self._anything_running()  # and its sandbox torn down
            view = pod_status.PodView(self.slots, self.node.host_ip, self.pod_ip, self.sandbox_ready and not finished,
                                      self.start_time, finished)
            if self.phase_reason is not None:
                view.reason, view.message = self.phase_reason
                view.phase = "Failed"
            status = pod_status.build(self.pod, view, now)
        if status != self.pod.get("status"):
            kubelet = self.kubelet
            obj = {"apiVersion": "v1", "kind": "Pod", "metadata": dict(self.pod["metadata"]), "status": status}
            kubelet.api.update(kubelet.pods, self.namespace, self.name, obj, self.node.ctx, subresource="status")
            self.pod = kubelet.store.get("pods", self.namespace, self.name) or self.pod
        self.seen_status = self.pod.get("status")
        self.dirty = False

    def _anything_running(self) -> bool:
        return any(s.current is not None and s.current.running for s in self.slots)

    # ---- timing ------------------------------------------------------------------------------------------------------
    def _next_due(self, now: float) -> float | None:
        due: list[float] = []
        if self.retry_at is not None:
            due.append(self.retry_at)
        if self.relist_at is not None:
            due.append(self.relist_at)
        if not self.volumes_ready and self.mount_retry_at is not None:
            due += [self.mount_retry_at, self.mount_timeout_at]
        elif self.sandbox_at is not None and not self.sandbox_ready:
            due.append(self.sandbox_at)
        deadline = self.pod["spec"].get("activeDeadlineSeconds")
        if deadline is not None and self.start_time is not None and not self.terminal:
            due.append(self.start_time + deadline)
        for slot in self.slots:
            if slot.pull is not None:
                due.append(slot.pull.done)
            instance = slot.current
            if instance is None or not instance.running:
                continue
            due += self._instance_due(slot, instance, now)
        later = [d for d in due if d > now + 1e-9]
        if not later:
            return None
        return min(later) - now

    def _instance_due(self, slot: Slot, instance: Instance, now: float) -> list[float]:
        process = instance.process
        t = instance.since_start(now)
        due = []
        change = process.next_change(t)
        if change is not None:
            due.append(instance.started + change)
        # An exit or OOM kill is noticed at the relist after it.
        if process.exit_after is not None:
            due.append(max(self.node.next_relist(instance.started + process.exit_after), now + 1e-3))
        limit = memory_limit(slot.spec)
        oom = process.oom_after(limit) if limit is not None else None
        if oom is not None:
            due.append(max(self.node.next_relist(instance.started + oom), now + 1e-3))
        if instance.stop_at is not None:
            due.append(instance.stop_at)
        elif not slot.kill_requested:
            due += [state.next_at for state in slot.probes.values()]
        if instance.usage_due is not None:
            due.append(instance.usage_due)
        return due

    # ---- events --------------------------------------------------------------------------------------------------
    def _event(self, slot: Slot | None, type_: str, reason: str, message: str) -> None:
        self.kubelet.events.record(self.pod, type_, reason, message, self.node.source,
                                   field_path=slot.field_path if slot is not None else None)

    def _recorder(self, slot: Slot):
        return lambda type_, reason, message: self._event(slot, type_, reason, message)


def _ref(slot: Slot):
    from ...containers import ContainerRef
    return ContainerRef("containers" if slot.kind == REGULAR else "initContainers", slot.spec)


def _pre_stop_seconds(container: dict) -> float:
    """How long the container's preStop hook keeps it from receiving SIGTERM."""
    hook = ((container.get("lifecycle") or {}).get("preStop")) or {}
    if "sleep" in hook:
        return float(hook["sleep"].get("seconds") or 0)
    command = (hook.get("exec") or {}).get("command") or []
    if command and posixpath.basename(command[0]) == "sleep":
        return sleep_seconds(command[1:]) or 0.0
    script = " ".join(command[2:]) if len(command) > 2 and command[1] == "-c" else ""
    return sum(float(n) for n in re.findall(r"\bsleep\s+(\d+(?:\.\d+)?)\b", script))


# ---- resources ----------------------------------------------------------------------------------------------------

def memory_limit(container: dict) -> int | None:
    limit = ((container.get("resources") or {}).get("limits") or {}).get("memory")
    return _bytes(limit)


def cpu_limit(container: dict) -> float | None:
    limit = ((container.get("resources") or {}).get("limits") or {}).get("cpu")
    return float(quantity.value(limit)) if limit is not None else None


def pod_requests(spec: dict) -> tuple[int, int]:
    """The pod's effective requests: its containers and sidecars, or its largest init step if larger."""
    def requests(container: dict) -> tuple[int, int]:
        wanted = (container.get("resources") or {}).get("requests") or {}
        return _milli(wanted.get("cpu")) or 0, _bytes(wanted.get("memory")) or 0

    sidecars = [requests(c) for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    regular = [requests(c) for c in spec.get("containers") or ()]
    cpu = sum(c for c, _ in regular + sidecars)
    memory = sum(m for _, m in regular + sidecars)
    for container in spec.get("initContainers") or ():
        if container.get("restartPolicy") != "Always":
            init_cpu, init_memory = requests(container)
            cpu, memory = max(cpu, init_cpu), max(memory, init_memory)
    return cpu, memory


def _milli(value) -> int | None:
    return None if value is None else math.ceil(quantity.value(value) * 1000)


def _bytes(value) -> int | None:
    return None if value is None else math.ceil(quantity.value(value))


def _count(value) -> int | None:
    return None if value is None else int(quantity.value(value))
