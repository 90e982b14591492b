"""Several agents or models side by side, from their results files (``itbench-report compare`` and ``html``).

A *contestant* is what one compares: an agent, a model, a prompt. It is named on the command line as
``LABEL=PATH`` (or ``PATH``: the label is the file's stem); a label given more than once gathers the files
of one contestant (its shards or machines, merged as ``itbench-report merge`` does, so they must be of one
selection). Different contestants are different selections by construction (the agent is part of the
selection's id), so no selection check is made between them.

Figures are compared on the same footing: over the trials (scenario and variant) that every contestant
ran. A trial only some ran is left out of every figure and named in a note, since a contestant that skipped
the hard scenarios would otherwise look better. The figures are those of the session's leaderboard
(report/figures.py): pass@1 with its standard error, pass@k, pass^k, NTAM, MTTD, MTTR, tokens and cost,
overall, by domain and by complexity.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from pytest_itbench.report import leaderboard
from pytest_itbench.report.figures import Figures, sections, shown_k
from pytest_itbench.results import FAILED, PASSED, TrialResult


class CompareError(ValueError):
    """Contestants that cannot be compared; says which and why."""


@dataclass(frozen=True)
class Contestant:
    label: str
    files: tuple[str, ...]
    results: list[TrialResult]  # merged over its files, one per trial and run

    @property
    def agents(self) -> str:
        return ", ".join(sorted({r.agent for r in self.results}))


@dataclass(frozen=True)
class Comparison:
    contestants: list[Contestant]  # each with only the trials all of them ran
    left_out: dict[str, list[str]]  # contestant label -> the trial ids only some contestants ran
    ks: list[int]

    @property
    def labels(self) -> list[str]:
        return [c.label for c in self.contestants]

    def blocks(self) -> list[list[tuple[str, Figures]]]:
        """Overall, each domain, each complexity: one (contestant, figures) row per contestant."""
        per = {c.label: sections(c.results, self.ks) for c in self.contestants}
        rows: list[list[tuple[str, Figures]]] = []
        for i, block in enumerate(per[self.labels[0]]):
            for figures in block:
                rows.append([(label, next(f for f in per[label][i] if f.label == figures.label))
                             for label in self.labels])
        return rows

    def trials(self) -> list[str]:
        return sorted({r.trial_id for r in self.contestants[0].results})

    def marks(self) -> dict[str, dict[str, str]]:
        """contestant -> trial id -> its outcomes in run order (``PPF``)."""
        return {label: leaderboard.run_marks(c.results) for label, c in zip(self.labels, self.contestants)}

    def differences(self) -> list[str]:
        """The trials whose share of passed runs is not the same for every contestant."""
        def rate(results: list[TrialResult], trial: str) -> float | None:
            valid = [r for r in results if r.trial_id == trial and r.outcome in (PASSED, FAILED)]
            return sum(r.outcome == PASSED for r in valid) / len(valid) if valid else None
        return [t for t in self.trials() if len({rate(c.results, t) for c in self.contestants}) > 1]


def parse(specs: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``LABEL=PATH`` or ``PATH`` arguments as (label, files), in the order first named."""
    named: dict[str, list[str]] = {}
    for spec in specs:
        label, _, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
        label = label.strip() or Path(path).stem
        if not path:
            raise CompareError(f"{spec!r}: no results file after '='; name a contestant as LABEL=PATH or PATH")
        named.setdefault(label, []).append(path)
    return list(named.items())


def compare(specs: Sequence[str], minimum: int = 2) -> tuple[Comparison, list[str]]:
    """The comparison of the named contestants, and notes (merge notes, what was left out and why)."""
    from pytest_itbench.report.merged import MergeError, merge
    contestants, notes = [], []
    for label, files in parse(specs):
        try:
            results, merge_notes = merge(files)
        except MergeError as exc:
            raise CompareError(f"contestant {label}: {exc}") from None
        if not results:
            raise CompareError(f"contestant {label}: {', '.join(files)} hold no trials")
        contestants.append(Contestant(label, tuple(files), results))
        notes += [f"{label}: {note}" for note in merge_notes]
    if len(contestants) < minimum:
        raise CompareError("name two contestants or more (LABEL=PATH ...); for one, `itbench-report merge` "
                           "prints its leaderboard")
    shared = set.intersection(*({r.trial_id for r in c.results} for c in contestants))
    if not shared:
        raise CompareError("the contestants ran no scenario in common: "
                           + "; ".join(f"{c.label} ran {len({r.trial_id for r in c.results})}" for c in contestants))
    left_out = {}
    for c in contestants:
        alone = sorted({r.trial_id for r in c.results} - shared)
        if alone:
            left_out[c.label] = alone
            notes.append(f"{c.label}: {len(alone)} scenario(s) the others did not run are left out of every "
                         f"figure ({', '.join(alone[:5])}{', ...' if len(alone) > 5 else ''})")
    for attribute in ("noise", "backend"):
        seen = {c.label: sorted({getattr(r, attribute) for r in c.results}) for c in contestants}
        if len({tuple(v) for v in seen.values()}) > 1:
            notes.append(f"the contestants ran with different {attribute}: "
                         + "; ".join(f"{label} {', '.join(v)}" for label, v in seen.items()))
    kept = [Contestant(c.label, c.files, [r for r in c.results if r.trial_id in shared]) for c in contestants]
    ks = sorted(set().union(*(shown_k(c.results) for c in kept)))  # each contestant's own runs
    return Comparison(kept, left_out, ks), notes


def columns(rows: list[list[tuple[str, Figures]]], ks: list[int]) -> list[leaderboard.Column]:
    """The columns of the comparison's table (text and page alike) over the rows of ``Comparison.blocks()``."""
    by_id = {id(f): (label, f.label) for block in rows for label, f in block}
    lead: list[leaderboard.Column] = [("group", lambda f: by_id[id(f)][1], True),
                                      ("contestant", lambda f: by_id[id(f)][0], True),
                                      ("trials", lambda f: str(f.trials), False)]
    tail: list[leaderboard.Column] = [
        ("safe@1", lambda f: leaderboard.fmt(None if f.safe_pass_at_1 is None else 100 * f.safe_pass_at_1,
                                             "{:.1f}"), False),
        ("unsafe", lambda f: str(f.unsafe), False),
        ("cost", lambda f: leaderboard.fmt(f.cost_usd, "${:,.4f}"), False)]
    return leaderboard.columns(lead, ks, tail)


def render(comparison: Comparison) -> list[str]:
    """The comparison as text: the figures by group, then the trials where the contestants differ."""
    lines = [f"{len(comparison.trials())} scenario(s) compared: "
             + "; ".join(f"{c.label} (agent {c.agents}, {len(c.results)} trials)" for c in comparison.contestants)]
    rows = comparison.blocks()
    lines += leaderboard.lay_out([[f for _, f in block] for block in rows], columns(rows, comparison.ks))
    differing = comparison.differences()
    lines += ["", f"scenarios where they differ: {len(differing)} of {len(comparison.trials())}"]
    if differing:
        marks = comparison.marks()
        width = max(len(t) for t in differing)
        lines.append("  ".join(["scenario".ljust(width), *comparison.labels]))
        for trial in differing:
            lines.append("  ".join([trial.ljust(width), *(marks[label].get(trial, "").ljust(len(label))
                                                          for label in comparison.labels)]).rstrip())
        lines.append("(runs in order: P passed, F failed, E error)")
    return lines + [""] + list(leaderboard.NOTE)
