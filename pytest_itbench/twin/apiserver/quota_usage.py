"""What objects cost against a ResourceQuota, as kube's quota evaluators count it.

Shared by the ResourceQuota admission plugin (one object's cost) and the
resourcequota controller (a namespace's usage):

* **pods**: ``count/pods`` always; while the pod has not finished, ``pods``
  and its compute resources: ``cpu``/``requests.cpu``, ``limits.cpu``, the
  same for memory and ephemeral storage, hugepages and extended resources,
  from the pod's effective requests and limits (containers summed, init
  containers taken at their peak, restartable init containers added, plus
  the overhead);
* **services**: ``services``, ``services.loadbalancers`` and
  ``services.nodeports`` (the ports of a NodePort or LoadBalancer Service);
* **persistentvolumeclaims**: the claim and its ``requests.storage``, in
  total and per storage class;
* any other namespaced resource: ``count/<resource>.<group>`` (and the
  legacy ``configmaps``, ``secrets``, ``replicationcontrollers``,
  ``resourcequotas``).

Quota scopes (Terminating, NotTerminating, BestEffort, NotBestEffort,
PriorityClass, CrossNamespacePodAffinity) select pods; a quota with scopes
tracks nothing else. Quantities keep Kubernetes' formats, so sums print as
``1800m`` or ``1536Mi``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable

from .. import quantity
from ..clock import parse_time
from ..quantity import Quantity
from ..store import Store

ResourceList = dict[str, Quantity]

_COMPUTE = ("cpu", "memory", "ephemeral-storage")
_POD_NAMES = {"pods", "count/pods", *_COMPUTE, *(f"requests.{r}" for r in _COMPUTE),
              *(f"limits.{r}" for r in _COMPUTE)}
_SERVICE_NAMES = {"services", "count/services", "services.loadbalancers", "services.nodeports"}
_CLAIM_NAMES = {"persistentvolumeclaims", "count/persistentvolumeclaims", "requests.storage"}
_STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
_LEGACY_COUNTS = {"configmaps": "configmaps", "secrets": "secrets", "replicationcontrollers": "replicationcontrollers",
                  "resourcequotas": "resourcequotas"}
_ONE = Quantity(Fraction(1), quantity.DECIMAL_SI)
_ZERO = Quantity(Fraction(0), quantity.DECIMAL_SI)


# ---- resource lists --------------------------------------------------------------------------------------

def parse_list(values: dict | None) -> ResourceList:
    return {name: quantity.parse(str(v)) for name, v in (values or {}).items()}


def to_json(values: ResourceList) -> dict[str, str]:
    return {name: str(q) for name, q in sorted(values.items())}


def add(a: ResourceList, b: ResourceList) -> ResourceList:
    out = dict(a)
    for name, q in b.items():
        out[name] = _sum(out[name], q) if name in out else q
    return out


def _sum(a: Quantity, b: Quantity) -> Quantity:
    """Quantity.Add: the result keeps the first operand's format, unless that one is zero."""
    return Quantity(a.value + b.value, a.format if a.value != 0 else b.format)


def _max(a: ResourceList, b: ResourceList) -> ResourceList:
    out = dict(a)
    for name, q in b.items():
        if name not in out or q.value > out[name].value:
            out[name] = q
    return out


def subtract_non_negative(a: ResourceList, b: ResourceList) -> ResourceList:
    out = {}
    for name, q in a.items():
        value = q.value - (b[name].value if name in b else 0)
        out[name] = Quantity(max(value, Fraction(0)), q.format)
    return out


def mask(values: ResourceList, names: Iterable[str]) -> ResourceList:
    wanted = set(names)
    return {name: q for name, q in values.items() if name in wanted}


def remove_zeros(values: ResourceList) -> ResourceList:
    return {name: q for name, q in values.items() if q.value != 0}


def exceeded(values: ResourceList, limits: ResourceList) -> list[str]:
    """The names whose value is above the limit (names without a limit are not limited)."""
    return sorted(name for name, q in values.items() if name in limits and q.value > limits[name].value)


def same(a: ResourceList, b: ResourceList) -> bool:
    return a.keys() == b.keys() and all(a[n].value == b[n].value for n in a)


def pretty(values: ResourceList) -> str:
    return ",".join(f"{name}={values[name]}" for name in sorted(values))


# ---- what each kind of object tracks -----------------------------------------------------------------------

def bucket_for(name: str) -> str | None:
    """The bucket whose objects a quota resource name counts."""
    if _is_pod_resource(name):
        return "pods"
    if name in _SERVICE_NAMES:
        return "services"
    if name in _CLAIM_NAMES or _STORAGE_CLASS_SUFFIX in name:
        return "persistentvolumeclaims"
    if name in _LEGACY_COUNTS:
        return _LEGACY_COUNTS[name]
    if name.startswith("count/"):
        return name[len("count/"):]
    return None


