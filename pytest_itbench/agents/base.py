"""What an agent receives, what it returns, and the record of what it did.

An agent is anything with ``run(task, trajectory) -> Submission``: a Python object, a built-in, or an
executable (``exec:``) driven through environment variables and files. It sees only what a real
operator would (ARCHITECTURE.md, rule 4): the task text, a kubeconfig with restricted rights, the
observability URLs it is offered, a working directory and a deadline.
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Task:
    scenario_id: str
    domain: str  # sre, ciso, finops
    text: str
    kubeconfig: str  # path of a kubeconfig with the agent's (restricted) rights
    urls: dict[str, str]  # prometheus, alertmanager, jaeger, topology: only the signals offered
    workdir: str  # where the agent may write (CISO artifacts go here)
    deadline: float  # wall-clock epoch seconds
    time_limit: float  # seconds
    namespaces: tuple[str, ...] = ()  # the application's namespaces (the agent's reach)
    # Set by the harness at the deadline. A thread cannot be killed, so a Python agent that runs
    # past its deadline should check this between steps and return.
    cancelled: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)

    def remaining(self) -> float:
        """Seconds left until the deadline (0 once it has passed)."""
        return max(0.0, self.deadline - time.time())

    def to_dict(self) -> dict[str, Any]:
        """The JSON-safe fields (what an ``exec:`` agent reads from ``$ITBENCH_TASK``)."""
        return {"scenario_id": self.scenario_id, "domain": self.domain, "text": self.text,
                "kubeconfig": self.kubeconfig, "urls": dict(self.urls), "workdir": self.workdir,
                "deadline": self.deadline, "time_limit": self.time_limit, "namespaces": list(self.namespaces)}


@dataclass
class Submission:
    """What the agent hands in.

    For SRE and FinOps, ``diagnosis`` in ITBench's agent-output shape:
    ``{"entities": [{"name": "ns/Kind/name", "contributing_factor": bool, "reasoning": str}],
    "propagations": [{"source", "target", "condition", "effect"}], "alerts_explained": [...]}``.
    For CISO, the artifacts it wrote, by role (``{"policy": "policy.yaml", ...}``, paths in its workdir).
    """

    diagnosis: dict[str, Any] | None = None
    artifacts: dict[str, str] = field(default_factory=dict)
    diagnosed_at: float | None = None  # simulated seconds since the agent started, when it diagnosed
    notes: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> "Submission":
        """Read a submission written as JSON; raises ValueError naming what is wrong."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ValueError(f"a submission is a JSON object, got {type(data).__name__}")
        unknown = set(data) - {"diagnosis", "artifacts", "diagnosed_at", "notes", "entities", "propagations",
                               "alerts_explained"}
        if unknown:
            raise ValueError(f"unknown submission fields: {', '.join(sorted(unknown))}")
        diagnosis = data.get("diagnosis")
        if diagnosis is None and any(k in data for k in ("entities", "propagations", "alerts_explained")):
            # The ITBench agent-output shape at top level is accepted as the diagnosis itself.
            diagnosis = {k: data[k] for k in ("entities", "propagations", "alerts_explained") if k in data}
        if diagnosis is not None and not isinstance(diagnosis, dict):
            raise ValueError("diagnosis must be an object with entities, propagations and alerts_explained")
        if diagnosis is not None:
            entities = diagnosis.get("entities", [])
            if not isinstance(entities, list) or not all(isinstance(e, dict) and isinstance(e.get("name"), str)
                                                          for e in entities):
                raise ValueError('diagnosis.entities must be a list of objects with a "name" like '
                                 '"namespace/Kind/name"')
        artifacts = data.get("artifacts") or {}
        if not isinstance(artifacts, dict) or not all(isinstance(v, str) for v in artifacts.values()):
            raise ValueError("artifacts must map roles to file paths")
        diagnosed_at = data.get("diagnosed_at")
        if diagnosed_at is not None and not isinstance(diagnosed_at, (int, float)):
            raise ValueError("diagnosed_at must be a number of seconds")
        return cls(diagnosis=diagnosis, artifacts=dict(artifacts), diagnosed_at=diagnosed_at,
                   notes=str(data.get("notes") or ""))


def entity_name(namespace: str | None, kind: str, name: str) -> str:
    """ITBench's name for a Kubernetes entity in a diagnosis: ``namespace/Kind/name``.

    A Namespace is named within itself (``otel-demo/Namespace/otel-demo``, as ITBench's agent
    prompts do); other cluster-scoped objects have no namespace part (``Node/worker-1``).
    """
    if kind == "Namespace":
        return f"{name}/Namespace/{name}"
    return f"{namespace}/{kind}/{name}" if namespace else f"{kind}/{name}"


@dataclass
class Step:
    thought: str = ""
    action: str = ""
    observation: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    started: float = 0.0
    ended: float = 0.0
    tool: str = ""  # the tool the action called (kubectl, promql, submit, ...); "" when not recorded
    error: str = ""  # why the action failed (a non-zero exit, an unknown tool, ...); "" when it did not
    model: str = ""  # the language model that took this step, when it differs from Trajectory.model

    TEXTS = ("thought", "action", "observation", "tool", "error", "model")
    COUNTS = ("tokens_in", "tokens_out")
    TIMES = ("started", "ended")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Step":
        """A step read back from JSON; unknown keys are ignored, wrong types raise ValueError.

        Texts that are not strings (an observation given as a JSON object) are kept as their JSON.
        """
        values: dict[str, Any] = {}
        for key in cls.TEXTS:
            if key in data and data[key] is not None:
                value = data[key]
                values[key] = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        for key in cls.COUNTS:
            if key in data:
                value = data[key]
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ValueError(f"{key} must be a whole number of tokens, got {value!r}")
                values[key] = value
        for key in cls.TIMES:
            if key in data:
                value = data[key]
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                    raise ValueError(f"{key} must be epoch seconds, got {value!r}")
                values[key] = float(value)
        if "ended" not in values and "started" in values:
            values["ended"] = values["started"]
        return cls(**values)


@dataclass
class Trajectory:
    steps: list[Step] = field(default_factory=list)
    # What went wrong in recording, without failing the trial: unreadable trajectory lines,
    # processes an exec agent left behind.
    problems: list[str] = field(default_factory=list)
    # The language model the agent used (``gpt-4o``, ...), so its tokens can be priced; "" for none.
    model: str = ""

    def add(self, thought: str = "", action: str = "", observation: str = "", tokens_in: int = 0,
            tokens_out: int = 0, started: float | None = None, *, tool: str = "", error: str = "",
            model: str = "") -> Step:
        now = time.time()
        step = Step(thought, action, observation, tokens_in, tokens_out, started if started is not None else now,
                    now, tool, error, model)
        self.steps.append(step)
        return step

    @property
    def tokens(self) -> int:
        return sum(s.tokens_in + s.tokens_out for s in self.steps)

    def to_list(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in self.steps]


@runtime_checkable
class Agent(Protocol):
    name: str

    def run(self, task: Task, trajectory: Trajectory) -> Submission:
        """Work on the task until done or the deadline; record steps in ``trajectory``.

        Runs in a worker thread: check ``task.cancelled`` between steps and return once it is set.
        """
