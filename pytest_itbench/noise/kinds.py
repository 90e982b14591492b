"""The kinds of noise, each an ordinary change made through the Kubernetes API.

Changes by other teams, made in the minutes before the fault:

- ``rollout``: a bystander's image pinned to the digest it runs (as an image policy or a release pipeline pins
  them): a new ReplicaSet revision, a rolling update with its events, new pods, the same program;
- ``configmap``: a key added to a ConfigMap only bystanders mount (a new file nobody reads);
- ``autoscaler``: a HorizontalPodAutoscaler on a bystander with a floor of two replicas, so it scales out at
  once, with its SuccessfulRescale event, new pods and the replica metrics, and then holds on ordinary load.

Transient faults, after those and just before the fault, each healing by itself:

- ``eviction``: a bystander's pod evicted (the Eviction API, as a node drain or a descheduler does); its
  Deployment makes another;
- ``network``: a Chaos Mesh NetworkChaos with a duration (latency of a few hundred milliseconds, or a short
  packet loss) on a bystander, in Chaos Mesh's own namespace, which the agent cannot read, as it cannot see a
  flaky switch; its callers' spans and latency histograms show it, then it times out.

Each returns what it did, for the trial's ``noise`` attachment. The amplitudes stay under what fires an alert:
the error and latency rules of the applications hold for three minutes over two-minute rates, and no transient
lasts long enough for that (tests/noise check it over an hour of heavy noise).
"""

from __future__ import annotations

import random
from typing import Any

from kubernetes import client as k8s
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from .bystanders import Bystander

CHAOS_NAMESPACE = "chaos-mesh"  # where Chaos Mesh's helm chart lives on a real cluster
CHAOS_GROUP, CHAOS_VERSION = "chaos-mesh.org", "v1alpha1"
NOTE_KEYS = ("OWNERS", "CHANGELOG", "runbook-url", "oncall")
TEAMS = ("payments-platform", "storefront", "observability", "release-eng", "sre-core")


class NoiseError(RuntimeError):
    pass


def rollout(api: ApiClient, namespace: str, target: Bystander, rng: random.Random) -> dict[str, Any]:
    core, apps = k8s.CoreV1Api(api), k8s.AppsV1Api(api)
    pods = core.list_namespaced_pod(namespace, label_selector=target.selector).items
    images = {s.name: s.image_id for p in pods for s in (p.status.container_statuses or ()) if s.image_id}
    patch = []
    for index, container in enumerate(target.containers):
        digest = (images.get(container["name"]) or "").rpartition("@")[2]
        image = container.get("image") or ""
        if digest.startswith("sha256:") and "@" not in image:
            patch.append({"op": "replace", "path": f"/spec/template/spec/containers/{index}/image",
                          "value": f"{image}@{digest}"})
    if not patch:  # nothing to pin: a release that sets the team's build label on the pods instead
        patch.append({"op": "add", "path": "/spec/template/metadata/annotations",
                      "value": {"app.kubernetes.io/build": f"{rng.randrange(16 ** 7):07x}"}})
    apps.patch_namespaced_deployment(target.name, namespace, patch)
    return {"kind": "rollout", "target": f"Deployment/{target.name}", "workload": target.name,
            "detail": "; ".join(f"{op['path']} -> {op['value']}" for op in patch)}


def configmap(api: ApiClient, namespace: str, name: str, rng: random.Random) -> dict[str, Any]:
    key = rng.choice(NOTE_KEYS)
    value = f"team {rng.choice(TEAMS)}, updated by change {rng.randrange(10 ** 5):05d}\n"
    k8s.CoreV1Api(api).patch_namespaced_config_map(name, namespace, {"data": {key: value}})
    return {"kind": "configmap", "target": f"ConfigMap/{name}", "detail": f"added key {key}"}


def autoscaler(api: ApiClient, namespace: str, target: Bystander, rng: random.Random) -> dict[str, Any] | None:
    """An HPA another team adds for availability: at least two replicas, at most four, and a CPU target (an
    average value, which needs no requests) above the pods' ordinary use. It scales the Deployment out to two at
    once (``Current number of replicas below Spec.MinReplicas``) and then holds on ordinary load: the twin's pods,
    like small real services, spend most of their CPU whatever their share of the traffic, so a target under
    their use would scale them out to the maximum and fire KubeHpaMaxedOut, which is an incident of its own."""
    usage = _cpu_millicores(api, namespace, target)
    if usage is None or usage <= 0:
        return None  # nothing to scale on: an HPA that reads no metrics is no change of ordinary load
    value = max(3, round(usage * rng.uniform(3.0, 4.0)))  # spikes of a restart or a blip stay under it
    body = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": target.name, "namespace": namespace},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target.name},
                     "minReplicas": 2, "maxReplicas": 4,
                     "metrics": [{"type": "Resource", "resource": {
                         "name": "cpu", "target": {"type": "AverageValue", "averageValue": f"{value}m"}}}]}}
    try:
        k8s.AutoscalingV2Api(api).create_namespaced_horizontal_pod_autoscaler(namespace, body)
    except ApiException as exc:
        if exc.status == 409:
            return None  # the workload has an autoscaler of its own
        raise
    return {"kind": "autoscaler", "target": f"Deployment/{target.name}", "workload": target.name,
            "detail": f"HorizontalPodAutoscaler {target.name}: 2 to 4 replicas at {value}m CPU each "
                      f"(the pods use about {usage:.1f}m)"}


