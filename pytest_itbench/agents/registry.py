"""From ``--itbench-agent=SPEC`` to an agent that keeps its deadline.

A SPEC is, in the order tried:

- ``exec:COMMAND``: a program in any language (:mod:`.exec_agent`);
- a built-in name (``noop``, ``heuristic``, ``oracle``, ``openai``);
- a name installed under the entry-point group ``pytest_itbench.agents``;
- ``module:attribute``: an importable class (instantiated), factory (called) or agent object.

Every agent comes back with a ``run(task, trajectory)`` that keeps the task's deadline and raises an
:class:`~.errors.AgentFailure` for every way of missing. Only the oracle is handed the scenario
(ARCHITECTURE.md, rule 4). Built-ins with settings of their own (``openai``: model, endpoint, limits) get
them as text by name, from the command line and ini file (the plugin reads them); the environment and
their defaults fill in the rest.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import os
from typing import Any, Callable, Mapping

from ..scenario.schema import Scenario
from .base import Agent
from .errors import DOCS, AgentSpecError
from .exec_agent import ExecAgent
from .guard import GuardedAgent
from .heuristic import HeuristicAgent
from .noop import NoopAgent
from .openai_agent import MissingPackage, SettingsError, build as build_openai_agent
from .oracle import Oracle

ENTRY_POINT_GROUP = "pytest_itbench.agents"
ORACLE = "oracle"
# Built-ins other than the oracle are built without arguments: they get no more than any agent does.
BUILTINS: dict[str, Callable[[], Agent]] = {"noop": NoopAgent, "heuristic": HeuristicAgent}
# Built-ins built from settings (text by name, as given on the command line or in the ini file).
CONFIGURED: dict[str, Callable[[Mapping[str, str] | None], Agent]] = {"openai": build_openai_agent}

FORMS = f"""\
An agent is given as one of:
  NAME              a built-in agent, or one installed under the entry-point group "{ENTRY_POINT_GROUP}"
  module:attribute  an importable class (instantiated), factory (called) or object with run(task, trajectory)
  exec:COMMAND      a program in any language, driven through ITBENCH_* environment variables and files
See {DOCS}."""


def available() -> list[str]:
    """The agent names usable as a SPEC: built-ins and installed entry points."""
    return sorted({*BUILTINS, *CONFIGURED, ORACLE, *_entry_points()})


def resolve(spec: str, scenario: Scenario | None = None, *,
            scenario_dir: str | os.PathLike | None = None, settings: Mapping[str, str] | None = None,
            pass_env: tuple[str, ...] = ()) -> Agent:
    """The agent SPEC names; ``scenario`` and ``scenario_dir`` go to the oracle alone, ``settings`` (text by
    name) to the built-in that takes them, ``pass_env`` (variable names, --itbench-agent-env) to an exec agent.

    Raises AgentSpecError (a ValueError) naming the problem and the alternatives.
    """
    spec = spec.strip()
    if spec.startswith("exec:"):
        return ExecAgent(spec[len("exec:"):], name=spec, pass_env=pass_env)
    if spec == ORACLE:
        return GuardedAgent(Oracle(scenario, scenario_dir), ORACLE)
    if spec in BUILTINS:
        return GuardedAgent(BUILTINS[spec](), spec)
    if spec in CONFIGURED:
        try:
            return GuardedAgent(CONFIGURED[spec](settings), spec)
        except (MissingPackage, SettingsError) as exc:  # each says what to install or set
            raise AgentSpecError(f"agent {spec!r}: {exc}") from None
    entry_points = _entry_points()
    if spec in entry_points:
        entry_point = entry_points[spec]
        where = f"entry point {spec} = {entry_point.value} ({_distribution(entry_point)})"
        try:
            target = entry_point.load()
        except Exception as exc:
            raise AgentSpecError(f"agent {spec!r} could not be loaded from {where}: {type(exc).__name__}: {exc}") \
                from exc
        return _guarded(_build(target, where), spec)
    if ":" in spec:
        return _guarded(_build(_import(spec), spec), spec)
    raise AgentSpecError(_unknown(spec))


def _guarded(agent: Agent, name: str) -> Agent:
    # An ExecAgent from a factory (to pass it secrets through pass_env) keeps its own deadline: a thread
    # around it would report a generic timeout while it is still ending its process group.
    if isinstance(agent, (ExecAgent, GuardedAgent)):
        return agent
    return GuardedAgent(agent, name)


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(entry_point.name, entry_point)  # the first on sys.path wins, as for imports
    return found


def _distribution(entry_point: importlib.metadata.EntryPoint) -> str:
    dist = entry_point.dist
    return f"from {dist.name} {dist.version}" if dist is not None else "from an unnamed distribution"


def _import(spec: str) -> Any:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise AgentSpecError(f"{spec!r} is not module:attribute (both parts are needed)\n{FORMS}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        # The module (or a package on its path) is missing, rather than something it imports.
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise AgentSpecError(
                f"cannot import {module_name!r} for agent {spec!r}: {exc}. The module must be importable by the "
                f"Python running pytest: install it, or add its directory to sys.path (pytest's `pythonpath` "
                f"setting, or PYTHONPATH)") from exc
        raise AgentSpecError(f"importing {module_name!r} for agent {spec!r} failed: {exc}") from exc
    except Exception as exc:
        raise AgentSpecError(f"importing {module_name!r} for agent {spec!r} failed: {type(exc).__name__}: {exc}") \
            from exc
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            names = [n for n in dir(target) if not n.startswith("_")]
            hint = difflib.get_close_matches(part, names, n=3)
            raise AgentSpecError(f"{spec!r}: {module_name} has no attribute {attribute!r}"
                                 + (f" (did you mean {', '.join(hint)}?)" if hint else "")) from None
    return target


def _build(target: Any, where: str) -> Agent:
    """An agent object as is; a class instantiated; any other callable called as a factory."""
    if isinstance(target, type) or (callable(target) and not callable(getattr(target, "run", None))):
        try:
            agent = target()
        except Exception as exc:
            raise AgentSpecError(f"building the agent from {where} failed: {type(exc).__name__}: {exc} (it is "
                                 f"called without arguments; give a factory that supplies any it needs)") from exc
    else:
        agent = target
    if not callable(getattr(agent, "run", None)):
        raise AgentSpecError(f"{where} gave {agent!r}, which has no run(task, trajectory) method\n{FORMS}")
    return agent


def _unknown(spec: str) -> str:
    names = available()
    close = difflib.get_close_matches(spec, names, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return f"unknown agent {spec!r}{hint}\nAvailable agents: {', '.join(names)}\n{FORMS}"
