"""Rule files: Prometheus' rule-file YAML (the ``spec`` of a PrometheusRule), decoded and validated.

    rule_file = parse_rule_file("kubernetes.yaml", text)   # raises RuleFileError

Decoding follows Prometheus (``rulefmt.Parse``: yaml.v3 with known fields
only), and so do the checks and their words, each prefixed with the file
name as ``promtool check rules`` prints them::

    kubernetes.yaml: 12:15: group "kubernetes-apps", rule 2, "KubePodNotReady": could not parse expression: ...
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml

from ..promql import ParseError, parse
from ..durations import parse_duration
from .templates import check_template

_STR, _INT, _NULL = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:null"
_SHORT_TAGS = {"tag:yaml.org,2002:map": "!!map", "tag:yaml.org,2002:seq": "!!seq", _STR: "!!str", _INT: "!!int",
               "tag:yaml.org,2002:float": "!!float", "tag:yaml.org,2002:bool": "!!bool", _NULL: "!!null",
               "tag:yaml.org,2002:timestamp": "!!timestamp"}


@dataclass(frozen=True)
class Rule:
    """One alerting (``alert``) or recording (``record``) rule as written."""

    expr: str
    alert: str = ""
    record: str = ""
    for_: float = 0.0  # seconds
    keep_firing_for: float = 0.0
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.alert or self.record


@dataclass(frozen=True)
class RuleGroup:
    name: str
    rules: tuple[Rule, ...]
    interval: Optional[float] = None  # seconds; None: the manager's default
    query_offset: Optional[float] = None
    limit: int = 0
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RuleFile:
    path: str
    groups: tuple[RuleGroup, ...]


class RuleFileError(ValueError):
    """A rule file that Prometheus would refuse; ``errors`` are promtool's lines, file name first."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


class _DecodeError(Exception):
    """An error that stops decoding (yaml.v3 returns an unmarshaler's error as it is)."""


class _Decoder:
    """Decodes composed YAML nodes into rule-file values as yaml.v3 with ``KnownFields(true)`` does."""

    def __init__(self) -> None:
        self.type_errors: list[tuple[int, str]] = []  # (line, message)

    def type_error(self, node: yaml.Node, into: str) -> None:
        detail = ""
        if isinstance(node, yaml.ScalarNode):
            value = node.value
            detail = f" `{value[:7]}...`" if len(value) > 10 else f" `{value}`"
        self.report(node, f"cannot unmarshal {_SHORT_TAGS.get(node.tag, node.tag)}{detail} into {into}")

    def report(self, node: yaml.Node, message: str) -> None:
        self.type_errors.append((node.start_mark.line + 1, message))

    def fields(self, node: yaml.Node, go_type: str, known: tuple[str, ...]) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """The fields of a mapping, by name, with their key and value nodes."""
        if isinstance(node, yaml.ScalarNode) and node.tag == _NULL:
            return {}
        if not isinstance(node, yaml.MappingNode):
            self.type_error(node, go_type)
            return {}
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else ""
            if name in out:
                self.report(key, f'mapping key "{name}" already defined at line {out[name][0].start_mark.line + 1}')
                continue
            if name not in known:
                self.report(key, f"field {name} not found in type {go_type}")
                continue
            out[name] = (key, value)
        return out

    def string(self, node: Optional[yaml.Node]) -> str:
        if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == _NULL):
            return ""
        if not isinstance(node, yaml.ScalarNode):
            self.type_error(node, "string")
            return ""
        return node.value

    def integer(self, node: Optional[yaml.Node]) -> int:
        if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == _NULL):
            return 0
        if not isinstance(node, yaml.ScalarNode) or node.tag != _INT:
            self.type_error(node, "int")
            return 0
        return int(node.value.replace("_", ""), 0)

    def duration(self, node: Optional[yaml.Node]) -> Optional[float]:
        if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == _NULL):
            return None
        if not isinstance(node, yaml.ScalarNode):
            self.type_error(node, "string")
            return None
        try:
            return parse_duration(node.value)
        except ValueError as exc:
            raise _DecodeError(str(exc)) from None

    def string_map(self, node: Optional[yaml.Node]) -> dict[str, str]:
        if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == _NULL):
            return {}
        if not isinstance(node, yaml.MappingNode):
            self.type_error(node, "map[string]string")
            return {}
        return {self.string(k): self.string(v) for k, v in node.value}

    def sequence(self, node: Optional[yaml.Node], go_type: str) -> list[yaml.Node]:
        if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == _NULL):
            return []
        if not isinstance(node, yaml.SequenceNode):
            self.type_error(node, go_type)
            return []
        return node.value


