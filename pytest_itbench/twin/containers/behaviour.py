"""What a container's main process does once the runtime starts it: the container behaviour model.

The kubelet asks this model about every container it starts. The answer is a
:class:`Process`: whether the runtime can start the command at all, what it
writes and when, whether and when it exits and with which code, which ports it
listens on (and from when), which HTTP paths it answers, its memory and CPU
use over time, how it reacts to SIGTERM, and what commands exec'd into it
(exec probes) return. Times are seconds since the process started.

Providers form a chain (:class:`Behaviours`): each may answer for a container
or pass (return ``None``), and :class:`DefaultBehaviour` answers for all. The
application behaviour sheets plug in here as providers placed before the
default. A provider sees only cluster state (the pod, the container spec, the
image, the resolved environment, the store), so whatever repairs that state
changes what the next start of the container does.

The default derives everything from the pod spec and the image:

* the command is the image's entrypoint and command, overridden by the
  container's ``command`` and ``args`` as the runtime does; an executable the
  image does not have fails to start (``executable file not found in $PATH``);
* a server (the image's own, or any program when the container declares ports,
  such as ``python app.py``) runs until stopped, listens on the image's exposed
  ports and the container's declared ports once it has started, answers ``/``
  and the common health paths, and uses the image's typical memory and CPU;
* a shell command line runs as written over time (:mod:`timed_shell`): it
  prints, sleeps and exits with its status, or hands over to a long-running
  program; where it looks at the cluster (``until nc -z kafka 9092; do sleep
  2; done``) it is run on as the clock reaches each attempt, asking the
  context's :class:`~.network.Network` then (:class:`ScriptRun`); a shell or interpreter with nothing to run (``sh``, ``python``)
  reads an empty standard input and exits 0 at once, unless ``stdin`` is kept
  open;
* an image that needs configuration it was not given (``POSTGRES_PASSWORD``)
  prints its complaint and exits 1.
"""

from __future__ import annotations

import functools
import math
import posixpath
import re
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Iterable, Mapping, Protocol

from ..images import SERVER, TOOL, Image, MiB, Profile, profile_for
from ..store import Store
from . import ContainerRef, shell
from .exec_commands import ExecStartError, run, sandbox_for
from .fs import File, FileSystem
from .network import Network
from .programs import BUSYBOX, DISTROLESS, PROGRAMS, Invocation
from .timed_shell import (BUILTIN, FOREVER, RUNS_BRIEFLY, RUNS_FOREVER, SLEEPS, FileChange, TimedShell,
                          sleep_seconds, split_forever_loop)

COMMON_HEALTH_PATHS = frozenset({
    "/", "/index.html", "/health", "/healthz", "/healthcheck", "/health/live", "/health/ready", "/health/liveness",
    "/health/readiness", "/livez", "/readyz", "/live", "/ready", "/alive", "/ping", "/status", "/metrics",
    "/actuator/health", "/actuator/health/liveness", "/actuator/health/readiness", "/-/healthy", "/-/ready",
    "/api/health",
})
RUNC_START = "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create " \
             "failed: unable to start container process: "
SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
INTERPRETERS = frozenset({"python", "python3", "node", "ruby", "perl", "java", "php", "dotnet", "deno", "bun",
                          "irb", "jshell"})
_INLINE_CODE_FLAGS = frozenset({"-c", "-e", "-E", "-wle", "-le", "-we", "--eval", "-p", "--print", "-r"})
_ENTRYPOINT_WRAPPERS = re.compile(r"(^|/)(docker-entrypoint|entrypoint|__cacert_entrypoint|docker-entrypoint-"
                                  r"wrapper)\.sh$")

