"""Benchmark of the trace store, the Jaeger JSON rendering and the topology build (run by hand, not in CI).

    python -m benchmarks.traces_topology [--traces 5000] [--services 20] [--repeat 5]

Prints the figures docs record. The store is filled as the traffic engine would fill it: one sampled
trace every simulated 0.72 s for an hour (5,000 traces), each a request through a chain of services
with a client and a server span per hop (about ten spans a trace, the store's default cap of 50,000
spans). Then searches as an agent sends them, and a topology refresh of the twenty-service shop.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
import tracemalloc
from pathlib import Path

import orjson
import yaml

from pytest_itbench.twin import Twin
from pytest_itbench.twin.telemetry.jaeger_model import trace_json
from pytest_itbench.twin.telemetry.spans import Span, Trace
from pytest_itbench.twin.telemetry.traces import TraceQuery, TraceStore

START = 1_700_000_000.0
SHOP = Path(__file__).resolve().parent.parent / "tests" / "twin" / "manifests" / "shop.yaml"


def make_traces(count: int, services: int, rng: random.Random) -> list[Trace]:
    names = [f"service-{i:02d}" for i in range(services)]
    resources = {name: {"service.name": name, "k8s.namespace.name": "shop", "k8s.pod.name": f"{name}-5d8f-x2x",
                        "telemetry.sdk.language": "go"} for name in names}
    out = []
    for n in range(count):
        start = START + n * 3600 / count
        trace_id = f"{rng.getrandbits(128):032x}"
        hops = rng.sample(names, 5)
        spans, parent, t = [], None, start
        failing = rng.random() < 0.05
        for depth, service in enumerate(hops):
            duration = 0.3 / (depth + 1)
            status = "STATUS_CODE_ERROR" if failing and depth == len(hops) - 1 else "STATUS_CODE_UNSET"
            server = Span(trace_id, f"{rng.getrandbits(64):016x}", parent, service, f"oteldemo.{service}/Handle",
                          "SPAN_KIND_SERVER", t, duration, status, "boom" if status.endswith("ERROR") else "",
                          {"rpc.system": "grpc", "rpc.service": service, "rpc.grpc.status_code": 2 if failing else 0},
                          resources[service])
            spans.append(server)
            if depth + 1 < len(hops):
                client = Span(trace_id, f"{rng.getrandbits(64):016x}", server.span_id, service,
                              f"oteldemo.{hops[depth + 1]}/Handle", "SPAN_KIND_CLIENT", t + 0.001, duration * 0.9,
                              status, "", {"rpc.system": "grpc"}, resources[service])
                spans.append(client)
                parent = client.span_id
            t += 0.002
        out.append(Trace(trace_id, spans))
    return out


def timed(work, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        began = time.process_time()
        work()
        samples.append(time.process_time() - began)
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=5000)
    parser.add_argument("--services", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    gc.collect()
    tracemalloc.start()
    traces = make_traces(args.traces, args.services, random.Random(1))
    spans = sum(len(t.spans) for t in traces)
    before = tracemalloc.get_traced_memory()[0]
    store = TraceStore(lambda: START + 3600, max_spans=spans)
    began = time.process_time()
    for i in range(0, len(traces), 10):  # the engine hands over a few traces per tick
        store.add(traces[i:i + 10])
    add_ms = (time.process_time() - began) * 1000
    index_bytes = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    print(f"store: {len(store)} traces, {store.span_count} spans; adding them {add_ms:.0f} ms CPU "
          f"({add_ms * 1000 / spans:.1f} us a span); spans {before / spans:.0f} B each (as built here), "
          f"the store's entries and indexes {index_bytes / spans:.0f} B a span more")

    hour = (int(START * 1e6), int((START + 3600) * 1e6))
    queries = {
        "service, 1 h, limit 20": TraceQuery("service-03", *hour, limit=20),
        "service + error=true, 1 h": TraceQuery("service-03", *hour, tags={"error": "true"}, limit=20),
        "service + operation + minDuration": TraceQuery("service-03", *hour, operation="oteldemo.service-03/Handle",
                                                        duration_min_us=100_000, limit=20),
        "service + regex tag, 1 h": TraceQuery("service-03", *hour, tags={"rpc.service": "service-0[0-3]"}, limit=20),
    }
    for label, query in queries.items():
        found = store.find(query)
        search = timed(lambda: store.find(query), args.repeat)
        render = timed(lambda: orjson.dumps([trace_json(t.key, t.spans) for t in found]), args.repeat)
        print(f"search {label}: {len(found)} traces, {search:.1f} ms CPU; rendering them {render:.1f} ms CPU")
    deps = timed(lambda: store.dependencies(*hour), args.repeat)
    print(f"dependencies over the hour: {deps:.1f} ms CPU")

    with Twin(seed=1, nodes=3) as twin:
        for doc in yaml.safe_load_all(SHOP.read_text()):
            if doc:
                res = twin.api.catalog.for_api_version(doc["apiVersion"], doc["kind"])
                twin.api.create(res, doc["metadata"].get("namespace"), doc, twin.admin_ctx)
        twin.warp(120)
        graph = twin.topology.refresh()
        refresh = timed(twin.topology.refresh, args.repeat)
        print(f"topology of the shop: {len(graph.nodes)} nodes, {len(graph.edges)} edges; refresh {refresh:.1f} ms CPU")


if __name__ == "__main__":
    main()
