"""The behaviour sheet: what an application's containers do, as data the traffic engine runs.

A sheet describes one application (``apps/<name>/behaviour.yaml``). It never names a namespace,
a pod or a scenario: it says how to recognise a service's containers, what they listen on, what
each operation does (its span, its latency and CPU, the calls it makes through which environment
variable), how failures are worded and logged, and what the feature flags change. Everything
else (where the pods run, whether an address resolves, whether a port is reached, which flags
are on) the engine reads from the cluster.

Units: durations as Go writes them (``2ms``, ``1.5s``), memory and CPU as Kubernetes quantities
(``60Mi``, ``5m``); CPU per request is CPU time (a duration).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from . import typed_yaml
from .typed_yaml import SheetError
from .units import parse_bytes, parse_cores, parse_go_duration

Duration = Annotated[float, parse_go_duration]
Bytes = Annotated[int, parse_bytes]
Cores = Annotated[float, parse_cores]
Protocol = Literal["grpc", "http", "tcp"]
# A number, or "value": the numeric value of the flag's active variant.
FlagNumber = float | Literal["value"]

GRPC_CODES = ("OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
              "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
              "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED")
GrpcCode = Literal["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
                   "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                   "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"]


# ---- how clients word failures ------------------------------------------------------------------------------

@dataclass
class ClientWording:
    """How one client library reports each way a call can fail (placeholders in the module docstring of
    :mod:`.errors`)."""

    refused: str  # nothing listens at the address (or kube-proxy rejects: no endpoints)
    no_such_host: str  # the name does not resolve
    dns_timeout: str  # the resolver cannot be reached
    unreachable: str  # the connection attempt timed out (packets dropped)
    deadline: str  # the call's own deadline passed
    reset: str  # the connection was closed mid-call
    status: str  # the server answered with an error
    protocol: str  # the peer speaks another protocol
    auth: str = "{message}"  # the server refused the credential ({message}: the server's words)
    connect_timeout: Duration = 20.0  # how long a connection attempt to a silent address hangs
    # Whether the client span of a call answered with an HTTP 4xx is an error (OpenTelemetry's HTTP client
    # convention); Envoy's tracer marks only 5xx (and gRPC failures) with its error tag.
    errors_4xx: bool = True
    at: str = ""


# ---- errors a service reports ------------------------------------------------------------------------------

@dataclass
class ErrorSpec:
    """An error answer: its gRPC code or HTTP status, its message (``{error}`` is the cause's text)."""

    grpc: GrpcCode | None = None
    http: int | None = None
    message: str = "{error}"
    span_error: bool | None = None  # whether the server span is marked as an error; None: as OpenTelemetry rules
    at: str = ""

    def __post_init__(self) -> None:
        if (self.grpc is None) == (self.http is None):
            raise ValueError("an error names exactly one of grpc (a status code) or http (a status)")


# ---- addresses and credentials --------------------------------------------------------------------------------

@dataclass
class Address:
    """Where a container finds a peer: an environment variable holding ``host:port``, a URL or a connection string,
    a host and a port in two variables, or a fixed address."""

    env: str | None = None
    key: str | None = None  # the key naming the host inside a ``Key=value;...`` connection string
    host_env: str | None = None
    port_env: str | None = None
    port: int | None = None  # the port when the value names none (postgres 5432)
    value: str | None = None  # a fixed address compiled into the program
    at: str = ""

    def __post_init__(self) -> None:
        given = [self.env is not None, self.host_env is not None, self.value is not None]
        if sum(given) != 1:
            raise ValueError("an address names exactly one of env, host_env (with port_env) or value")
        if self.host_env is not None and self.port_env is None and self.port is None:
            raise ValueError("host_env needs port_env or port")


@dataclass
class CredentialSource:
    """Where a credential comes from: an environment variable (or one key of a connection string in it), the
    value after a command-line flag, or a fixed value."""

    env: str | None = None
    key: str | None = None  # ``Password`` in ``Host=x;Password=y``, ``password`` in ``host:6379,password=y``
    arg: str | None = None  # ``--requirepass``: the argument after it
    value: str | None = None
    at: str = ""

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.env, self.arg, self.value)) != 1:
            raise ValueError("a credential comes from exactly one of env, arg or value")


@dataclass
class Auth:
    """What a server expects from its clients, and its words when they present the wrong thing."""

    expects: CredentialSource
    missing: str  # no credential presented
    wrong: str  # a credential that does not match
    latency: Duration = 0.001  # how long the client takes to give up (connection retries)
    at: str = ""


# ---- operations and calls -------------------------------------------------------------------------------------

@dataclass
class Latency:
    median: Duration
    spread: float = 0.3  # standard deviation of the logarithm of latency
    at: str = ""