# The base tools of each image flavor, beyond what the exec emulation interprets.
_DEBIAN_TOOLS = frozenset({
    "sh", "bash", "dash", "sleep", "touch", "rm", "mkdir", "cp", "mv", "ln", "chmod", "chown", "date", "id",
    "whoami", "kill", "test", "[", "find", "xargs", "sort", "uniq", "cut", "tr", "tee", "yes", "seq", "expr",
    "nohup", "timeout", "stat", "uname", "dirname", "basename", "readlink", "df", "du", "sed", "gzip", "md5sum",
    "sha256sum", "base64", "mount", "getent", "tail", "head", "sync", "nice", "stty", "mktemp", "realpath",
})
_BUSYBOX_TOOLS = _DEBIAN_TOOLS | frozenset({"ash", "wget", "nc", "ps", "top", "vi", "ping", "nslookup", "netstat",
                                           "ifconfig", "ip", "free", "awk", "less", "more", "watch", "telnet"})


# ---- the process -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Line:
    at: float  # seconds since the process started
    text: str
    stream: str = "stdout"


@dataclass(frozen=True)
class HttpAnswer:
    """What an HTTP request to the process gets: a status, or a transport error (``{url}`` placeholder)."""

    status: int | None = None
    error: str | None = None
    body_bytes: int = 615


@dataclass(frozen=True)
class ExecOutcome:
    output: bytes
    exit_code: int
    start_error: str | None = None  # the runtime could not start the command (runc's message)


REFUSED = HttpAnswer(error="dial tcp {address}: connect: connection refused")


