"""Auto-generated rules for Pod controllers, the way Kyverno derives them.

A validate rule that selects only Pods (no names, selectors or annotations) gets two
companions: ``autogen-<rule>`` for Deployment, DaemonSet, StatefulSet, Job, ReplicaSet and
ReplicationController (the Pod is at ``spec.template``) and ``autogen-cronjob-<rule>`` for
CronJob (at ``spec.jobTemplate.spec.template``). The annotation
``pod-policies.kyverno.io/autogen-controllers`` narrows the list or, with ``none``, turns it off.
"""

from __future__ import annotations

import copy
import re

from .match import parse_kind

ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"
POD_CONTROLLERS = ["DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController"]
ALL_CONTROLLERS = POD_CONTROLLERS + ["CronJob"]


def controllers(policy: dict) -> list[str]:
    annotations = (policy.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(ANNOTATION)
    if value is None:
        return list(ALL_CONTROLLERS)
    if value.strip().lower() == "none":
        return []
    wanted = [v.strip() for v in value.split(",") if v.strip()]
    return [c for c in ALL_CONTROLLERS if c in wanted]


def _descriptions(block: dict | None) -> list[dict]:
    if not block:
        return []
    out = []
    for key in ("any", "all"):
        for flt in block.get(key) or []:
            out.append(flt.get("resources") or {})
    if "resources" in block:
        out.append(block.get("resources") or {})
    return out


def _pod_only(kinds) -> bool:
    return bool(kinds) and all(parse_kind(str(k))[2] == "Pod" and not parse_kind(str(k))[3] for k in kinds)


def can_autogen(rule: dict) -> bool:
    if "validate" not in rule:
        return False
    match_descs = _descriptions(rule.get("match"))
    if not match_descs:
        return False
    for desc in match_descs + _descriptions(rule.get("exclude")):
        if desc.get("name") or desc.get("names") or desc.get("selector") or desc.get("annotations"):
            return False
    for desc in match_descs:
        if not _pod_only(desc.get("kinds")):
            return False
    for desc in _descriptions(rule.get("exclude")):
        if desc.get("kinds") and not _pod_only(desc.get("kinds")):
            return False
    return True


def _rekind(block: dict | None, kinds: list[str]) -> dict | None:
    if not block:
        return block
    block = copy.deepcopy(block)
    for key in ("any", "all"):
        for flt in block.get(key) or []:
            if (flt.get("resources") or {}).get("kinds"):
                flt["resources"]["kinds"] = list(kinds)
    if (block.get("resources") or {}).get("kinds"):
        block["resources"]["kinds"] = list(kinds)
    return block


_JMES_SPEC = re.compile(r"request\.(object|oldObject)\.(spec|metadata)\b")
_CEL_SPEC = re.compile(r"\b(object|oldObject)\.(spec|metadata)\b")


def _rewrite(text: str, prefix: str, cel: bool) -> str:
    rx = _CEL_SPEC if cel else _JMES_SPEC
    head = "" if cel else "request."
    return rx.sub(lambda m: f"{head}{m.group(1)}.{prefix}.{m.group(2)}", text)


def _rewrite_strings(value, prefix: str, cel: bool = False):
    if isinstance(value, dict):
        return {k: _rewrite_strings(v, prefix, cel) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite_strings(v, prefix, cel) for v in value]
    if isinstance(value, str):
        return _rewrite(value, prefix, cel)
    return value


def _wrap_pattern(pattern, path: list[str]):
    if not isinstance(pattern, dict):
        return pattern
    inner = pattern
    for key in reversed(path):
        inner = {key: inner}
    return inner


def _convert(rule: dict, name: str, kinds: list[str], prefix: str, path: list[str]) -> dict:
    new = copy.deepcopy(rule)
    new["name"] = name
    new["match"] = _rekind(rule.get("match"), kinds)
    if rule.get("exclude"):
        new["exclude"] = _rekind(rule.get("exclude"), kinds)
    for key in ("preconditions", "context"):
        if key in new:
            new[key] = _rewrite_strings(new[key], prefix)
    v = new["validate"]
    if "pattern" in v:
        v["pattern"] = _wrap_pattern(_rewrite_strings(v["pattern"], prefix), path)
    if "anyPattern" in v and isinstance(v["anyPattern"], list):
        v["anyPattern"] = [_wrap_pattern(_rewrite_strings(p, prefix), path) for p in v["anyPattern"]]
    for key in ("deny", "foreach", "message"):
        if key in v:
            v[key] = _rewrite_strings(v[key], prefix)
    if "cel" in v:
        v["cel"] = _rewrite_strings(v["cel"], prefix, cel=True)
    return new


def expand(policy: dict) -> list[dict]:
    """The policy's rules followed by the rules Kyverno generates from them."""
    rules = list((policy.get("spec") or {}).get("rules") or [])
    wanted = controllers(policy)
    if not wanted:
        return rules
    extra = []
    for rule in rules:
        if not can_autogen(rule):
            continue
        kinds = [c for c in wanted if c in POD_CONTROLLERS]
        if kinds:
            extra.append(_convert(rule, f"autogen-{rule['name']}", kinds, "spec.template",
                                  ["spec", "template"]))
        if "CronJob" in wanted:
            extra.append(_convert(rule, f"autogen-cronjob-{rule['name']}", ["CronJob"],
                                  "spec.jobTemplate.spec.template", ["spec", "jobTemplate", "spec", "template"]))
    return rules + extra

