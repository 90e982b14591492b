"""Chaos Mesh experiments on a schedule: ITBench's ``scheduled-chaos-mesh-experiment``.

The fault creates a ``chaos-mesh.org/v1alpha1`` Schedule whose ``spec`` is the scenario's ``scheduleSpec``
(``type`` plus the embedded experiment: ``networkChaos``, ``podChaos``, ...), combined as ITBench combines it
with a run every minute, ``concurrencyPolicy: Forbid`` and ``historyLimit: 1``. Chaos Mesh then spawns the
experiment again and again, so deleting the running experiment alone is no repair: the Schedule is the root
cause, and deleting it (its experiments go with it, as their owner) ends the fault.

ITBench creates its Schedules in Chaos Mesh's own namespace, where its agent has admin rights. Here the agent's
Role covers the application's namespace only, so the Schedule lives there (its target names the namespace); an
experiment's selector defaults to its own namespace, as Chaos Mesh's does.

Each experiment kind is typed with the fields this catalog uses (extra fields are errors). What fires depends on
the kind and the action: :meth:`ScheduledChaos.alerts_for` gives the alerts a record usually raises, and a
scenario lists the ones it waits for.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..scenario.schema import ObjectRef
from .base import Fault, FaultArgs, FaultError, FaultRecord

GROUP, VERSION = "chaos-mesh.org", "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
# ITBench's combine(): a run every minute, never two at once, one finished experiment kept.
EVERY_MINUTE, FORBID, HISTORY = "* * * * *", "Forbid", 1
_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$")


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _go_duration(value: str | None) -> str | None:
    if value is not None and not _DURATION.match(value):
        raise ValueError(f"{value!r} is not a Go duration (write e.g. 500ms, 20s, 1m30s)")
    return value


class Selector(_Spec):
    namespaces: list[str] | None = None  # the Schedule's own namespace when omitted
    labelSelectors: dict[str, str] = Field(min_length=1)


class _Experiment(_Spec):
    mode: Literal["one", "all", "fixed", "fixed-percent", "random-max-percent"] = "all"
    value: str | None = None
    selector: Selector
    duration: str | None = None  # none: the experiment runs until it is deleted

    @field_validator("duration")
    @classmethod
    def _duration(cls, value):
        return _go_duration(value)

    @model_validator(mode="after")
    def _value_for_mode(self):
        if self.mode in ("fixed", "fixed-percent", "random-max-percent") and not self.value:
            raise ValueError(f"mode {self.mode} needs a value")
        return self


class _ContainerExperiment(_Experiment):
    containerNames: list[str] | None = None  # each selected pod's first container when omitted


class Delay(_Spec):
    latency: str
    jitter: str = "0ms"
    correlation: str = "0"

    @field_validator("latency", "jitter")
    @classmethod
    def _durations(cls, value):
        return _go_duration(value)


class Loss(_Spec):
    loss: str  # percent, as text (Chaos Mesh's type)
    correlation: str = "0"

    @field_validator("loss")
    @classmethod
    def _percent(cls, value: str) -> str:
        try:
            ok = 0 < float(value) <= 100
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"loss {value!r} is not a percentage in (0, 100]")
        return value


class PeerSelector(_Spec):
    mode: Literal["one", "all", "fixed", "fixed-percent", "random-max-percent"] = "all"
    value: str | None = None
    selector: Selector


class NetworkChaos(_Experiment):
    action: Literal["delay", "loss", "partition"]
    direction: Literal["to", "from", "both"] = "to"
    target: PeerSelector | None = None  # the other end; every peer when omitted
    delay: Delay | None = None
    loss: Loss | None = None

    @model_validator(mode="after")
    def _action_fields(self):
        if self.action == "delay" and self.delay is None:
            raise ValueError("action delay needs delay: {latency: ...}")
        if self.action == "loss" and self.loss is None:
            raise ValueError("action loss needs loss: {loss: ...}")
        if self.action == "partition" and (self.delay or self.loss):
            raise ValueError("action partition takes neither delay nor loss")
        return self


class PodChaos(_Experiment):
    action: Literal["pod-failure"]


class CpuStressor(_Spec):
    workers: int = Field(ge=1)
    load: int = Field(100, ge=0, le=100)  # percent of a core per worker


class MemoryStressor(_Spec):
    workers: int = Field(1, ge=1)
    size: str  # bytes with a unit (256MB, 1GB) or a percentage of the limit (80%)

    @field_validator("size")
    @classmethod
    def _size(cls, value: str) -> str:
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?(%|[KMGT]i?B|[KMGT]i?|B)?", value):
            raise ValueError(f"size {value!r} is neither bytes with a unit (256MB) nor a percentage (80%)")
        return value


class Stressors(_Spec):
    cpu: CpuStressor | None = None
    memory: MemoryStressor | None = None

    @model_validator(mode="after")
    def _some(self):
        if self.cpu is None and self.memory is None:
            raise ValueError("give a cpu or a memory stressor (or both)")
        return self


class StressChaos(_ContainerExperiment):
    stressors: Stressors


class BodyPatch(_Spec):
    type: Literal["JSON"] = "JSON"
    value: str


class HttpPatch(_Spec):
    body: BodyPatch


class HTTPChaos(_Experiment):
    target: Literal["Request", "Response"] = "Request"
    port: int = Field(ge=1, le=65535)
    method: str | None = None
    path: str = "*"
    abort: bool | None = None
    patch: HttpPatch | None = None

    @model_validator(mode="after")
    def _one_action(self):
        if bool(self.abort) == (self.patch is not None):
            raise ValueError("give exactly one of abort: true or patch: {body: ...}")
        return self


class JVMChaos(_ContainerExperiment):
    action: Literal["return", "exception", "latency", "stress"]
    class_: str | None = Field(None, alias="class")
    method: str | None = None
    returnValue: str | None = None  # action return: "null" makes callers meet a NullPointerException
    exception: str | None = None
    latency: int | None = Field(None, ge=1)  # milliseconds
    memType: Literal["heap", "stack"] | None = None  # action stress
    cpuCount: int | None = Field(None, ge=1)
    port: int = 9277  # the Byteman agent's port

    @model_validator(mode="after")
    def _action_fields(self):
        if self.action in ("return", "exception", "latency") and not (self.class_ and self.method):
            raise ValueError(f"action {self.action} needs class and method")
        needs = {"return": "returnValue", "exception": "exception", "latency": "latency"}.get(self.action)
        if needs and getattr(self, needs) is None:
            raise ValueError(f"action {self.action} needs {needs}")
        if self.action == "stress" and self.memType is None and self.cpuCount is None:
            raise ValueError("action stress needs memType or cpuCount")
        return self


class IOChaos(_ContainerExperiment):
    action: Literal["latency"]
    volumePath: str  # a mount point of the container
    path: str | None = None  # a glob under it; every file when omitted
    delay: str
    percent: int = Field(100, ge=1, le=100)

    @field_validator("delay")
    @classmethod
    def _delay(cls, value):
        return _go_duration(value)


class _Schedule(_Spec):
    schedule: str = EVERY_MINUTE
    concurrencyPolicy: Literal["Forbid", "Allow"] = FORBID
    historyLimit: int = Field(HISTORY, ge=1)


class NetworkSchedule(_Schedule):
    type: Literal["NetworkChaos"]
    networkChaos: NetworkChaos


class PodSchedule(_Schedule):
    type: Literal["PodChaos"]
    podChaos: PodChaos


class StressSchedule(_Schedule):
    type: Literal["StressChaos"]
    stressChaos: StressChaos


class HttpSchedule(_Schedule):
    type: Literal["HTTPChaos"]
    httpChaos: HTTPChaos


class JvmSchedule(_Schedule):
    type: Literal["JVMChaos"]
    jvmChaos: JVMChaos


class IoSchedule(_Schedule):
    type: Literal["IOChaos"]
    ioChaos: IOChaos


ScheduleSpec = Annotated[Union[NetworkSchedule, PodSchedule, StressSchedule, HttpSchedule, JvmSchedule, IoSchedule],
                         Field(discriminator="type")]
KINDS = ("NetworkChaos", "PodChaos", "StressChaos", "HTTPChaos", "JVMChaos", "IOChaos")
PLURALS = {kind: kind.lower() for kind in KINDS}  # networkchaos, podchaos, ...
EMBEDDED = {"NetworkChaos": "networkChaos", "PodChaos": "podChaos", "StressChaos": "stressChaos",  # key in a Schedule
            "HTTPChaos": "httpChaos", "JVMChaos": "jvmChaos", "IOChaos": "ioChaos"}


class ScheduleArgs(FaultArgs):
    scheduleSpec: ScheduleSpec


def experiment_of(spec) -> tuple[str, _Experiment]:
    """The embedded experiment's kind and spec."""
    return spec.type, getattr(spec, EMBEDDED[spec.type])


