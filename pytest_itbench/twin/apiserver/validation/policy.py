"""Validation of HorizontalPodAutoscalers, PodDisruptionBudgets and PriorityClasses."""

from __future__ import annotations

from ... import errors
from ...errors import FieldError
from ... import quantity
from .. import gosyntax
from . import name_rules, objectmeta
from .workloads import not_more_than_100_percent, positive_int_or_percent

_METRIC_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
_METRIC_SOURCES = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
                   "ContainerResource": "containerResource"}
HIGHEST_USER_PRIORITY = 1000000000
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}


# ---- HorizontalPodAutoscaler (stored as autoscaling/v2) -----------------------------------------------

def horizontal_pod_autoscaler(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    spec = obj.get("spec") or {}
    low, high = spec.get("minReplicas"), spec.get("maxReplicas") or 0
    if low is not None and low < 1:
        problems.append(errors.invalid("spec.minReplicas", low, "must be greater than or equal to 1"))
    if high < 1:
        problems.append(errors.invalid("spec.maxReplicas", high, "must be greater than 0"))
    if low is not None and high < low:
        problems.append(errors.invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`"))
    reference = _scale_target(spec.get("scaleTargetRef") or {}, "spec.scaleTargetRef")
    if reference:
        return problems + reference
    metrics = _metrics(spec.get("metrics") or [], "spec.metrics")
    if metrics:
        return problems + metrics
    return problems + _behavior(spec.get("behavior"), "spec.behavior")


def _scale_target(ref: dict, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    for key in ("kind", "name"):
        value = ref.get(key) or ""
        if not value:
            problems.append(errors.required(f"{path}.{key}"))
        else:
            problems += [errors.invalid(f"{path}.{key}", value, m)
                         for m in name_rules.name_is_path_segment(value, False)]
    return problems


def _metrics(metrics: list[dict], path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    for i, metric in enumerate(metrics):
        at = f"{path}[{i}]"
        kind = metric.get("type") or ""
        if not kind:
            problems.append(errors.required(f"{at}.type", "must specify a metric source type"))
        present = [source for source in _METRIC_SOURCES.values() if metric.get(source) is not None]
        if len(present) == 1 and present[0] == "resource":
            problems += _resource_source(metric["resource"], f"{at}.resource")
        expected = _METRIC_SOURCES.get(kind)
        if expected is None:
            problems.append(errors.not_supported(f"{at}.type", kind, _METRIC_TYPES))
        elif metric.get(expected) is None:
            problems.append(errors.required(f"{at}.{expected}", "must populate information for the given metric "
                                                               "source"))
        if len(present) != 1:
            problems += [errors.forbidden(f"{at}.{source}", "must populate the given metric source only")
                         for source in sorted(present) if source != expected]
    return problems


def _resource_source(source: dict, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    if not source.get("name"):
        problems.append(errors.required(f"{path}.name", "must specify a resource name"))
    target = source.get("target") or {}
    kind = target.get("type") or ""
    if not kind:
        problems.append(errors.required(f"{path}.target.type", "must specify a metric target type"))
    if kind not in ("Utilization", "Value", "AverageValue"):
        problems.append(errors.invalid(f"{path}.target.type", kind, "must be either Utilization, Value, or "
                                                                     "AverageValue"))
    for key in ("value", "averageValue"):
        if target.get(key) is not None and quantity.parse(str(target[key])).value <= 0:
            problems.append(errors.invalid(f"{path}.target.{key}", str(target[key]), "must be positive"))
    utilization = target.get("averageUtilization")
    if utilization is not None and utilization < 1:
        problems.append(errors.invalid(f"{path}.target.averageUtilization", utilization, "must be greater than 0"))
    if utilization is None and target.get("averageValue") is None:
        problems.append(errors.required(f"{path}.target.averageUtilization",
                                        "must set either a target raw value or a target utilization"))
    elif utilization is not None and target.get("averageValue") is not None:
        problems.append(errors.forbidden(f"{path}.target.averageValue",
                                         "may not set both a target raw value and a target utilization"))
    return problems


def _behavior(behavior: dict | None, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    for direction in ("scaleUp", "scaleDown"):
        rules = (behavior or {}).get(direction)
        if not isinstance(rules, dict):
            continue
        at = f"{path}.{direction}"
        window = rules.get("stabilizationWindowSeconds")
        if window is not None and window < 0:
            problems.append(errors.invalid(f"{at}.stabilizationWindowSeconds", window,
                                           "must be greater than or equal to zero"))
        elif window is not None and window > 3600:
            problems.append(errors.invalid(f"{at}.stabilizationWindowSeconds", window,
                                           "must be less than or equal to 3600"))
        select = rules.get("selectPolicy")
        if select is not None and select not in ("Disabled", "Max", "Min"):
            problems.append(errors.not_supported(f"{at}.selectPolicy", select, ["Disabled", "Max", "Min"]))
        policies = rules.get("policies") or []
        if not policies:
            problems.append(errors.required(f"{at}.policies", "must specify at least one Policy"))
        for i, policy in enumerate(policies):
            where = f"{at}.policies[{i}]"
            if policy.get("type") not in ("Percent", "Pods"):
                problems.append(errors.not_supported(f"{where}.type", policy.get("type") or "", ["Percent", "Pods"]))
            if (policy.get("value") or 0) <= 0:
                problems.append(errors.invalid(f"{where}.value", policy.get("value") or 0, "must be greater than zero"))
            period = policy.get("periodSeconds") or 0
            if period <= 0:
                problems.append(errors.invalid(f"{where}.periodSeconds", period, "must be greater than zero"))
            elif period > 1800:
                problems.append(errors.invalid(f"{where}.periodSeconds", period, "must be less than or equal to 1800"))
    return problems


# ---- PodDisruptionBudget --------------------------------------------------------------------------------

def pod_disruption_budget(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    spec = obj.get("spec") or {}
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    if low is not None and high is not None:
        problems.append(errors.invalid("spec", gosyntax.struct("policy.PodDisruptionBudgetSpec", [
            ("MinAvailable", gosyntax.pointer("intstr.IntOrString", True)),
            ("Selector", gosyntax.pointer("v1.LabelSelector", spec.get("selector") is not None)),
            ("MaxUnavailable", gosyntax.pointer("intstr.IntOrString", True)),
            ("UnhealthyPodEvictionPolicy", gosyntax.pointer("policy.UnhealthyPodEvictionPolicyType",
                                                            spec.get("unhealthyPodEvictionPolicy") is not None))]),
            "minAvailable and maxUnavailable cannot be both set"))
    for key, value in (("minAvailable", low), ("maxUnavailable", high)):
        if value is not None:
            problems += positive_int_or_percent(value, f"spec.{key}")
            problems += not_more_than_100_percent(value, f"spec.{key}")
    problems += objectmeta.label_selector(spec.get("selector"), "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
        problems.append(errors.not_supported("spec.unhealthyPodEvictionPolicy", policy,
                                             ["AlwaysAllow", "IfHealthyBudget"]))
    return problems


# ---- PriorityClass ----------------------------------------------------------------------------------------

def priority_class(obj: dict) -> list[FieldError]:
    meta = obj["metadata"]
    problems = objectmeta.object_meta(meta, False, name_rules.name_is_dns_subdomain)
    name, value = meta.get("name") or "", obj.get("value") or 0
    if name.startswith("system-"):
        reason = _system_class_error(name, value, bool(obj.get("globalDefault")))
        if reason:
            problems.append(errors.forbidden("metadata.name", f"priority class names with 'system-' prefix are "
                                                              f"reserved for system use only. error: {reason}"))
    elif value > HIGHEST_USER_PRIORITY:
        problems.append(errors.forbidden("value", f"maximum allowed value of a user defined priority is "
                                                  f"{HIGHEST_USER_PRIORITY}"))
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        problems.append(errors.not_supported("preemptionPolicy", policy, ["Never", "PreemptLowerPriority"]))
    return problems


def _system_class_error(name: str, value: int, global_default: bool) -> str | None:
    if name not in SYSTEM_PRIORITY_CLASSES:
        return f"{name} is not a known system priority class"
    if value != SYSTEM_PRIORITY_CLASSES[name]:
        return f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return None


def priority_class_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    if obj.get("value") != old.get("value"):
        problems.append(errors.forbidden("value", "may not be changed in an update."))
    if obj.get("preemptionPolicy") != old.get("preemptionPolicy"):
        problems.append(errors.invalid("preemptionPolicy", obj.get("preemptionPolicy"), "field is immutable"))
    return problems
