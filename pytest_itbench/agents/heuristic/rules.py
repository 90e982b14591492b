"""The heuristic's rules: each reads a namespace snapshot and returns findings, with the repair that fits.

A *primary* finding is a configuration that is wrong on its face (no replicas, a Service that selects
nothing, a policy that lets nothing in, a template changed since the last revision, ...): it is named as
a root cause wherever it is. A *secondary* finding is a symptom seen on a workload (pods waiting, OOM
kills, failing calls) and names the workload only when no primary finding already explains it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .state import (Namespace, container_ports, labels_match, pods_of, ready_addresses, revisions, selected_workloads,
                    template_changes, template_labels, waiting_reasons, workload_for_service)

POD_FAILURES = ("CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerError",
                "CreateContainerConfigError", "RunContainerError", "OOMKilled")
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"  # set on a ReplicaSet a rollback brought back
LOW_UTILIZATION = 50  # an autoscaler targeting less than this percent of the request scales out at rest


@dataclass
class Finding:
    kind: str
    name: str
    namespace: str | None
    reasoning: str
    evidence: str
    repairs: list[list[str]] = field(default_factory=list)  # kubectl argument lists
    workloads: tuple[str, ...] = ()  # the workloads it explains (their names)
    primary: bool = True

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.namespace or "", self.kind, self.name)


def _ns(ns: Namespace) -> list[str]:
    return ["--namespace", ns.name]


def scaled_to_zero(ns: Namespace, context: dict) -> list[Finding]:
    out = []
    for w in ns.of("Deployment") + ns.of("StatefulSet"):
        if w["spec"].get("replicas", 1) == 0:
            name = w["metadata"]["name"]
            out.append(Finding(w["kind"], name, ns.name, "scaled to zero replicas: nothing serves its traffic",
                               "spec.replicas is 0",
                               [["scale", f"{w['kind'].lower()}/{name}", "--replicas=1", *_ns(ns)]],
                               (name,)))
    return out


def changed_template(ns: Namespace, context: dict) -> list[Finding]:
    """A Deployment whose newest revision changed the pod template, and is unwell or implicated."""
    out = []
    for d in ns.of("Deployment"):
        history = revisions(ns, d)
        if len(history) < 2:
            continue
        new, old = history[0], history[1]
        if REVISION_HISTORY in (new["metadata"].get("annotations") or {}):
            continue  # a rollback to a template that ran before: the repair of an older change, not a new one
        changes = template_changes(old["spec"]["template"], new["spec"]["template"])
        if not changes:
            continue
        name = d["metadata"]["name"]
        status = d.get("status") or {}
        unwell = (status.get("unavailableReplicas") or 0) > 0 or (new.get("status") or {}).get(
            "readyReplicas", 0) < (new["spec"].get("replicas") or 0) or any(
            waiting_reasons(p) for p in pods_of(ns, d))
        if not unwell and name not in context["implicated"]:
            continue
        revision = (new["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision", "?")
        out.append(Finding("Deployment", name, ns.name,
                           f"revision {revision} changed the pod template, and the workload "
                           + ("is unwell since" if unwell else "fails its calls since"),
                           "; ".join(changes[:6]) + (f"; and {len(changes) - 6} more" if len(changes) > 6 else ""),
                           [["rollout", "undo", f"deployment/{name}", *_ns(ns)]], (name,)))
    return out


def service_selector(ns: Namespace, context: dict) -> list[Finding]:
    out = []
    for s in ns.of("Service"):
        selector = s["spec"].get("selector")
        if not selector or selected_workloads(ns, s):
            continue
        name = s["metadata"]["name"]
        owner = workload_for_service(ns, name)
        if owner is None:
            continue  # a Service for something not deployed here: not ours to judge
        labels = template_labels(owner)
        shared = {k: labels[k] for k in selector if k in labels} or labels
        out.append(Finding("Service", name, ns.name, f"its selector matches no pod of {owner['kind']} "
                           f"{owner['metadata']['name']}, so it has no endpoints",
                           f"selector {json.dumps(selector, sort_keys=True)}; pod labels "
                           f"{json.dumps(labels, sort_keys=True)}",
                           [["patch", "service", name, *_ns(ns), "--type=json", "-p",
                             json.dumps([{"op": "replace", "path": "/spec/selector", "value": shared}])]],
                           (owner["metadata"]["name"],)))
    return out


def service_target_port(ns: Namespace, context: dict) -> list[Finding]:
    out = []
    for s in ns.of("Service"):
        workloads = selected_workloads(ns, s)
        ports = [p for w in workloads for p in container_ports(w)]
        if not workloads or not ports:
            continue
        name = s["metadata"]["name"]
        for index, port in enumerate(s["spec"].get("ports") or []):
            target = port.get("targetPort", port.get("port"))
            if any(p.get("containerPort") == target or p.get("name") == target for p in ports):
                continue
            fix = next((p for p in ports if port.get("name") and p.get("name") == port.get("name")), None) \
                or next((p for p in ports if p.get("containerPort") == port.get("port")), None) \
                or (ports[0] if len(ports) == 1 else None)
            repairs = [] if fix is None else [[
                "patch", "service", name, *_ns(ns), "--type=json", "-p",
                json.dumps([{"op": "replace", "path": f"/spec/ports/{index}/targetPort",
                             "value": fix["containerPort"]}])]]
            out.append(Finding("Service", name, ns.name, f"port {port.get('port')} forwards to targetPort {target}, "
                               f"which no container of {workloads[0]['metadata']['name']} listens on",
                               f"container ports {[p.get('containerPort') for p in ports]}; "
                               f"{ready_addresses(ns, name)} ready endpoint addresses", repairs,
                               tuple(w["metadata"]["name"] for w in workloads)))
    return out


def missing_service(ns: Namespace, context: dict) -> list[Finding]:
    """Callees that traces show failing, with a workload of that name but no Service."""
    out = []
    for callee, port in sorted(context["callees"].items()):
        if ns.get("Service", callee) is not None:
            continue
        workload = next((w for w in ns.of("Deployment") + ns.of("StatefulSet") if w["metadata"]["name"] == callee),
                        None)
        if workload is None:
            continue
        ports = container_ports(workload)
        target = port or (ports[0]["containerPort"] if ports else None)
        # The port callers use; it forwards to the same container port, else to the container's first one.
        listens = target if not ports or any(p["containerPort"] == target for p in ports) else ports[0]["containerPort"]
        repairs = [] if target is None else [[
            "expose", f"{workload['kind'].lower()}/{callee}", "--name", callee, f"--port={target}",
            f"--target-port={listens}", *_ns(ns)]]
        out.append(Finding("Service", callee, ns.name, f"calls to {callee} fail and no Service {callee} exists, "
                           f"though {workload['kind']} {callee} runs", "traces name the peer; kubectl get service "
                           f"{callee}: NotFound", repairs, (callee,)))
    return out


def deny_network_policy(ns: Namespace, context: dict) -> list[Finding]:
    out = []
    for policy in ns.of("NetworkPolicy"):
        spec = policy.get("spec") or {}
        types = spec.get("policyTypes") or (["Ingress"] if "ingress" in spec or not spec.get("egress") else [])
        if "Ingress" not in types:
            continue
        selected = [w for w in ns.of("Deployment") + ns.of("StatefulSet")
                    if labels_match(spec.get("podSelector") or {}, template_labels(w))]
        if not selected:
            continue
        blocked = [w["metadata"]["name"] for w in selected if not _admits(spec.get("ingress") or [], w)]
        if not blocked:
            continue
        name = policy["metadata"]["name"]
        out.append(Finding("NetworkPolicy", name, ns.name, f"isolates {', '.join(blocked)} for ingress and admits "
                           "no traffic to the ports they serve",
                           f"ingress rules: {json.dumps(spec.get('ingress') or [])}",
                           [["delete", "networkpolicy", name, *_ns(ns)]], tuple(blocked)))
    return out


def _admits(rules: list[dict[str, Any]], workload: dict[str, Any]) -> bool:
    """Whether some rule admits every peer of the namespace on the workload's ports (approximately)."""
    served = {p.get("containerPort") for p in container_ports(workload)} | {
        p.get("name") for p in container_ports(workload)}
    for rule in rules:
        peers = rule.get("from") or []
        open_peers = not peers or any(p.get("podSelector") == {} or p.get("namespaceSelector") == {} or
                                      ("ipBlock" in p and p["ipBlock"].get("cidr") == "0.0.0.0/0") for p in peers)
        ports = rule.get("ports") or []
        open_ports = not ports or not served or any(p.get("port") in served or p.get("port") is None for p in ports)
        if open_peers and open_ports:
            return True
    return False