def tracked(bucket: str, names: Iterable[str]) -> list[str]:
    """Of a quota's resource names, those objects of ``bucket`` count against (MatchingResources)."""
    return sorted(n for n in names if bucket_for(n) == bucket)


def _is_pod_resource(name: str) -> bool:
    if name in _POD_NAMES or name.startswith("hugepages-") or name.startswith("requests.hugepages-"):
        return True
    return name.startswith("requests.") and _is_extended(name[len("requests."):])


def _is_extended(name: str) -> bool:
    return "/" in name and not name.startswith("kubernetes.io/") and not name.startswith("requests.")


def usage(bucket: str, obj: dict, now: float) -> ResourceList:
    """What one object costs."""
    if bucket == "pods":
        return pod_usage(obj, now)
    if bucket == "services":
        return _service_usage(obj)
    if bucket == "persistentvolumeclaims":
        return _claim_usage(obj)
    out = {f"count/{bucket}": _ONE}
    if bucket in _LEGACY_COUNTS:
        out[bucket] = _ONE
    return out


def pod_usage(pod: dict, now: float) -> ResourceList:
    out: ResourceList = {"count/pods": _ONE}
    if not counts_compute(pod, now):
        return out
    out["pods"] = _ONE
    return add(out, compute_usage(pod_requests(pod), pod_limits(pod)))


def counts_compute(pod: dict, now: float) -> bool:
    """QuotaV1Pod: a finished pod, or one stuck past its deletion grace, no longer uses compute quota."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod["metadata"]
    if meta.get("deletionTimestamp") and meta.get("deletionGracePeriodSeconds") is not None:
        if now > parse_time(meta["deletionTimestamp"]) + meta["deletionGracePeriodSeconds"]:
            return False
    return True


def compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """The quota names a container's (or a pod's) requests and limits fill."""
    out: ResourceList = {}
    for resource in _COMPUTE:
        if resource in requests:
            out[resource] = out[f"requests.{resource}"] = requests[resource]
        if resource in limits:
            out[f"limits.{resource}"] = limits[resource]
    for name, q in requests.items():
        if name.startswith("hugepages-"):
            out[name] = out[f"requests.{name}"] = q
        elif _is_extended(name):
            out[f"requests.{name}"] = q
    return out


def pod_requests(pod: dict, overhead: bool = True) -> ResourceList:
    return _effective(pod, "requests", overhead)


def pod_limits(pod: dict, overhead: bool = True) -> ResourceList:
    return _effective(pod, "limits", overhead)


def _effective(pod: dict, kind: str, overhead: bool) -> ResourceList:
    """resourcehelper.PodRequests/PodLimits: containers summed, init containers at their peak, plus overhead."""
    spec = pod.get("spec") or {}
    total: ResourceList = {}
    for container in spec.get("containers") or ():
        total = add(total, container_list(container, kind))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for container in spec.get("initContainers") or ():
        own = container_list(container, kind)
        if container.get("restartPolicy") == "Always":
            total = add(total, own)
            sidecars = add(sidecars, own)
            init_peak = _max(init_peak, sidecars)
        else:
            init_peak = _max(init_peak, add(own, sidecars))
    total = _max(total, init_peak)
    if overhead and spec.get("overhead"):
        total = add(total, parse_list(spec["overhead"]))
    return total


def container_list(container: dict, kind: str) -> ResourceList:
    return parse_list((container.get("resources") or {}).get(kind))


def _service_usage(service: dict) -> ResourceList:
    spec = service.get("spec") or {}
    ports = spec.get("ports") or []
    out: ResourceList = {"count/services": _ONE, "services": _ONE, "services.loadbalancers": _ZERO,
                         "services.nodeports": _ZERO}
    kind = spec.get("type")
    if kind == "NodePort":
        out["services.nodeports"] = _count(len(ports))
    elif kind == "LoadBalancer":
        if spec.get("allocateLoadBalancerNodePorts") is False:
            out["services.nodeports"] = _count(sum(1 for p in ports if p.get("nodePort")))
        else:
            out["services.nodeports"] = _count(len(ports))
        out["services.loadbalancers"] = _ONE
    return out


def _claim_usage(claim: dict) -> ResourceList:
    out: ResourceList = {"count/persistentvolumeclaims": _ONE, "persistentvolumeclaims": _ONE}
    spec = claim.get("spec") or {}
    storage_class = spec.get("storageClassName") or \
        (claim["metadata"].get("annotations") or {}).get("volume.beta.kubernetes.io/storage-class") or ""
    if storage_class:
        out[f"{storage_class}{_STORAGE_CLASS_SUFFIX}persistentvolumeclaims"] = _ONE
    request = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if request is not None:
        size = quantity.parse(str(request))
        allocated = ((claim.get("status") or {}).get("allocatedResources") or {}).get("storage")
        if allocated is not None and quantity.parse(str(allocated)).value > size.value:
            size = quantity.parse(str(allocated))
        out["requests.storage"] = size
        if storage_class:
            out[f"{storage_class}{_STORAGE_CLASS_SUFFIX}requests.storage"] = size
    return out


def _count(n: int) -> Quantity:
    return Quantity(Fraction(n), quantity.DECIMAL_SI)


# ---- scopes ----------------------------------------------------------------------------------------------

def scope_selectors(quota: dict) -> list[dict]:
    spec = quota.get("spec") or {}
    out = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or ()]
    out.extend((spec.get("scopeSelector") or {}).get("matchExpressions") or ())
    return out


def matches(quota: dict, bucket: str, obj: dict) -> bool:
    """Whether the quota counts this object: it tracks one of the object's resources and its scopes select it."""
    hard = (quota.get("status") or {}).get("hard") or {}
    if not tracked(bucket, hard):
        return False
    selectors = scope_selectors(quota)
    if not selectors:
        return True
    return bucket == "pods" and all(_pod_in_scope(obj, s) for s in selectors)


