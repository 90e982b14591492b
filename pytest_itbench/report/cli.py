"""``itbench-report``: reports across sessions, from their results files (JSONL).

    itbench-report merge shard-*.jsonl --results all.jsonl --junitxml all.xml

``merge`` reads the results of shards or machines, refuses to mix selections (each record carries the id of
the selection its session ran: catalog version, options, seed; study/selection.py), keeps one record per
trial (scenario, variant, run; the last that is not an error, else the last), and prints the leaderboard of
the whole, as one session over the same selection would have printed it. ``--results`` writes the merged
records as one results file, ``--junitxml`` one JUnit XML with a testcase per trial.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from ..results import ERROR, FAILED, TrialResult
from ..study.resume import key_of
from . import junit, leaderboard
from .jsonl import ResultsFile, load


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


def write_junit(results: Sequence[TrialResult], path: str | Path) -> None:
    suite = ET.Element("testsuite", name="itbench", tests=str(len(results)),
                       failures=str(sum(r.outcome == FAILED for r in results)),
                       errors=str(sum(r.outcome == ERROR for r in results)))
    for result in results:
        case = ET.SubElement(suite, "testcase", classname=f"itbench.{result.domain}",
                             name=f"{result.trial_id}[run{result.run}]",
                             time=f"{sum(result.phases.values()):.3f}")
        properties = ET.SubElement(case, "properties")
        for name, value in junit.properties(result):
            ET.SubElement(properties, "property", name=name, value=value)
        if result.outcome == FAILED:
            message = junit.failure_message(result)
            ET.SubElement(case, "failure", message=message.splitlines()[0]).text = message
        elif result.outcome == ERROR:
            ET.SubElement(case, "error", message=(result.error or "error").splitlines()[0]).text = result.error
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="itbench-report", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    merging = commands.add_parser("merge", help="results files of shards or machines into one leaderboard")
    merging.add_argument("files", nargs="+", metavar="RESULTS.jsonl")
    merging.add_argument("--results", metavar="PATH", help="write the merged records here (JSONL)")
    merging.add_argument("--junitxml", metavar="PATH", help="write a JUnit XML report here")
    merging.add_argument("-v", "--verbose", action="count", default=0, help="a line per scenario, as pytest -v")
    args = parser.parse_args(argv)
    try:
        results, notes = merge(args.files)
    except MergeError as exc:
        print(f"itbench-report merge: {exc}", file=sys.stderr)
        return 2
    if not results:
        print("itbench-report merge: the files hold no trials", file=sys.stderr)
        return 1
    for line in leaderboard.render(results, args.verbose):
        print(line)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.results:
        out = ResultsFile(args.results)
        for result in results:
            out.append(result, nodeid=f"{result.trial_id}[run{result.run}]")
    if args.junitxml:
        write_junit(results, args.junitxml)
    return 0


if __name__ == "__main__":
    sys.exit(main())