def _position(node: Optional[yaml.Node]) -> str:
    # yaml.v3 reports 1-based positions; a field that is absent has the zero node, 0:0.
    if node is None:
        return "0:0"
    return f"{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def _decode(decoder: _Decoder, root: Optional[yaml.Node]) -> list[tuple[RuleGroup, yaml.Node, list[tuple[Rule, dict]]]]:
    groups = []
    top = decoder.fields(root, "rulefmt.RuleGroups", ("groups",)) if root is not None else {}
    for group_node in decoder.sequence(top.get("groups", (None, None))[1], "[]rulefmt.RuleGroup"):
        g = decoder.fields(group_node, "rulefmt.RuleGroup",
                           ("name", "interval", "query_offset", "limit", "rules", "labels"))
        value = {name: node for name, (_, node) in g.items()}
        rules = []
        for rule_node in decoder.sequence(value.get("rules"), "[]rulefmt.Rule"):
            r = decoder.fields(rule_node, "rulefmt.Rule",
                               ("record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations"))
            nodes = {name: node for name, (_, node) in r.items()}
            rule = Rule(expr=decoder.string(nodes.get("expr")), alert=decoder.string(nodes.get("alert")),
                        record=decoder.string(nodes.get("record")), for_=decoder.duration(nodes.get("for")) or 0.0,
                        keep_firing_for=decoder.duration(nodes.get("keep_firing_for")) or 0.0,
                        labels=decoder.string_map(nodes.get("labels")),
                        annotations=decoder.string_map(nodes.get("annotations")))
            rules.append((rule, nodes))
        group = RuleGroup(name=decoder.string(value.get("name")), rules=tuple(r for r, _ in rules),
                          interval=decoder.duration(value.get("interval")),
                          query_offset=decoder.duration(value.get("query_offset")),
                          limit=decoder.integer(value.get("limit")), labels=decoder.string_map(value.get("labels")))
        groups.append((group, group_node, rules))
    return groups


def _valid_label_name(name: str) -> bool:
    # Prometheus 3 validates names as UTF-8 (its default name validation scheme): any non-empty name.
    return name != ""


def _rule_errors(rule: Rule, nodes: dict[str, yaml.Node]) -> list[tuple[str, str]]:
    """``rulefmt.Rule.Validate``: (position of the node concerned, or "", problem) pairs."""
    errors = []
    record, alert, expr = nodes.get("record"), nodes.get("alert"), nodes.get("expr")
    both = f"{_position(record)}: {_position(alert)}"
    if rule.record and rule.alert:
        errors.append((both, "only one of 'record' and 'alert' must be set"))
    if not rule.record and not rule.alert:
        errors.append((both, "one of 'record' or 'alert' must be set"))
    if not rule.expr:
        errors.append((_position(expr), "field 'expr' must be set in rule"))
    else:
        try:
            parse(rule.expr)
        except ParseError as exc:
            errors.append((_position(expr), f"could not parse expression: {exc}"))
    if rule.record:
        if rule.annotations:
            errors.append((_position(record), "invalid field 'annotations' in recording rule"))
        if rule.for_:
            errors.append((_position(record), "invalid field 'for' in recording rule"))
        if rule.keep_firing_for:
            errors.append((_position(record), "invalid field 'keep_firing_for' in recording rule"))
        if "{" in rule.record or "}" in rule.record:
            errors.append((_position(record), "braces present in the recording rule name; should it be in expr?: "
                                              + rule.record))
    for name in rule.labels:
        if not _valid_label_name(name) or name == "__name__":
            errors.append(("", f"invalid label name: {name}"))
    for name in rule.annotations:
        if not _valid_label_name(name):
            errors.append(("", f"invalid annotation name: {name}"))
    if rule.alert:
        for kind, texts in (("label", rule.labels), ("annotation", rule.annotations)):
            for name, text in texts.items():
                problem = check_template(rule.alert, text)
                if problem:
                    errors.append(("", f'{kind} "{name}": {problem}'))
    return errors


def parse_rule_file(path: str, text: str) -> RuleFile:
    """Decode and validate a rule file; raises :class:`RuleFileError` with every problem found."""
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise RuleFileError([f"{path}: yaml: {where}{getattr(exc, 'problem', None) or exc}"]) from None
    decoder = _Decoder()
    try:
        decoded = _decode(decoder, documents[0] if documents else None)
    except _DecodeError as exc:
        raise RuleFileError([f"{path}: {exc}"]) from None
    if decoder.type_errors:
        # yaml.v3 reports in document order; fields here are decoded in a fixed order.
        ordered = sorted(decoder.type_errors, key=lambda error: error[0])
        raise RuleFileError([f"{path}: yaml: unmarshal errors:\n  "
                             + "\n  ".join(f"line {line}: {message}" for line, message in ordered)])
    errors = []
    seen: set[str] = set()
    for group, group_node, rules in decoded:
        where = _position(group_node)
        if not group.name:
            errors.append(f"{where}: Groupname must not be empty")
        if group.name in seen:
            errors.append(f'{where}: groupname: "{group.name}" is repeated in the same file')
        seen.add(group.name)
        for name in group.labels:
            if not _valid_label_name(name) or name == "__name__":
                errors.append(f"invalid label name: {name}")
        for index, (rule, nodes) in enumerate(rules, start=1):
            for position, problem in _rule_errors(rule, nodes):
                # rulefmt.Error: node positions, then the group and rule, then the problem.
                where_rule = f'group "{group.name}", rule {index}, "{rule.name}": {problem}'
                errors.append(f"{position}: {where_rule}" if position else where_rule)
    if errors:
        raise RuleFileError([f"{path}: {e}" for e in errors])
    return RuleFile(path, tuple(group for group, _, _ in decoded))


def load_rule_file(path: str | Path) -> RuleFile:
    return parse_rule_file(str(path), Path(path).read_text())
