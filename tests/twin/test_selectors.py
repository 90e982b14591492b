import pytest

from pytest_itbench.twin.errors import BadRequest
from pytest_itbench.twin.selectors import FieldSelector, LabelSelector, path_getter

LABELS = {"app": "web", "tier": "frontend", "version": "3"}


@pytest.mark.parametrize("text,expected", [
    ("", True),
    ("app=web", True),
    ("app==web", True),
    ("app!=web", False),
    ("app!=db", True),
    ("missing!=x", True),
    ("app in (web,db)", True),
    ("app notin (web)", False),
    ("tier", True),
    ("!tier", False),
    ("!missing", True),
    ("app=web,tier=backend", False),
    ("app = web , tier in ( frontend )", True),
    ("version>2", True),
    ("version<3", False),
])
def test_label_selector_semantics(text, expected):
    assert LabelSelector.parse(text).matches(LABELS) is expected


@pytest.mark.parametrize("text", ["app in (web", "app=web,", "a b", "app=we$b", "=x"])
def test_malformed_label_selectors_are_bad_requests(text):
    with pytest.raises(BadRequest, match="unable to parse requirement"):
        LabelSelector.parse(text)


def test_label_selector_object_form():
    sel = LabelSelector.from_object({"matchLabels": {"app": "web"},
                                     "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]})
    assert sel.matches(LABELS)
    assert str(sel) == "app=web,tier notin (db)"
    assert LabelSelector.from_object(None) is None
    assert LabelSelector.from_object({}).matches({})


def test_field_selectors_with_defaults_and_escapes():
    pod = {"metadata": {"name": "p,1"}, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}
    getters = {"metadata.name": path_getter("metadata.name"), "spec.nodeName": path_getter("spec.nodeName"),
               "status.phase": path_getter("status.phase"),
               "spec.unschedulable": path_getter("spec.unschedulable", "false")}
    assert FieldSelector.parse("spec.nodeName=n1,status.phase!=Succeeded").matches(pod, getters)
    assert not FieldSelector.parse("status.phase==Pending").matches(pod, getters)
    assert FieldSelector.parse(r"metadata.name=p\,1").matches(pod, getters)
    assert FieldSelector.parse("spec.unschedulable=false").matches(pod, getters)
    with pytest.raises(BadRequest, match="field label not supported: spec.bogus"):
        FieldSelector.parse("spec.bogus=1").check_supported(getters, "Pod", "v1")
    with pytest.raises(BadRequest, match="invalid selector"):
        FieldSelector.parse("justaword")
