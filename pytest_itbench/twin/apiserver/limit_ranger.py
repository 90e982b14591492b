"""The LimitRanger admission plugin of kube-apiserver (plugin/pkg/admission/limitranger).

For a new pod, each LimitRange of the namespace first fills the containers'
missing limits from its Container ``default`` and missing requests from its
``defaultRequest``, noting what it set in the ``kubernetes.io/limit-ranger``
annotation ("LimitRanger plugin set: cpu, memory request for container
app; ..."); then the pod must respect every range's ``min``, ``max`` and
``maxLimitRequestRatio``, per Container and per Pod, else it is forbidden
with upstream's messages (``maximum memory usage per Container is 1Gi, but
limit is 2Gi``). A claim's storage request must lie within the
PersistentVolumeClaim ``min`` and ``max``.
"""

from __future__ import annotations

from ..errors import Forbidden
from ..quantity import Quantity
from . import quota_usage as qu
from .registry import Ctx, ResourceAPI
from .resources import Resource

ANNOTATION = "kubernetes.io/limit-ranger"
_MAX_MILLI_VALUE = (2 ** 63 - 1) // 1000


def limit_ranger(api: ResourceAPI):
    ranges = api.catalog.lookup("", "v1", "limitranges")

    def plugin(op: str, res: Resource, obj: dict, old: dict | None, ctx: Ctx) -> None:
        if res.group or res.kind not in ("Pod", "PersistentVolumeClaim"):
            return
        if res.kind == "Pod" and op != "create":
            return  # containers cannot change after creation
        if res.kind == "PersistentVolumeClaim" and op not in ("create", "update"):
            return
        for limit_range in api.store.list(ranges.bucket, obj["metadata"].get("namespace", ""))[0]:
            items = (limit_range.get("spec") or {}).get("limits") or []
            if res.kind == "Pod":
                _apply_defaults(obj, items)
                problems = _pod_problems(obj, items)
            else:
                problems = _claim_problems(obj, items)
            if problems:
                raise _forbidden(res, obj, _aggregate(problems))

    return plugin


# ---- defaults --------------------------------------------------------------------------------------------