@dataclass(frozen=True)
class Process:
    """What one run of a container does; see the module docstring."""

    argv: tuple[str, ...]
    executable: str  # the file the runtime executes
    start_error: str | None = None  # runc's words when it cannot start the process
    lines: tuple[Line, ...] = ()
    repeat_every: float | None = None  # ``repeated`` lines are written again every this many seconds
    repeat_from: float = 0.0
    repeated: tuple[Line, ...] = ()  # offsets within one period
    exit_after: float | None = None  # None: runs until stopped
    exit_code: int = 0
    startup: float = 0.0  # seconds until it listens and answers
    ports: frozenset[int] = frozenset()
    protocol: str = "http"  # what its ports speak: http, grpc or tcp
    http_paths: frozenset[str] = COMMON_HEALTH_PATHS
    response_seconds: float = 0.0
    memory_start: int = 1 * MiB
    memory: int = 1 * MiB  # once started
    memory_growth: float = 0.0  # bytes per second after start-up (a leak)
    startup_cpu: float = 0.0  # cores while starting
    cpu: float = 0.0  # cores once started
    stop_seconds: float | None = 0.2  # from SIGTERM to exit; None: ignores SIGTERM until killed
    stop_exit_code: int = 0
    files: tuple[FileChange, ...] = ()
    access_log: str | None = None  # a line per HTTP request it answers (see access_line)
    # A script that looks at the cluster at ``continuation.due`` (seconds since start): what it does from then
    # on is ``continuation.resume(t)``, asked once the clock is there. Until then it runs on, as known so far.
    continuation: "ScriptRun | None" = None

    # ---- network ---------------------------------------------------------------------------------------------
    def listens(self, port: int, t: float) -> bool:
        return port in self.ports and t >= self.startup and not self.exited_by(t)

    def exited_by(self, t: float) -> bool:
        return self.exit_after is not None and t >= self.exit_after

    def http(self, port: int, path: str, t: float) -> HttpAnswer:
        if not self.listens(port, t):
            return REFUSED
        if self.protocol == "grpc":
            return HttpAnswer(error='net/http: HTTP/1.x transport connection broken: malformed HTTP response '
                                    '"\\x00\\x00\\x06\\x04\\x00\\x00\\x00\\x00\\x00\\x00\\x05\\x00\\x00@\\x00"')
        if self.protocol != "http":
            return HttpAnswer(error="EOF")
        bare = path.split("?")[0] or "/"
        return HttpAnswer(200) if bare in self.http_paths else HttpAnswer(404, body_bytes=153)

    def grpc_health(self, port: int, t: float) -> str | None:
        """``SERVING``, an error text, or None when nothing listens."""
        if not self.listens(port, t):
            return None
        if self.protocol == "grpc":
            return "SERVING"
        return "error: health rpc probe failed: rpc error: code = Unavailable desc = connection closed before " \
               "server preface received"

    # ---- resources ---------------------------------------------------------------------------------------------
    def memory_at(self, t: float) -> int:
        if t < self.startup:
            return int(self.memory_start + (self.memory - self.memory_start) * t / self.startup)
        return int(self.memory + self.memory_growth * (t - self.startup))

    def cpu_at(self, t: float) -> float:
        return self.startup_cpu if t < self.startup else self.cpu

    def oom_after(self, limit: int) -> float | None:
        """When the working set first goes over ``limit`` bytes, if ever."""
        if self.memory_start > limit:
            return 0.0
        if self.memory > limit:
            return self.startup * (limit - self.memory_start) / (self.memory - self.memory_start)
        if self.memory_growth > 0:
            return self.startup + (limit - self.memory) / self.memory_growth
        return None

    def next_change(self, t: float) -> float | None:
        """The next moment after ``t`` at which its output, resources or answers change."""
        moments = []
        if self.lines and self.lines[-1].at > t:  # lines are in time order
            moments.append(next(line.at for line in self.lines if line.at > t))
        if t < self.startup:
            moments.append(self.startup)
        if self.exit_after is not None and self.exit_after > t:
            moments.append(self.exit_after)
        if self.repeat_every and self.repeated:
            moments.append(self.repeat_from + max(0.0, math.floor((t - self.repeat_from) / self.repeat_every) + 1)
                           * self.repeat_every)
        if self.continuation is not None and self.continuation.due > t:
            moments.append(self.continuation.due)
        return min(moments) if moments else None

    def resumed(self, t: float) -> "Process":
        """The process as known at ``t``: a script that waited on the cluster has run on to ``t``."""
        if self.continuation is None or self.continuation.due > t + 1e-9:
            return self
        return self.continuation.resume(t)

    # ---- output --------------------------------------------------------------------------------------------------
    def output_between(self, start: float, end: float) -> list[Line]:
        """Lines written in (start, end], with their times; the first call passes start = -1."""
        lines = self.lines
        out = [line for line in lines if start < line.at <= end] if lines and lines[-1].at > start else []
        if self.repeat_every and self.repeated:
            first = max(0, math.floor((start - self.repeat_from) / self.repeat_every))
            period = first
            while True:
                base = self.repeat_from + period * self.repeat_every
                if base > end:
                    break
                out.extend(Line(base + line.at, line.text, line.stream) for line in self.repeated
                           if start < base + line.at <= end)
                period += 1
        out.sort(key=lambda line: line.at)
        return out

    def files_at(self, t: float) -> dict[str, bytes | None]:
        state: dict[str, bytes | None] = {}
        for change in self.files:
            if change.at <= t:
                state[change.path] = change.content
        return state

    # ---- exec'd commands (exec probes, preStop hooks) ---------------------------------------------------------
    def exec(self, argv: list[str], t: float, sandbox_factory) -> ExecOutcome:
        """What ``argv`` exec'd into the container returns at ``t``; ``sandbox_factory()`` builds its view."""
        name = posixpath.basename(argv[0]) if argv else ""
        check = _health_tool(self, name, argv[1:], t)
        if check is not None:
            return check
        sandbox = sandbox_factory()
        _overlay(sandbox.fs, self.files_at(t))
        try:
            result = run(sandbox, list(argv), b"")
        except ExecStartError as exc:
            return ExecOutcome(b"", 126, str(exc))
        return ExecOutcome(b"".join(data for _, data in result.output), result.exit_code)


def _overlay(fs: FileSystem, files: dict[str, bytes | None]) -> None:
    for path, content in files.items():
        if content is None:
            fs.nodes.pop(path, None)
        else:
            fs.add(path, File(content))


