"""The Prometheus Operator's admission webhooks for PrometheusRules, as admission plugins of the twin.

kube-prometheus-stack (88.5) registers both on CREATE and UPDATE of ``prometheusrules``:

* ``prometheusrulemutate.monitoring.coreos.com`` (``/admission-prometheusrules/mutate``): a label or
  annotation of a rule written as a number or a boolean becomes a string (``severity: 1`` -> ``"1"``),
  and the object gets the annotation ``prometheus-operator-validated: "true"``. A mutating webhook runs
  before the object is checked against the CRD's schema, so ``severity: 1`` is accepted.
* ``prometheusrulevalidate.monitoring.coreos.com`` (``/admission-prometheusrules/validate``): the spec,
  rendered as the rule file the Operator would write, must pass Prometheus' rule-file checks. A refusal
  is what kube-apiserver makes of the webhook's answer: code 422, reason ``Invalid``, the message
  ``admission webhook "prometheusrulevalidate.monitoring.coreos.com" denied the request: Rules are not
  valid``, and one cause per problem, each naming its group and rule as promtool does
  (``group "budget", rule 1, "OverBudget": could not parse expression: ...``). A validating webhook runs
  after the schema check, so a malformed object gets the API server's own message first.
"""

from __future__ import annotations

from ...apiserver.registry import Ctx
from ...apiserver.resources import Resource
from ...errors import StatusError
from ..gotemplate.gofmt import sprintf
from .render import spec_problems

BUCKET = "prometheusrules.monitoring.coreos.com"
MUTATING_WEBHOOK = "prometheusrulemutate.monitoring.coreos.com"
VALIDATING_WEBHOOK = "prometheusrulevalidate.monitoring.coreos.com"
VALIDATED_ANNOTATION = "prometheus-operator-validated"


class RulesNotValid(StatusError):
    """The validating webhook's denial (``toAdmissionResponseFailure``) as kube-apiserver relays it."""

    def __init__(self, problems: list[str]):
        super().__init__(f'admission webhook "{VALIDATING_WEBHOOK}" denied the request: Rules are not valid',
                         code=422, reason="Invalid",
                         details={"name": "prometheusrules", "causes": [{"message": p} for p in problems]})


def mutate(op: str, res: Resource, obj: dict, old: dict | None, ctx: Ctx) -> None:
    if op not in ("create", "update") or res.bucket != BUCKET:
        return
    for group in _list((obj.get("spec") or {}).get("groups")):
        for rule in _list(group.get("rules") if isinstance(group, dict) else None):
            if not isinstance(rule, dict):
                continue
            for field in ("annotations", "labels"):
                values = rule.get(field)
                if isinstance(values, dict):
                    for key, value in values.items():
                        if isinstance(value, (bool, int, float)):
                            values[key] = _go_string(value)
    meta = obj.setdefault("metadata", {})
    meta["annotations"] = {**(meta.get("annotations") or {}), VALIDATED_ANNOTATION: "true"}


def validate(op: str, res: Resource, obj: dict, old: dict | None, ctx: Ctx) -> None:
    if op not in ("create", "update") or res.bucket != BUCKET:
        return
    problems = spec_problems(obj.get("spec"))
    if problems:
        raise RulesNotValid(problems)


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _go_string(value: bool | int | float) -> str:
    """``fmt.Sprintf("%v")`` of what JSON decoding gives Go: a bool, or a float64 for every number."""
    return sprintf("%v", [value if isinstance(value, bool) else float(value)])