def _apply_defaults(pod: dict, items: list[dict]) -> None:
    default_limits: dict = {}
    default_requests: dict = {}
    for item in items:
        if item.get("type") == "Container":
            default_limits.update(item.get("default") or {})
            default_requests.update(item.get("defaultRequest") or {})
    if not default_limits and not default_requests:
        return
    notes: list[str] = []
    spec = pod.setdefault("spec", {})
    for key, label in (("containers", "container"), ("initContainers", "init container")):
        if spec.get(key):
            spec[key] = [_default_container(c, default_limits, default_requests, label, notes) for c in spec[key]]
    if notes:
        pod["metadata"].setdefault("annotations", {})[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


def _default_container(container: dict, limits: dict, requests: dict, label: str, notes: list[str]) -> dict:
    resources = dict(container.get("resources") or {})
    have_limits = dict(resources.get("limits") or {})
    have_requests = dict(resources.get("requests") or {})
    set_limits = sorted(k for k in limits if k not in have_limits)
    set_requests = sorted(k for k in requests if k not in have_requests)
    if not set_limits and not set_requests:
        return container
    for name in set_limits:
        have_limits[name] = limits[name]
    for name in set_requests:
        have_requests[name] = requests[name]
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {label} {container.get('name', '')}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {label} {container.get('name', '')}")
    if have_limits:
        resources["limits"] = have_limits
    if have_requests:
        resources["requests"] = have_requests
    # A new dict: the caller's container may be shared with other objects it creates.
    return dict(container, resources=resources)


# ---- validation --------------------------------------------------------------------------------------------

def _pod_problems(pod: dict, items: list[dict]) -> list[str]:
    problems: list[str] = []
    spec = pod.get("spec") or {}
    containers = list(spec.get("containers") or ()) + list(spec.get("initContainers") or ())
    for item in items:
        kind = item.get("type")
        if kind == "Container":
            for container in containers:
                problems += _check(kind, item, qu.container_list(container, "requests"),
                                   qu.container_list(container, "limits"))
        elif kind == "Pod":
            problems += _check(kind, item, qu.pod_requests(pod, overhead=False), qu.pod_limits(pod, overhead=False))
    return problems


def _check(kind: str, item: dict, requests: qu.ResourceList, limits: qu.ResourceList) -> list[str]:
    problems = []
    for name, enforced in sorted(qu.parse_list(item.get("min")).items()):
        problems += _min(kind, name, enforced, requests, limits)
    for name, enforced in sorted(qu.parse_list(item.get("max")).items()):
        problems += _max(kind, name, enforced, requests, limits)
    for name, enforced in sorted(qu.parse_list(item.get("maxLimitRequestRatio")).items()):
        problems += _ratio(kind, name, enforced, requests, limits)
    return problems


def _min(kind: str, name: str, enforced: Quantity, requests: qu.ResourceList, limits: qu.ResourceList) -> list[str]:
    request, limit = requests.get(name), limits.get(name)
    req, lim, want = _observed(request, limit, enforced)
    if request is None:
        return [f"minimum {name} usage per {kind} is {enforced}.  No request is specified"]
    if req < want:
        return [f"minimum {name} usage per {kind} is {enforced}, but request is {request}"]
    if limit is not None and lim < want:
        return [f"minimum {name} usage per {kind} is {enforced}, but limit is {limit}"]
    return []


def _max(kind: str, name: str, enforced: Quantity, requests: qu.ResourceList, limits: qu.ResourceList) -> list[str]:
    request, limit = requests.get(name), limits.get(name)
    req, lim, want = _observed(request, limit, enforced)
    if limit is None:
        return [f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"]
    if lim > want:
        return [f"maximum {name} usage per {kind} is {enforced}, but limit is {limit}"]
    if request is not None and req > want:
        return [f"maximum {name} usage per {kind} is {enforced}, but request is {request}"]
    return []


def _ratio(kind: str, name: str, enforced: Quantity, requests: qu.ResourceList,
           limits: qu.ResourceList) -> list[str]:
    request, limit = requests.get(name), limits.get(name)
    req, lim, _ = _observed(request, limit, enforced)
    if request is None or req == 0:
        return [f"{name} max limit to request ratio per {kind} is {enforced}, but no request is specified or "
                f"request is 0"]
    if limit is None or lim == 0:
        return [f"{name} max limit to request ratio per {kind} is {enforced}, but no limit is specified or "
                f"limit is 0"]
    ratio = lim / req
    shown = ratio
    allowed = float(_value(enforced))
    if _value(enforced) <= _MAX_MILLI_VALUE:
        ratio, allowed = ratio * 1000, float(enforced.milli_value)
    if ratio > allowed:
        return [f"{name} max limit to request ratio per {kind} is {enforced}, but provided ratio is {shown:f}"]
    return []


def _claim_problems(claim: dict, items: list[dict]) -> list[str]:
    requests = qu.parse_list(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
    problems: list[str] = []
    for item in items:
        if item.get("type") != "PersistentVolumeClaim":
            continue
        for name, enforced in sorted(qu.parse_list(item.get("min")).items()):
            problems += _min("PersistentVolumeClaim", name, enforced, requests, {})
        for name, enforced in sorted(qu.parse_list(item.get("max")).items()):
            request = requests.get(name)
            req, _, want = _observed(request, None, enforced)
            if request is None:
                problems.append(f"maximum {name} usage per PersistentVolumeClaim is {enforced}.  No request is "
                                f"specified")
            elif req > want:
                problems.append(f"maximum {name} usage per PersistentVolumeClaim is {enforced}, but request is "
                                f"{request}")
    return problems


def _observed(request: Quantity | None, limit: Quantity | None, enforced: Quantity) -> tuple[int, int, int]:
    """requestLimitEnforcedValues: compare in milli-units unless a value is too large for them."""
    values = (request, limit, enforced)
    if all(q is None or _value(q) <= _MAX_MILLI_VALUE for q in values):
        return tuple(0 if q is None else q.milli_value for q in values)  # type: ignore[return-value]
    return tuple(0 if q is None else _value(q) for q in values)  # type: ignore[return-value]


def _value(q: Quantity) -> int:
    """Quantity.Value(): rounded up to a whole unit."""
    return -((-q.value.numerator) // q.value.denominator)


def _aggregate(problems: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message as it is, several (deduplicated) in brackets."""
    unique = list(dict.fromkeys(problems))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _forbidden(res: Resource, obj: dict, reason: str) -> Forbidden:
    name = obj["metadata"].get("name", "")
    return Forbidden(f'{res.group_resource} "{name}" is forbidden: {reason}', resource=res.group_resource, name=name)