def _health_tool(process: Process, name: str, args: list[str], t: float) -> ExecOutcome | None:
    """The answers of the health-check tools images ship, from the process's own listening state."""
    port_of = {"pg_isready": 5432, "redis-cli": 6379, "valkey-cli": 6379, "mysqladmin": 3306}
    if name in port_of:
        port = int(_flag_value(args, ("-p", "--port")) or port_of[name])
        up = process.listens(port, t)
        if name == "pg_isready":
            return ExecOutcome(b"/var/run/postgresql:5432 - accepting connections\n" if up
                               else b"/var/run/postgresql:5432 - no response\n", 0 if up else 2)
        if name == "mysqladmin":
            return ExecOutcome(b"mysqld is alive\n" if up else b"mysqladmin: connect to server at 'localhost' "
                               b"failed\n", 0 if up else 1)
        return ExecOutcome(b"PONG\n" if up else f"Could not connect to Redis at 127.0.0.1:{port}: Connection "
                           "refused\n".encode(), 0 if up else 1)
    if name in ("curl", "wget"):
        url = next((a for a in args if "://" in a or a.startswith(("localhost", "127.0.0.1"))), None)
        if url is None:
            return None
        match = re.match(r"^(?:https?://)?(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])(?::(\d+))?(/[^ ]*)?$", url)
        if match is None:
            return None
        port = int(match.group(2) or 80)
        answer = process.http(port, match.group(3) or "/", t)
        return _curl_outcome(name, args, port, answer)
    if name == "grpc_health_probe":
        address = _flag_value(args, ("-addr", "--addr")) or ""
        port = int(address.rpartition(":")[2] or 0) if address.rpartition(":")[2].isdigit() else 0
        health = process.grpc_health(port, t)
        if health == "SERVING":
            return ExecOutcome(b"status: SERVING\n", 0)
        return ExecOutcome(f"timeout: failed to connect service \"{address}\" within 1s\n".encode(), 2)
    return None


def _curl_outcome(name: str, args: list[str], port: int, answer: HttpAnswer) -> ExecOutcome:
    fail_on_error = any(a in ("-f", "--fail", "-fs", "-sf", "-fsS", "-sSf", "-fsSL") for a in args) or name == "wget"
    if answer.status is None:
        if name == "wget":
            return ExecOutcome(f"wget: can't connect to remote host (127.0.0.1): Connection refused\n".encode(), 1)
        return ExecOutcome(f"curl: (7) Failed to connect to localhost port {port} after 0 ms: Couldn't connect "
                           "to server\n".encode(), 7)
    if answer.status >= 400 and fail_on_error:
        if name == "wget":
            return ExecOutcome(f"wget: server returned error: HTTP/1.1 {answer.status} Not Found\n".encode(), 1)
        return ExecOutcome(f"curl: (22) The requested URL returned error: {answer.status}\n".encode(), 22)
    return ExecOutcome(b"", 0)


def _flag_value(args: list[str], names: tuple[str, ...]) -> str | None:
    for i, arg in enumerate(args):
        for flag in names:
            if arg == flag and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(flag + "="):
                return arg[len(flag) + 1:]
    return None


# ---- asking ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ContainerContext:
    """What a provider may read about the container being started: cluster state only."""

    pod: dict
    container: dict
    kind: str  # "init", "sidecar" or "regular"
    image: Image
    env: Mapping[str, str]
    restart_count: int
    store: Store
    started: float  # the twin's clock at the start
    network: Network | None = None  # what connections from the pod get (the store's view when None)

    @property
    def ref(self) -> ContainerRef:
        return ContainerRef("initContainers" if self.kind != "regular" else "containers", self.container)


class Behaviour(Protocol):
    def process(self, ctx: ContainerContext) -> Process | None:
        """What the container does this time, or None to let the next provider answer."""


class Behaviours:
    """The providers the kubelet asks, in order; the default answers last."""

    def __init__(self, providers: Iterable[Behaviour] = ()):
        self.providers: list[Behaviour] = [*providers, DefaultBehaviour()]

    def add(self, provider: Behaviour) -> None:
        """Ask ``provider`` before the ones already there."""
        self.providers.insert(0, provider)

    def process(self, ctx: ContainerContext) -> Process:
        for provider in self.providers:
            answer = provider.process(ctx)
            if answer is not None:
                return answer
        raise AssertionError("the default behaviour answers for every container")


