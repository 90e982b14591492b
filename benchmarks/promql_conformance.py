"""The twin's PromQL engine against Prometheus' own promqltest files (run by hand, not in CI).

    python -m benchmarks.promql_conformance DIR [--verbose] [--file NAME]

DIR is ``promql/promqltest/testdata`` of a Prometheus checkout (fetch it; the
project does not ship it). Each ``eval`` is run with the harness the project's
own scripts use (tests/telemetry/promqltest.py) in its lenient mode, which marks
what it cannot represent (native histogram samples, ``load_with_nhcb``, unknown
commands) as unsupported instead of failing. Prints, per file, the cases that
pass, fail, cannot run here, or use a feature Prometheus gates behind a flag
(promqltest enables them all; the twin, like a Prometheus with default flags,
refuses them), and the totals docs/telemetry.md records.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from pytest_itbench.twin.telemetry.tsdb import DuplicateSample
from tests.telemetry.promqltest import build_store, parse_script, run


# promqltest runs with every experimental feature on; the twin, as a Prometheus started without
# --enable-feature, refuses them at parse time with these messages.
_FLAG_GATED = re.compile(r"(?:failed unexpectedly: |failed with .)parse error: (?:function \S+ is not enabled|.*is experimental|"
                         r".*experimental and not enabled)")


def run_file(path: Path, verbose: bool) -> Counter:
    counts: Counter = Counter()
    stores: dict = {}
    for case in parse_script(path, lenient=True):
        if case.unsupported or case.partial_load:
            counts["unsupported"] += 1
            continue
        key = (case.segment, len(case.loads))
        if key not in stores:
            try:
                stores[key] = build_store(case.loads)
            except DuplicateSample:  # a load writing two values at one timestamp, which the twin's TSDB refuses
                stores[key] = None
        if stores[key] is None:
            counts["unsupported"] += 1
            continue
        try:
            run(case, stores[key])
        except AssertionError as exc:
            if _FLAG_GATED.search(str(exc)):  # refused as a Prometheus with default flags refuses it
                counts["flag-gated"] += 1
                continue
            counts["failed"] += 1
            if verbose:
                print(f"  FAIL {str(exc)[:400]}")
        except Exception as exc:  # the engine raising anything but a PromQL error is a finding too
            counts["failed"] += 1
            if verbose:
                print(f"  ERROR {case.id}: {case.query!r}: {type(exc).__name__}: {exc}"[:400])
        else:
            counts["passed"] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("testdata", type=Path, help="promql/promqltest/testdata of a Prometheus checkout")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every failing case")
    parser.add_argument("--file", action="append", default=[], help="only this file (repeatable)")
    args = parser.parse_args(argv)
    paths = sorted(args.testdata.glob("*.test"))
    if args.file:
        paths = [p for p in paths if p.name in args.file or p.stem in args.file]
    if not paths:
        print(f"no .test files in {args.testdata}", file=sys.stderr)
        return 2
    total: Counter = Counter()
    for path in paths:
        if args.verbose:
            print(path.name)
        counts = run_file(path, args.verbose)
        total.update(counts)
        ran = counts["passed"] + counts["failed"]
        share = f"{100 * counts['passed'] / ran:5.1f}%" if ran else "   - "
        print(f"{path.name:28} passed {counts['passed']:4}  failed {counts['failed']:4}  "
              f"flag-gated {counts['flag-gated']:4}  unsupported {counts['unsupported']:4}  {share}")
    ran = total["passed"] + total["failed"]
    print(f"{'total':28} passed {total['passed']:4}  failed {total['failed']:4}  "
          f"flag-gated {total['flag-gated']:4}  unsupported {total['unsupported']:4}  "
          f"{100 * total['passed'] / max(ran, 1):5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
