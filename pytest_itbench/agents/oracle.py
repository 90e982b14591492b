"""``oracle``: the only agent handed the ground truth.

It answers exactly what the ground truth says and repairs the cluster with the scenario's
recommended actions, using the agent's kubeconfig like any other agent. A scenario the oracle fails
is a broken scenario: its truth names nothing live, or its repair needs rights the agent lacks.

- SRE and FinOps: the diagnosis in ITBench's agent-output shape. Each ground-truth group's name
  filters are resolved against the live cluster with kubectl (a filter like ``^cart-.*`` names pods
  whose suffixes only the cluster knows); then ``recommended_actions`` (kubectl commands) run.
- CISO: the reference solution's files are copied into the workdir and handed in as artifacts;
  then ``recommended_actions`` run in the workdir, so they can name those files.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Sequence

from ..scenario.finops import FinopsGroundTruth
from ..scenario.schema import EntityGroup, Scenario, SreGroundTruth
from .base import Submission, Task, Trajectory, entity_name
from .kubectl import Kubectl

_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
OBSERVATION_CHARS = 2000


class Oracle:
    name = "oracle"

    def __init__(self, scenario: Scenario | None, scenario_dir: str | os.PathLike | None = None, *,
                 kubectl: str | None = None):
        self.scenario = scenario
        self.scenario_dir = Path(scenario_dir) if scenario_dir is not None else None
        self.kubectl = kubectl

    def run(self, task: Task, trajectory: Trajectory) -> Submission:
        if self.scenario is None:
            raise RuntimeError("the oracle was built without a scenario; the trial passes it: "
                               "resolve('oracle', scenario)")
        kubectl = Kubectl(task, self.kubectl)
        if self.scenario.domain == "ciso":
            return self._ciso(task, trajectory, kubectl)
        # FinOps shares SRE's ground-truth shape (entity groups, propagations, actions) and adds to it.
        model = FinopsGroundTruth if self.scenario.domain == "finops" else SreGroundTruth
        truth = model.model_validate(self.scenario.ground_truth)
        diagnosis = self._diagnosis(truth, kubectl, trajectory)
        _act(truth.recommended_actions, task, kubectl, trajectory)
        return Submission(diagnosis=diagnosis, notes="the scenario's ground truth (oracle)")

    def _diagnosis(self, truth: SreGroundTruth, kubectl: Kubectl, trajectory: Trajectory) -> dict[str, Any]:
        names = {group.id: _locate(group, kubectl, trajectory) for group in truth.groups}
        # Root causes first: entity@k reads the list in order.
        groups = sorted(truth.groups, key=lambda g: not g.root_cause)
        roots = ", ".join(names[g.id] for g in groups if g.root_cause)
        return {
            "entities": [{"name": names[g.id], "contributing_factor": g.root_cause,
                          "reasoning": f"ground-truth group {g.id}" + (" (root cause)" if g.root_cause else ""),
                          "evidence": "the scenario's ground truth"} for g in groups],
            "propagations": [{"source": names[p.source], "target": names[p.target], "condition": p.condition,
                              "effect": p.effect} for p in truth.propagations],
            "alerts_explained": [{"alert": alert, "explanation": f"fired as the fault spread from {roots}",
                                  "explained": True} for alert in self.scenario.expected_alerts],
        }

    def _ciso(self, task: Task, trajectory: Trajectory, kubectl: Kubectl) -> Submission:
        """The CISO hook. Reads ``ground_truth.reference_solution`` (role -> file, relative to the scenario
        file) and ``ground_truth.recommended_actions``; the CISO catalog settles the rest of that schema."""
        truth = self.scenario.ground_truth
        solution = truth.get("reference_solution") or {}
        if not isinstance(solution, dict):
            raise ValueError("ground_truth.reference_solution maps roles to files, as in {policy: policy.yaml}")
        if solution and self.scenario_dir is None:
            raise RuntimeError("the reference solution's files lie next to the scenario file; the trial passes "
                               "its directory: resolve('oracle', scenario, scenario_dir=...)")
        artifacts = {}
        for role, relative in solution.items():
            source = self.scenario_dir / relative
            target = Path(task.workdir) / Path(relative).name
            started = time.time()
            shutil.copy(source, target)  # keeps the mode: a reference script stays executable
            trajectory.add(thought=f"reference solution: {role}", action=f"cp {shlex.quote(str(source))} "
                           f"{shlex.quote(str(target))}", observation=f"{target.stat().st_size} bytes",
                           started=started, tool="cp")
            artifacts[role] = target.name
        _act(truth.get("recommended_actions") or (), task, kubectl, trajectory)
        return Submission(artifacts=artifacts, notes="the scenario's reference solution (oracle)")


def _locate(group: EntityGroup, kubectl: Kubectl, trajectory: Trajectory) -> str:
    """The ``namespace/Kind/name`` of a live object the group's filters match.

    When none is live (the fault deleted it, or the agent may not list its kind), a filter that is a
    plain name (``^cart$``, ``flagd-config\\b``) still names it.
    """
    args = ["get", group.kind, "--output", "json"] + (["--namespace", group.namespace] if group.namespace else [])
    started = time.time()
    result = kubectl.run(args)
    matches: list[str] = []
    if result.returncode == 0:
        live = sorted(item["metadata"]["name"] for item in json.loads(result.stdout).get("items", []))
        matches = [name for name in live if any(re.search(p, name) for p in group.filter)]
        observation = f"{len(live)} found; matching {list(group.filter)}: {', '.join(matches) or 'none'}"
    else:
        observation = result.stderr.strip()[:OBSERVATION_CHARS]
    trajectory.add(thought=f"locate ground-truth group {group.id}", action="kubectl " + shlex.join(args),
                   observation=observation, started=started, tool="kubectl", error=_exit_error(result))
    name = matches[0] if matches else _plain_name(group.filter)
    if name is None:
        where = f" in namespace {group.namespace}" if group.namespace else ""
        raise RuntimeError(f"ground-truth group {group.id!r}: no live {group.kind}{where} matches "
                           f"{list(group.filter)} ({observation}), and no filter is a plain name to fall back "
                           f"on; the scenario's ground truth names nothing the agent can find")
    return entity_name(group.namespace, group.kind, name)


def _plain_name(patterns: Sequence[str]) -> str | None:
    """The object name a pattern spells out literally, if it does (checked against the pattern itself)."""
    for pattern in patterns:
        core = re.sub(r"^(\^|\\b)|(\$|\\b)$", "", pattern).replace("\\.", ".").replace("\\-", "-")
        if _NAME.fullmatch(core) and re.search(pattern, core):
            return core
    return None


def _act(actions: Sequence[str], task: Task, kubectl: Kubectl, trajectory: Trajectory) -> None:
    for command in actions:
        if task.cancelled.is_set():
            return
        argv = shlex.split(command)
        if not argv or argv[0] != "kubectl":
            raise ValueError(f"recommended action {command!r} is not a kubectl command; the oracle runs kubectl "
                             f"commands only, with the agent's kubeconfig")
        started = time.time()
        result = kubectl.run(argv[1:])
        output = "\n".join(part.strip() for part in (result.stdout, result.stderr) if part.strip())
        trajectory.add(thought="recommended action", action=command, observation=output[:OBSERVATION_CHARS],
                       started=started, tool="kubectl", error=_exit_error(result))
        if result.returncode != 0:
            raise RuntimeError(f"recommended action {command!r} failed with the agent's kubeconfig (exit "
                               f"{result.returncode}): {result.stderr.strip()}\nThe scenario is not solvable as "
                               f"written: fix its recommended_actions, or the agent's rights")


def _exit_error(result: subprocess.CompletedProcess[str]) -> str:
    """A step's error for a kubectl run: its exit status and error output, or "" when it succeeded."""
    if result.returncode == 0:
        return ""
    return f"exit {result.returncode}: {result.stderr.strip()[:OBSERVATION_CHARS] or 'no error output'}"
