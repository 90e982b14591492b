"""The kubelet's prober: startup, readiness and liveness probes against the modelled process.

Each probe ticks every ``periodSeconds`` from the moment the kubelet took
the pod in (a probe worker per container and probe); ticks while the
container is not running or before ``initialDelaySeconds`` are skipped, and
readiness and liveness wait for the startup probe to succeed. A result flips
after ``successThreshold`` consecutive successes or ``failureThreshold``
consecutive failures; readiness starts out failing, liveness succeeding.
Whether one check passes comes from the process model (does it listen on the
port, answer the path, run the command successfully), and a failure reads
as the prober writes it (``Get "http://10.244.1.5:8081/healthz": dial tcp
10.244.1.5:8081: connect: connection refused``). Evaluating a probe writes
nothing; the kubelet writes status only when a result flips.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from ...clock import format_go_duration
from ...containers.behaviour import ExecOutcome, Process, access_line

READINESS, LIVENESS, STARTUP = "readiness", "liveness", "startup"
TITLES = {READINESS: "Readiness", LIVENESS: "Liveness", STARTUP: "Startup"}
USER_AGENT = "kube-probe/1.31"


@dataclass
class ProbeState:
    kind: str
    spec: dict
    result: bool  # the current result (readiness starts failing, liveness succeeding, startup failing)
    successes: int = 0
    failures: int = 0
    next_at: float = 0.0

    @classmethod
    def begin(cls, kind: str, spec: dict, started: float, ticking_since: float) -> "ProbeState":
        """A probe of a container started at ``started``, whose probe worker has ticked since ``ticking_since``."""
        state = cls(kind, spec, result=kind == LIVENESS)
        period = _seconds(spec, "periodSeconds", 10)
        first = started + _seconds(spec, "initialDelaySeconds", 0)
        state.next_at = ticking_since + max(0, math.ceil((first - ticking_since) / period - 1e-9)) * period
        return state

    @property
    def period(self) -> float:
        return _seconds(self.spec, "periodSeconds", 10)

    def record(self, ok: bool) -> bool:
        """Count one check; True when the result flips."""
        if ok:
            self.successes += 1
            self.failures = 0
            if not self.result and self.successes >= _seconds(self.spec, "successThreshold", 1):
                self.result = True
                return True
        else:
            self.failures += 1
            self.successes = 0
            threshold = _seconds(self.spec, "failureThreshold", 3)
            if (self.result or self.kind == STARTUP) and self.failures >= threshold:
                flipped = self.result
                self.result = False
                return flipped or self.kind == STARTUP
        return False


def _seconds(spec: dict, name: str, default: int) -> int:
    value = spec.get(name)
    return int(value) if value else default


@dataclass(frozen=True)
class Check:
    ok: bool
    message: str = ""  # what a failure (or error) says
    errored: bool = False


@dataclass
class ProbeTarget:
    """What a check needs besides the probe: the process, where it runs, and how to exec into it."""

    process: Process
    t: float  # seconds since the container started
    now: float
    pod_ip: str
    container: dict
    source_ip: str  # where probes come from, for access logs
    exec_sandbox: Callable[[], object]
    write_log: Callable[[str], None]


def check(spec: dict, target: ProbeTarget) -> Check:
    timeout = _seconds(spec, "timeoutSeconds", 1)
    process = target.process
    if "exec" in spec:
        return _exec(spec["exec"].get("command") or [], target)
    if "httpGet" in spec:
        return _http(spec["httpGet"], target, timeout)
    if "tcpSocket" in spec:
        tcp = spec["tcpSocket"]
        port, problem = resolve_port(tcp.get("port"), target.container)
        if problem:
            return Check(False, problem, errored=True)
        host = tcp.get("host") or target.pod_ip
        if process.listens(port, target.t):
            if process.response_seconds > timeout:
                return Check(False, f"dial tcp {host}:{port}: i/o timeout")
            return Check(True)
        return Check(False, f"dial tcp {host}:{port}: connect: connection refused")
    if "grpc" in spec:
        grpc = spec["grpc"]
        port = int(grpc.get("port") or 0)
        health = process.grpc_health(port, target.t)
        address = f"{target.pod_ip}:{port}"
        if health is None:
            return Check(False, f'timeout: failed to connect service "{address}" within '
                                f'{format_go_duration(timeout)}: context deadline exceeded')
        if health == "SERVING":
            return Check(True)
        return Check(False, health)
    return Check(True)


def _http(http: dict, target: ProbeTarget, timeout: int) -> Check:
    port, problem = resolve_port(http.get("port"), target.container)
    if problem:
        return Check(False, problem, errored=True)
    host = http.get("host") or target.pod_ip
    scheme = (http.get("scheme") or "HTTP").lower()
    path = http.get("path") or "/"
    if not path.startswith("/"):
        path = "/" + path
    url = f"{scheme}://{host}:{port}{path}"
    process = target.process
    answer = process.http(port, path, target.t)
    if answer.status is None:
        return Check(False, f'Get "{url}": ' + (answer.error or "").format(address=f"{host}:{port}"))
    if scheme == "https":
        return Check(False, f'Get "{url}": http: server gave HTTP response to HTTPS client')
    if process.response_seconds > timeout:
        return Check(False, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting '
                            f'headers)')
    if process.access_log:
        target.write_log(access_line(process.access_log, client=target.source_ip, when=target.now, path=path,
                                     status=answer.status, size=answer.body_bytes, agent=USER_AGENT))
    if 200 <= answer.status < 400:
        return Check(True)
    return Check(False, f"HTTP probe failed with statuscode: {answer.status}")


def _exec(command: list[str], target: ProbeTarget) -> Check:
    if not command:
        return Check(False, "", errored=True)
    outcome: ExecOutcome = target.process.exec(command, target.t, target.exec_sandbox)
    if outcome.start_error is not None:
        return Check(False, f"rpc error: code = Unknown desc = failed to exec in container: {outcome.start_error}",
                     errored=True)
    if outcome.exit_code == 0:
        return Check(True)
    return Check(False, outcome.output.decode(errors="replace"))


def resolve_port(port, container: dict) -> tuple[int, str | None]:
    """A probe's port: a number, or the name of one of the container's ports (as the prober resolves it)."""
    if isinstance(port, int):
        return port, None if 0 < port < 65536 else f"invalid port number: {port}"
    text = str(port)
    for declared in container.get("ports") or ():
        if declared.get("name") == text:
            return int(declared["containerPort"]), None
    if text.isdigit():
        number = int(text)
        return number, None if 0 < number < 65536 else f"invalid port number: {number}"
    return 0, f'strconv.Atoi: parsing "{text}": invalid syntax'
