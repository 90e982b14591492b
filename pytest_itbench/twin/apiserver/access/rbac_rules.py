"""RBAC PolicyRule semantics: matching a request, one rule set covering another, and how rules are printed.

Rules are the ``rules`` items of Roles and ClusterRoles as stored (dicts with
``verbs``, ``apiGroups``, ``resources``, ``resourceNames`` and
``nonResourceURLs``). Matching follows kube-apiserver's RBAC authorizer:

* ``*`` in verbs, apiGroups or resources matches anything;
* a resource entry matches ``resource`` or ``resource/subresource`` exactly,
  and ``*/sub`` matches subresource ``sub`` of any resource (``pods/*`` is
  not a wildcard and matches nothing but itself);
* resourceNames, when present, match only requests that carry a name, so
  they never allow create, list, watch or deletecollection (a list or
  watch narrowed by ``metadata.name=`` carries that name);
* a nonResourceURL matches exactly, or by prefix when it ends in ``*``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .authz import Attributes

WILDCARD = "*"
_FIELDS = ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs")


def _values(rule: dict, key: str) -> tuple[str, ...]:
    return tuple(rule.get(key) or ())


@dataclass(frozen=True)
class Rule:
    """One PolicyRule, prepared for matching on every request."""

    verbs: frozenset[str]
    groups: frozenset[str]
    resources: frozenset[str]
    names: frozenset[str]
    urls: tuple[str, ...]
    raw: dict = field(compare=False, hash=False)

    @classmethod
    def compile(cls, raw: dict) -> "Rule":
        return cls(frozenset(_values(raw, "verbs")), frozenset(_values(raw, "apiGroups")),
                   frozenset(_values(raw, "resources")), frozenset(_values(raw, "resourceNames")),
                   _values(raw, "nonResourceURLs"), raw)

    def allows(self, attrs: Attributes) -> bool:
        if WILDCARD not in self.verbs and attrs.verb not in self.verbs:
            return False
        if not attrs.is_resource:
            return any(url_matches(url, attrs.path) for url in self.urls)
        if WILDCARD not in self.groups and attrs.api_group not in self.groups:
            return False
        if not self._resource_matches(attrs.resource, attrs.subresource):
            return False
        return not self.names or attrs.name in self.names

    def _resource_matches(self, resource: str, subresource: str) -> bool:
        resources = self.resources
        if WILDCARD in resources:
            return True
        if not subresource:
            return resource in resources
        return f"{resource}/{subresource}" in resources or f"*/{subresource}" in resources


def url_matches(pattern: str, path: str) -> bool:
    if pattern == WILDCARD or pattern == path:
        return True
    return pattern.endswith("*") and path.startswith(pattern.rstrip("*"))


# ---- covering: does one set of rules grant everything another grants? --------------------------------

def breakdown(rule: dict) -> list[dict]:
    """The rule as atomic rules of one group, resource, verb and (if any) resource name each."""
    out: list[dict] = []
    verbs, names = _values(rule, "verbs"), _values(rule, "resourceNames")
    for group in _values(rule, "apiGroups"):
        for resource in _values(rule, "resources"):
            for verb in verbs:
                base = {"verbs": [verb], "apiGroups": [group], "resources": [resource]}
                if names:
                    out.extend(dict(base, resourceNames=[name]) for name in names)
                else:
                    out.append(base)
    for url in _values(rule, "nonResourceURLs"):
        out.extend({"verbs": [verb], "nonResourceURLs": [url]} for verb in verbs)
    return out


def _has_all(have: tuple[str, ...], want: tuple[str, ...]) -> bool:
    return set(want) <= set(have)


def _resources_cover(have: tuple[str, ...], want: tuple[str, ...]) -> bool:
    if WILDCARD in have or _has_all(have, want):
        return True
    for resource in want:
        if resource in have:
            continue
        if "/" not in resource or "*/" + resource.split("/", 1)[1] not in have:
            return False
    return True


def _urls_cover(have: tuple[str, ...], want: tuple[str, ...]) -> bool:
    return all(any(owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))
                   for owner in have) for path in want)


def _rule_covers(owner: dict, sub: dict) -> bool:
    owner_verbs, owner_groups = _values(owner, "verbs"), _values(owner, "apiGroups")
    owner_names, sub_names = _values(owner, "resourceNames"), _values(sub, "resourceNames")
    return ((WILDCARD in owner_verbs or _has_all(owner_verbs, _values(sub, "verbs")))
            and (WILDCARD in owner_groups or _has_all(owner_groups, _values(sub, "apiGroups")))
            and _resources_cover(_values(owner, "resources"), _values(sub, "resources"))
            and _urls_cover(_values(owner, "nonResourceURLs"), _values(sub, "nonResourceURLs"))
            and (not owner_names or (bool(sub_names) and _has_all(owner_names, sub_names))))


def uncovered(owner_rules: list[dict], servant_rules: list[dict]) -> list[dict]:
    """The atomic rules of ``servant_rules`` that no rule of ``owner_rules`` grants."""
    return [sub for rule in servant_rules for sub in breakdown(rule)
            if not any(_rule_covers(owner, sub) for owner in owner_rules)]


# ---- presentation ----------------------------------------------------------------------------------------

def compact(rules: list[dict]) -> list[dict]:
    """Merge rules of one group, one resource and at most one name that differ only in verbs."""
    merged: dict[tuple, dict] = {}
    complex_rules: list[dict] = []
    for rule in rules:
        groups, resources = _values(rule, "apiGroups"), _values(rule, "resources")
        names = _values(rule, "resourceNames")
        simple = (len(groups) == 1 and len(resources) == 1 and len(names) <= 1
                  and not rule.get("nonResourceURLs") and set(rule) <= set(_FIELDS))
        if not simple:
            complex_rules.append(rule)
            continue
        key = (groups[0], resources[0], names)
        existing = merged.get(key)
        if existing is None:
            merged[key] = normalized(rule)
        else:
            verbs = existing.setdefault("verbs", [])
            verbs += [v for v in _values(rule, "verbs") if v not in verbs]
    return complex_rules + list(merged.values())


def compact_string(rule: dict) -> str:
    """A rule as escalation errors print it: ``{APIGroups:[""], Resources:["pods"], Verbs:["get"]}``."""
    parts = []
    for key, label in (("apiGroups", "APIGroups"), ("resources", "Resources"),
                       ("nonResourceURLs", "NonResourceURLs"), ("resourceNames", "ResourceNames"),
                       ("verbs", "Verbs")):
        values = _values(rule, key)
        if values:
            parts.append(f"{label}:[{' '.join(json.dumps(v) for v in values)}]")
    return "{" + ", ".join(parts) + "}"


def normalized(rule: dict) -> dict:
    """The rule without empty fields: two rules are the same grant when these are equal."""
    return {key: list(rule[key]) for key in _FIELDS if rule.get(key)}