def autoscaler_maxed(ns: Namespace, context: dict) -> list[Finding]:
    out = []
    for hpa in ns.of("HorizontalPodAutoscaler"):
        spec, status = hpa["spec"], hpa.get("status") or {}
        if (status.get("currentReplicas") or 0) < spec.get("maxReplicas", 0):
            continue
        low = [(i, m) for i, m in enumerate(spec.get("metrics") or []) if m.get("type") == "Resource"
               and ((m["resource"].get("target") or {}).get("averageUtilization") or 100) < LOW_UTILIZATION]
        if not low:
            continue
        name = hpa["metadata"]["name"]
        patch = [{"op": "replace", "path": f"/spec/metrics/{i}/resource/target/averageUtilization", "value": 80}
                 for i, _ in low]
        target = spec.get("scaleTargetRef", {}).get("name", "")
        out.append(Finding("HorizontalPodAutoscaler", name, ns.name,
                           f"runs at its maximum of {spec.get('maxReplicas')} replicas because its targets sit far "
                           "below the workload's normal use",
                           "; ".join(f"{m['resource']['name']} target {m['resource']['target']['averageUtilization']}%"
                                     for _, m in low),
                           [["patch", "hpa", name, *_ns(ns), "--type=json", "-p", json.dumps(patch)]], (target,)))
    return out


