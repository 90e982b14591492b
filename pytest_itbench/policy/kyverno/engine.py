"""Apply a Kyverno ClusterPolicy or Policy's validate rules to one resource.

``apply(policy, resource)`` returns one ``RuleResult`` per rule (autogen rules included) that
matches the request, with Kyverno's result (pass, fail, skip, error) and Kyverno's message.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from . import autogen, celeval, conditions
from .errors import PolicyError
from .match import matches, split_api_version
from .pattern import check_pattern, match_pattern
from .variables import VariableError, search, substitute

SEVERITY = "policies.kyverno.io/severity"
CATEGORY = "policies.kyverno.io/category"
SCORED = "policies.kyverno.io/scored"


@dataclass(frozen=True)
class RuleResult:
    policy: str
    rule: str
    result: str  # "pass" | "fail" | "skip" | "error"
    message: str
    resource: dict
    severity: str | None
    category: str | None
    scored: bool


def _action(value) -> str | None:
    if not value:
        return None
    return "Enforce" if str(value).lower() == "enforce" else "Audit"


def validation_action(policy: dict, rule: str | None = None) -> str:
    """``Audit`` or ``Enforce``: the rule's ``validate.failureAction`` if given, else the policy's."""
    spec = policy.get("spec") or {}
    rules = spec.get("rules") or []
    if rule is not None:
        base = rule.removeprefix("autogen-cronjob-").removeprefix("autogen-")
        for r in rules:
            if r.get("name") in (rule, base):
                per_rule = _action((r.get("validate") or {}).get("failureAction"))
                if per_rule:
                    return per_rule
    policy_level = _action(spec.get("validationFailureAction"))
    if policy_level:
        return policy_level
    per_rule = {_action((r.get("validate") or {}).get("failureAction")) for r in rules} - {None}
    return "Enforce" if "Enforce" in per_rule else "Audit"


# --- policy checks ---------------------------------------------------------------------------

def check_policy(policy: dict) -> None:
    """Raise PolicyError for what Kyverno's admission check of a policy would refuse."""
    if not isinstance(policy, dict) or not isinstance(policy.get("spec"), dict):
        raise PolicyError("policy: spec is missing")
    rules = policy["spec"].get("rules")
    if not isinstance(rules, list) or not rules:
        raise PolicyError("spec.rules: a policy needs at least one rule")
    for i, rule in enumerate(rules):
        where = f"spec.rules[{i}]"
        if not isinstance(rule, dict) or not rule.get("name"):
            raise PolicyError(f"{where}.name: a rule needs a name")
        if not rule.get("match"):
            raise PolicyError(f"{where}.match: a rule needs match")
        if "preconditions" in rule:
            conditions.normalise(rule["preconditions"], f"{where}.preconditions")
        v = rule.get("validate")
        if v is None:
            continue
        if not isinstance(v, dict):
            raise PolicyError(f"{where}.validate: must be a map")
        _check_validate(v, f"{where}.validate")


def _check_validate(v: dict, where: str) -> None:
    kinds = [k for k in ("pattern", "anyPattern", "deny", "foreach", "cel", "podSecurity", "manifests",
                         "assert") if k in v]
    if len(kinds) > 1:
        raise PolicyError(f"{where}: only one of pattern, anyPattern, deny, foreach, cel may be given ({kinds})")
    if "pattern" in v:
        _wrap(check_pattern, v["pattern"], f"{where}.pattern")
    if "anyPattern" in v:
        if not isinstance(v["anyPattern"], list) or not v["anyPattern"]:
            raise PolicyError(f"{where}.anyPattern: must be a non-empty list")
        for i, p in enumerate(v["anyPattern"]):
            _wrap(check_pattern, p, f"{where}.anyPattern[{i}]")
    if "deny" in v:
        conditions.normalise((v["deny"] or {}).get("conditions"), f"{where}.deny.conditions")
    if "foreach" in v:
        if not isinstance(v["foreach"], list):
            raise PolicyError(f"{where}.foreach: must be a list")
        for i, fe in enumerate(v["foreach"]):
            fw = f"{where}.foreach[{i}]"
            if not isinstance(fe, dict) or not fe.get("list"):
                raise PolicyError(f"{fw}.list: a foreach needs a list expression")
            if "preconditions" in fe:
                conditions.normalise(fe["preconditions"], f"{fw}.preconditions")
            _check_validate({k: fe[k] for k in ("pattern", "anyPattern", "deny", "foreach") if k in fe}, fw)
    if "cel" in v:
        exprs = (v["cel"] or {}).get("expressions")
        if not isinstance(exprs, list) or not exprs:
            raise PolicyError(f"{where}.cel.expressions: must be a non-empty list")
        for i, e in enumerate(exprs):
            if not isinstance(e, dict) or not e.get("expression"):
                raise PolicyError(f"{where}.cel.expressions[{i}].expression: missing")
            celeval.compile_check(e["expression"], f"{where}.cel.expressions[{i}].expression")
        for i, var in enumerate((v["cel"] or {}).get("variables") or []):
            celeval.compile_check(var.get("expression", ""), f"{where}.cel.variables[{i}].expression")


