"""Kyverno's validating admission webhook, as an admission plugin of the twin's API server.

On CREATE and UPDATE, the policies in Enforce mode (with ``admission`` on) that apply are evaluated; a
``fail`` (or an ``error`` under ``failurePolicy: Fail``, the default) rejects the request as the API
server rejects a webhook's denial: code 400, no reason, and the message

    admission webhook "validate.kyverno.svc-fail" denied the request: <Kyverno's message>

where Kyverno's message (1.12, ``GetBlockedMessages``) is

    "\\n\\nresource <Kind>/<namespace>/<name> was blocked due to the following policies \\n\\n" + YAML

of {policy: {rule: message}} for the rules that did not pass. Audit policies admit (their results reach
the PolicyReports through the background scan). As with Kyverno 1.13's ``allowExistingViolations``
(the default), an UPDATE whose old object already failed a rule is not blocked by that rule, and a
write that changes only an object's status (a status subresource, which Kyverno's webhook does not
receive) is not reviewed.
"""

from __future__ import annotations

import yaml

from ..apiserver.registry import Ctx
from ..apiserver.resources import Resource
from ..errors import StatusError
from .kinds import POLICY_BUCKETS, filtered

WEBHOOK_FAIL = "validate.kyverno.svc-fail"
WEBHOOK_IGNORE = "validate.kyverno.svc-ignore"
_VOLATILE_META = ("resourceVersion", "managedFields", "generation")


class WebhookDenied(StatusError):
    """A validating webhook's denial, as kube-apiserver answers it (code 400, no reason)."""

    def __init__(self, webhook: str, message: str):
        super().__init__(f'admission webhook "{webhook}" denied the request: {message}', code=400, reason="")


def blocked_message(kind: str, namespace: str, name: str, failures: dict[str, dict[str, str]]) -> str:
    """Kyverno's message for a blocked resource: the policies and rules that did not pass."""
    body = yaml.safe_dump(failures, default_flow_style=False, sort_keys=True, allow_unicode=True, width=80)
    return f"\n\nresource {kind}/{namespace}/{name} was blocked due to the following policies \n\n{body}"


def status_only(obj: dict, old: dict | None) -> bool:
    """True when an update changes nothing but the status (and bookkeeping metadata)."""
    if old is None:
        return False
    a, b = dict(obj), dict(old)
    a.pop("status", None)
    b.pop("status", None)
    a["metadata"] = {k: v for k, v in (a.get("metadata") or {}).items() if k not in _VOLATILE_META}
    b["metadata"] = {k: v for k, v in (b.get("metadata") or {}).items() if k not in _VOLATILE_META}
    return a == b


def plugin(kyverno):
    """The admission plugin for ``kyverno`` (a :class:`~.reports.KyvernoReports`): idle without policies."""
    store = kyverno.store

    def admit(op: str, res: Resource, obj: dict, old: dict | None, ctx: Ctx) -> None:
        if op not in ("create", "update") or not any(store.count(b) for b in POLICY_BUCKETS):
            return
        if res.bucket in POLICY_BUCKETS or res.virtual:
            return
        meta = obj.get("metadata") or {}
        namespace, name = meta.get("namespace") or "", meta.get("name") or ""
        if filtered(res.kind, namespace, name) or (op == "update" and status_only(obj, old)):
            return
        policies = [p for p in kyverno.policies_for(res, namespace) if kyverno.enforces(p)
                    and (p.get("spec") or {}).get("admission", True) is not False]
        if not policies:
            return
        resource = dict(obj, apiVersion=res.api_version, kind=res.kind)
        old_resource = dict(old, apiVersion=res.api_version, kind=res.kind) if old is not None else None
        operation = "CREATE" if op == "create" else "UPDATE"
        failures: dict[str, dict[str, str]] = {}
        webhook = WEBHOOK_IGNORE
        for policy in policies:
            spec = policy.get("spec") or {}
            fail_closed = (spec.get("failurePolicy") or "Fail") == "Fail"
            results = kyverno.evaluate(policy, resource, operation=operation, old_resource=old_resource,
                                       user_info=ctx.user.to_dict() if ctx.user else None)
            if results is None:
                continue
            old_failed = set()
            if old_resource is not None:
                before = kyverno.evaluate(policy, old_resource, operation="UPDATE") or []
                old_failed = {r.rule for r in before if r.result == "fail"}
            reasons = {}
            for result in results:
                if not kyverno.enforces(policy, result.rule):
                    continue  # a rule in Audit mode (validate.failureAction) within an Enforce policy
                if result.result == "fail" and result.rule not in old_failed:
                    reasons[result.rule] = result.message
                elif result.result == "error" and fail_closed:
                    reasons[result.rule] = result.message
            if reasons:
                failures[policy["metadata"]["name"]] = reasons  # the bare name, also for a Policy
                if fail_closed:
                    webhook = WEBHOOK_FAIL
        if failures:
            raise WebhookDenied(webhook, blocked_message(res.kind, namespace, name, failures))

    return admit
