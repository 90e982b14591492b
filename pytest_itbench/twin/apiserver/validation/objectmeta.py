"""Validation of ObjectMeta, labels, annotations and label selectors (k8s.io/apimachinery/pkg/api/validation)."""

from __future__ import annotations

from ... import errors
from ...errors import FieldError, GoLiteral
from ...selectors import LabelSelector
from .. import gosyntax
from . import name_rules
from .name_rules import NameRule

ANNOTATIONS_LIMIT = 256 * 1024
_STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")
_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def object_meta(meta: dict, namespaced: bool, name_rule: NameRule, path: str = "metadata") -> list[FieldError]:
    """ValidateObjectMeta: names, namespace, labels, annotations, owner references and finalizers."""
    problems: list[FieldError] = []
    generate_name = meta.get("generateName")
    if generate_name:
        problems += [errors.invalid(f"{path}.generateName", generate_name, m) for m in name_rule(generate_name, True)]
    name = meta.get("name") or ""
    if not name:
        problems.append(errors.required(f"{path}.name", "name or generateName is required"))
    else:
        problems += [errors.invalid(f"{path}.name", name, m) for m in name_rule(name, False)]
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            problems.append(errors.required(f"{path}.namespace"))
        else:
            problems += [errors.invalid(f"{path}.namespace", namespace, m)
                         for m in name_rules.name_is_dns_label(namespace, False)]
    elif namespace:
        problems.append(errors.forbidden(f"{path}.namespace", "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        problems.append(errors.invalid(f"{path}.generation", generation, "must be greater than or equal to 0"))
    problems += labels(meta.get("labels"), f"{path}.labels")
    problems += annotations(meta.get("annotations"), f"{path}.annotations")
    problems += owner_references(meta.get("ownerReferences"), f"{path}.ownerReferences")
    problems += finalizers(meta.get("finalizers"), f"{path}.finalizers")
    return problems


def object_meta_update(meta: dict, old_meta: dict, path: str = "metadata") -> list[FieldError]:
    """ValidateObjectMetaUpdate, for the parts an update may have changed (the rest the registry keeps)."""
    problems: list[FieldError] = []
    for key, check in (("labels", labels), ("annotations", annotations), ("ownerReferences", owner_references)):
        if meta.get(key) != old_meta.get(key):
            problems += check(meta.get(key), f"{path}.{key}")
    return problems


def labels(values: dict | None, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    for key in sorted(values or ()):
        problems += label_key(key, path)
        value = values[key]
        problems += [errors.invalid(path, value, m) for m in name_rules.is_valid_label_value(str(value))]
    return problems


def label_key(key: str, path: str) -> list[FieldError]:
    return [errors.invalid(path, key, m) for m in name_rules.is_qualified_name(key)]


def annotations(values: dict | None, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    total = 0
    for key in sorted(values or ()):
        # Annotation keys are qualified names, except that case does not matter.
        problems += [errors.invalid(path, key, m) for m in name_rules.is_qualified_name(key.lower())]
        total += len(key) + len(str(values[key]))
    if total > ANNOTATIONS_LIMIT:
        problems.append(errors.too_long(path, "", ANNOTATIONS_LIMIT))
    return problems


def owner_references(refs: list | None, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    controller = ""
    for ref in refs or ():
        version = (ref.get("apiVersion") or "").rpartition("/")[2]
        for key, given, detail in (("apiVersion", version, "version must not be empty"),
                                   ("kind", ref.get("kind"), "kind must not be empty"),
                                   ("name", ref.get("name"), "name must not be empty"),
                                   ("uid", ref.get("uid"), "uid must not be empty")):
            if not given:
                problems.append(errors.invalid(f"{path}.{key}", ref.get(key) or "", detail))
        if ref.get("controller"):
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if controller:
                problems.append(errors.invalid(path, _owner_references_literal(refs),
                                               f'Only one reference can have Controller set to true. Found "true" '
                                               f"in references for {controller} and {current}"))
            else:
                controller = current
    return problems


def _owner_references_literal(refs: list) -> GoLiteral:
    items = [gosyntax.struct("v1.OwnerReference", [
        ("APIVersion", gosyntax.quote(r.get("apiVersion") or "")), ("Kind", gosyntax.quote(r.get("kind") or "")),
        ("Name", gosyntax.quote(r.get("name") or "")), ("UID", gosyntax.quote(r.get("uid") or "")),
        ("Controller", gosyntax.pointer("bool", "controller" in r)),
        ("BlockOwnerDeletion", gosyntax.pointer("bool", "blockOwnerDeletion" in r))]) for r in refs]
    return GoLiteral(f"[]v1.OwnerReference{{{', '.join(items)}}}")


def finalizers(names: list | None, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    for name in names or ():
        messages = name_rules.is_qualified_name(name)
        if not messages and "/" not in name and name not in _STANDARD_FINALIZERS:
            messages = ["name is neither a standard finalizer name nor is it fully qualified"]
        problems += [errors.invalid(path, name, m) for m in messages]
    if names and "orphan" in names and "foregroundDeletion" in names:
        problems.append(errors.invalid(path, gosyntax.string_slice(names),
                                       "finalizer orphan and foregroundDeletion cannot be both set"))
    return problems


# ---- label selectors ----------------------------------------------------------------------------------

def label_selector(selector: dict | None, path: str, allow_invalid_values: bool = False) -> list[FieldError]:
    """ValidateLabelSelector (a nil selector is valid)."""
    if not isinstance(selector, dict):
        return []
    problems = labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(selector.get("matchExpressions") or ()):
        at = f"{path}.matchExpressions[{i}]"
        operator, values = expr.get("operator"), expr.get("values") or []
        if operator in ("In", "NotIn"):
            if not values:
                problems.append(errors.required(f"{at}.values", "must be specified when `operator` is 'In' or "
                                                                "'NotIn'"))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                problems.append(errors.forbidden(f"{at}.values", "may not be specified when `operator` is 'Exists' "
                                                                 "or 'DoesNotExist'"))
        else:
            problems.append(errors.invalid(f"{at}.operator", operator or "", "not a valid selector operator"))
        problems += label_key(expr.get("key") or "", f"{at}.key")
        if not allow_invalid_values:
            for j, value in enumerate(values):
                problems += [errors.invalid(f"{at}.values[{j}]", value, m)
                             for m in name_rules.is_valid_label_value(str(value))]
    return problems


def selector_of(selector: dict | None) -> LabelSelector | None:
    """The selector as LabelSelectorAsSelector makes it, or None when it cannot be converted.

    A missing selector selects nothing and an empty one everything, as upstream.
    """
    if selector is None:
        return LabelSelector([_NOTHING])
    for expr in selector.get("matchExpressions") or ():
        operator, values = expr.get("operator"), expr.get("values") or []
        if operator not in _SELECTOR_OPERATORS or (operator in ("In", "NotIn")) != bool(values):
            return None
        if name_rules.is_qualified_name(expr.get("key") or ""):
            return None
    for key in selector.get("matchLabels") or ():
        if name_rules.is_qualified_name(key) or name_rules.is_valid_label_value(str(selector["matchLabels"][key])):
            return None
    return LabelSelector.from_object(selector)


class _Nothing:
    """A requirement no label set meets (labels.Nothing())."""

    @staticmethod
    def matches(labels) -> bool:
        return False


_NOTHING = _Nothing()