def quota_exhausted(ns: Namespace, context: dict) -> list[Finding]:
    """A ResourceQuota the API server names when it refuses a workload's pods ("exceeded quota: NAME", or
    "failed quota: NAME" for pods that request nothing of a resource it limits)."""
    out = []
    for quota in ns.of("ResourceQuota"):
        name = quota["metadata"]["name"]
        pattern = re.compile(rf"(exceeded|failed) quota: {re.escape(name)}\b")
        refused = [e for e in ns.events if pattern.search(e.get("message") or "")]
        if not refused:
            continue
        workloads = sorted({w["metadata"]["name"] for e in refused
                            for w in [_owner_of(ns, e.get("involvedObject") or {})] if w is not None})
        out.append(Finding("ResourceQuota", name, ns.name, "refuses the pods the workloads need",
                           refused[-1].get("message", "")[:300], [["delete", "resourcequota", name, *_ns(ns)]],
                           tuple(workloads)))
    return out


def _owner_of(ns: Namespace, involved: dict[str, Any]) -> dict[str, Any] | None:
    """The workload behind an event's object (a ReplicaSet's Deployment, a StatefulSet, a Deployment)."""
    kind, name = involved.get("kind"), involved.get("name", "")
    if kind in ("Deployment", "StatefulSet"):
        return ns.get(kind, name)
    if kind == "ReplicaSet":
        rs = ns.get("ReplicaSet", name)
        owner = next((r["name"] for r in (rs or {}).get("metadata", {}).get("ownerReferences") or []
                      if r.get("kind") == "Deployment"), None)
        return ns.get("Deployment", owner) if owner else None
    return None


def cordoned_nodes(ns: Namespace, context: dict) -> list[Finding]:
    out = []
    # What cordoned nodes explain: workloads with pods no node was found for.
    unscheduled = sorted({w["metadata"]["name"] for w in ns.of("Deployment") + ns.of("StatefulSet")
                          for p in pods_of(ns, w) if not (p.get("spec") or {}).get("nodeName")})
    for node in ns.nodes:
        if not node.get("spec", {}).get("unschedulable"):
            continue
        name = node["metadata"]["name"]
        out.append(Finding("Node", name, None, "cordoned: no pod can be scheduled on it",
                           "spec.unschedulable is true", [["uncordon", name]], tuple(unscheduled)))
    return out