@dataclass
class Call:
    """One kind of downstream call an operation makes."""

    to: str  # "service.operation"
    address: Address
    span: str | None = None  # the caller's client span name; None: the client is not instrumented
    kind: Literal["client", "producer"] = "client"
    client: str | None = None  # a key of the sheet's clients (default: the service's)
    count: float = 1.0  # calls per request, on average
    chance: float = 1.0  # share of requests that make the call at all
    parallel: bool = False  # the calls of one request run at once (latency of one, not the sum)
    timeout: Duration | None = None  # the caller's deadline for the call
    retries: int = 0
    optional: bool = False  # a failure does not fail the request
    error: str = "{error}"  # how the caller words this call's failure when passing it up
    log: str | None = None  # a line the caller logs when the call fails ({error})
    presents: CredentialSource | None = None
    topic: str | None = None  # for producers: the topic written
    attributes: dict[str, str] = field(default_factory=dict)
    at: str = ""
    service: str = field(init=False)  # the callee's service and operation, from ``to``
    operation: str = field(init=False)

    def __post_init__(self) -> None:
        self.service, _, self.operation = self.to.partition(".")


@dataclass
class Consume:
    """A consumer group reading a topic from the broker service at ``address``."""

    topic: str
    group: str
    broker: str  # the sheet's service name of the broker
    address: Address
    client: str | None = None  # wording of connection failures (default: the service's)
    at: str = ""


@dataclass
class OpLogs:
    success: list[str] = field(default_factory=list)
    failure: list[str] = field(default_factory=list)  # ``{error}``: the failure's text
    every: int = 1  # one success line per this many requests
    stream: Literal["stdout", "stderr"] = "stdout"
    failure_stream: Literal["stdout", "stderr"] = "stderr"
    at: str = ""


@dataclass
class Operation:
    span: str | None  # the span the service emits for it; None: not instrumented
    kind: Literal["server", "consumer", "internal"] = "server"
    ok_status: Literal["unset", "ok"] = "unset"  # the span status of a success (most instrumentations leave it unset)
    attributes: dict[str, str] = field(default_factory=dict)
    latency: Latency = field(default_factory=lambda: Latency(0.001))
    cpu: Duration = 0.0005  # CPU time per request
    calls: list[Call] = field(default_factory=list)
    failure: ErrorSpec | None = None  # the answer when a call it needs fails
    failures: dict[str, ErrorSpec] = field(default_factory=dict)  # the answer by cause, where it differs
    relays_status: bool = False  # a proxy: an upstream's HTTP error status is passed on as it is
    malformed: ErrorSpec | None = None  # the answer to a request whose body was tampered with
    consumes: Consume | None = None
    method: str | None = None  # the HTTP method it serves
    path: str | None = None  # the HTTP path it serves
    java: list[str] = field(default_factory=list)  # ``Class.method`` it runs (JVMChaos)
    disk: str | None = None  # a directory it writes per request (IOChaos)
    logs: OpLogs = field(default_factory=OpLogs)
    at: str = ""


# ---- feature flags ----------------------------------------------------------------------------------------------

@dataclass
class FlagEffect:
    """What a flag of the flagd configuration changes while its active variant is truthy."""

    flag: str
    operation: str | None = None  # the operation affected (None: the service as a whole)
    call: str | None = None  # with operation: the call affected (its ``to``)
    error_rate: FlagNumber | None = None  # share of requests that fail with ``error``
    error: ErrorSpec | None = None
    delay_ms: FlagNumber | None = None  # extra latency of the affected requests
    fraction: float = 1.0  # share of requests that get the delay
    cpu: Cores = 0.0  # extra CPU the service burns while the flag is on
    memory_growth: Bytes = 0  # bytes retained per request (a leak)
    latency_per_mib: Duration = 0.0  # latency added per MiB leaked so far
    address: str | None = None  # the call goes to this address instead
    count: FlagNumber | None = None  # the call is made this many times per request
    messages: FlagNumber | None = None  # a producer call writes this many more messages
    consumer_delay: Duration | None = None  # a consumer spends this long on each message
    logs: list[str] = field(default_factory=list)  # lines written per affected request
    at: str = ""


# ---- services -----------------------------------------------------------------------------------------------------

@dataclass
class PodMatch:
    """How the engine recognises the service's containers: the pod's labels and the container's name."""

    labels: dict[str, str]
    container: str
    at: str = ""


@dataclass
class Listener:
    port: int | None = None  # the port, or the default when port_env is unset
    port_env: str | None = None  # the environment variable the program reads its port from
    protocol: Protocol = "grpc"
    at: str = ""

    def __post_init__(self) -> None:
        if self.port is None and self.port_env is None:
            raise ValueError("a listener names port, port_env or both")


