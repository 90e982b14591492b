"""Loading scenario files, with errors that name the file, the line and the field.

A file that does not parse or validate becomes a :class:`ScenarioError` whose message reads like
``scenarios/sre/checkout-port.yaml:14: faults[0].args.port: Input should be a valid integer``,
so that collection can fail that one file and go on with the rest.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable

import yaml
from pydantic import ValidationError

from .schema import TRUTH_PREFIX, Scenario, truth_model

# Checks a fault's arguments against the fault registry; returns problems as (path, message) pairs.
FaultChecker = Callable[[Scenario], Iterable[tuple[tuple, str]]]


class ScenarioError(Exception):
    """A scenario file that cannot be used; ``str()`` says where and why."""

    def __init__(self, path: str, problems: list[tuple[int | None, str]]):
        self.path = path
        self.problems = problems
        super().__init__("\n".join(f"{path}:{line}: {text}" if line else f"{path}: {text}"
                                   for line, text in problems))


def load(path: str | os.PathLike, check_faults: FaultChecker | None = None) -> Scenario:
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ScenarioError(path, [(None, f"cannot read the file: {exc.strerror}")]) from None
    return loads(text, path, check_faults, base_dir=os.path.dirname(os.path.abspath(path)))


def loads(text: str, path: str = "<scenario>", check_faults: FaultChecker | None = None,
          base_dir: str | None = None) -> Scenario:
    """Parse and validate; with ``base_dir``, the files the scenario names (relative to it) must exist."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError(path, [(line, f"not valid YAML: {problem}")]) from None
    if not isinstance(data, dict):
        raise ScenarioError(path, [(1, "a scenario file is a YAML mapping (id, title, domain, ...)")])
    truth_errors = _truth_problems(root, data)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        if truth_errors:  # reported field by field instead of the scenario's one-line summary
            errors = [e for e in errors if not _describe(e).startswith(TRUTH_PREFIX)]
        raise ScenarioError(path, truth_errors + [(_line_of(root, e["loc"]), _describe(e)) for e in errors]) from None
    if base_dir is not None:
        problems = _file_problems(root, scenario, base_dir)
        if problems:
            raise ScenarioError(path, problems)
    if check_faults is not None:
        problems = [(_line_of(root, loc), f"{_dotted(loc)}: {message}") for loc, message in check_faults(scenario)]
        if problems:
            raise ScenarioError(path, problems)
    return scenario


def _truth_problems(root, data: dict) -> list[tuple[int | None, str]]:
    model = truth_model(data.get("domain"))
    truth = data.get("ground_truth")
    # CISO and FinOps stand-ins without their section are graded by a project's own evaluator: no truth model.
    if model is None or not isinstance(truth, dict) or not ("ciso" in data or "category" in data or "finops" in data):
        return []
    try:
        model.model_validate(truth)
    except ValidationError as exc:
        return [(_line_of(root, ("ground_truth", *e["loc"])), _describe({**e, "loc": ("ground_truth", *e["loc"])}))
                for e in exc.errors()]
    return []


def _file_problems(root, scenario: Scenario, base_dir: str) -> list[tuple[int | None, str]]:
    """Every file the scenario names must exist beside it; a YAML manifest must parse."""
    problems = []
    for loc, relative in scenario.referenced_files():
        where = _dotted(loc)
        full = os.path.normpath(os.path.join(base_dir, relative))
        if not os.path.isfile(full):
            problems.append((_line_of(root, loc), f"{where}: {relative} does not exist (looked for {full})"))
            continue
        if loc[:2] in (("ciso", "hosts"), ("ciso", "compliant_hosts")):  # host states (docs/ciso-hosts.md)
            from ..hosts import HostStateError, load_hosts
            try:
                load_hosts(full)
            except (OSError, yaml.YAMLError, HostStateError) as exc:
                problems.append((_line_of(root, loc), f"{where}: {relative} is not a valid list of hosts: "
                                 f"{' '.join(str(exc).split())[:600]}"))
            continue
        if loc[0] in ("ciso", "finops") and relative.endswith((".yaml", ".yml")):
            try:
                with open(full, encoding="utf-8") as fh:
                    documents = [d for d in yaml.safe_load_all(fh) if d is not None]
            except (OSError, yaml.YAMLError) as exc:
                problems.append((_line_of(root, loc), f"{where}: {relative} is not valid YAML: {exc}"))
                continue
            bad = [i for i, d in enumerate(documents)
                   if not (isinstance(d, dict) and d.get("apiVersion") and d.get("kind") and
                           isinstance(d.get("metadata"), dict) and d["metadata"].get("name"))]
            if bad or not documents:
                problems.append((_line_of(root, loc), f"{where}: {relative} must hold Kubernetes objects (apiVersion, "
                                 f"kind, metadata.name); document(s) {', '.join(str(i + 1) for i in bad) or 'none'}"
                                 f" do not"))
    return problems


def _describe(err: dict[str, Any]) -> str:
    where = _dotted(err["loc"])
    message = err["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    if err["type"] == "extra_forbidden":
        message = "unknown field (check its spelling against the scenario schema)"
    return f"{where}: {message}" if where else message


def _dotted(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _line_of(node, loc: tuple) -> int | None:
    """The line of the deepest YAML node on the path ``loc`` (1-based)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        child = None
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            for key, value in node.value:
                if key.value == part:
                    child = value
                    line = key.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
            line = child.start_mark.line + 1
        if child is None:
            break
        node = child
    return line
