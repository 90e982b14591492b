"""A PrometheusRule as the Prometheus Operator turns it into a rule file: its name, its text, its checks.

    path = rule_file_path(obj)        # /etc/prometheus/rules/prometheus-...-rulefiles-0/<ns>-<name>-<uid>.yaml
    rule_file = load(obj)             # a RuleFile, or RuleFileError with promtool's lines
    problems = spec_problems(spec)    # what the admission webhook answers, [] when valid

The Operator (v0.93, ``pkg/operator/rules.go``) writes one file per selected PrometheusRule into the
ConfigMaps ``prometheus-<Prometheus>-rulefiles-<n>``, which the Prometheus pod mounts under
``/etc/prometheus/rules/<ConfigMap>/``. The file is named ``<namespace>-<name>-<uid>.yaml`` (the uid keeps
``foo-bar/fred`` and ``foo/bar-fred`` apart) and holds the object's ``spec`` marshalled to YAML, without
``partial_response_strategy`` (Thanos Ruler's). Its admission webhook and its own selection check the same
rendering with Prometheus' rule-file parser (``ValidateRule``), so the twin parses it with
:func:`parse_rule_file`: what is refused there is refused here, with Prometheus' words.
"""

from __future__ import annotations

import yaml

from ..exporters.targets import RULE_FILE_DIR
from ..rules import RuleFile, RuleFileError, parse_rule_file

# ``MaxConfigMapDataSize``: half a ConfigMap's 1 MiB, the Operator's limit for one rendered PrometheusRule.
MAX_RULE_FILE_BYTES = 1024 * 1024 // 2
# The fields of the Operator's Go types, in the order it declares them; others do not survive its decoding.
_GROUP_FIELDS = ("name", "labels", "interval", "query_offset", "rules", "limit")
_RULE_FIELDS = ("record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations")


def file_name(obj: dict) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}-{meta['name']}-{meta.get('uid', '')}.yaml"


def rule_file_path(obj: dict, directory: str = RULE_FILE_DIR) -> str:
    """Where Prometheus reads the object's rules: the path ``/api/v1/rules`` shows as the groups' ``file``.

    Always the first rule-file ConfigMap: the Operator starts another only when the rendered rules pass
    half a MiB, which no benchmark's rules come near.
    """
    return f"{directory}/{file_name(obj)}"


def spec_document(spec: dict | None) -> dict:
    """The spec as the Operator marshals it: its fields only, empty ones left out (``omitempty``).

    An empty ``interval`` or ``for`` is dropped, as ``ValidateRule`` drops them before checking (the CRD's
    duration pattern accepts the empty string, which Prometheus would refuse to load).
    """
    groups = []
    for group in (spec or {}).get("groups") or []:
        out = _fields(group, _GROUP_FIELDS)
        if out.get("interval") == "":
            del out["interval"]
        rules = [_fields(rule, _RULE_FIELDS) for rule in group.get("rules") or []]
        for rule in rules:
            if rule.get("for") == "":
                del rule["for"]
        if rules:
            out["rules"] = rules
        else:
            out.pop("rules", None)
        groups.append(out)
    return {"groups": groups} if groups else {}


def _fields(obj: dict, names: tuple[str, ...]) -> dict:
    # ``expr`` is the one field without omitempty (an IntOrString: 0 and "" are still written).
    return {name: obj[name] for name in names
            if name in obj and obj[name] is not None and (name == "expr" or obj[name] not in ("", {}, []))}


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks, as the Operator's YAML encoder writes them."""


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _string)


def render(spec: dict | None) -> str:
    """The rule file's text. The Operator's YAML goes through a map, so keys come out sorted; no line folding."""
    return yaml.dump(spec_document(spec), Dumper=_Dumper, sort_keys=True, default_flow_style=False,
                     allow_unicode=True, width=float("inf"))


def load(obj: dict, directory: str = RULE_FILE_DIR) -> RuleFile:
    """The object's rule file, parsed and validated as Prometheus loads it; raises :class:`RuleFileError`."""
    return _parse(rule_file_path(obj, directory), obj.get("spec"))


def spec_problems(spec: dict | None) -> list[str]:
    """``ValidateRule``'s errors for a spec, as ``rulefmt.Parse`` words them (no file name before them)."""
    path = "prometheusrule.yaml"
    try:
        _parse(path, spec)
    except RuleFileError as exc:
        return [e.removeprefix(f"{path}: ") for e in exc.errors]
    return []


def _parse(path: str, spec: dict | None) -> RuleFile:
    text = render(spec)
    size = len(text.encode())
    if size > MAX_RULE_FILE_BYTES:
        raise RuleFileError([f"{path}: the length of rendered Prometheus Rule is {size} bytes which is above the "
                             f"maximum limit of {MAX_RULE_FILE_BYTES} bytes"])
    return parse_rule_file(path, text)