@dataclass
class RequiredEnv:
    name: str
    message: str  # what the program prints before exiting when the variable is unset
    exit_code: int = 1
    at: str = ""


@dataclass
class StartNeed:
    """A peer the program connects to as it starts, and exits without: DeathStarBench's services panic when their
    MongoDB does not answer. The twin asks the network at the container's start; when the connection is not open
    the program writes ``message`` (``{address}``: the peer) and exits ``after`` later with ``exit_code``."""

    address: Address
    message: str
    after: Duration = 5.0
    exit_code: int = 2
    at: str = ""


@dataclass
class Service:
    pods: PodMatch
    runtime: str  # go, java, dotnet, node, python, ruby, php, rust, cpp, envoy, nginx, ... (JVMChaos needs java)
    client: str | None = None  # the default wording of its calls' failures
    listen: list[Listener] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # HTTP paths it answers (probes)
    startup: Duration = 1.0
    memory: Bytes = 20 * 1024 * 1024
    cpu: Cores = 0.002  # idle use
    required_env: list[RequiredEnv] = field(default_factory=list)
    needs_at_start: list[StartNeed] = field(default_factory=list)
    startup_logs: list[str] = field(default_factory=list)
    auth: Auth | None = None
    flagd: Address | None = None  # where it evaluates feature flags
    flags: list[FlagEffect] = field(default_factory=list)
    serves_flags: str | None = None  # for flagd: the ConfigMap key of the flag definitions it serves
    programs: list[str] = field(default_factory=list)  # its executables, to recognise a script that runs it
    store_writers: list[str] = field(default_factory=list)  # clients that write into its store from a script
    operations: dict[str, Operation] = field(default_factory=dict)
    at: str = ""


# ---- the load generator -----------------------------------------------------------------------------------------

@dataclass
class EnvNumber:
    env: str
    default: float
    at: str = ""


@dataclass
class EnvSwitch:
    env: str
    default: bool
    at: str = ""


@dataclass
class Wait:
    min: Duration
    max: Duration
    at: str = ""


@dataclass
class BrowserUsers:
    """Browser sessions the load generator runs beside its plain HTTP users (an equal share of the users)."""

    enabled: EnvSwitch
    tasks: dict[str, int]  # operation of the generator -> weight
    pause: Duration = 2.0  # time a browser task waits after its page loads
    at: str = ""


@dataclass
class LoadGenerator:
    """Which service drives traffic, how its users are configured, and its mix of tasks."""

    service: str
    users: EnvNumber
    spawn_rate: EnvNumber
    autostart: EnvSwitch
    wait: Wait
    tasks: dict[str, int]  # operation of the generator -> weight
    on_start: str | None = None  # operation each user runs once when it starts
    browser: BrowserUsers | None = None
    at: str = ""


# ---- background: what the healthy application does wrong now and then ------------------------------------------

@dataclass
class SlowTail:
    """A share of an operation's requests that take longer (a GC pause, a cold cache, a slow disk)."""

    fraction: float
    delay: Duration
    at: str = ""


@dataclass
class Floor:
    """An operation's error and latency floor on a healthy cluster under the load generator.

    ``share`` of its requests are answered with ``error`` (a client error: a 4xx status or a gRPC code
    OpenTelemetry leaves unset, so the floor never marks a server span as an error); ``slow`` adds a tail.
    Both are scaled, per instance and per ``period`` of the sheet's background, by a factor drawn from the
    twin's seeded generator (log-normal, ``variation`` its spread), so the floor wanders as a real one does.
    ``source``: where the figure comes from (a published figure, a user's report, or "ours")."""

    source: str
    share: float = 0.0
    error: ErrorSpec | None = None
    slow: SlowTail | None = None
    at: str = ""

    def __post_init__(self) -> None:
        if (self.share > 0) != (self.error is not None):
            raise ValueError("share and error go together")
        if not 0 <= self.share < 0.05:
            raise ValueError("a floor's share is below 5% (a healthy application)")


@dataclass
class PullBackOffHistory:
    """A rollout that first named a tag the registry does not have and was fixed ``after`` later."""

    deployment: str
    tag: str
    after: Duration = 90.0
    at: str = ""


@dataclass
class JobHistory:
    """A Job run before the trial: it completes, or fails (``deadline``: killed after that long)."""

    name: str
    image: str
    command: list[str]
    deadline: Duration | None = None
    at: str = ""


@dataclass
class History:
    """What happened in the application's namespace before the trial (the harness creates it through the
    API; the twin reads none of it)."""

    image_pull: PullBackOffHistory | None = None
    jobs: list[JobHistory] = field(default_factory=list)
    at: str = ""