# ---- the default ----------------------------------------------------------------------------------------------

def command_line(container: dict, image: Image) -> list[str]:
    """The argv the runtime executes: the container's command/args over the image's entrypoint/cmd."""
    command = list(container.get("command") or [])
    args = container.get("args")
    if command:
        return command + list(args or [])
    return list(image.config.entrypoint) + list(args if args is not None else image.config.cmd)


class DefaultBehaviour:
    """Behaviour from the pod spec and the image alone (see the module docstring)."""

    def process(self, ctx: ContainerContext) -> Process:
        image, container = ctx.image, ctx.container
        argv = command_line(container, image)
        if not argv:
            return Process((), "", start_error=RUNC_START + 'exec: "": executable file not found in $PATH: unknown')
        executable, problem = resolve_executable(argv[0], image, ctx.env.get("PATH", ""))
        if problem is not None:
            return Process(tuple(argv), argv[0], start_error=RUNC_START + problem + ": unknown")
        program = _unwrap(argv)
        profile = profile_for(image)
        process = _missing_configuration(profile, ctx.env, program, image) or \
            _ProcessBuilder(ctx, profile).build(program)
        return replace(process, argv=tuple(argv), executable=executable)


def resolve_executable(command: str, image: Image, path: str) -> tuple[str, str | None]:
    """The file ``command`` names in the image, or runc's complaint that there is none."""
    config = image.config
    if "/" in command:
        full = posixpath.normpath(posixpath.join(config.workdir, command))
        name = posixpath.basename(full)
        known = {posixpath.normpath(posixpath.join(config.workdir, p))
                 for p in (*config.entrypoint[:1], *config.servers, *config.programs) if "/" in p}
        if full in known or (posixpath.dirname(full) in _BIN_DIRS and _has_program(image, name)):
            return full, None
        return full, f'exec: "{command}": stat {command}: no such file or directory'
    if _has_program(image, command) and any(d in _BIN_DIRS for d in path.split(":")):
        image_own = command in config.programs or command in config.entrypoint[:1]
        directory = "/usr/local/bin" if image_own else "/bin" if config.flavor == BUSYBOX else "/usr/bin"
        return f"{directory}/{command}", None
    return command, f'exec: "{command}": executable file not found in $PATH'


_BIN_DIRS = frozenset({"/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"})


def _has_program(image: Image, name: str) -> bool:
    config = image.config
    if name in config.programs or any(posixpath.basename(p) == name for p in config.entrypoint[:1]):
        return True
    if config.flavor == DISTROLESS:
        return False
    base = _BUSYBOX_TOOLS if config.flavor == BUSYBOX else _DEBIAN_TOOLS
    if config.flavor == BUSYBOX and name == "bash":
        return False
    return name in base or name in PROGRAMS


def _unwrap(argv: list[str]) -> list[str]:
    """The program an entrypoint wrapper script hands over to (``docker-entrypoint.sh postgres``)."""
    if argv and _ENTRYPOINT_WRAPPERS.search(argv[0]) and len(argv) > 1:
        return argv[1:]
    return argv


def _missing_configuration(profile: Profile, env: Mapping[str, str], program: list[str],
                           image: Image) -> Process | None:
    if profile.requires_env is None or not program:
        return None
    if posixpath.basename(program[0]) not in {posixpath.basename(s) for s in image.config.servers}:
        return None
    wanted, complaint, code = profile.requires_env
    if any(env.get(name) for name in wanted):
        return None
    lines = tuple(Line(0.1, text, "stderr") for text in complaint)
    return Process(tuple(program), program[0], lines=lines, exit_after=0.2, exit_code=code,
                   memory_start=2 * MiB, memory=2 * MiB)


