"""Kyverno's background scan and reports controller on the twin's clock: one PolicyReport per resource.

Shaped as Kyverno 1.12 keeps its reports (the per-resource layout of 1.10 and later):

* a resource that policies with ``background: true`` (the default) apply to has one report, a
  ``PolicyReport`` in its namespace or a ``ClusterPolicyReport`` for a cluster-scoped resource, named by
  the resource's uid, labelled ``app.kubernetes.io/managed-by: kyverno``, owned by the resource (so it
  goes when the resource goes), with ``scope`` the resource;
* ``results`` hold one entry per policy rule that applied (``policy`` is ``<namespace>/<name>`` for a
  namespaced Policy): ``policy``, ``rule``, ``result``, ``message``, ``scored``, ``severity`` and
  ``category`` (from the policy's annotations, when set), ``source: kyverno`` and ``timestamp``; a
  ``fail`` of a policy annotated ``policies.kyverno.io/scored: "false"`` is a ``warn``;
* ``summary`` counts pass, fail, warn, error and skip.

Reports are recomputed when a resource changes, when a policy changes (every resource its kinds name,
and every existing report), and by the periodic background scan (``BACKGROUND_SCAN_INTERVAL``, Kyverno's
``--backgroundScanInterval`` default of one hour); a resource without results has no report. An
unchanged result keeps its timestamp, so a rescan that finds nothing new writes nothing.

When no ClusterPolicy or Policy exists the controller does nothing: its write hook returns at once.
"""

from __future__ import annotations

import logging
from typing import Hashable, Iterable

from ..apiserver.resources import Resource
from ..clock import format_time
from ..controllers.manager import Controller, ControllerManager
from ..store import Change, clone
from .admission import status_only
from .kinds import (CLUSTER_POLICIES, CLUSTER_REPORTS, POLICIES, POLICY_BUCKETS, REPORTS, filtered,
                    kind_patterns, matches_kind)

log = logging.getLogger(__name__)

BACKGROUND_SCAN_INTERVAL = 3600.0
MANAGED_BY = {"app.kubernetes.io/managed-by": "kyverno"}
SCORED_ANNOTATION = "policies.kyverno.io/scored"
REPORT_GROUP_VERSION = "wgpolicyk8s.io/v1alpha2"
SCAN = ("scan",)
OUTCOMES = ("pass", "fail", "warn", "error", "skip")


