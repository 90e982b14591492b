"""A two-service application for the reachability tests: a client that calls a server's Echo through SERVER_ADDR.

Each test applies the objects it needs (the probe's own Deployments and Services, then whatever it breaks), warps,
and reads what the client saw: its client spans by status and the line it logs for a failed call.
"""

from __future__ import annotations

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.telemetry.spans import SpanKey
from pytest_itbench.twin.workload import install
from pytest_itbench.twin.workload.sheet import parse_sheet

NAMESPACE = "probe"
START = 1_700_000_000

SHEET = """
application: probe
clients:
  go:
    refused: 'dial tcp {address}: connect: connection refused'
    no_such_host: 'dial tcp: lookup {host} on {dns}: no such host'
    dns_timeout: 'dial tcp: lookup {host} on {dns}: i/o timeout'
    unreachable: 'dial tcp {address}: i/o timeout'
    deadline: 'context deadline exceeded'
    reset: 'EOF'
    status: 'rpc error: code = {code} desc = {message}'
    protocol: 'malformed response'
    auth: 'auth failed: {message}'
    connect_timeout: 20s
services:
  client:
    pods: {labels: {app: client}, container: client}
    runtime: go
    client: go
    operations:
      task:
        span: task
        kind: internal
        calls:
          - {to: server.Echo, address: {env: SERVER_ADDR}, span: Echo, timeout: 5s,
             presents: {env: PASSWORD}, log: 'call failed: {error}'}
  server:
    pods: {labels: {app: server}, container: server}
    runtime: go
    listen: [{port: 9000, port_env: PORT, protocol: grpc}]
    auth: {expects: {arg: --requirepass}, missing: NOAUTH Authentication required.,
           wrong: WRONGPASS invalid username-password pair or user is disabled.}
    operations:
      Echo:
        span: Echo
        latency: {median: 2ms}
load:
  service: client
  users: {env: USERS, default: 20}
  spawn_rate: {env: SPAWN_RATE, default: 100}
  autostart: {env: AUTOSTART, default: true}
  wait: {min: 1s, max: 1s}
  tasks: {task: 1}
"""


def deployment(name: str, env: dict[str, str] | None = None, *, args: list[str] | None = None,
               ports: list[dict] | None = None, pod_spec: dict | None = None) -> dict:
    container = {"name": name, "image": "busybox:1.36", "command": ["sleep", "infinity"],
                 "env": [{"name": k, "value": v} for k, v in (env or {}).items()]}
    if args:
        container["args"] = args
    if ports:
        container["ports"] = ports
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [container], **(pod_spec or {})}}}}


def service(name: str = "server", *, port: int = 9000, target_port: int | str = 9000,
            selector: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"selector": selector or {"app": "server"},
                     "ports": [{"name": "grpc", "port": port, "targetPort": target_port}]}}


def namespace(name: str = NAMESPACE, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}


def probe_twin() -> Twin:
    """A twin running only the probe's sheet (the shipped sheets are left out)."""
    twin = Twin(seed=11, nodes=2, start_time=START, workload=False, telemetry=False)
    twin.workload = install(twin, [parse_sheet(SHEET, "probe.yaml")])
    return twin


def apply(twin: Twin, *objects: dict) -> None:
    for obj in objects:
        res = twin.api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
        twin.api.create(res, obj["metadata"].get("namespace"), obj, twin.admin_ctx)


def delete(twin: Twin, plural: str, namespace: str, name: str, group: str = "", version: str = "v1") -> None:
    res = twin.api.catalog.lookup(group, version, plural)
    twin.api.delete(res, namespace, name, DeleteOptions(), twin.admin_ctx)


def calls(twin: Twin) -> tuple[float, float]:
    """The client's Echo client spans so far: (succeeded, failed)."""
    series = twin.workload.span_series()

    def count(status: str) -> float:
        found = series.get(SpanKey("client", "Echo", "SPAN_KIND_CLIENT", status, NAMESPACE))
        return found.calls if found is not None else 0.0
    return count("STATUS_CODE_UNSET"), count("STATUS_CODE_ERROR")


def client_log(twin: Twin) -> list[str]:
    pod = next(p for p in twin.store.list("pods", NAMESPACE)[0] if p["metadata"]["name"].startswith("client-"))
    return [line.text for line in twin.logs.lines(NAMESPACE, pod["metadata"]["name"], "client")]