class _ProcessBuilder:
    """Builds the default :class:`Process` of one container start."""

    def __init__(self, ctx: ContainerContext, profile: Profile):
        self.ctx = ctx
        self.profile = profile
        self.image = ctx.image
        spec = ctx.container
        self.declared_ports = frozenset(p["containerPort"] for p in spec.get("ports") or ()
                                        if p.get("containerPort") and p.get("protocol", "TCP") == "TCP")
        self.keeps_stdin = bool(spec.get("stdin"))

    def build(self, argv: list[str]) -> Process:
        name = posixpath.basename(argv[0])
        args = argv[1:]
        config = self.image.config
        if argv[0] in config.servers or name in config.servers:
            return self.server(self.image.config.ports, self.profile)
        if name in SHELLS:
            return self.shell(args)
        if name == "sleep":
            seconds = sleep_seconds(args)
            if seconds is None:
                return self.exits(f"sleep: invalid time interval ‘{' '.join(args)}’", 1)
            return self.idle(None if seconds == math.inf else seconds)
        if name == "tail" and ("-f" in args or "-F" in args):
            return self.idle(None)
        if name in INTERPRETERS:
            return self.interpreter(args)
        if self.declared_ports:
            return self.server((), self.app_profile())
        if name in PROGRAMS:
            return self.tool(argv)
        if name in config.programs and self.profile.role == TOOL:
            return self.exits_with(tuple(Line(0.05, text, "stderr") for text in self.profile.usage),
                                   self.profile.usage_exit) if not args else self.exits_with((), 0)
        return self.exits_with((), 0, after=0.5)

    # ---- kinds of process ---------------------------------------------------------------------------------------
    def server(self, image_ports: Iterable[int], profile: Profile) -> Process:
        ports = frozenset(image_ports) | self.declared_ports
        protocol = "grpc" if profile.grpc else "http" if profile.http else "tcp"
        startup = profile.startup_seconds
        lines = tuple(Line(min(startup, 0.05 * i), self._render(text)) for i, text in enumerate(profile.log))
        return Process((), "", lines=lines, startup=startup, ports=ports, protocol=protocol,
                       http_paths=COMMON_HEALTH_PATHS | frozenset(profile.health_paths),
                       memory_start=min(profile.memory, 2 * MiB), memory=profile.memory,
                       startup_cpu=profile.startup_millicores / 1000, cpu=profile.cpu_millicores / 1000,
                       stop_seconds=profile.stop_seconds, stop_exit_code=profile.stop_exit_code,
                       access_log=profile.access_log)

    def app_profile(self) -> Profile:
        """An application built on the image (its runtime's footprint), serving HTTP on the declared ports."""
        profile = self.profile
        if profile.role == SERVER:
            return profile
        return Profile(memory=max(profile.memory, 8 * MiB), startup_seconds=max(profile.startup_seconds, 1.0),
                       cpu_millicores=max(profile.cpu_millicores, 1.0), startup_millicores=200,
                       stop_exit_code=profile.stop_exit_code)

    def interpreter(self, args: list[str]) -> Process:
        if not args:
            if self.declared_ports:
                return self.server((), self.app_profile())
            return self.idle(None) if self.keeps_stdin else self.exits_with((), 0)
        if args[:2] == ["-m", "http.server"]:
            port = int(args[2]) if len(args) > 2 and args[2].isdigit() else 8000
            process = self.server((port,), self.app_profile())
            return replace(process, http_paths=frozenset({"/", "/index.html"}))
        if args[0] in _INLINE_CODE_FLAGS:
            if self.declared_ports:
                return self.server((), self.app_profile())
            return self.exits_with((), 0, after=0.5)
        return self.server((), self.app_profile())

    def idle(self, exit_after: float | None) -> Process:
        return Process((), "", exit_after=exit_after, memory_start=256 * 1024, memory=384 * 1024,
                       stop_seconds=None)

    def exits(self, text: str, code: int) -> Process:
        return self.exits_with((Line(0.0, text, "stderr"),), code)

    def exits_with(self, lines: tuple[Line, ...], code: int, after: float = 0.05) -> Process:
        return Process((), "", lines=lines, exit_after=after, exit_code=code, memory_start=1 * MiB, memory=1 * MiB)

    def tool(self, argv: list[str]) -> Process:
        try:
            result = run(self._sandbox(), argv, b"")
        except ExecStartError:
            return self.exits_with((), 127)
        lines = _lines_of([(0.0, fd, data) for fd, data in result.output])
        return self.exits_with(lines, result.exit_code)

    def shell(self, args: list[str]) -> Process:
        while args and args[0] in ("-e", "-x", "-l", "-ex", "-xe", "-eu", "-eux", "-euo", "pipefail", "-o",
                                   "--login"):
            args = args[1:]
        if not args or args[0] != "-c":
            if args:  # a script file from the image or a volume: unknown content, taken to keep running
                return self.idle(None)
            return self.idle(None) if self.keeps_stdin else self.exits_with((), 0)
        script = args[1] if len(args) > 1 else ""
        loop = split_forever_loop(script)
        if loop is not None:
            return self._looping(*loop)
        try:
            shell.parse(script)
        except shell.Unsupported:
            return self.idle(None)  # constructs the twin cannot follow: taken to keep the container running
        except shell.ShellSyntaxError:
            pass  # the shell itself reports it and exits 2
        return self._scripted(script)

    # ---- scripts --------------------------------------------------------------------------------------------
    def _run_script(self, script: str) -> tuple[TimedShell, int]:
        sandbox = self._sandbox()
        inv = Invocation(["sh", "-c", script], b"", dict(sandbox.env), sandbox.workdir, sandbox)
        session = TimedShell(inv, self._classify)
        return session, session.run(script)

    def _scripted(self, script: str) -> Process:
        sandbox = self._sandbox()
        inv = Invocation(["sh", "-c", script], b"", dict(sandbox.env), sandbox.workdir, sandbox)
        return ScriptRun(self, TimedShell(inv, self._classify), script).resume(0.0)

    def _looping(self, before: str, body: str) -> Process:
        first = self._run_script(before)[0] if before else None
        offset = first.clock if first is not None else 0.0
        lines = _lines_of([(w.at, w.fd, w.data) for w in first.written]) if first is not None else ()
        turn = self._run_script(body)[0]
        period = max(turn.clock, 1.0) if turn.clock != FOREVER else None
        repeated = _lines_of([(w.at, w.fd, w.data) for w in turn.written])
        if offset == FOREVER or period is None:
            return replace(self.idle(None), lines=lines + repeated)
        return Process((), "", lines=lines, repeat_every=period, repeat_from=offset, repeated=repeated,
                       memory_start=1 * MiB, memory=1 * MiB, stop_seconds=None,
                       files=tuple(first.files if first else ()) + tuple(
                           replace(f, at=f.at + offset) for f in turn.files))

    def _classify(self, argv: list[str]) -> str:
        name = posixpath.basename(argv[0])
        config = self.image.config
        if name == "sleep":
            return SLEEPS
        if argv[0] in config.servers or name in config.servers:
            return RUNS_FOREVER
        if name == "tail" and ("-f" in argv or "-F" in argv):
            return RUNS_FOREVER
        if name in INTERPRETERS and _has_program(self.image, name):
            if len(argv) > 1 and argv[1] not in _INLINE_CODE_FLAGS:
                return RUNS_FOREVER
            return RUNS_BRIEFLY
        if name in PROGRAMS or name in SHELLS or name in ("touch", "rm", "exit", "cd", "export", "unset", ":"):
            return BUILTIN
        if _has_program(self.image, name):
            return RUNS_BRIEFLY
        return BUILTIN  # not in the image: the shell reports "not found"

    def _sandbox(self):
        ctx = self.ctx
        # A container's own process does not read its service account token here; the file holds a placeholder.
        return sandbox_for(ctx.store, ctx.pod, ctx.ref, lambda *_: "", ctx.started, exec_pid=1, network=ctx.network)

    def _render(self, template: str) -> str:
        when = datetime.fromtimestamp(self.ctx.started, tz=timezone.utc)
        return re.sub(r"\{time:([^}]*)\}", lambda m: when.strftime(m.group(1)), template).replace(
            "{version}", self.image.version)