class ScheduledChaos(Fault):
    name = "scheduled-chaos-mesh-experiment"
    description = ("Creates a Chaos Mesh Schedule that spawns an experiment (network delay, loss or partition, "
                   "pod failure, CPU or memory stress, HTTP abort or body patch, JVM return or stress, IO latency) "
                   "every minute in the application's namespace.")
    Args = ScheduleArgs
    target_kinds = ("Schedule",)
    expected_alerts = ()  # by kind and action: see alerts_for

    # What a record of each kind and action usually raises on the shipped rules. A CPU stressor slows a
    # service only where it outgrows the container's CPU limit, a memory stressor kills only past the memory limit.
    ALERTS: dict[tuple[str, str], tuple[str, ...]] = {
        ("NetworkChaos", "delay"): ("HighRequestLatency",),
        ("NetworkChaos", "loss"): ("HighRequestErrorRate",),
        ("NetworkChaos", "partition"): ("HighRequestErrorRate",),
        ("PodChaos", "pod-failure"): ("HighRequestErrorRate",),
        ("StressChaos", "cpu"): ("HighRequestLatency",),
        ("StressChaos", "memory"): ("KubePodCrashLooping",),
        ("HTTPChaos", "abort"): ("HighRequestErrorRate",),
        ("HTTPChaos", "patch"): ("HighRequestErrorRate",),
        ("JVMChaos", "return"): ("HighRequestErrorRate",),
        ("JVMChaos", "exception"): ("HighRequestErrorRate",),
        ("JVMChaos", "latency"): ("HighRequestLatency",),
        ("JVMChaos", "stress"): ("HighRequestErrorRate",),
        ("IOChaos", "latency"): ("HighRequestLatency",),
    }

    def check(self, target: ObjectRef | None, args: dict) -> ScheduleArgs:
        checked = super().check(target, args)
        if target.apiVersion not in (None, API_VERSION):
            raise ValueError(f"a Schedule's apiVersion is {API_VERSION}, not {target.apiVersion}")
        if len(target.name) > 57:  # Chaos Mesh appends 6 characters to name each experiment
            raise ValueError(f"a Schedule's name has at most 57 characters; {target.name!r} has {len(target.name)}")
        return checked

    @classmethod
    def alerts_for(cls, args: ScheduleArgs) -> tuple[str, ...]:
        kind, experiment = experiment_of(args.scheduleSpec)
        if kind == "StressChaos":
            stressors = experiment.stressors
            return tuple(sorted({a for name in ("cpu", "memory") if getattr(stressors, name) is not None
                                 for a in cls.ALERTS[(kind, name)]}))
        if kind == "HTTPChaos":
            return cls.ALERTS[(kind, "abort" if experiment.abort else "patch")]
        return cls.ALERTS[(kind, experiment.action)]

    def body(self, record: FaultRecord) -> dict:
        t = record.target
        spec = record.args.scheduleSpec.model_dump(by_alias=True, exclude_none=True)
        return {"apiVersion": API_VERSION, "kind": "Schedule", "metadata": {"name": t.name, "namespace": t.namespace},
                "spec": spec}

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        t = record.target
        custom = client.CustomObjectsApi(api)
        if record.saved.get("uid") and _read(custom, t) is not None:
            return
        try:
            created = custom.create_namespaced_custom_object(GROUP, VERSION, t.namespace, "schedules",
                                                             self.body(record))
        except ApiException as exc:
            if exc.status == 404:
                raise FaultError(f"cannot create Schedule {t.namespace}/{t.name}: the cluster does not serve "
                                 f"{API_VERSION} schedules (is Chaos Mesh installed?)") from None
            raise FaultError(f"cannot create Schedule {t.namespace}/{t.name}: {exc.reason}: {exc.body}") from None
        record.saved["uid"] = created["metadata"]["uid"]
        record.saved["kind"] = record.args.scheduleSpec.type

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        """Delete the Schedule, then any experiment it spawned (their owner's deletion takes them too, in time)."""
        if "uid" not in record.saved:
            return
        t = record.target
        custom = client.CustomObjectsApi(api)
        try:
            custom.delete_namespaced_custom_object(GROUP, VERSION, t.namespace, "schedules", t.name,
                                                   propagation_policy="Background")
        except ApiException as exc:
            if exc.status != 404:
                raise FaultError(f"cannot delete Schedule {t.namespace}/{t.name}: {exc.reason}") from None
        plural = PLURALS[record.saved["kind"]]
        try:
            children = custom.list_namespaced_custom_object(GROUP, VERSION, t.namespace, plural,
                                                            label_selector=f"managed-by={t.name}")["items"]
        except ApiException as exc:
            raise FaultError(f"cannot list the experiments Schedule {t.namespace}/{t.name} spawned: "
                             f"{exc.reason}") from None
        for child in children:
            try:
                custom.delete_namespaced_custom_object(GROUP, VERSION, t.namespace, plural, child["metadata"]["name"])
            except ApiException as exc:
                if exc.status != 404:  # already collected with its owner
                    raise FaultError(f"cannot delete {child['kind']} {t.namespace}/{child['metadata']['name']}, "
                                     f"spawned by Schedule {t.name}: {exc.reason}") from None
        del record.saved["uid"]


def _read(custom: client.CustomObjectsApi, t: ObjectRef) -> dict | None:
    try:
        return custom.get_namespaced_custom_object(GROUP, VERSION, t.namespace, "schedules", t.name)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise FaultError(f"cannot read Schedule {t.namespace}/{t.name}: {exc.reason}") from None


FAULTS = (ScheduledChaos(),)
