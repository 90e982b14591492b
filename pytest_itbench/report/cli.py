"""``itbench-report``: reports across sessions, from their results files (JSONL).

    itbench-report merge shard-*.jsonl --results all.jsonl --junitxml all.xml
    itbench-report compare gpt-4o=gpt4o.jsonl claude=claude-1.jsonl claude=claude-2.jsonl
    itbench-report html gpt-4o=gpt4o.jsonl claude=claude.jsonl -o results.html

``merge`` reads the results of shards or machines, refuses to mix selections (each record carries the id of
the selection its session ran: catalog version, options, seed; study/selection.py), keeps one record per
trial (scenario, variant, run; the last that is not an error, else the last), and prints the leaderboard of
the whole, as one session over the same selection would have printed it. ``--results`` writes the merged
records as one results file, ``--junitxml`` one JUnit XML with a testcase per trial.

``compare`` puts contestants (agents, models: ``LABEL=PATH``, a label named twice gathers its shards) side by
side over the scenarios they all ran (report/compare.py); ``html`` writes the same as one static page with
plots (report/html.py). Exit status: 0 done, 1 nothing to report, 2 bad input (named on stderr).
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from ..results import ERROR, FAILED, TrialResult
from . import junit, leaderboard
from .jsonl import ResultsFile
from .compare import CompareError, compare, render as render_comparison
from .merged import MergeError, merge


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
    comparing = commands.add_parser("compare", help="agents or models side by side, over the scenarios all ran")
    comparing.add_argument("contestants", nargs="+", metavar="[LABEL=]RESULTS.jsonl")
    page = commands.add_parser("html", help="one static results page: leaderboard, matrix, pass@k, cost")
    page.add_argument("contestants", nargs="+", metavar="[LABEL=]RESULTS.jsonl")
    page.add_argument("-o", "--output", metavar="PATH", default="itbench-results.html",
                      help="the page to write (default itbench-results.html)")
    args = parser.parse_args(argv)
    if args.command == "merge":
        return _merge(args)
    return _compare(args)


def _merge(args: argparse.Namespace) -> int:
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


def _compare(args: argparse.Namespace) -> int:
    """``compare`` prints the comparison; ``html`` writes it as a page (one contestant is enough for a page)."""
    try:
        comparison, notes = compare(args.contestants, minimum=2 if args.command == "compare" else 1)
    except CompareError as exc:
        print(f"itbench-report {args.command}: {exc}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.command == "compare":
        for line in render_comparison(comparison):
            print(line)
        return 0
    from .html import HtmlUnavailable, page
    try:
        text = page(comparison, notes)
    except HtmlUnavailable as exc:
        print(f"itbench-report html: {exc}", file=sys.stderr)
        return 2
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"itbench-report html: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}: {len(comparison.trials())} scenario(s), {len(comparison.contestants)} "
          f"contestant(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
