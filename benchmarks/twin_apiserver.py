"""Benchmark of the twin's API server (run by hand, not in CI): prints the figures docs/twin.md records.

    python benchmarks/twin_apiserver.py [--pods 500] [--rss-pods 1000] [--repeat 15]

Targets (issue 2): cold start to ``ready`` below 0.5 s; server-side time of
``kubectl get pods -A`` over 500 pods below 20 ms; a ``kubectl get pods``
round trip within 15 ms of ``kubectl version --client``; 1,000 pods held in
under 200 MB RSS.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlparse

TABLE_ACCEPT = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
                "application/json")


def realistic_pod(i: int, namespace: str) -> dict:
    """A pod as an application would run it: two containers, env, probes, a config volume."""
    app = f"svc-{i % 20}"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"{app}-{i:05d}", "namespace": namespace,
                     "labels": {"app": app, "pod-template-hash": "7d9f8c6b5"}},
        "spec": {
            "nodeName": f"itbench-worker{'' if i % 3 == 0 else i % 3 + 1}",
            "containers": [
                {"name": "app", "image": f"ghcr.io/example/{app}:1.4.2",
                 "ports": [{"containerPort": 8080, "name": "http"}],
                 "env": [{"name": "OTEL_SERVICE_NAME", "value": app},
                         {"name": "CART_ADDR", "value": "cart:7070"},
                         {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
                 "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
                 "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
                 "volumeMounts": [{"name": "config", "mountPath": "/etc/config"}]},
                {"name": "sidecar", "image": "otel/opentelemetry-collector:0.112.0",
                 "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}}},
            ],
            "volumes": [{"name": "config", "configMap": {"name": f"{app}-config"}}],
        },
    }


def running_status(pod: dict, now: str) -> dict:
    return {
        "phase": "Running", "hostIP": "172.18.0.3", "podIP": "10.244.1.10", "startTime": now,
        "podIPs": [{"ip": "10.244.1.10"}], "qosClass": "Burstable",
        "conditions": [{"type": t, "status": "True", "lastTransitionTime": now}
                       for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                 "PodScheduled")],
        "containerStatuses": [{"name": c["name"], "image": c["image"], "imageID": "", "ready": True,
                               "restartCount": 0, "started": True, "containerID": "containerd://0",
                               "state": {"running": {"startedAt": now}}} for c in pod["spec"]["containers"]],
    }


def populate(twin, count: int) -> None:
    """``count`` running pods spread over five namespaces, shop-0 to shop-4."""
    for n in range(5):
        populate_namespace(twin, f"shop-{n}", count // 5 + (1 if n < count % 5 else 0))


def populate_namespace(twin, namespace: str, count: int) -> None:
    pods = twin.api.catalog.lookup("", "v1", "pods")
    twin.api.create(twin.api.catalog.lookup("", "v1", "namespaces"), None,
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, twin.admin_ctx)
    now = twin.clock.timestamp()
    for i in range(count):
        pod = twin.api.create(pods, namespace, realistic_pod(i, namespace), twin.admin_ctx)
        pod = dict(pod, status=running_status(pod, now))
        twin.api.update(pods, namespace, pod["metadata"]["name"], pod, twin.admin_ctx, subresource="status")


def cold_start(repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "pytest_itbench.twin", "--kubeconfig",
                                     os.path.join(tmp, "k")], stdout=subprocess.PIPE, text=True)
            line = proc.stdout.readline()
            times.append(time.perf_counter() - start)
            assert line.startswith("ready"), line
            proc.terminate()
            proc.wait(10)
    return times


def server_side_list(twin, repeat: int) -> list[float]:
    """Time of GET /api/v1/pods as kubectl asks for it (Table), on a kept-alive connection."""
    url = urlparse(twin.url)
    ctx = ssl.create_default_context(cadata=twin.certificates.ca_pem)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=ctx)
    headers = {"Authorization": f"Bearer {twin.token()}", "Accept": TABLE_ACCEPT}
    times = []
    for _ in range(repeat + 2):
        start = time.perf_counter()
        conn.request("GET", "/api/v1/pods?limit=500", headers=headers)
        body = conn.getresponse().read()
        times.append(time.perf_counter() - start)
    conn.close()
    assert b'"rows"' in body
    return times[2:]


def kubectl_round_trips(twin, repeat: int, namespace: str) -> tuple[list[float], list[float]]:
    kubectl = shutil.which("kubectl")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, KUBECONFIG=twin.write_kubeconfig(os.path.join(tmp, "k")),
                   KUBECACHEDIR=os.path.join(tmp, "cache"))

        def timed(*args):
            out = []
            for _ in range(repeat):
                start = time.perf_counter()
                subprocess.run([kubectl, *args], env=env, check=True, capture_output=True)
                out.append(time.perf_counter() - start)
            return out

        subprocess.run([kubectl, "get", "pods", "-n", namespace], env=env, check=True, capture_output=True)
        return timed("version", "--client"), timed("get", "pods", "-n", namespace)


def rss_with_pods(count: int) -> float:
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from benchmarks.twin_apiserver import populate\n"
            "from pytest_itbench.twin import Twin\n"
            "t = Twin(nodes=3).start(); populate(t, %d)\n"
            "print([l for l in open('/proc/self/status') if l.startswith('VmRSS')][0].split()[1]); t.stop()"
            % (os.path.dirname(os.path.dirname(os.path.abspath(__file__))), count))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return int(out.strip().splitlines()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=500)
    parser.add_argument("--rss-pods", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    from pytest_itbench.twin import Twin

    ms = lambda xs: f"median {statistics.median(xs) * 1000:.1f} ms (min {min(xs) * 1000:.1f}, max {max(xs) * 1000:.1f})"  # noqa: E731
    print(f"cold start to 'ready' (python -m pytest_itbench.twin): {ms(cold_start(5))}")
    with Twin(nodes=3) as twin:
        start = time.perf_counter()
        populate(twin, args.pods)
        print(f"created {args.pods} running pods through the API in {time.perf_counter() - start:.2f} s")
        print(f"GET /api/v1/pods as Table over {args.pods} pods: {ms(server_side_list(twin, args.repeat))}")
        if shutil.which("kubectl"):
            populate_namespace(twin, "shop", 20)
            for namespace, count in (("shop", 20), ("shop-0", args.pods // 5)):
                client_only, get_pods = kubectl_round_trips(twin, args.repeat, namespace)
                print(f"kubectl version --client: {ms(client_only)}")
                print(f"kubectl get pods ({count} pods in the namespace): {ms(get_pods)}")
                print(f"  difference of medians: "
                      f"{(statistics.median(get_pods) - statistics.median(client_only)) * 1000:.1f} ms")
    print(f"RSS of a twin holding {args.rss_pods} pods: {rss_with_pods(args.rss_pods):.0f} MiB")


if __name__ == "__main__":
    main()