class KyvernoReports(Controller):
    name = "kyverno-reports"
    identity = "system:serviceaccount:kyverno:kyverno-reports-controller"
    field_manager = "kyverno"
    watches = POLICY_BUCKETS

    def __init__(self, manager: ControllerManager):
        super().__init__(manager)
        self.cluster_policies = self.resource("kyverno.io", "v1", "clusterpolicies")
        self.namespaced_policies = self.resource("kyverno.io", "v1", "policies")
        self.reports = self.resource("wgpolicyk8s.io", "v1alpha2", "policyreports")
        self.cluster_reports = self.resource("wgpolicyk8s.io", "v1alpha2", "clusterpolicyreports")
        self._buckets: frozenset[str] = frozenset()  # buckets the current policies' kinds name
        self._scan_due = False
        self._engine = None
        manager.api.store.on_write(self._on_any_write)

    # ---- what changed -----------------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[Hashable]:
        meta = change.obj["metadata"]
        keys: list[Hashable] = [("status", change.bucket, meta.get("namespace", ""), meta["name"])]
        if change.type != "MODIFIED" or _policy_changed(change.obj, change.old):
            keys.append(SCAN)
        return keys

    def _on_any_write(self, change: Change) -> None:
        """Every write in the store (under its lock): cheap unless a policy's kinds name the bucket."""
        if change.bucket not in self._buckets:
            if change.bucket == "namespaces" and self._buckets and change.type == "MODIFIED" \
                    and (change.obj["metadata"].get("labels") != (change.old or {}).get("metadata", {}).get("labels")):
                self.queue.add(SCAN, self.clock.now())  # namespace selectors may now match otherwise
            return
        if change.type == "MODIFIED" and status_only(change.obj, change.old):
            return  # a status write (a pod's kubelet, every few seconds): policies judge what was asked for
        meta = change.obj["metadata"]
        self.queue.add(("resource", change.bucket, meta.get("namespace", ""), meta["name"]), self.clock.now())

    # ---- reconciling ----------------------------------------------------------------------------------
    def reconcile(self, key: Hashable, now: float) -> float | None:
        if key == SCAN:
            return self._scan()
        if key[0] == "status":
            self._policy_status(*key[1:])
            return None
        _, bucket, namespace, name = key
        self._report(bucket, namespace, name, now)
        return None

    def _scan(self) -> float | None:
        """Find the buckets the policies name and queue every resource in them and every existing report."""
        policies = self.all_policies()
        patterns = [p for policy in policies for p in kind_patterns(policy)]
        buckets = set()
        for res in self.api.catalog.resources:
            if res.virtual or not res.bucket or res.api_version != res.storage_version:
                continue
            if matches_kind(patterns, res.group, res.version, res.kind):
                buckets.add(res.bucket)
        self._buckets = frozenset(buckets)
        now = self.clock.now()
        for bucket in sorted(buckets):
            for namespace, name in self.store.keys(bucket):
                self.queue.add(("resource", bucket, namespace, name), now)
        for report_bucket in (REPORTS, CLUSTER_REPORTS):
            for report in self.store.list(report_bucket)[0]:
                scope = report.get("scope") or {}
                res = self.api.catalog.for_api_version(scope.get("apiVersion", ""), scope.get("kind", ""))
                if res is not None and (report["metadata"].get("labels") or {}).get(
                        "app.kubernetes.io/managed-by") == "kyverno":
                    self.queue.add(("resource", res.bucket, scope.get("namespace", ""), scope.get("name", "")), now)
        return BACKGROUND_SCAN_INTERVAL if policies else None

    # ---- policies ---------------------------------------------------------------------------------------
    def all_policies(self) -> list[dict]:
        return self.store.list(CLUSTER_POLICIES)[0] + self.store.list(POLICIES)[0]

    def policies_for(self, res: Resource, namespace: str) -> list[dict]:
        """ClusterPolicies, and the Policies of ``namespace``, whose kinds may name ``res``."""
        out = []
        for policy in self.all_policies():
            if policy["metadata"].get("deletionTimestamp"):
                continue
            if policy.get("kind") == "Policy" and policy["metadata"].get("namespace") != namespace:
                continue
            if matches_kind(kind_patterns(policy), res.group, res.version, res.kind):
                out.append(policy)
        return out

    @staticmethod
    def policy_key(policy: dict) -> str:
        meta = policy["metadata"]
        return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]

    def engine(self):
        if self._engine is None:
            from ...policy import kyverno  # imported once a policy exists: twins without one never load it
            self._engine = kyverno
        return self._engine

    def enforces(self, policy: dict, rule: str | None = None) -> bool:
        """Whether failures of the policy (or of one of its rules) block admission."""
        try:
            return self.engine().validation_action(policy, rule) == "Enforce"
        except self.engine().PolicyError:
            return False

    def evaluate(self, policy: dict, resource: dict, *, operation: str = "CREATE", old_resource: dict | None = None,
                 user_info: dict | None = None):
        """The engine's results for ``resource``, or None for a policy it refuses."""
        engine = self.engine()
        namespace = (resource.get("metadata") or {}).get("namespace")
        labels = None
        if namespace:
            ns = self.store.get("namespaces", "", namespace)
            labels = dict((ns or {}).get("metadata", {}).get("labels") or {})
        try:
            return engine.apply(policy, resource, operation=operation, namespace_labels=labels,
                                old_resource=old_resource, user_info=user_info)
        except engine.PolicyError as exc:
            log.debug("policy %s refused: %s", self.policy_key(policy), exc)
            return None

    def _policy_status(self, bucket: str, namespace: str, name: str) -> None:
        """Ready and rule counts in the policy's status, as Kyverno's policy controller writes them."""
        stored = self.store.get(bucket, namespace, name)
        if stored is None or stored["metadata"].get("deletionTimestamp"):
            return
        rules = (stored.get("spec") or {}).get("rules") or []
        count = {"validate": 0, "mutate": 0, "generate": 0, "verifyimages": 0}
        for rule in rules:
            for field, counter in (("validate", "validate"), ("mutate", "mutate"), ("generate", "generate"),
                                   ("verifyImages", "verifyimages")):
                if (rule or {}).get(field):
                    count[counter] += 1
        problem = self._policy_problem(stored)
        status = clone(stored.get("status") or {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "Ready"]
        previous = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
        ready = "False" if problem else "True"
        condition = {"type": "Ready", "status": ready, "reason": "Failed" if problem else "Succeeded",
                     "message": problem or "Ready",
                     "lastTransitionTime": previous["lastTransitionTime"]
                     if previous and previous.get("status") == ready else format_time(self.clock.now())}
        status.update(conditions=[condition, *conditions], ready=not problem, rulecount=count)
        if status != (stored.get("status") or {}):
            obj = clone(stored)
            obj["status"] = status
            res = self.cluster_policies if bucket == CLUSTER_POLICIES else self.namespaced_policies
            self.update_status(res, obj)

    def _policy_problem(self, policy: dict) -> str:
        engine = self.engine()
        try:
            engine.validation_action(policy)
            engine.apply(policy, {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "kyverno-policy-check", "namespace": "default"}})
        except engine.PolicyError as exc:
            return str(exc)
        except Exception as exc:  # the engine's own failure must not stop the controller
            return f"policy could not be evaluated: {exc}"
        return ""

    # ---- reports --------------------------------------------------------------------------------------
    def _report(self, bucket: str, namespace: str, name: str, now: float) -> None:
        obj = self.store.get(bucket, namespace, name)
        res = self.api.catalog.storage_resource(bucket)
        report_res = self.reports if namespace else self.cluster_reports
        existing = self._existing_reports(bucket, namespace, name)
        if obj is None or res is None or obj["metadata"].get("deletionTimestamp"):
            for report in existing:
                self.delete(report_res, namespace or None, report["metadata"]["name"])
            return
        uid = obj["metadata"]["uid"]
        for report in existing:
            if report["metadata"]["name"] != uid:  # a report of an earlier object of that name
                self.delete(report_res, namespace or None, report["metadata"]["name"])
        current = next((r for r in existing if r["metadata"]["name"] == uid), None)
        results = [] if filtered(res.kind, namespace, name) else self._results(res, obj, now)
        if not results:
            if current is not None:
                self.delete(report_res, namespace or None, uid)
            return
        if current is not None:  # an unchanged result keeps the time it was found
            before = {_identity(r): r.get("timestamp") for r in current.get("results") or []}
            for result in results:
                if _identity(result) in before and before[_identity(result)]:
                    result["timestamp"] = before[_identity(result)]
        scope = {"apiVersion": res.api_version, "kind": res.kind, "name": name, "uid": uid}
        if namespace:
            scope["namespace"] = namespace
        report = {
            "apiVersion": REPORT_GROUP_VERSION,
            "kind": "PolicyReport" if namespace else "ClusterPolicyReport",
            "metadata": {"name": uid, "labels": dict(MANAGED_BY),
                         "ownerReferences": [{"apiVersion": res.api_version, "kind": res.kind, "name": name,
                                              "uid": uid}]},
            "scope": scope,
            "results": results,
            "summary": {outcome: sum(1 for r in results if r["result"] == outcome) for outcome in OUTCOMES},
        }
        if namespace:
            report["metadata"]["namespace"] = namespace
        if current is None:
            self.create(report_res, report)
            return
        if all(current.get(k) == report[k] for k in ("scope", "results", "summary")) \
                and current["metadata"].get("labels") == report["metadata"]["labels"]:
            return
        updated = clone(current)
        updated["metadata"]["labels"] = dict(updated["metadata"].get("labels") or {}, **MANAGED_BY)
        updated["metadata"]["ownerReferences"] = report["metadata"]["ownerReferences"]
        for k in ("scope", "results", "summary"):
            updated[k] = report[k]
        self.update(report_res, updated)

    def _existing_reports(self, bucket: str, namespace: str, name: str) -> list[dict]:
        """Kyverno's reports whose scope is the object ``bucket``/``namespace``/``name``."""
        report_bucket = REPORTS if namespace else CLUSTER_REPORTS
        out = []
        for report in self.store.list(report_bucket, namespace or None)[0]:
            if (report["metadata"].get("labels") or {}).get("app.kubernetes.io/managed-by") != "kyverno":
                continue
            scope = report.get("scope") or {}
            if scope.get("name") != name or (scope.get("namespace") or "") != namespace:
                continue
            res = self.api.catalog.for_api_version(scope.get("apiVersion", ""), scope.get("kind", ""))
            if res is not None and res.bucket == bucket:
                out.append(report)
        return out

    def _results(self, res: Resource, obj: dict, now: float) -> list[dict]:
        resource = dict(obj, apiVersion=res.api_version, kind=res.kind)
        namespace = obj["metadata"].get("namespace") or ""
        out = []
        for policy in self.policies_for(res, namespace):
            spec = policy.get("spec") or {}
            if spec.get("background", True) is False:
                continue
            results = self.evaluate(policy, resource, operation="CREATE")
            if not results:
                continue
            scored_off = ((policy["metadata"].get("annotations") or {}).get(SCORED_ANNOTATION) == "false")
            for result in results:
                outcome = result.result
                if outcome == "fail" and (scored_off or result.scored is False):
                    outcome = "warn"
                entry = {"policy": self.policy_key(policy), "rule": result.rule, "result": outcome,
                         "message": result.message or "", "scored": not scored_off and result.scored is not False,
                         "source": "kyverno", "timestamp": {"seconds": int(now), "nanos": 0}}
                if result.severity:
                    entry["severity"] = result.severity
                if result.category:
                    entry["category"] = result.category
                out.append(entry)
        out.sort(key=lambda r: (r["policy"], r["rule"]))
        return out


def _identity(result: dict) -> tuple:
    return tuple(result.get(k) for k in ("policy", "rule", "result", "message", "scored", "severity", "category"))


def _policy_changed(obj: dict, old: dict | None) -> bool:
    """A change a scan must follow: anything but the status."""
    if old is None:
        return True
    meta, old_meta = obj["metadata"], old["metadata"]
    return (obj.get("spec") != old.get("spec") or meta.get("annotations") != old_meta.get("annotations")
            or meta.get("labels") != old_meta.get("labels") or bool(meta.get("deletionTimestamp")))