def _wrap(fn, pattern, where: str) -> None:
    try:
        fn(pattern, "")
    except PolicyError as e:
        raise PolicyError(f"{where}: {e}") from None


# --- context -----------------------------------------------------------------------------------

def _images(obj: dict | None) -> dict:
    out: dict = {}
    spec = (obj or {}).get("spec") or {}
    for field, key in (("containers", "containers"), ("initContainers", "initContainers"),
                       ("ephemeralContainers", "ephemeralContainers")):
        for c in spec.get(field) or []:
            if isinstance(c, dict) and c.get("image"):
                out.setdefault(key, {})[c.get("name", "")] = _parse_image(c["image"])
    return out


def _parse_image(image: str) -> dict:
    ref, digest = (image.split("@", 1) + [""])[:2]
    first, _, rest = ref.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, path = first, rest
    else:
        registry, path = "docker.io", ref
    tag = ""
    if ":" in path.rsplit("/", 1)[-1]:
        path, tag = path.rsplit(":", 1)
    if not tag and not digest:
        tag = "latest"
    name = path.rsplit("/", 1)[-1]
    reference = f"{registry}/{path}" + (f":{tag}" if tag else "") + (f"@{digest}" if digest else "")
    return {"registry": registry, "path": path, "name": name, "tag": tag, "digest": digest,
            "reference": reference, "referenceWithTag": f"{registry}/{path}:{tag}"}


def _context(resource: dict, operation: str, old: dict | None, user_info: dict | None,
             namespace_labels: dict | None) -> dict:
    user_info = user_info or {}
    username = user_info.get("username", "")
    sa_name = sa_ns = ""
    if username.startswith("system:serviceaccount:"):
        parts = username.split(":")
        if len(parts) >= 4:
            sa_ns, sa_name = parts[2], parts[3]
    obj = None if operation == "DELETE" else resource
    old_obj = old if old is not None else (resource if operation == "DELETE" else None)
    subject = obj if obj is not None else (old_obj or {})
    meta = subject.get("metadata") or {}
    group, version = split_api_version(subject.get("apiVersion", ""))
    request = {
        "operation": operation,
        "object": obj,
        "oldObject": old_obj,
        "userInfo": {"username": username, "groups": list(user_info.get("groups") or []),
                     **({"uid": user_info["uid"]} if "uid" in user_info else {})},
        "roles": list(user_info.get("roles") or []),
        "clusterRoles": list(user_info.get("clusterRoles") or []),
        "namespace": meta.get("namespace", ""),
        "name": meta.get("name", ""),
        "kind": {"group": group, "version": version, "kind": subject.get("kind", "")},
    }
    return {
        "request": request,
        "serviceAccountName": sa_name,
        "serviceAccountNamespace": sa_ns,
        "images": _images(subject),
        "namespaceLabels": namespace_labels or {},
    }


def _load_context(entries, data: dict) -> None:
    for entry in entries or []:
        name = entry.get("name")
        if "variable" in entry:
            var = entry["variable"] or {}
            value = substitute(var.get("value"), data) if "value" in var else None
            if var.get("jmesPath"):
                source = value if "value" in var else data
                value = search(substitute(var["jmesPath"], data, missing_ok=True), source)
            if value is None and "default" in var:
                value = substitute(var["default"], data)
            if value is None:
                raise VariableError(f"context variable {name!r} did not resolve")
            data[name] = value
        else:
            kind = next((k for k in entry if k != "name"), "?")
            raise VariableError(f"context entry {name!r}: {kind} is not available offline")


# --- rule evaluation -----------------------------------------------------------------------------

