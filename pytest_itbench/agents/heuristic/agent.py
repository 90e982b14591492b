"""``heuristic``: a deterministic baseline with no language model and no ground truth.

It works as an operator with a runbook would, through the toolkit only (pytest_itbench/tools):

1. read the firing alerts (Alertmanager, else Prometheus' ``ALERTS``) and the services and pods they name;
2. follow failed calls in the traces from the alerting services towards the callees that fail;
3. read the namespace's state once (workloads, revisions, pods, Services and endpoints, NetworkPolicies,
   autoscalers, quotas, events, nodes, Chaos Mesh objects) and run its rules (:mod:`.rules`) over it;
4. name the root causes in ITBench's shape, then apply each finding's repair with kubectl.

It solves what a rule covers and nothing else; it is a floor to compare agents with, not an oracle.
"""

from __future__ import annotations

import shlex
import time
from typing import Any

from ...tools import DeadlineReached, ToolError, Toolkit, failed_calls
from ..base import Submission, Task, Trajectory, entity_name
from .rules import RULES, Finding
from .state import Namespace, services_of, snapshot, workload_for_service, workload_of_pod

TRACE_LOOKBACK = 600.0  # seconds of traces searched
MAX_TRACE_SEARCHES = 4
NOT_A_SERVICE = ("load-generator",)  # callers, never the cause of failures they report
SERVICE_ALERTS = ("HighRequestErrorRate", "HighRequestLatency")  # alerts on a service's failing requests


class HeuristicAgent:
    name = "heuristic"

    def __init__(self, *, kubectl: str | None = None):
        self.kubectl_binary = kubectl

    def run(self, task: Task, trajectory: Trajectory) -> Submission:
        started = time.time()
        tools = Toolkit(task, trajectory, kubectl_binary=self.kubectl_binary)
        alerts = [] if _stopped(task) else self._alerts(tools, task)
        findings: list[Finding] = []
        propagations: list[dict[str, str]] = []
        impacted: list[str] = []
        notes: list[str] = []
        for namespace in task.namespaces or ("default",):
            if _stopped(task):
                break
            mine = [a for a in alerts if a.get("namespace") in (namespace, None, "")]
            try:
                calls = self._failed_calls(tools, task, mine, namespace)
                ns = snapshot(tools.kubectl, namespace)
            except DeadlineReached as exc:
                notes.append(str(exc))
                break
            notes.extend(ns.problems)
            chosen = self._choose(ns, mine, calls)
            findings.extend(chosen)
            propagations.extend(_propagations(ns, chosen, calls))
            impacted.extend(_impacted(ns, chosen, mine))
        diagnosis = _diagnosis(findings, propagations, impacted, alerts)
        diagnosed_at = time.time() - started
        for finding in findings:
            for args in finding.repairs:
                if _stopped(task):
                    break
                try:
                    tools.kubectl.run(args, thought=f"repair {finding.kind} {finding.name}: {finding.reasoning}",
                                      check=False)
                except ToolError as exc:
                    notes.append(f"repair kubectl {shlex.join(args)}: {exc}")
        return Submission(diagnosis=diagnosis, diagnosed_at=diagnosed_at, notes="; ".join(notes))

    # ---- signals ----------------------------------------------------------------------------------------------
    def _alerts(self, tools: Toolkit, task: Task) -> list[dict[str, str]]:
        """Labels of the firing alerts, from Alertmanager, else Prometheus; none when both are withheld."""
        if tools.alerts.offered:
            try:
                return [dict(a.get("labels") or {}) for a in tools.alerts(thought="which alerts fire?")]
            except ToolError:
                pass
        if tools.prometheus.offered:
            try:
                series = tools.prometheus.query('ALERTS{alertstate="firing"}', thought="which alerts fire?")
                return sorted((dict(s.get("metric") or {}) for s in series), key=lambda m: sorted(m.items()))
            except ToolError:
                pass
        return []

    def _failed_calls(self, tools: Toolkit, task: Task, alerts: list[dict[str, str]],
                      namespace: str) -> list[dict[str, Any]]:
        if not tools.traces.offered:
            return []
        services = sorted({a["service_name"] for a in alerts if a.get("service_name")
                           and a.get("alertname") in SERVICE_ALERTS})
        calls: dict[tuple[str, str], dict[str, Any]] = {}
        for service in services[:MAX_TRACE_SEARCHES]:
            if _stopped(task):
                break
            try:
                traces = tools.traces.search(service, tags={"error": "true"}, lookback=TRACE_LOOKBACK, limit=20,
                                             thought=f"which calls fail in the traces of {service}?")
            except ToolError:
                continue
            for call in failed_calls(traces):
                calls.setdefault((call["caller"], call["callee"]), call)
        return [calls[k] for k in sorted(calls)]

    # ---- reasoning --------------------------------------------------------------------------------------------
    def _choose(self, ns: Namespace, alerts: list[dict[str, str]], calls: list[dict[str, Any]]) -> list[Finding]:
        implicated: set[str] = set()
        for alert in alerts:
            workload = None
            if alert.get("pod"):
                pod = ns.get("Pod", alert["pod"])
                workload = workload_of_pod(ns, pod) if pod else None
            for key in ("deployment", "statefulset", "service_name"):
                if workload is None and alert.get(key):
                    workload = workload_for_service(ns, alert[key])
            if workload is not None:
                implicated.add(workload["metadata"]["name"])
        callees: dict[str, int | None] = {}
        for call in calls:
            for name in (call["caller"], call["callee"]):
                workload = workload_for_service(ns, name)
                if workload is not None:
                    implicated.add(workload["metadata"]["name"])
            if call["callee"] not in NOT_A_SERVICE:
                callees.setdefault(call["callee"], call.get("port"))
        context = {"implicated": implicated, "callees": callees}
        found: dict[tuple[str, str, str], Finding] = {}
        for rule in RULES:
            for finding in rule(ns, context):
                found.setdefault(finding.key, finding)
        primary = [f for f in found.values() if f.primary]
        explained = {w for f in primary for w in f.workloads}
        secondary = [f for f in found.values() if not f.primary and f.workloads[0] not in explained
                     and (f.workloads[0] in implicated or not primary)]
        chosen = primary + secondary
        if not chosen:
            chosen = self._guess(ns, calls, alerts)
        return chosen

    def _guess(self, ns: Namespace, calls: list[dict[str, Any]], alerts: list[dict[str, str]]) -> list[Finding]:
        """No rule fired: blame the deepest failing callee the traces show (no repair is known)."""
        callers = {c["caller"] for c in calls}
        leaves = sorted({c["callee"] for c in calls if c["callee"] not in callers and c["callee"] not in NOT_A_SERVICE})
        for leaf in leaves:
            workload = workload_for_service(ns, leaf)
            if workload is not None:
                first = next(c for c in calls if c["callee"] == leaf)
                return [Finding(workload["kind"], workload["metadata"]["name"], ns.name,
                                "the deepest service whose calls fail in the traces; no rule explains why",
                                f"{first['caller']} -> {leaf} {first['operation']}: {first['message'][:200]}",
                                [], (workload["metadata"]["name"],), primary=False)]
        return []