def chaos_objects(ns: Namespace, context: dict) -> list[Finding]:
    """Chaos Mesh schedules and experiments; an experiment a Schedule spawned is the Schedule's doing."""
    kinds = {o.get("kind", "") for o in ns.chaos}
    out = []
    for obj in ns.chaos:
        if any(ref.get("kind") in kinds for ref in obj["metadata"].get("ownerReferences") or []):
            continue
        name, kind = obj["metadata"]["name"], obj.get("kind", "")
        targets = sorted({w["metadata"]["name"] for selector in _selectors(obj.get("spec") or {})
                          for w in ns.of("Deployment") + ns.of("StatefulSet")
                          if labels_match({"matchLabels": selector}, template_labels(w))})
        spawned = [o for o in ns.chaos if any(ref.get("uid") == obj["metadata"].get("uid")
                                               for ref in o["metadata"].get("ownerReferences") or [])]
        repairs = [["delete", f"{o.get('kind', '').lower()}.chaos-mesh.org", o["metadata"]["name"], *_ns(ns),
                    "--ignore-not-found"] for o in [obj, *spawned]]
        out.append(Finding(kind, name, ns.name, f"Chaos Mesh {kind} injects faults into "
                           + (", ".join(targets) if targets else "the namespace"),
                           json.dumps(obj.get("spec") or {}, sort_keys=True)[:300], repairs, tuple(targets)))
    return out


def _selectors(spec: Any) -> list[dict[str, str]]:
    found = []
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key == "labelSelectors" and isinstance(value, dict):
                found.append(value)
            else:
                found.extend(_selectors(value))
    elif isinstance(spec, list):
        for item in spec:
            found.extend(_selectors(item))
    return found


def failing_pods(ns: Namespace, context: dict) -> list[Finding]:
    """Secondary: workloads whose pods wait, crash or were OOM-killed, or that have no available replica."""
    out = []
    for w in ns.of("Deployment") + ns.of("StatefulSet"):
        name = w["metadata"]["name"]
        problems = sorted({(c, r, m) for p in pods_of(ns, w) for c, r, m in waiting_reasons(p) if r in POD_FAILURES})
        pending = [p["metadata"]["name"] for p in pods_of(ns, w) if (p.get("status") or {}).get("phase") == "Pending"
                   and not (p.get("status") or {}).get("containerStatuses")]
        if not problems and not (pending and name in context["implicated"]):
            continue
        repairs = []
        oom = [c for c, r, _ in problems if r == "OOMKilled"]
        if oom:
            for container in w["spec"]["template"]["spec"].get("containers") or []:
                limit = ((container.get("resources") or {}).get("limits") or {}).get("memory")
                if container["name"] in oom and limit:
                    repairs.append(["set", "resources", f"{w['kind'].lower()}/{name}", "-c", container["name"],
                                    f"--limits=memory={_double(limit)}", *_ns(ns)])
        evidence = "; ".join(f"{c}: {r} {m}".strip() for c, r, m in problems[:4]) or \
            f"pods pending: {', '.join(pending[:3])}"
        out.append(Finding(w["kind"], name, ns.name, "its pods fail: " + ", ".join(sorted({r for _, r, _ in problems}))
                           if problems else "its pods cannot start", evidence, repairs, (name,), primary=False))
    return out


def _double(quantity: str) -> str:
    units = {"Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3, "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3}
    for suffix, factor in units.items():
        if quantity.endswith(suffix) and quantity[:-len(suffix)].isdigit():
            return f"{int(quantity[:-len(suffix)]) * 2}{suffix}"
    return str(int(float(quantity) * 2)) if quantity.replace(".", "", 1).isdigit() else quantity


RULES: tuple[Callable[[Namespace, dict], list[Finding]], ...] = (
    scaled_to_zero, changed_template, service_selector, service_target_port, missing_service, deny_network_policy,
    autoscaler_maxed, quota_exhausted, cordoned_nodes, chaos_objects, failing_pods)
