"""Benchmark of held-out variants: the catalog under ``--itbench-variant=N`` for N in 0..3, or every eligible target.

    python -m benchmarks.variants                          # the SRE catalog, oracle, variants 0 to 3
    python -m benchmarks.variants --agent noop             # none should pass
    python -m benchmarks.variants --every-target           # each movable scenario at variants 1..k: every target
    python -m benchmarks.variants scenarios/sre/astronomy-ad-nonexistent-image.yaml --variants 1 2

Each run is ``pytest PATHS --itbench-agent=AGENT --itbench-variant=N -n WORKERS`` in a fresh temporary
directory; it prints, per variant, the trials, their outcomes, how many ran a moved target, and the trials that
did not pass with their drawn target (read from the task the trial recorded). Not a timed test: the whole SRE
catalog at four variants is about 300 trials.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import pytest_session

ROOT = Path(__file__).resolve().parents[1]


def run(paths: list[str], agent: str, variant: int, workers: int) -> tuple[list[dict], float, int]:
    return pytest_session.run(paths, [f"--itbench-agent={agent}", f"--itbench-variant={variant}"], workers)


def drawn_target(record: dict) -> str:
    """The moved fault's target, from the 'changed objects' evidence the trial attached (best effort)."""
    for attachment in record.get("attachments", []):
        if attachment.get("name") == "changed objects" and isinstance(attachment.get("content"), list):
            names = [(o.get("metadata") or {}).get("name") or o.get("name") for o in attachment["content"]]
            return ",".join(n for n in names if n)
    return "?"


def report(label: str, records: list[dict], seconds: float, code: int) -> None:
    outcomes: dict[str, int] = {}
    for record in records:
        outcomes[record["outcome"]] = outcomes.get(record["outcome"], 0) + 1
    moved = sum(1 for r in records if r.get("variant"))
    print(f"{label}: {len(records)} trials in {seconds:.1f} s (pytest exit {code}); passed "
          f"{outcomes.get('passed', 0)}, failed {outcomes.get('failed', 0)}, errors {outcomes.get('error', 0)}; "
          f"{moved} ran a moved target", flush=True)
    for r in sorted(records, key=lambda r: r["scenario_id"]):
        if r["outcome"] != "passed":
            first = (r.get("error") or "; ".join(c["detail"] for c in r["checks"] if not c["passed"]))[:300]
            print(f"    {r['outcome']}: {r['scenario_id']}@v{r.get('variant', 0)} (target {drawn_target(r)}): {first}")


def movable(paths: list[str]) -> list[tuple[str, int]]:
    """(scenario file, number of eligible targets) for each scenario with a variants: section."""
    from pytest_itbench.plugin import _check_references, _documents
    from pytest_itbench.scenario import catalog, variants
    from pytest_itbench.scenario.loader import load
    files = [p for given in paths for p in (sorted(Path(given).rglob("*.yaml")) if Path(given).is_dir()
                                             else [Path(given)]) if catalog.is_scenario_file(p)]
    found = []
    for path in files:
        scenario = load(path, _check_references)
        if scenario.variants is not None:
            found.append((str(path), len(variants.eligible(scenario, _documents(scenario)))))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "scenarios" / "sre")])
    parser.add_argument("--agent", default="oracle")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--variants", type=int, nargs="*", default=[0, 1, 2, 3])
    parser.add_argument("--every-target", action="store_true",
                        help="run each movable scenario at variants 1..k, k its eligible targets: each target once")
    args = parser.parse_args()
    args.paths = [str(Path(p).resolve()) for p in args.paths]  # pytest runs in a temporary directory
    if args.every_target:
        found = movable(args.paths)
        for variant in range(1, max((count for _, count in found), default=0) + 1):
            paths = [path for path, count in found if count >= variant]  # variants 1..k: each target once
            report(f"variant {variant}, {len(paths)} movable scenarios", *run(paths, args.agent, variant,
                                                                               args.workers))
        return
    for variant in args.variants:
        report(f"variant {variant}, {args.agent}, -n {args.workers}", *run(args.paths, args.agent, variant,
                                                                          args.workers))


if __name__ == "__main__":
    main()
