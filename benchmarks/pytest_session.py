"""One pytest session of the plugin in a fresh temporary directory, for the benchmarks that run the catalog."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(paths: list[str], options: list[str], workers: int) -> tuple[list[dict], float, int]:
    """``pytest PATHS OPTIONS -n WORKERS`` with its own discovery cache: the JSONL records, wall seconds, exit code.
    No cache or conftest of this checkout takes part; with no record, the session's output is printed."""
    with tempfile.TemporaryDirectory() as work:
        results = Path(work, "results.jsonl")
        env = dict(os.environ, KUBECACHEDIR=str(Path(work, "kubecache")))
        parallel = ["-n", str(workers)] if workers > 1 else []
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider", *options,
                               *parallel, f"--itbench-results={results}"], cwd=work, env=env, capture_output=True,
                              text=True)
        seconds = time.perf_counter() - began
        records = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    if not records:
        print(done.stdout[-3000:] + done.stderr[-3000:])
    return records, seconds, done.returncode
