"""All tools bound to one task, and their description as function-calling specs (for a language model).

    tools = Toolkit(task, trajectory)
    tools.kubectl("get pods -n shop")               # text
    tools.prometheus.query('ALERTS{alertstate="firing"}')
    tools.call("trace_search", {"service": "frontend", "tags": {"error": "true"}})   # by name, for an LLM loop

A tool whose signal the task does not offer raises SignalUnavailable when used, and is left out of
``specs()``.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ..agents.base import Task, Trajectory
from .alerts import AlertsTool
from .base import DeadlineReached, ToolError
from .kubectl import KubectlTool
from .logs import LogsTool
from .prometheus import PrometheusTool
from .topology import TopologyTool
from .traces import TracesTool

_STRING = {"type": "string"}
_NUMBER = {"type": "number"}
_INTEGER = {"type": "integer"}


def _spec(name: str, description: str, required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(required),
                           "additionalProperties": False}}


# (spec, signal it needs or None)
SPECS: list[tuple[dict[str, Any], str | None]] = [
    (_spec("kubectl", "Run kubectl with your kubeconfig, e.g. 'get pods -n shop -o wide'. Not allowed: edit, "
           "port-forward, proxy, attach, logs -f, get --watch, exec -i/-t, flags that change cluster or identity.",
           ("command",), command=_STRING), None),
    (_spec("promql_query", "PromQL instant query against Prometheus; 'time' in epoch seconds (default now).",
           ("query",), query=_STRING, time=_NUMBER), "prometheus"),
    (_spec("promql_range_query", "PromQL range query over the last 'minutes' minutes at 'step' seconds.",
           ("query",), query=_STRING, minutes=_NUMBER, step=_NUMBER), "prometheus"),
    (_spec("alerts", "Active alerts in Alertmanager, optionally of one namespace.", namespace=_STRING),
     "alertmanager"),
    (_spec("trace_services", "Services that reported spans to Jaeger."), "jaeger"),
    (_spec("trace_search", "Traces of a service from Jaeger in the last 'minutes' minutes; tags such as "
           "{\"error\": \"true\"} keep failed ones.", ("service",), service=_STRING, operation=_STRING,
           tags={"type": "object", "additionalProperties": _STRING}, minutes=_NUMBER, limit=_INTEGER), "jaeger"),
    (_spec("trace_get", "One trace by its traceID (from trace_search): each span with its service, operation, duration, callee and error.", ("trace_id",),
           trace_id=_STRING), "jaeger"),
    (_spec("trace_dependencies", "Caller-callee service pairs seen in the traces of the last 'minutes' minutes.",
           minutes=_NUMBER), "jaeger"),
    (_spec("logs", "The last lines of a container's log (pod may be deployment/NAME); previous=true reads the "
           "instance before the last restart.", ("pod", "namespace"), pod=_STRING, namespace=_STRING,
           container=_STRING, tail=_INTEGER, previous={"type": "boolean"}), None),
    (_spec("topology_nodes", "Entities of the cluster's topology graph."), "topology"),
    (_spec("topology_edges", "Edges of the topology graph (OWNS, SELECTS, MOUNTS, CALLS)."), "topology"),
    (_spec("topology_graph", "The whole topology graph: nodes with attributes, edges, node cache."), "topology"),
    (_spec("wait", "Wait some seconds (at most 120) for the cluster to change.", ("seconds",), seconds=_NUMBER),
     None),
]


class Toolkit:
    """The agent-facing tools of one task, recording every call in ``trajectory``."""

    def __init__(self, task: Task, trajectory: Trajectory, *, kubectl_binary: str | None = None):
        self.task = task
        self.trajectory = trajectory
        self._kubectl_binary = kubectl_binary
        self._kubectl: KubectlTool | None = None
        self.prometheus = PrometheusTool(task, trajectory)
        self.alerts = AlertsTool(task, trajectory)
        self.traces = TracesTool(task, trajectory)
        self.topology = TopologyTool(task, trajectory)

    @property
    def kubectl(self) -> KubectlTool:
        if self._kubectl is None:  # built on first use: it needs the kubectl binary
            self._kubectl = KubectlTool(self.task, self.trajectory, self._kubectl_binary)
        return self._kubectl

    @property
    def logs(self) -> LogsTool:
        return LogsTool(self.kubectl)

    def offers(self, signal: str) -> bool:
        return bool(self.task.urls.get(signal))

    def specs(self) -> list[dict[str, Any]]:
        """Function specs (name, description, JSON-schema parameters) of the tools this task offers."""
        return [spec for spec, signal in SPECS if signal is None or self.offers(signal)]

    def wait(self, seconds: float, *, thought: str = "") -> str:
        started = time.time()
        if self.task.cancelled.is_set() or self.task.remaining() <= 0:
            raise DeadlineReached("wait: the task's deadline has passed; hand in what you have")
        seconds = max(0.0, min(float(seconds), 120.0, self.task.remaining()))
        self.task.cancelled.wait(seconds)
        text = f"waited {time.time() - started:.1f} s"
        self.trajectory.add(thought=thought, action=f"wait {seconds:g}", observation=text, started=started,
                            tool="wait")
        return text

    def call(self, name: str, arguments: dict[str, Any] | None = None, *, thought: str = "") -> Any:
        """Call a tool by its spec name with JSON arguments; raises ToolError naming what is wrong."""
        arguments = dict(arguments or {})
        handlers: dict[str, Callable[..., Any]] = {
            "kubectl": lambda command: self.kubectl(command, thought=thought),
            "promql_query": lambda query, time=None: self.prometheus.query(query, time, thought=thought),
            "promql_range_query": lambda query, minutes=10, step=60: self.prometheus.query_range(
                query, _now() - float(minutes) * 60, step=float(step), thought=thought),
            "alerts": lambda namespace=None: self.alerts(namespace=namespace, thought=thought),
            "trace_services": lambda: self.traces.services(thought=thought),
            "trace_search": lambda service, operation=None, tags=None, minutes=15, limit=20: self.traces.search(
                service, operation=operation, tags=tags, lookback=float(minutes) * 60, limit=int(limit),
                thought=thought),
            "trace_get": lambda trace_id: self.traces.trace(str(trace_id), thought=thought),
            "trace_dependencies": lambda minutes=60: self.traces.dependencies(float(minutes) * 60, thought=thought),
            "logs": lambda pod, namespace, container=None, tail=100, previous=False: self.logs(
                pod, namespace, container=container, tail=int(tail), previous=bool(previous), thought=thought),
            "topology_nodes": lambda: self.topology.nodes(thought=thought),
            "topology_edges": lambda: self.topology.edges(thought=thought),
            "topology_graph": lambda: self.topology.graph(thought=thought),
            "wait": lambda seconds: self.wait(seconds, thought=thought),
        }
        if name not in handlers:
            # "unknown tool" first: the trajectory analysis counts a step whose error starts so as a call to a
            # tool that does not exist (docs/reporting.md), so an agent can record this message as it is.
            raise ToolError(f"unknown tool {name!r}: there is no such tool; the tools are: "
                            f"{', '.join(s['name'] for s in self.specs())}")
        try:
            return handlers[name](**arguments)
        except TypeError as exc:
            spec = next(s for s, _ in SPECS if s["name"] == name)
            raise ToolError(f"{name}: bad arguments {sorted(arguments)} ({exc}); it takes "
                            f"{sorted(spec['parameters']['properties'])}, requires "
                            f"{spec['parameters']['required']}") from None


def _now() -> float:
    return time.time()
