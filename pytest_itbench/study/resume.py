"""``--itbench-resume=results.jsonl``: the trials a results file already holds for this selection.

A trial is known by (scenario id, variant, run). A recorded pass or failure of the same selection is replayed:
its test reports the recorded outcome and verdict without provisioning anything, and its result goes to this
session's reports (leaderboard, JUnit, Allure; and the results file, unless it is the file resumed from,
which holds it already). A recorded error (the environment broke, not the agent) runs again. Records of
another selection are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..report.jsonl import load
from ..results import ERROR, TrialResult

TrialKey = tuple[str, int, int]  # scenario id, variant, run


def key_of(result: TrialResult) -> TrialKey:
    return (result.scenario_id, result.variant, result.run)


@dataclass
class Recorded:
    path: Path
    selection: str
    trials: dict[TrialKey, TrialResult] = field(default_factory=dict)

    def take(self, key: TrialKey) -> TrialResult | None:
        return self.trials.get(key)


def read(path: str | Path, selection: str) -> Recorded:
    """What ``path`` holds for ``selection``; a missing file holds nothing (the first session of a study)."""
    path = Path(path)
    found = Recorded(path.resolve(), selection)
    if not path.exists():
        return found
    for result in load(path):
        if result.selection != selection or result.outcome == ERROR:
            continue
        found.trials[key_of(result)] = result  # the last record of a trial wins
    return found


def summary(path: Path, shown: str, results: list[TrialResult]) -> str:
    """The session's line on what it resumed; when nothing was, why (read on the controller, which under xdist
    never collected, so it knows the selection only from the trials' results)."""
    replayed = sum(1 for r in results if r.resumed_from)
    if replayed:
        return f"itbench resume: {replayed} trial(s) replayed from {shown}, {len(results) - replayed} run"
    if not path.exists():
        return f"itbench resume: nothing to replay, {shown} does not exist yet; every trial ran"
    ours = {r.selection for r in results}
    held = load(path)
    same = [r for r in held if r.selection in ours]
    if same:  # of this selection, but only errors (which run again) or trials not in this session
        return (f"itbench resume: nothing replayed from {shown}: its {len(same)} record(s) of this selection are "
                f"errors, which run again; every trial ran")
    return (f"itbench resume: nothing to replay, {shown} holds {len(held)} record(s), none of this selection "
            f"({', '.join(sorted(ours))}): another agent, seed, option or edited scenario file makes another "
            f"selection; every trial ran")
