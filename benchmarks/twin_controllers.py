"""Benchmark of the twin's controllers (run by hand, not in CI): prints the figures docs/twin.md records.

    python benchmarks/twin_controllers.py

Targets (issue 3): warping 10 simulated minutes of the twenty-service shop
takes under 1 s of wall time; 1,000 pods over 20 nodes tick at least 50
simulated seconds per wall second.
"""

from __future__ import annotations

import os
import time

import yaml

from pytest_itbench.twin import Twin

SHOP = os.path.join(os.path.dirname(__file__), "..", "tests", "twin", "manifests", "shop.yaml")


def apply(twin: Twin, docs: list[dict]) -> None:
    for doc in docs:
        res = twin.api.catalog.for_api_version(doc["apiVersion"], doc["kind"])
        twin.api.create(res, doc["metadata"].get("namespace"), doc, twin.admin_ctx)


def available(twin: Twin, namespace: str) -> tuple[int, int]:
    deployments = twin.store.list("deployments.apps", namespace)[0]
    ready = sum(1 for d in deployments
                if any(c["type"] == "Available" and c["status"] == "True"
                       for c in (d.get("status") or {}).get("conditions") or ()))
    return ready, len(deployments)


def shop() -> None:
    with open(SHOP) as fh:
        docs = [d for d in yaml.safe_load_all(fh) if d]
    with Twin(seed=1, nodes=3, start_time=1_800_000_000) as twin:
        start = time.perf_counter()
        apply(twin, docs)
        created = time.perf_counter() - start
        start = time.perf_counter()
        twin.warp(120)
        settle = time.perf_counter() - start
        ready, total = available(twin, "shop")
        pods = twin.store.count("pods")
        print(f"shop: applied {len(docs)} objects in {created:.2f} s; 120 simulated s to settle took "
              f"{settle:.2f} s wall; {ready}/{total} Deployments Available, {pods} pods")
        start = time.perf_counter()
        twin.warp(600)
        wall = time.perf_counter() - start
        print(f"shop: warping 10 simulated minutes took {wall:.2f} s wall ({600 / wall:.0f} simulated s per wall s)")


def thousand_pods() -> None:
    with Twin(seed=2, nodes=20, start_time=1_800_000_000) as twin:
        ns = twin.api.catalog.lookup("", "v1", "namespaces")
        twin.api.create(ns, None, {"metadata": {"name": "load"}}, twin.admin_ctx)
        deployments = twin.api.catalog.lookup("apps", "v1", "deployments")
        for i in range(50):
            name = f"svc-{i:02d}"
            twin.api.create(deployments, "load", {
                "metadata": {"name": name},
                "spec": {"replicas": 20, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{
                             "name": "app", "image": "nginx:1.27", "ports": [{"containerPort": 8080}],
                             "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                             "readinessProbe": {"httpGet": {"path": "/", "port": 8080}}}]}}}}, twin.admin_ctx)
        start = time.perf_counter()
        twin.warp(120)
        settle = time.perf_counter() - start
        running = sum(1 for p in twin.store.list("pods", "load")[0] if (p.get("status") or {}).get("phase") == "Running")
        print(f"1,000 pods: 120 simulated s to start them took {settle:.2f} s wall; {running} running")
        start = time.perf_counter()
        twin.warp(120)
        wall = time.perf_counter() - start
        print(f"1,000 pods over 20 nodes, steady: {120 / wall:.0f} simulated s per wall s")


if __name__ == "__main__":
    shop()
    thousand_pods()
