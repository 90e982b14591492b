"""Results of one selection from several files (shards, machines) as one: one record per trial and run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_itbench.report.jsonl import load
from pytest_itbench.results import ERROR, TrialResult
from pytest_itbench.study.resume import key_of


class MergeError(ValueError):
    """Results that cannot be merged; says which files and why."""


def merge(paths: Sequence[str | Path]) -> tuple[list[TrialResult], list[str]]:
    """The merged results and notes on what was dropped; raises MergeError for files of different selections."""
    by_file: dict[str, list[TrialResult]] = {}
    for path in paths:
        try:
            by_file[str(path)] = load(path)
        except FileNotFoundError:
            raise MergeError(f"{path}: no such file") from None
        except ValueError as exc:
            raise MergeError(str(exc)) from None
    selections: dict[str, set[str]] = {}
    for path, results in by_file.items():
        for result in results:
            selections.setdefault(result.selection or "(none: recorded before selections were)", set()).add(path)
    if len(selections) > 1:
        listed = "; ".join(f"selection {sid}: {', '.join(sorted(files))}" for sid, files in sorted(selections.items()))
        raise MergeError(f"these results are of different selections and cannot be merged as one: {listed}. Shards "
                         f"of one selection ran the same scenario files with the same options and seed")
    kept: dict[tuple[str, int, int], TrialResult] = {}
    notes = []
    for results in by_file.values():
        for result in results:
            key = key_of(result)
            if key in kept and result.outcome == ERROR and kept[key].outcome != ERROR:
                notes.append(f"{result.trial_id} run {result.run}: an error recorded after a result was left out")
                continue
            if key in kept:
                notes.append(f"{result.trial_id} run {result.run}: recorded more than once; the last is kept")
            kept[key] = result
    return [kept[k] for k in sorted(kept)], notes