class _Rule:
    """One rule's validate block, evaluated as Kyverno's validator does (also per foreach element)."""

    def __init__(self, rule: dict, data: dict):
        self.rule = rule
        self.name = rule["name"]
        self.v = rule.get("validate") or {}
        self.data = data
        self.message = self.v.get("message", "")

    # messages
    def _rule_message(self) -> str | None:
        try:
            msg = substitute(self.message, self.data)
        except VariableError:
            return None
        return msg if isinstance(msg, str) else str(msg)

    def pattern_error_message(self, path: str, err: str) -> str:
        if not self.message:
            if path:
                return f"validation error: rule {self.name} failed at path {path}"
            return f"validation error: rule {self.name} execution error: {err}"
        msg = self._rule_message()
        if msg is None:
            return f"validation error: variables substitution error in rule {self.name} execution error: {err}"
        if not msg.endswith("."):
            msg += "."
        if path:
            return f"validation error: {msg} rule {self.name} failed at path {path}"
        return f"validation error: {msg} rule {self.name} execution error: {err}"

    def any_pattern_message(self, errors: list[str]) -> str:
        joined = " ".join(errors)
        if not self.message:
            return f"validation error: {joined}"
        msg = self._rule_message()
        if msg is None:
            msg = self.message
        return f"validation error: {msg} {joined}" if msg.endswith(".") else f"validation error: {msg}. {joined}"

    def deny_message(self, cond_msg: str) -> str:
        if not self.message and not cond_msg:
            return f"validation error: rule {self.name} failed"
        text = "; ".join(s for s in (self.message, cond_msg) if s)
        try:
            out = substitute(text, self.data)
        except VariableError:
            return cond_msg
        return out if isinstance(out, str) else "the produced message didn't resolve to a string, check your policy definition."

    # evaluation
    def run(self, block: dict, target: dict | None, operation: str, old_target: dict | None = None):
        """(result, message) for a validate-like block: pattern/anyPattern/deny/foreach/cel."""
        try:
            _load_context(block.get("context"), self.data)
        except VariableError as e:
            return "error", f"failed to load context: {e}"
        try:
            ok, msg = conditions.evaluate(block.get("preconditions"), self.data, "preconditions", missing_ok=True)
        except VariableError as e:
            return "error", f"failed to evaluate preconditions: {e}"
        if not ok:
            return "skip", "; ".join(s for s in ("preconditions not met", msg) if s)
        if "deny" in block:
            try:
                deny, cmsg = conditions.evaluate_deny((block["deny"] or {}).get("conditions"), self.data, "deny")
            except VariableError as e:
                return "error", f"failed to check deny conditions: {e}"
            if deny:
                return "fail", self.deny_message(cmsg)
            return "pass", f"validation rule '{self.name}' passed."
        if "pattern" in block or "anyPattern" in block:
            if operation == "DELETE" and target is None:
                return None
            got = self._patterns(block, target)
            if operation == "UPDATE" and old_target is not None and got is not None:
                prior = self._patterns(block, old_target)
                if prior == got:
                    if got[0] == "pass":
                        return got
                    return "skip", "skipping modified resource as validation results have not changed"
            return got
        if "foreach" in block:
            return self._foreach(block["foreach"], operation)
        if "cel" in block:
            return self._cel(block["cel"])
        if "podSecurity" in block:
            return "error", "podSecurity subrules are not supported by this engine"
        return None

    def _patterns(self, block: dict, target):
        try:
            if "pattern" in block:
                pattern = substitute(block["pattern"], self.data)
            else:
                any_patterns = substitute(block["anyPattern"], self.data)
        except VariableError as e:
            return "error", f"variable substitution failed: {e}"
        if "pattern" in block:
            err = match_pattern(target, pattern)
            if err is None:
                return "pass", f"validation rule '{self.name}' passed."
            if err.skip:
                return "skip", err.message
            if not err.path:
                return "error", self.pattern_error_message("", err.message)
            return "fail", self.pattern_error_message(err.path, err.message)
        failed, skipped = [], []
        for idx, pattern in enumerate(any_patterns):
            err = match_pattern(target, pattern)
            if err is None:
                return "pass", f"validation rule '{self.name}' anyPattern[{idx}] passed."
            if err.skip:
                skipped.append(f"rule {self.name}[{idx}] skipped: {err.message}")
            elif err.path:
                failed.append(f"rule {self.name}[{idx}] failed at path {err.path}")
            else:
                failed.append(f"rule {self.name}[{idx}] failed: {err.message}")
        if skipped and not failed:
            return "skip", " ".join(skipped)
        return "fail", self.any_pattern_message(failed)

    def _foreach(self, foreach_list: list, operation: str, nesting: int = 0):
        applied = 0
        for fe in foreach_list:
            try:
                expr = substitute(fe["list"], self.data, missing_ok=True)
                elements = search(expr, self.data) if isinstance(expr, str) else expr
            except VariableError:
                continue
            if elements is None:
                continue
            if not isinstance(elements, list):
                elements = [elements]
            got, count = self._elements(fe, elements, operation, nesting)
            if got[0] != "pass":
                return got
            applied += count
        if applied == 0:
            return "skip", "rule skipped"
        return "pass", "rule passed"

    def _elements(self, fe: dict, elements: list, operation: str, nesting: int):
        saved = dict(self.data)
        applied = 0
        try:
            for index, element in enumerate(elements):
                if element is None:
                    continue
                self.data.clear()
                self.data.update(copy.deepcopy(saved))
                self.data["element"] = element
                self.data["elementIndex"] = index
                self.data[f"element{nesting}"] = element
                self.data[f"elementIndex{nesting}"] = index
                scope = fe.get("elementScope", True)
                if "foreach" in fe and not any(k in fe for k in ("pattern", "anyPattern", "deny")):
                    try:
                        _load_context(fe.get("context"), self.data)
                    except VariableError as e:
                        got = ("error", f"failed to load context: {e}")
                    else:
                        try:
                            ok, msg = conditions.evaluate(fe.get("preconditions"), self.data, "preconditions",
                                                          missing_ok=True)
                        except VariableError as e:
                            got = ("error", f"failed to evaluate preconditions: {e}")
                        else:
                            got = (self._foreach(fe["foreach"], operation, nesting + 1) if ok
                                   else ("skip", "; ".join(s for s in ("preconditions not met", msg) if s)))
                else:
                    target = element if scope else self.data["request"]["object"]
                    got = self.run({k: v for k, v in fe.items() if k not in ("list", "elementScope")},
                                   target if isinstance(target, dict) else element, operation)
                if got is None or got[0] == "skip":
                    continue
                if got[0] != "pass":
                    if got[0] == "error" and index < len(elements) - 1:
                        continue
                    return (got[0], f"validation failure: {got[1]}"), applied
                applied += 1
        finally:
            self.data.clear()
            self.data.update(saved)
        return ("pass", ""), applied

    def _cel(self, spec: dict):
        req = self.data["request"]
        ns = req.get("namespace") or ""
        variables = {
            "object": req.get("object"),
            "oldObject": req.get("oldObject"),
            "request": {k: req[k] for k in ("operation", "userInfo", "namespace", "name", "kind")},
            "namespaceObject": ({"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": ns, "labels": self.data.get("namespaceLabels") or {}}}
                                if ns else None),
            "params": None,
        }
        named = {}
        try:
            for var in spec.get("variables") or []:
                named[var["name"]] = celeval.evaluate(var["expression"], {**variables, "variables": named})
            if named:
                variables["variables"] = named
            for expr in spec.get("expressions") or []:
                out = celeval.evaluate(expr["expression"], variables)
                if not isinstance(out, bool):
                    return "error", f"expression {expr['expression']!r} did not evaluate to a boolean"
                if not out:
                    if expr.get("message"):
                        return "fail", str(expr["message"])
                    if expr.get("messageExpression"):
                        msg = celeval.evaluate(expr["messageExpression"], variables)
                        return "fail", str(msg)
                    return "fail", f"failed expression: {expr['expression']}"
        except celeval.CelError as e:
            return "error", f"cel expression evaluation failed: {e}"
        return "pass", ""


