"""Kyverno engine cases, written in the shape of the Kyverno CLI's ``kyverno test`` files.

Each ``cases/<topic>/<name>.yaml`` holds ``policies``, ``resources`` and ``results`` (the
expected result per policy, rule and resource). A resource may be wrapped as
``{object: ..., operation: UPDATE, oldObject: ..., userInfo: ...}`` to describe the request;
``namespaces`` gives namespace labels for namespaceSelector and CEL's namespaceObject.
A result of ``none`` means the rule must not report on that resource (it does not match).
``error`` (instead of results) names a fragment of the PolicyError the policy must raise;
``validationActions`` maps a policy (or ``policy/rule``) to Audit or Enforce.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pytest_itbench.policy.kyverno import PolicyError, apply, validation_action

CASES = Path(__file__).parent / "cases"


def _load(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text())
    assert isinstance(doc, dict) and doc.get("policies"), f"{path}: needs policies"
    return doc


def _requests(doc: dict) -> list[dict]:
    out = []
    for item in doc.get("resources") or []:
        req = item if "object" in item else {"object": item}
        out.append(req)
    return out


def _find(requests: list[dict], name: str, kind: str | None) -> dict:
    hits = [r for r in requests if (r["object"].get("metadata") or {}).get("name") == name
            and (kind is None or r["object"].get("kind") == kind)]
    assert len(hits) == 1, f"resource {kind or ''}/{name}: {len(hits)} found"
    return hits[0]


def _run(doc: dict, policy: dict, req: dict):
    obj = req["object"]
    ns = (obj.get("metadata") or {}).get("namespace")
    labels = ((doc.get("namespaces") or {}).get(ns) or {}).get("labels") if ns else None
    return apply(policy, obj, operation=req.get("operation", "CREATE"),
                 namespace_labels=labels if labels is not None else ({} if ns else None),
                 old_resource=req.get("oldObject"), user_info=req.get("userInfo"))


def _cases():
    for path in sorted(CASES.rglob("*.yaml")):
        rel = path.relative_to(CASES).with_suffix("")
        doc = _load(path)
        if "error" in doc:
            yield pytest.param(path, None, id=f"{rel}::error")
            continue
        for policy_rule, action in (doc.get("validationActions") or {}).items():
            yield pytest.param(path, {"action": policy_rule, "expect": action}, id=f"{rel}::action:{policy_rule}")
        for i, res in enumerate(doc.get("results") or []):
            names = res.get("resources") or [res["resource"]]
            for name in names:
                expected = dict(res, resource=name)
                expected.pop("resources", None)
                yield pytest.param(path, expected,
                                   id=f"{rel}::{res.get('policy', '')}/{res['rule']}/{name}")


def _policy(doc: dict, name: str | None) -> dict:
    policies = doc["policies"]
    if name is None:
        assert len(policies) == 1, "name the policy when a case has several"
        return policies[0]
    return next(p for p in policies if p["metadata"]["name"] == name)


@pytest.mark.parametrize(("path", "expected"), list(_cases()))
def test_case(path: Path, expected: dict | None) -> None:
    doc = _load(path)
    if expected is None:
        with pytest.raises(PolicyError) as info:
            for policy in doc["policies"]:
                for req in _requests(doc) or [{"object": {"apiVersion": "v1", "kind": "Pod",
                                                          "metadata": {"name": "x", "namespace": "d"}}}]:
                    _run(doc, policy, req)
        assert doc["error"] in str(info.value)
        return
    if "action" in expected:
        policy_name, _, rule = expected["action"].partition("/")
        assert validation_action(_policy(doc, policy_name), *( [rule] if rule else [])) == expected["expect"]
        return
    policy = _policy(doc, expected.get("policy"))
    req = _find(_requests(doc), expected["resource"], expected.get("kind"))
    results = [r for r in _run(doc, policy, req) if r.rule == expected["rule"]]
    if expected["result"] == "none":
        assert results == [], f"rule {expected['rule']} should not apply: {results}"
        return
    assert len(results) == 1, f"rule {expected['rule']}: {len(results)} results"
    got = results[0]
    assert (got.result, got.message) == (expected["result"], expected.get("message", got.message)), got
    if "messageContains" in expected:
        assert expected["messageContains"] in got.message, got.message
    for key in ("severity", "category", "scored"):
        if key in expected:
            assert getattr(got, key) == expected[key]
    assert got.policy == policy["metadata"]["name"]
    meta = req["object"].get("metadata") or {}
    assert got.resource["name"] == meta.get("name") and got.resource["kind"] == req["object"]["kind"]


def test_at_least_150_cases() -> None:
    assert len(list(_cases())) >= 150
