"""Benchmark of noise: the catalog at several --itbench-noise levels, its wall time and outcomes, side by side.

    python -m benchmarks.noise                                   # the whole catalog, oracle, off and heavy
    python -m benchmarks.noise --levels off light heavy          # every level
    python -m benchmarks.noise scenarios/sre --agent heuristic --levels off light --by-complexity

Each level is one ``pytest PATHS --itbench-agent=AGENT --itbench-noise=LEVEL -n WORKERS`` in a fresh temporary
directory. Printed per level: the trials, their outcomes, the wall time and its ratio to the first level's; with
``--by-complexity``, diagnosis and mitigation pass@1 per complexity (the checks of those names that passed, over
the trials that ran them). Not a timed test: the whole catalog at two levels is about 15 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import pytest_session

ROOT = Path(__file__).resolve().parents[1]
LEVELS = ("off", "light", "heavy")


def run(paths: list[str], agent: str, level: str, workers: int) -> tuple[list[dict], float, int]:
    return pytest_session.run(paths, [f"--itbench-agent={agent}", f"--itbench-noise={level}"], workers)


def _share(records: list[dict], check: str) -> str:
    ran = [c["passed"] for r in records for c in r["checks"] if c["name"] == check]
    return f"{100 * sum(ran) / len(ran):.1f}% of {len(ran)}" if ran else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "scenarios")])
    parser.add_argument("--agent", default="oracle")
    parser.add_argument("--levels", nargs="+", choices=LEVELS, default=["off", "heavy"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--by-complexity", action="store_true")
    args = parser.parse_args()
    first = None
    for level in args.levels:
        records, seconds, code = run([str(Path(p).resolve()) for p in args.paths], args.agent, level, args.workers)
        first = first or seconds
        outcomes: dict[str, int] = {}
        for record in records:
            outcomes[record["outcome"]] = outcomes.get(record["outcome"], 0) + 1
        noisy = sum(1 for r in records if r.get("noise", "off") != "off")
        print(f"noise {level}: {len(records)} trials ({noisy} with noise) in {seconds:.1f} s, {seconds / first:.2f}x "
              f"the first level (pytest exit {code}); outcomes {outcomes}")
        for record in records:
            if record["outcome"] != "passed" and args.agent == "oracle":
                failed = [c["detail"] for c in record["checks"] if not c["passed"]] or [record["error"][:300]]
                print(f"  {record['outcome']}: {record['scenario_id']}: {'; '.join(failed)[:400]}")
        if args.by_complexity:
            for band in ("easy", "medium", "hard"):
                of = [r for r in records if r["complexity"] == band]
                if of:
                    print(f"  {band} ({len(of)}): diagnosis {_share(of, 'diagnosis')}, "
                          f"mitigation {_share(of, 'mitigation')}")
            print(f"  all: diagnosis {_share(records, 'diagnosis')}, mitigation {_share(records, 'mitigation')}")


if __name__ == "__main__":
    main()