def _pod_in_scope(pod: dict, selector: dict) -> bool:
    spec = pod.get("spec") or {}
    scope = selector.get("scopeName")
    deadline = spec.get("activeDeadlineSeconds")
    if scope == "Terminating":
        return deadline is not None and deadline >= 0
    if scope == "NotTerminating":
        return deadline is None
    if scope == "BestEffort":
        return _best_effort(pod)
    if scope == "NotBestEffort":
        return not _best_effort(pod)
    if scope == "PriorityClass":
        return _matches_values(spec.get("priorityClassName") or "", selector)
    if scope == "CrossNamespacePodAffinity":
        return _cross_namespace_affinity(spec)
    return False


def _matches_values(value: str, selector: dict) -> bool:
    operator, values = selector.get("operator"), selector.get("values") or []
    if operator == "In":
        return value in values
    if operator == "NotIn":
        return value not in values
    if operator == "Exists":
        return bool(value)
    if operator == "DoesNotExist":
        return not value
    return False


def _best_effort(pod: dict) -> bool:
    spec = pod.get("spec") or {}
    for container in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        resources = container.get("resources") or {}
        for kind in ("requests", "limits"):
            if any(name in ("cpu", "memory") for name in resources.get(kind) or ()):
                return False
    return True


def _cross_namespace_affinity(spec: dict) -> bool:
    affinity = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = affinity.get(kind) or {}
        terms = list(rules.get("requiredDuringSchedulingIgnoredDuringExecution") or ()) + \
            [t.get("podAffinityTerm") or {} for t in rules.get("preferredDuringSchedulingIgnoredDuringExecution") or ()]
        if any(t.get("namespaces") or t.get("namespaceSelector") is not None for t in terms):
            return True
    return False


# ---- a namespace's usage ---------------------------------------------------------------------------------

def namespace_usage(store: Store, quota: dict, now: float) -> ResourceList:
    """CalculateUsage: what the quota's namespace uses of each resource the quota limits."""
    namespace = quota["metadata"]["namespace"]
    hard = parse_list((quota.get("spec") or {}).get("hard"))
    selectors = scope_selectors(quota)
    used: ResourceList = {}
    for bucket in sorted({b for b in (bucket_for(n) for n in hard) if b is not None}):
        names = tracked(bucket, hard)
        used = add(used, {n: _ZERO for n in names})
        if selectors and bucket != "pods":
            continue
        for obj in store.list(bucket, namespace)[0]:
            if selectors and not all(_pod_in_scope(obj, s) for s in selectors):
                continue
            used = add(used, mask(usage(bucket, obj, now), names))
    return used


def recount(store: Store, quota: dict, now: float) -> dict:
    """The status the resourcequota controller gives a quota: its spec's limits and what is used of each."""
    hard = parse_list((quota.get("spec") or {}).get("hard"))
    used = parse_list((quota.get("status") or {}).get("used"))
    used.update(namespace_usage(store, quota, now))  # names no evaluator counts keep their last value
    return {"hard": to_json(hard), "used": to_json(mask(used, hard))}


def in_sync(quota: dict) -> bool:
    """Whether the quota's status counts what its spec limits."""
    status = quota.get("status") or {}
    hard = parse_list((quota.get("spec") or {}).get("hard"))
    return same(hard, parse_list(status.get("hard"))) and set(hard) <= set(status.get("used") or {})
