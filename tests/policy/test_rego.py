"""Rego through rego-cpp: results, undefined, errors with rego-cpp's messages, and the time limit."""

from __future__ import annotations

import time

import pytest

from pytest_itbench.policy.rego import RegoError, RegoResult, RegoTimeout, evaluate

pytest.importorskip("regopy")

PRIVILEGED = """
package check

default result := false

result if {
    count(violations) == 0
}

violations contains name if {
    some pod in input.pods
    some container in pod.spec.containers
    container.securityContext.privileged == true
    name := sprintf("%s/%s", [pod.metadata.name, container.name])
}
"""


def pods(*privileged: bool) -> dict:
    return {"pods": [{"metadata": {"name": f"p{i}"},
                      "spec": {"containers": [{"name": "c", "securityContext": {"privileged": flag}}]}}
                     for i, flag in enumerate(privileged)]}


def test_defined_true():
    assert evaluate(PRIVILEGED, pods(False, False)) == RegoResult(True, True, {}, [{"expressions": [True],
                                                                                      "bindings": {}}])


def test_defined_false_is_a_value_not_undefined():
    result = evaluate(PRIVILEGED, pods(False, True))
    assert result.defined and result.value is False


def test_a_false_comparison_as_the_rule_value_is_false():
    result = evaluate("package check\nresult := input.replicas > 1\n", {"replicas": 0})
    assert result.defined and result.value is False


def test_undefined_result():
    result = evaluate("package check\nresult if input.missing == 1\n", {})
    assert result == RegoResult(False)
    assert result.value is None


def test_a_package_without_the_rule_is_undefined():
    assert not evaluate("package other\nresult := true\n", {}).defined


def test_nested_input_and_other_queries():
    evidence = {"cluster": {"namespaces": [{"name": "default", "pods": [{"name": "a", "labels": {"app": "x"}},
                                                                          {"name": "b", "labels": {}}]}]}}
    policy = """
package check
import rego.v1
unlabelled := [p.name | some ns in input.cluster.namespaces; some p in ns.pods; not p.labels.app]
result := count(unlabelled) == 0
"""
    assert evaluate(policy, evidence).value is False
    assert evaluate(policy, evidence, "data.check.unlabelled").value == ["b"]
    whole = evaluate(policy, evidence, "data.check")
    assert whole.value == {"result": False, "unlabelled": ["b"]}
    bound = evaluate(policy, evidence, "x := data.check.unlabelled; n := count(x)")
    assert bound.bindings == {"x": ["b"], "n": 1}


def test_data_document():
    result = evaluate("package check\nresult := data.allowed[input.registry]\n", {"registry": "ghcr.io"},
                      data={"allowed": {"ghcr.io": True}})
    assert result.value is True


def test_syntax_error_carries_rego_cpps_message_and_position():
    with pytest.raises(RegoError) as caught:
        evaluate("package check\nresult := { input.x > \n", {})
    assert "policy.rego:2:11: this is unclosed" in caught.value.message
    assert not isinstance(caught.value, RegoTimeout)


def test_compile_error():
    with pytest.raises(RegoError, match="Function not found: no_such_function"):
        evaluate("package check\nresult := no_such_function(1)\n", {})


def test_evaluation_error_with_code():
    with pytest.raises(RegoError) as caught:
        evaluate("package check\nresult := 1\nresult := 2\n", {})
    assert caught.value.message == "complete rules must not produce multiple outputs"
    assert caught.value.code == "eval_conflict_error"


def test_input_that_is_not_json():
    with pytest.raises(RegoError, match="not a JSON document"):
        evaluate("package check\nresult := true\n", {"x": object()})


def test_a_policy_that_runs_long_is_stopped_at_the_time_limit():
    started = time.monotonic()
    with pytest.raises(RegoTimeout, match="did not finish within 1 s"):
        evaluate("package check\nresult := count([x | some x in numbers.range(1, 1000000000)])\n", {},
                 timeout=1)
    assert time.monotonic() - started < 5
    # The caller is unharmed and the next evaluation works.
    assert evaluate("package check\nresult := true\n", {}).value is True


def test_a_crash_of_the_engine_is_an_error(monkeypatch):
    from pytest_itbench.policy import rego

    monkeypatch.setattr(rego, "_CHILD", "import os; os.abort()")
    with pytest.raises(RegoError, match=r"the Rego engine crashed \(SIGABRT\)"):
        evaluate("package check\nresult := true\n", {})
