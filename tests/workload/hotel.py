"""The hotel reservation in a twin: applied from its own manifests, unchanged, and settled.

Nothing in the manifests is stripped: they have no init containers, the Go services run ``./<service>`` from the
image's working directory, and the load generator's ``while true; do wrk ...; done`` runs as written. Reading
what the traffic produced reuses the shop's ``window``.
"""

from __future__ import annotations

from pytest_itbench.apps.catalog import application
from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions

from .shop import window  # noqa: F401  (the shop's reading of a window serves the hotel too)

NAMESPACE = "hotel-reservation"
START = 1_700_000_000
SETTLE = 120  # seconds from applying the manifests until every service serves (MongoDB starts in 3 s)
GO_SERVICES = ("frontend", "search", "geo", "rate", "profile", "recommendation", "reservation", "user")


def documents(edit=None) -> list[dict]:
    docs = application("hotel-reservation").documents()
    if edit is not None:
        for doc in docs:
            edit(doc)
    return docs


def hotel_twin(seed: int = 1, edit=None, *, settle: float = SETTLE, telemetry: bool = False) -> Twin:
    """A twin running the hotel, settled; ``edit(doc)`` may change the manifests first."""
    twin = Twin(seed=seed, nodes=3, start_time=START, telemetry=telemetry)
    for obj in documents(edit):
        res = twin.api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
        twin.api.create(res, obj["metadata"].get("namespace") or NAMESPACE, obj, twin.admin_ctx)
    twin.warp(settle)
    return twin


def update(twin: Twin, plural: str, name: str, change, group: str = "", version: str = "v1") -> None:
    res = twin.api.catalog.lookup(group, version, plural)
    obj = twin.api.get(res, NAMESPACE, name)
    change(obj)
    twin.api.update(res, NAMESPACE, name, obj, twin.admin_ctx)


def scale(twin: Twin, deployment: str, replicas: int) -> None:
    def change(obj: dict) -> None:
        obj["spec"]["replicas"] = replicas
    update(twin, "deployments", deployment, change, "apps")


def delete(twin: Twin, plural: str, name: str) -> None:
    res = twin.api.catalog.lookup("", "v1", plural)
    twin.api.delete(res, NAMESPACE, name, DeleteOptions(), twin.admin_ctx)


def pods(twin: Twin, component: str | None = None) -> list[dict]:
    return [p for p in twin.store.list("pods", NAMESPACE)[0] if not p["metadata"].get("deletionTimestamp")
            and (component is None or (p["metadata"].get("labels") or {}).get("io.kompose.service") == component)]


def pod_of(twin: Twin, component: str) -> dict:
    return max(pods(twin, component), key=lambda p: p["metadata"]["creationTimestamp"])


def logs(twin: Twin, component: str, *, since: float | None = None) -> list[str]:
    """The component's current container's log lines, those written from ``since`` (twin seconds) on if given."""
    pod = pod_of(twin, component)
    container = pod["spec"]["containers"][0]["name"]
    after = -1 if since is None else int(since * 1e9)
    return [line.text for line in twin.logs.lines(NAMESPACE, pod["metadata"]["name"], container)
            if line.time_ns >= after]


def query(twin: Twin, promql: str) -> list[dict]:
    return twin.monitoring.engine.instant_query(promql, twin.clock.now()).value.to_json()


def firing(twin: Twin) -> set[tuple[str, str]]:
    """(alertname, service_name or pod) of every alert firing in the hotel's namespace."""
    return {(s["metric"]["alertname"], s["metric"].get("service_name") or s["metric"].get("pod", ""))
            for s in query(twin, f'ALERTS{{alertstate="firing", severity!="info", namespace="{NAMESPACE}"}}')}