@dataclass
class Background:
    floor: dict[str, Floor] = field(default_factory=dict)  # "service.operation" -> its floor
    period: Duration = 60.0  # how long one draw of the floor's factor lasts
    variation: float = 0.6  # standard deviation of the factor's logarithm
    history: History | None = None
    at: str = ""


@dataclass
class Sheet:
    application: str
    clients: dict[str, ClientWording]
    services: dict[str, Service]
    load: LoadGenerator | None = None
    values: dict[str, list[str]] = field(default_factory=dict)  # lists log templates draw from ({product})
    background: Background = field(default_factory=lambda: Background())
    source: str = ""  # the file it was read from
    at: str = ""

    def operation(self, ref: str) -> Operation:
        service, _, op = ref.partition(".")
        return self.services[service].operations[op]


# ---- loading ---------------------------------------------------------------------------------------------------------

def load_sheet(path: str | Path) -> Sheet:
    """Read and check a behaviour sheet; raises :class:`SheetError` naming ``file:line`` and the field."""
    path = Path(path)
    sheet = typed_yaml.load(path.read_text(), path.name, Sheet)
    sheet.source = str(path)
    check(sheet)
    return sheet


def parse_sheet(text: str, source: str = "<sheet>") -> Sheet:
    sheet = typed_yaml.load(text, source, Sheet)
    sheet.source = source
    check(sheet)
    return sheet


def check(sheet: Sheet) -> None:
    """Cross-references the decoder cannot see: calls to known operations, known clients, an acyclic call graph."""
    for name, service in sheet.services.items():
        _known_client(sheet, service.client, service.at)
        for op_name, op in service.operations.items():
            for call in op.calls:
                _known_client(sheet, call.client, call.at)
                if (call.client or service.client) is None:
                    raise SheetError(f"{call.at}: the call to {call.to} has no client wording (set client on the call "
                                     f"or on service {name})")
                callee = sheet.services.get(call.service)
                if callee is None or call.operation not in callee.operations:
                    raise SheetError(f"{call.at}: {call.to!r} names no operation of the sheet")
                if call.kind == "producer" and call.topic is None:
                    raise SheetError(f"{call.at}: a producer call names its topic")
        for effect in service.flags:
            if effect.operation is not None and effect.operation not in service.operations:
                raise SheetError(f"{effect.at}: {name} has no operation {effect.operation!r}")
            if effect.call is not None:
                if effect.operation is None:
                    raise SheetError(f"{effect.at}: call needs operation")
                if all(c.to != effect.call for c in service.operations[effect.operation].calls):
                    raise SheetError(f"{effect.at}: operation {effect.operation} makes no call to {effect.call!r}")
            if (effect.error_rate is None) != (effect.error is None):
                raise SheetError(f"{effect.at}: error_rate and error go together")
        if service.flags and service.flagd is None:
            raise SheetError(f"{service.at}: service {name} has flags but no flagd address")
    if sheet.load is not None:
        _check_load(sheet, sheet.load)
    for ref, floor in sheet.background.floor.items():
        service, _, op = ref.partition(".")
        if service not in sheet.services or op not in sheet.services[service].operations:
            raise SheetError(f"{floor.at}: background.floor names no operation of the sheet: {ref!r}")
        if floor.error is not None and (floor.error.http is None or floor.error.http >= 500):
            raise SheetError(f"{floor.at}: a floor's error is a client error (an HTTP 4xx): the shipped rules fire "
                             f"on any server error")
    _check_acyclic(sheet)


def _known_client(sheet: Sheet, client: str | None, at: str) -> None:
    if client is not None and client not in sheet.clients:
        raise SheetError(f"{at}: unknown client {client!r} (clients: {', '.join(sheet.clients)})")


def _check_load(sheet: Sheet, load: LoadGenerator) -> None:
    generator = sheet.services.get(load.service)
    if generator is None:
        raise SheetError(f"{load.at}: the load generator names no service of the sheet: {load.service!r}")
    tasks = dict(load.tasks)
    if load.browser is not None:
        tasks.update(load.browser.tasks)
    for task in [*tasks, *([load.on_start] if load.on_start else [])]:
        if task not in generator.operations:
            raise SheetError(f"{load.at}: {load.service} has no operation {task!r}")


def _check_acyclic(sheet: Sheet) -> None:
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(ref: str, at: str) -> None:
        if state.get(ref) == 2:
            return
        if state.get(ref) == 1:
            raise SheetError(f"{at}: the call graph has a cycle through {ref}")
        state[ref] = 1
        for call in sheet.operation(ref).calls:
            visit(call.to, call.at)
        state[ref] = 2

    for name, service in sheet.services.items():
        for op_name, op in service.operations.items():
            visit(f"{name}.{op_name}", op.at)
