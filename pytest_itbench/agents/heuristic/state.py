"""What the heuristic reads of a namespace, in one snapshot, and the questions it asks of it.

Nothing here calls the cluster: :func:`snapshot` lists the objects once through the toolkit's kubectl,
and the rest are pure functions over those listings (owners, selectors, revisions, ports).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...tools import KubectlTool, ToolError

KINDS = ("deployments", "statefulsets", "replicasets", "pods", "services", "endpoints", "networkpolicies",
         "horizontalpodautoscalers", "resourcequotas")
REVISION = "deployment.kubernetes.io/revision"
# Pod template fields a change of which is a configuration change (annotations, such as a restart's, are not).
IGNORED_LABELS = ("pod-template-hash",)


@dataclass
class Namespace:
    name: str
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by Kind
    events: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    chaos: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # what could not be read

    def of(self, kind: str) -> list[dict[str, Any]]:
        return self.objects.get(kind, [])

    def get(self, kind: str, name: str) -> dict[str, Any] | None:
        return next((o for o in self.of(kind) if o["metadata"]["name"] == name), None)

    def live_pods(self) -> list[dict[str, Any]]:
        return [p for p in self.of("Pod") if not p["metadata"].get("deletionTimestamp")]


def snapshot(kubectl: KubectlTool, namespace: str) -> Namespace:
    ns = Namespace(namespace)
    listing = kubectl.json(["get", ",".join(KINDS), "--namespace", namespace],
                           thought=f"read the state of namespace {namespace}")
    for item in listing.get("items", []):
        ns.objects.setdefault(item.get("kind", ""), []).append(item)
    for items in ns.objects.values():
        items.sort(key=lambda o: o["metadata"]["name"])
    try:
        ns.events = kubectl.json(["get", "events", "--namespace", namespace],
                                 thought="what happened recently in the namespace").get("items", [])
    except ToolError as exc:
        ns.problems.append(str(exc))
    try:
        ns.nodes = kubectl.json(["get", "nodes"], thought="are the nodes schedulable?").get("items", [])
    except ToolError as exc:
        ns.problems.append(str(exc))
    result = kubectl.run(["api-resources", "--api-group=chaos-mesh.org", "--namespaced=true", "-o", "name"],
                         thought="is Chaos Mesh installed?", check=False)
    kinds = sorted(line.strip() for line in result.stdout.splitlines() if line.strip())
    if result.returncode == 0 and kinds:
        try:
            found = kubectl.json(["get", ",".join(kinds), "--namespace", namespace],
                                 thought="are chaos experiments or schedules running in the namespace?")
            ns.chaos = sorted(found.get("items", []), key=lambda o: (o.get("kind", ""), o["metadata"]["name"]))
        except ToolError as exc:
            ns.problems.append(str(exc))
    return ns


# ---- questions --------------------------------------------------------------------------------------------------
def labels_match(selector: dict[str, Any] | None, labels: dict[str, str] | None) -> bool:
    """A label selector (``matchLabels``/``matchExpressions``, or a Service's plain map) against labels."""
    if selector is None:
        return False
    labels = labels or {}
    plain = selector if not ({"matchLabels", "matchExpressions"} & set(selector)) else selector.get("matchLabels") or {}
    if any(labels.get(k) != v for k, v in plain.items()):
        return False
    for expression in selector.get("matchExpressions") or [] if "matchExpressions" in selector else []:
        key, op, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
        if op == "In" and labels.get(key) not in values or op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels or op == "DoesNotExist" and key in labels:
            return False
    return True


def template_labels(workload: dict[str, Any]) -> dict[str, str]:
    return dict(workload["spec"].get("template", {}).get("metadata", {}).get("labels") or {})


def workload_of_pod(ns: Namespace, pod: dict[str, Any]) -> dict[str, Any] | None:
    """The Deployment or StatefulSet a pod belongs to, through its owners."""
    for ref in pod["metadata"].get("ownerReferences") or []:
        if ref.get("kind") == "StatefulSet":
            return ns.get("StatefulSet", ref["name"])
        if ref.get("kind") == "ReplicaSet":
            rs = ns.get("ReplicaSet", ref["name"])
            for owner in (rs or {}).get("metadata", {}).get("ownerReferences") or []:
                if owner.get("kind") == "Deployment":
                    return ns.get("Deployment", owner["name"])
    return None


def pods_of(ns: Namespace, workload: dict[str, Any]) -> list[dict[str, Any]]:
    name = workload["metadata"]["name"]
    return [p for p in ns.live_pods() if (workload_of_pod(ns, p) or {}).get("metadata", {}).get("name") == name
            and (workload_of_pod(ns, p) or {}).get("kind") == workload["kind"]]


def workload_for_service(ns: Namespace, service_name: str) -> dict[str, Any] | None:
    """The workload behind a name a trace or an alert uses: same name first, then a workload whose pod
    template carries the name as a label value, then the workloads a Service of that name selects."""
    workloads = ns.of("Deployment") + ns.of("StatefulSet")
    for w in workloads:
        if w["metadata"]["name"] == service_name:
            return w
    for w in workloads:
        if service_name in template_labels(w).values():
            return w
    service = ns.get("Service", service_name)
    if service is not None:
        selected = selected_workloads(ns, service)
        if selected:
            return selected[0]
    return None


def selected_workloads(ns: Namespace, service: dict[str, Any]) -> list[dict[str, Any]]:
    selector = service["spec"].get("selector")
    if not selector:
        return []
    return [w for w in ns.of("Deployment") + ns.of("StatefulSet") if labels_match(selector, template_labels(w))]


def services_of(ns: Namespace, workload: dict[str, Any]) -> list[dict[str, Any]]:
    labels = template_labels(workload)
    return [s for s in ns.of("Service") if s["spec"].get("selector") and labels_match(s["spec"]["selector"], labels)]


def revisions(ns: Namespace, deployment: dict[str, Any]) -> list[dict[str, Any]]:
    """The Deployment's ReplicaSets, newest revision first."""
    name = deployment["metadata"]["name"]
    owned = [rs for rs in ns.of("ReplicaSet") if any(r.get("kind") == "Deployment" and r.get("name") == name
                                                     for r in rs["metadata"].get("ownerReferences") or [])]
    return sorted(owned, key=lambda rs: -int((rs["metadata"].get("annotations") or {}).get(REVISION, "0") or 0))


def template_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between two pod templates, as ``path: old -> new`` lines (containers matched by name;
    annotations and the pod-template-hash label left out)."""
    def clean(template: dict[str, Any]) -> dict[str, Any]:
        labels = {k: v for k, v in (template.get("metadata", {}).get("labels") or {}).items()
                  if k not in IGNORED_LABELS}
        return {"labels": labels, "spec": template.get("spec") or {}}

    out: list[str] = []
    _diff(clean(old), clean(new), "", out)
    return out


def _diff(old: Any, new: Any, path: str, out: list[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            _diff(old.get(key), new.get(key), f"{path}.{key}" if path else key, out)
    elif isinstance(old, list) and isinstance(new, list) and _named(old) and _named(new):
        olds, news = {i["name"]: i for i in old}, {i["name"]: i for i in new}
        for name in sorted(set(olds) | set(news)):
            _diff(olds.get(name), news.get(name), f"{path}[{name}]", out)
    elif old != new:
        out.append(f"{path}: {_short(old)} -> {_short(new)}")


def _named(items: list[Any]) -> bool:
    return all(isinstance(i, dict) and "name" in i for i in items)


def _short(value: Any) -> str:
    text = "unset" if value is None else str(value)
    return text if len(text) <= 160 else text[:157] + "..."


def container_ports(workload: dict[str, Any]) -> list[dict[str, Any]]:
    spec = workload["spec"].get("template", {}).get("spec", {})
    return [p for c in spec.get("containers") or [] for p in c.get("ports") or []]


def ready_addresses(ns: Namespace, service_name: str) -> int:
    endpoints = ns.get("Endpoints", service_name)
    return sum(len(s.get("addresses") or []) for s in (endpoints or {}).get("subsets") or [])


def waiting_reasons(pod: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(container, reason, message)`` of containers (init containers too) that wait or last died OOMKilled."""
    out = []
    status = pod.get("status") or {}
    for c in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        waiting = (c.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason") not in (None, "ContainerCreating", "PodInitializing"):
            out.append((c["name"], waiting["reason"], waiting.get("message", "")))
        last = (c.get("lastState") or {}).get("terminated") or {}
        if last.get("reason") == "OOMKilled" or ((c.get("state") or {}).get("terminated") or {}).get(
                "reason") == "OOMKilled":
            out.append((c["name"], "OOMKilled", f"restarted {c.get('restartCount', 0)} times"))
    return out