class ScriptRun:
    """A container's shell script run on as the cluster's clock reaches the moments it looks out.

    The session is suspended before each command that asks the network (:mod:`timed_shell`);
    :meth:`resume` runs it on through every such moment up to ``t`` and describes the process as far as
    it is known: its output and files so far, and either how it ended (an exit, a hand-over to a server,
    a loop found endless) or the next moment it waits for (``due``).
    """

    def __init__(self, builder: "_ProcessBuilder", session: TimedShell, script: str):
        self.builder = builder
        self.session = session
        self.steps = session.steps(script)
        self.due = 0.0  # the script's clock where it is suspended; it has not started yet
        self.started = False
        self.exit_code: int | None = None

    def resume(self, t: float) -> Process:
        while self.exit_code is None and self.due <= t + 1e-9:
            try:
                self.due = self.steps.send(None)
                self.started = True
            except StopIteration as done:
                self.exit_code = done.value
        return self._process()

    def _process(self) -> Process:
        session, builder = self.session, self.builder
        written = session.written
        files = tuple(session.files)
        forever = session.forever
        if forever is not None:
            lines = _lines_of([(w.at, w.fd, w.data) for w in written[:forever.first_output]])
            repeated = _lines_of([(w.at - forever.since, w.fd, w.data)
                                  for w in written[forever.first_output:forever.last_output]])
            return Process((), "", lines=lines, repeat_every=max(forever.every, 1.0), repeat_from=forever.since,
                           repeated=repeated, files=files, memory_start=1 * MiB, memory=1 * MiB, stop_seconds=None)
        lines = _lines_of([(w.at, w.fd, w.data) for w in written])
        if self.exit_code is None:
            return Process((), "", lines=lines, files=files, memory_start=1 * MiB, memory=1 * MiB,
                           stop_seconds=None, continuation=self)
        if session.handover is not None:
            follower = builder.build(session.handover.argv)
            at = session.handover.at
            return replace(follower, lines=lines + tuple(replace(line, at=line.at + at) for line in follower.lines),
                           startup=follower.startup + at, files=files,
                           exit_after=None if follower.exit_after is None else follower.exit_after + at)
        if session.clock == FOREVER:
            return replace(builder.idle(None), lines=lines, files=files)
        return Process((), "", lines=lines, exit_after=max(session.clock, 0.05), exit_code=self.exit_code,
                       files=files, memory_start=1 * MiB, memory=1 * MiB, stop_seconds=None)


