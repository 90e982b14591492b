"""Which stored objects Kyverno looks at: the kinds a policy's rules name, autogen, and resource filters.

Kyverno (1.12 is the reference) scans and admits only what its policies match and its resource filters
let through. A rule's ``match``/``exclude`` names kinds as ``Kind``, ``version/Kind`` or
``group/version/Kind`` (wildcards allowed, ``Kind/subresource`` for subresources, which the background
scan never sees). A rule on Pods is also applied, by autogen, to the Pod controllers unless the policy's
``pod-policies.kyverno.io/autogen-controllers`` annotation says otherwise. The engine decides whether a
rule really applies; this module only narrows the buckets worth handing it.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Iterable

CLUSTER_POLICIES = "clusterpolicies.kyverno.io"
POLICIES = "policies.kyverno.io"
POLICY_BUCKETS = (CLUSTER_POLICIES, POLICIES)
REPORTS = "policyreports.wgpolicyk8s.io"
CLUSTER_REPORTS = "clusterpolicyreports.wgpolicyk8s.io"

AUTOGEN_ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"
# Kyverno 1.12's default autogen controllers (ReplicaSet and ReplicationController are filtered below).
AUTOGEN_DEFAULT = ("DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController",
                   "CronJob")

# The resource filters of Kyverno's Helm chart (``config.resourceFilters``, kind/namespace/name): objects
# Kyverno neither admits nor reports on. Its own namespace is ``kyverno``.
RESOURCE_FILTERS: tuple[tuple[str, str, str], ...] = (
    ("Event", "*", "*"),
    ("*", "kube-system", "*"),
    ("*", "kube-public", "*"),
    ("*", "kube-node-lease", "*"),
    ("*", "kyverno", "*"),
    ("Node", "*", "*"),
    ("APIService", "*", "*"),
    ("TokenReview", "*", "*"),
    ("SubjectAccessReview", "*", "*"),
    ("SelfSubjectAccessReview", "*", "*"),
    ("Binding", "*", "*"),
    ("ReplicaSet", "*", "*"),
    ("AdmissionReport", "*", "*"),
    ("ClusterAdmissionReport", "*", "*"),
    ("BackgroundScanReport", "*", "*"),
    ("ClusterBackgroundScanReport", "*", "*"),
    ("PolicyReport", "*", "*"),
    ("ClusterPolicyReport", "*", "*"),
    ("Lease", "*", "*"),
)

# Kinds that are never worth a scan: reviews and other virtual kinds, Kyverno's own kinds, events.
_NEVER = {"ClusterPolicy", "Policy", "PolicyReport", "ClusterPolicyReport", "Event"}


def filtered(kind: str, namespace: str, name: str) -> bool:
    """True when Kyverno's resource filters exclude the object."""
    for f_kind, f_namespace, f_name in RESOURCE_FILTERS:
        if fnmatchcase(kind, f_kind) and fnmatchcase(namespace or "", f_namespace) \
                and fnmatchcase(name or "", f_name):
            if f_namespace != "*" and not namespace:
                continue  # a namespace filter does not catch cluster-scoped objects
            return True
    return False


def _blocks(rule: dict) -> Iterable[dict]:
    """The resource descriptions of a rule's match block (any/all or the legacy form)."""
    block = rule.get("match") or {}
    if block.get("resources"):
        yield block["resources"]
    for key in ("any", "all"):
        for entry in block.get(key) or ():
            if (entry or {}).get("resources"):
                yield entry["resources"]


def kind_patterns(policy: dict) -> list[tuple[str, str, str]]:
    """(group, version, kind) patterns the policy's rules match, with autogen's controllers added."""
    patterns: list[tuple[str, str, str]] = []
    pods = False
    for rule in (policy.get("spec") or {}).get("rules") or ():
        for resources in _blocks(rule or {}):
            for text in resources.get("kinds") or ():
                parsed = parse_kind(str(text))
                if parsed is None:
                    continue
                patterns.append(parsed)
                if fnmatchcase("Pod", parsed[2]):
                    pods = True
    if pods:
        annotation = ((policy.get("metadata") or {}).get("annotations") or {}).get(AUTOGEN_ANNOTATION)
        if annotation is None:
            controllers = AUTOGEN_DEFAULT
        elif annotation.strip().lower() == "none":
            controllers = ()
        else:
            controllers = tuple(c.strip() for c in annotation.split(",") if c.strip())
        patterns.extend(("*", "*", c) for c in controllers)
    return patterns


def parse_kind(text: str) -> tuple[str, str, str] | None:
    """``Kind``, ``version/Kind``, ``group/version/Kind``; None for a subresource (``Pod/status``)."""
    parts = text.split("/")
    if len(parts) >= 2 and parts[-1][:1].islower() and parts[-1] != "*":
        return None  # Kind/subresource, group/version/Kind/subresource
    if len(parts) == 1:
        return "*", "*", parts[0]
    if len(parts) == 2:
        return "*", parts[0], parts[1]
    return parts[0], parts[1], parts[2]


def matches_kind(patterns: Iterable[tuple[str, str, str]], group: str, version: str, kind: str) -> bool:
    if kind in _NEVER:
        return False
    for p_group, p_version, p_kind in patterns:
        if fnmatchcase(kind, p_kind) and fnmatchcase(version, p_version) and fnmatchcase(group or "", p_group):
            return True
    return False
