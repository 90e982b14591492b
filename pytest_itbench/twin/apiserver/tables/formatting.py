"""Cell formats that several printers share: labels, selectors, containers, access modes."""

from __future__ import annotations

_OPERATORS = {"In": " in ", "NotIn": " notin "}
_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                 ("ReadWriteOncePod", "RWOP"))


class InvalidSelector(ValueError):
    pass


def format_labels(labels: dict | None) -> str:
    """``a=1,b=2`` in key order, or ``<none>``: labels.FormatLabels."""
    if not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def selector_string(selector: dict | None) -> str:
    """A LabelSelector as the selector string it converts to (empty for a missing or empty selector).

    Raises InvalidSelector for what LabelSelectorAsSelector rejects.
    """
    if not selector:
        return ""
    requirements: list[tuple[str, str]] = [(k, f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or ():
        key, op, values = expr.get("key", ""), expr.get("operator"), list(expr.get("values") or ())
        if op in _OPERATORS:
            if not values:
                raise InvalidSelector(f"{op} requires values")
            requirements.append((key, f"{key}{_OPERATORS[op]}({','.join(sorted(values))})"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                raise InvalidSelector(f"{op} takes no values")
            requirements.append((key, key if op == "Exists" else f"!{key}"))
        else:
            raise InvalidSelector(f"{op!r} is not a valid label selector operator")
    requirements.sort(key=lambda r: r[0])
    return ",".join(text for _, text in requirements)


def format_label_selector(selector: dict | None) -> str:
    """metav1.FormatLabelSelector: the selector string, ``<none>`` when empty, ``<error>`` when invalid."""
    try:
        return selector_string(selector) or "<none>"
    except InvalidSelector:
        return "<error>"


def container_cells(pod_spec: dict | None) -> tuple[str, str]:
    """The CONTAINERS and IMAGES cells of a pod template: names and images, comma-separated."""
    containers = (pod_spec or {}).get("containers") or []
    return ",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)


def template_spec(obj: dict) -> dict:
    return ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}


def access_modes(modes: list[str] | None) -> str:
    """``RWO,ROX,RWX,RWOP`` in that fixed order, each once."""
    present = set(modes or ())
    return ",".join(short for mode, short in _ACCESS_MODES if mode in present)