def access_line(template: str, *, client: str, when: float, path: str, status: int, size: int, agent: str) -> str:
    """One access-log line of a server, e.g. nginx's combined format for a kubelet probe."""
    before, time_format, after = _split_time(template)
    stamp = datetime.fromtimestamp(when, tz=timezone.utc).strftime(time_format) if time_format else ""
    return (before + stamp + after).format(client=client, path=path, status=status, bytes=size, agent=agent)


@functools.lru_cache(maxsize=64)
def _split_time(template: str) -> tuple[str, str, str]:
    match = re.search(r"\{time:([^}]*)\}", template)
    if match is None:
        return template, "", ""
    return template[:match.start()], match.group(1), template[match.end():]


def _lines_of(writes: list[tuple[float, int, bytes]]) -> tuple[Line, ...]:
    """Split what was written into lines, each at the time its write happened."""
    lines: list[Line] = []
    for at, fd, data in writes:
        text = data.decode(errors="replace")
        for piece in text.splitlines():
            lines.append(Line(at, piece, "stderr" if fd == 2 else "stdout"))
    return tuple(lines)


def exec_format_error(process: Process) -> Process:
    """The process of an image built for another CPU: the kernel refuses to execute its entrypoint."""
    return Process(process.argv, process.executable,
                   lines=(Line(0.0, f"exec {process.executable}: exec format error", "stderr"),),
                   exit_after=0.01, exit_code=255, memory_start=0, memory=0)
