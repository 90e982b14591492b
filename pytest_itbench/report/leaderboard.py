"""The terminal leaderboard: the session's figures as a fixed-width table.

The plugin calls ``write(terminalreporter, results)`` from ``pytest_terminal_summary`` with the results
read back from the reports (``carry.results_from_stats``), so it shows the whole session on the xdist
controller too. ``-v`` adds a line per scenario and the environment errors.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from pytest_itbench.report.figures import Figures, per_scenario, proximity, sections, shown_k
from pytest_itbench.evaluate.safety import UNSAFE
from pytest_itbench.results import COST_USD, ERROR, FAILED, PASSED, TOOL_CALLS, TrialResult

NOTE = (
    "pass@k: % of scenarios solved within k runs (unbiased estimator, averaged over scenarios), "
    "pass@1 ± its standard error; pass^k: % of scenarios whose k runs all pass (estimated from all runs);",
    "NTAM: mean per scenario; MTTD, MTTR: median seconds over successes; steps, tokens: mean per trial;",
    "errors (the environment broke) are counted apart and left out of every figure;",
    "'-': not measured, or some scenario has fewer than k valid runs.",
)
_TRAJECTORY_NOTE = ("calls, repeats (actions identical to an earlier one), cmd-fails (failed commands), cost (US$): "
                    "mean per trial;")
_SAFETY_NOTE = ("safe@1: pass@1 with an unsafe pass (alerts cleared after a destructive write outside the blast "
                "radius) counted as a failure; unsafe: trials that were unsafe passes;")
_RUN_MARK = {PASSED: "P", FAILED: "F", ERROR: "E"}

Column = tuple[str, Callable[[Figures], str], bool]  # header, cell, aligned left (text)

# The trajectory analysis' columns; shown only when some trial of the session has the figure, so that
# results without it (an older results file, hand-made results) keep the table as narrow as it was.
_TRAJECTORY: list[tuple[str, Column]] = [
    (TOOL_CALLS, ("calls", lambda f: fmt(f.tool_calls, "{:.1f}"), False)),
    (TOOL_CALLS, ("repeats", lambda f: fmt(f.repeated_actions, "{:.1f}"), False)),
    (TOOL_CALLS, ("cmd-fails", lambda f: fmt(f.failed_commands, "{:.1f}"), False)),
    (COST_USD, ("cost", lambda f: fmt(f.cost_usd, "${:,.4f}"), False)),
]


def write(terminalreporter: Any, results: list[TrialResult]) -> None:
    if not results:
        return
    terminalreporter.write_sep("=", "itbench leaderboard")
    for line in render(results, terminalreporter.config.getoption("verbose")):
        terminalreporter.write_line(line)


def render(results: list[TrialResult], verbosity: int = 0) -> list[str]:
    ks = shown_k(results)
    lines = [_headline(results)]
    lead: list[Column] = [("group", lambda f: f.label, True), ("trials", lambda f: str(f.trials), False),
                          ("scen", lambda f: str(f.scenarios), False)]
    recorded = {name for r in results if r.outcome in (PASSED, FAILED)
                for name, value in r.figures.items() if value is not None}
    tail = [column for figure, column in _TRAJECTORY if figure in recorded]
    if UNSAFE in recorded:  # safety was judged in some trial: the safe pass@1 and the unsafe passes
        tail = [("safe@1", lambda f: fmt(None if f.safe_pass_at_1 is None else 100 * f.safe_pass_at_1, "{:.1f}"),
                 False), ("unsafe", lambda f: str(f.unsafe), False)] + tail
    lines += table(sections(results, ks), lead, ks, tail)
    lines += _proximity_line(results)
    if verbosity > 0:
        any_run = {r.trial_id: r for r in results}  # every run of a scenario has its domain and level
        runs = run_marks(results)
        lead = [("scenario", lambda f: f.label, True), ("domain", lambda f: any_run[f.label].domain, True),
                ("level", lambda f: any_run[f.label].complexity, True), ("runs", lambda f: runs[f.label], True)]
        lines += [""] + table([per_scenario(results, ks)], lead, ks, tail)
        errors = sorted((r for r in results if r.outcome == ERROR), key=lambda r: (r.trial_id, r.run))
        lines += [f"error: {r.trial_id} run {r.run} (seed {r.seed}): {_first_line(r.error)}" for r in errors]
    note = list(NOTE)
    if any(column[0] == "calls" for column in tail):
        note.insert(2, _TRAJECTORY_NOTE)
    if UNSAFE in recorded:
        note.insert(1, _SAFETY_NOTE)
    return lines + [""] + note


def _proximity_line(results: list[TrialResult]) -> list[str]:
    """FinOps: the mean proximity to the optimum (ITBench's 1 - |observed - optimal| / optimal), where measured."""
    measured = {label: value for label, value in proximity(results).items() if value is not None}
    if not measured:
        return []
    shown = ", ".join(f"{label} {value:.2f}" for label, value in measured.items())
    return ["", f"finops proximity to the optimum (mean over scenarios): {shown}"]


def _headline(results: list[TrialResult]) -> str:
    agents = ", ".join(sorted({r.agent for r in results}))
    backends = ", ".join(sorted({r.backend for r in results}))
    counts = {s: len(m) for s, m in run_marks(results).items()}
    low, high = min(counts.values()), max(counts.values())
    runs = f"{_count(high, 'run')} each" if low == high else f"{low} to {high} runs each"
    return f"agent {agents} on {backends}: {_count(len(results), 'trial')} of {_count(len(counts), 'scenario')}, {runs}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def columns(lead: list[Column], ks: list[int], tail: list[Column]) -> list[Column]:
    """The table's columns: ``lead``, then the outcomes and figures every table shows, then ``tail``."""
    return lead + [
        ("pass", lambda f: str(f.passed), False),
        ("fail", lambda f: str(f.failed), False),
        ("err", lambda f: str(f.errors), False),
        *((f"pass@{k}", lambda f, k=k: pass_cell(f, k), False) for k in ks),
        *((f"pass^{k}", lambda f, k=k: fmt(None if f.pass_hat.get(k) is None else 100 * f.pass_hat[k], "{:.1f}"),
           False) for k in ks if k > 1),
        ("NTAM", lambda f: fmt(f.ntam, "{:.2f}"), False),
        ("MTTD", lambda f: fmt(f.mttd, "{:.1f}s"), False),
        ("MTTR", lambda f: fmt(f.mttr, "{:.1f}s"), False),
        ("steps", lambda f: fmt(f.steps, "{:.1f}"), False),
        ("tokens", lambda f: fmt(f.tokens, "{:,.0f}"), False),
        *tail,
    ]


def table(blocks: list[list[Figures]], lead: list[Column], ks: list[int], tail: list[Column]) -> list[str]:
    """Rows of the blocks under one header, a rule above each block."""
    return lay_out(blocks, columns(lead, ks, tail))


def lay_out(blocks: list[list[Figures]], shown: list[Column]) -> list[str]:
    """The blocks' rows in the given columns, aligned, under one header and a rule above each block."""
    header = [h for h, _, _ in shown]
    rows = [[[cell(f) for _, cell, _ in shown] for f in block] for block in blocks if block]
    widths = [max(len(h), *(len(row[i]) for block in rows for row in block)) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if left else c.rjust(w)
                         for c, w, (_, _, left) in zip(cells, widths, shown)).rstrip()

    rule = "-" * sum(widths + [2] * (len(widths) - 1))
    out = [line(header)]
    for block in rows:
        out.append(rule)
        out += [line(row) for row in block]
    return out


def pass_cell(figures: Figures, k: int) -> str:
    value = figures.pass_at.get(k)
    if value is None:
        return "-"
    text = f"{100 * value:.1f}"
    if k == 1 and figures.stderr is not None:
        text += f"±{100 * figures.stderr:.1f}"
    return text


def fmt(value: float | None, pattern: str) -> str:
    return "-" if value is None else pattern.format(value)


def run_marks(results: list[TrialResult]) -> dict[str, str]:
    """Each scenario's outcomes in run order, e.g. ``PPF`` or ``PEF``."""
    marks: dict[str, str] = {}
    for r in sorted(results, key=lambda r: (r.trial_id, r.run)):
        marks[r.trial_id] = marks.get(r.trial_id, "") + _RUN_MARK.get(r.outcome, "?")
    return marks


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "(no message)"
