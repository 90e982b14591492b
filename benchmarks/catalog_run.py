"""Benchmark of one domain of the bundled catalog through the plugin: wall time, outcomes, FinOps proximity.

    python -m benchmarks.catalog_run finops [--agent oracle] [--workers 2]

Runs ``pytest scenarios/<domain> --itbench-agent=<agent> -n <workers>`` in a fresh temporary directory (so
no cache or conftest of this checkout takes part) and prints the wall time, the outcomes and, where the
trials measured them, the mean proximity figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domain", choices=("sre", "ciso", "finops"))
    parser.add_argument("--agent", default="oracle")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        results = Path(work, "results.jsonl")
        env = dict(os.environ, KUBECACHEDIR=str(Path(work, "kubecache")))
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "scenarios" / args.domain), "-q",
                               "-p", "no:cacheprovider", f"--itbench-agent={args.agent}", "-n", str(args.workers),
                               f"--itbench-results={results}"], cwd=work, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - began
        records = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    outcomes: dict[str, int] = {}
    for record in records:
        outcomes[record["outcome"]] = outcomes.get(record["outcome"], 0) + 1
    print(f"{args.domain} with {args.agent}, -n {args.workers}: {len(records)} trials in {seconds:.1f} s "
          f"(pytest exit {done.returncode}); outcomes {outcomes}")
    names = sorted({k for r in records for k in r["figures"] if k.startswith("proximity_")})
    for name in names:
        values = [r["figures"][name] for r in records if isinstance(r["figures"].get(name), (int, float))]
        print(f"  {name}: mean {statistics.mean(values):.3f}, min {min(values):.3f} over {len(values)} trials")


if __name__ == "__main__":
    main()