def _resource_ref(resource: dict) -> dict:
    meta = resource.get("metadata") or {}
    return {
        "apiVersion": resource.get("apiVersion", ""),
        "kind": resource.get("kind", ""),
        "namespace": meta.get("namespace", "") or "",
        "name": meta.get("name", "") or "",
        "uid": meta.get("uid", "") or "",
    }


def apply(policy: dict, resource: dict, *, operation: str = "CREATE", namespace_labels: dict | None = None,
          old_resource: dict | None = None, user_info: dict | None = None) -> list[RuleResult]:
    """Evaluate every validate rule of ``policy`` that matches this request on ``resource``."""
    check_policy(policy)
    operation = operation.upper()
    meta = policy.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    if policy.get("kind") == "Policy":
        ns = (resource.get("metadata") or {}).get("namespace", "")
        if ns != meta.get("namespace", "default"):
            return []
    ref = _resource_ref(resource)
    results = []
    for rule in autogen.expand(policy):
        if "validate" not in rule:
            continue
        if not matches(rule.get("match"), resource, operation, namespace_labels, user_info):
            continue
        if rule.get("exclude") and matches(rule["exclude"], resource, operation, namespace_labels, user_info,
                                           exclude=True):
            continue
        data = _context(resource, operation, old_resource, user_info, namespace_labels)
        evaluator = _Rule(rule, data)
        block = dict(rule["validate"])
        block.pop("message", None)
        if "context" in rule:
            block["context"] = rule["context"]
        if "preconditions" in rule:
            block["preconditions"] = rule["preconditions"]
        target = None if operation == "DELETE" else resource
        got = evaluator.run(block, target, operation, old_resource)
        if got is None:
            continue
        results.append(RuleResult(
            policy=meta.get("name", ""),
            rule=rule["name"],
            result=got[0],
            message=got[1],
            resource=ref,
            severity=annotations.get(SEVERITY),
            category=annotations.get(CATEGORY),
            scored=str(annotations.get(SCORED, "true")).lower() != "false",
        ))
    return results