def eviction(api: ApiClient, namespace: str, target: Bystander, rng: random.Random) -> dict[str, Any] | None:
    core = k8s.CoreV1Api(api)
    pods = sorted((p for p in core.list_namespaced_pod(namespace, label_selector=target.selector).items
                   if p.status.phase == "Running" and p.metadata.deletion_timestamp is None),
                  key=lambda p: p.metadata.name)
    if not pods:
        return None
    pod = rng.choice(pods).metadata.name
    try:
        core.create_namespaced_pod_eviction(pod, namespace, {
            "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": namespace}})
    except ApiException as exc:
        if exc.status == 429:
            return None  # a disruption budget forbids it now: a drain would wait too
        raise
    return {"kind": "eviction", "target": f"Pod/{pod}", "workload": target.name,
            "detail": f"evicted; Deployment {target.name} makes another"}


def network(api: ApiClient, namespace: str, target: Bystander, rng: random.Random, name: str) -> dict[str, Any]:
    if rng.random() < 0.7:
        latency = rng.choice((100, 150, 200, 300, 400))
        seconds = rng.randrange(60, 121, 15)
        action = {"action": "delay", "delay": {"latency": f"{latency}ms", "jitter": f"{latency // 5}ms"}}
        what = f"{latency} ms more latency for {seconds} s"
    else:
        loss = rng.choice((10, 15, 20, 30))
        seconds = rng.randrange(20, 41, 5)
        action = {"action": "loss", "loss": {"loss": str(loss)}}
        what = f"{loss}% packet loss for {seconds} s"
    body = {"apiVersion": f"{CHAOS_GROUP}/{CHAOS_VERSION}", "kind": "NetworkChaos",
            "metadata": {"name": name, "namespace": CHAOS_NAMESPACE},
            "spec": {**action, "mode": "all", "duration": f"{seconds}s",
                     "selector": {"namespaces": [namespace], "labelSelectors": dict(target.labels)}}}
    core = k8s.CoreV1Api(api)
    try:
        core.read_namespace(CHAOS_NAMESPACE)
    except ApiException as exc:
        if exc.status != 404:
            raise
        core.create_namespace({"metadata": {"name": CHAOS_NAMESPACE}})
    try:
        k8s.CustomObjectsApi(api).create_namespaced_custom_object(CHAOS_GROUP, CHAOS_VERSION, CHAOS_NAMESPACE,
                                                                  "networkchaos", body)
    except ApiException as exc:
        if exc.status == 404:
            raise NoiseError("network noise needs Chaos Mesh (NetworkChaos in chaos-mesh.org/v1alpha1), which this "
                             "cluster does not serve") from None
        raise
    return {"kind": "network", "target": f"Deployment/{target.name}", "detail": what,
            "object": f"{CHAOS_NAMESPACE}/NetworkChaos/{name}"}


def remove_network(api: ApiClient, name: str) -> None:
    try:
        k8s.CustomObjectsApi(api).delete_namespaced_custom_object(CHAOS_GROUP, CHAOS_VERSION, CHAOS_NAMESPACE,
                                                                  "networkchaos", name)
    except ApiException as exc:
        if exc.status != 404:
            raise


def _cpu_millicores(api: ApiClient, namespace: str, target: Bystander) -> float | None:
    """The mean CPU use of the bystander's pods from the resource metrics API (what an HPA reads)."""
    try:
        listing = k8s.CustomObjectsApi(api).list_namespaced_custom_object(
            "metrics.k8s.io", "v1beta1", namespace, "pods", label_selector=target.selector)
    except ApiException:
        return None
    per_pod = [sum(_millicores(c.get("usage", {}).get("cpu", "0")) for c in item.get("containers") or ())
               for item in listing.get("items") or ()]
    return sum(per_pod) / len(per_pod) if per_pod else None


def _millicores(quantity: str) -> float:
    if quantity.endswith("n"):
        return float(quantity[:-1]) / 1e6
    if quantity.endswith("u"):
        return float(quantity[:-1]) / 1e3
    if quantity.endswith("m"):
        return float(quantity[:-1])
    return float(quantity) * 1000