def _stopped(task: Task) -> bool:
    return task.cancelled.is_set() or task.remaining() <= 0


def _name(finding: Finding) -> str:
    return entity_name(finding.namespace, finding.kind, finding.name)


def _service_entity(ns: Namespace, service: str) -> str | None:
    if ns.get("Service", service) is not None:
        return entity_name(ns.name, "Service", service)
    workload = workload_for_service(ns, service)
    if workload is not None:
        services = services_of(ns, workload)
        if services:
            return entity_name(ns.name, "Service", services[0]["metadata"]["name"])
    return None


def _propagations(ns: Namespace, findings: list[Finding], calls: list[dict[str, Any]]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for finding in findings:
        for name in finding.workloads:
            workload = ns.get("Deployment", name) or ns.get("StatefulSet", name)
            if workload is not None and (workload["kind"], name) != (finding.kind, finding.name):
                out.append({"source": _name(finding), "target": entity_name(ns.name, workload["kind"], name),
                            "condition": finding.reasoning, "effect": f"{name} fails"})
        if finding.kind in ("Deployment", "StatefulSet"):
            workload = ns.get(finding.kind, finding.name)
            for service in services_of(ns, workload) if workload else []:
                out.append({"source": _name(finding), "target": entity_name(ns.name, "Service",
                                                                            service["metadata"]["name"]),
                            "condition": finding.reasoning, "effect": "the Service's backends fail"})
    for call in calls:
        source, target = _service_entity(ns, call["callee"]), _service_entity(ns, call["caller"])
        if source and target and source != target and call["caller"] not in NOT_A_SERVICE:
            out.append({"source": source, "target": target, "condition": f"{call['operation']} fails",
                        "effect": f"{call['caller']} sees errors: {call['message'][:120]}"})
    return out


def _impacted(ns: Namespace, findings: list[Finding], alerts: list[dict[str, str]]) -> list[str]:
    names: list[str] = []
    for finding in findings:
        workloads = [ns.get(finding.kind, finding.name)] if finding.kind in ("Deployment", "StatefulSet") else []
        for name in finding.workloads:  # what the finding explains: a policy's or an experiment's targets
            workload = ns.get("Deployment", name) or ns.get("StatefulSet", name)
            if workload is not None and workload not in workloads:
                workloads.append(workload)
                names.append(entity_name(ns.name, workload["kind"], name))
        for workload in filter(None, workloads):
            names += [entity_name(ns.name, "Service", s["metadata"]["name"]) for s in services_of(ns, workload)]
    for alert in alerts:
        if alert.get("service_name") and alert.get("alertname") in SERVICE_ALERTS:
            entity = _service_entity(ns, alert["service_name"])
            if entity:
                names.append(entity)
    return names


def _diagnosis(findings: list[Finding], propagations: list[dict[str, str]], impacted: list[str],
               alerts: list[dict[str, str]]) -> dict[str, Any]:
    roots = [_name(f) for f in findings]
    entities = [{"name": _name(f), "contributing_factor": True, "reasoning": f.reasoning, "evidence": f.evidence}
                for f in findings]
    for name in dict.fromkeys(impacted):
        if name not in roots:
            entities.append({"name": name, "contributing_factor": False,
                             "reasoning": "impacted by the root cause", "evidence": "alerts, traces and selectors"})
    unique_props = list({(p["source"], p["target"]): p for p in propagations}.values())
    cause = ", ".join(roots) or "no cause found"
    names = sorted({a.get("alertname", "") for a in alerts if a.get("alertname")})
    return {"entities": entities, "propagations": unique_props,
            "alerts_explained": [{"alert": name, "explanation": f"follows from {cause}", "explained": bool(roots)}
                                 for name in names]}
