"""Benchmark of trials in flight: how many trials can wait on their agents at once on this machine.

    python -m benchmarks.in_flight                        # 4, 8, 16 and 32 trials at once, agents waiting 60 s
    python -m benchmarks.in_flight --levels 32 48 --wait 90

An LLM agent spends most of its turn waiting on its model. The stand-in agent here does only that: it reads
the twin's clock (Prometheus ``time()``) and the firing alerts, sleeps ``--wait`` wall seconds, and reads them
again. Each level N is one session of N runs of one SRE scenario on the astronomy shop (the heaviest
application) under ``-n N``: a worker process per trial, each with its own twin, which follows wall time
during the agent's turn. Printed per level:

- in flight: the most agents waiting at the same moment (from their start and end times);
- setup: the median and the slowest wall seconds before the agent started (provision to alerts), which
  grow as the trials share two cores;
- twin clock: cluster seconds over wall seconds during the wait, the lowest of the trials (1.00: the twin
  kept up with wall time; below: it fell behind, and so would its alerts and metrics);
- alerts: the trials whose expected alert was still firing after the wait (the fault is never repaired);
- memory: the machine's used memory (MemTotal - MemAvailable) at its peak while every agent waited, over
  the idle machine's, and that over N: the memory of one trial in flight;
- CPU: the machine's busy cores while every agent waited, and that over N: the CPU of a twin following
  wall time with its application running.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "sre" / "astronomy-product-catalog-scaled-to-zero.yaml"
EXPECTED = "HighRequestErrorRate"

AGENT = '''
import json, os, sys, time, urllib.parse, urllib.request

prometheus = os.environ["ITBENCH_PROMETHEUS_URL"]


def query(expr):
    url = prometheus + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=60) as answer:
        return json.load(answer)["data"]["result"]


def clock():
    return float(query("time()")[1])


wall, cluster = time.time(), clock()
time.sleep(float(sys.argv[1]))
end_wall, end_cluster = time.time(), clock()
firing = sorted({m["metric"]["alertname"] for m in query('ALERTS{alertstate="firing"}')})
line = {"start": wall, "end": end_wall, "cluster": end_cluster - cluster, "wall": end_wall - wall, "firing": firing}
with open(sys.argv[2], "a") as log:
    log.write(json.dumps(line) + "\\n")
with open(os.environ["ITBENCH_OUTPUT"], "w") as out:
    out.write("{}")
'''


def used_memory() -> int:
    """Bytes in use on the machine: MemTotal - MemAvailable."""
    fields = {}
    with open("/proc/meminfo") as fh:
        for row in fh:
            name, value = row.split(":")
            fields[name] = int(value.split()[0]) * 1024
    return fields["MemTotal"] - fields["MemAvailable"]


def busy_jiffies() -> tuple[int, int]:
    with open("/proc/stat") as fh:
        cpu = [int(x) for x in fh.readline().split()[1:]]
    idle = cpu[3] + cpu[4]
    return sum(cpu) - idle, sum(cpu)


class Sampler(threading.Thread):
    """Used memory and busy CPU, sampled every half second with their wall times."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples: list[tuple[float, int, tuple[int, int]]] = []
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            self.samples.append((time.time(), used_memory(), busy_jiffies()))
            self.stopping.wait(0.5)

    def between(self, start: float, end: float) -> tuple[int | None, float | None]:
        """Peak used memory and mean busy cores over [start, end]."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2:
            return None, None
        (busy0, total0), (busy1, total1) = inside[0][2], inside[-1][2]
        cores = os.cpu_count() or 1
        return max(s[1] for s in inside), cores * (busy1 - busy0) / max(total1 - total0, 1)


def level(n: int, wait: float, idle_memory: int) -> dict:
    with tempfile.TemporaryDirectory() as work:
        log = Path(work, "agents.jsonl")
        Path(work, "agent.py").write_text(AGENT)
        Path(work, "conftest.py").write_text("")
        env = dict(os.environ, KUBECACHEDIR=str(Path(work, "kubecache")))
        sampler = Sampler()
        sampler.start()
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", str(SCENARIO), "-q", "-p", "no:cacheprovider",
                               f"--itbench-agent=exec:python3 agent.py {wait:g} {log}", f"--itbench-runs={n}",
                               "--itbench-timeout=30m", "-n", str(n), f"--itbench-results={Path(work, 'r.jsonl')}"],
                              cwd=work, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - began
        sampler.stopping.set()
        sampler.join()
        agents = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        records = [json.loads(line) for line in Path(work, "r.jsonl").read_text().splitlines()] \
            if Path(work, "r.jsonl").exists() else []
    if len(agents) < n:
        print(done.stdout[-3000:] + done.stderr[-3000:])
    events = sorted([(a["start"], 1) for a in agents] + [(a["end"], -1) for a in agents])
    most = current = 0
    for _, step in events:
        current += step
        most = max(most, current)
    setup = [sum(v for k, v in r["phases"].items() if k in ("provision", "deploy", "noise", "inject", "alerts",
                                                             "access")) for r in records]
    all_waiting = (max(a["start"] for a in agents), min(a["end"] for a in agents)) if agents else (0, 0)
    peak, cores = sampler.between(*all_waiting) if all_waiting[0] < all_waiting[1] else (None, None)
    return {"n": n, "seconds": seconds, "exit": done.returncode, "agents": len(agents), "in_flight": most,
            "setup_median": statistics.median(setup) if setup else None, "setup_max": max(setup, default=None),
            "clock": min((a["cluster"] / a["wall"] for a in agents), default=None),
            "firing": sum(EXPECTED in a["firing"] for a in agents),
            "memory": None if peak is None else peak - idle_memory, "cores": cores}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--wait", type=float, default=60.0, help="wall seconds each agent waits")
    args = parser.parse_args()
    idle = used_memory()
    print(f"{os.cpu_count()} cores, {idle / 2**30:.1f} GiB in use when idle; agents wait {args.wait:g} s", flush=True)
    for n in args.levels:
        r = level(n, args.wait, idle)
        fmt = lambda v, p: "-" if v is None else p.format(v)  # noqa: E731
        print(f"N={r['n']}: {r['seconds']:.0f} s (pytest exit {r['exit']}); agents ran {r['agents']}, at once "
              f"{r['in_flight']}; setup median {fmt(r['setup_median'], '{:.0f}')} s, slowest "
              f"{fmt(r['setup_max'], '{:.0f}')} s; twin clock {fmt(r['clock'], '{:.2f}')}x wall (lowest); "
              f"expected alert firing after the wait in {r['firing']}/{r['agents']}; memory "
              f"{fmt(r['memory'] and r['memory'] / 2**30, '{:.1f}')} GiB, "
              f"{fmt(r['memory'] and r['memory'] / n / 2**20, '{:.0f}')} MiB a trial; CPU "
              f"{fmt(r['cores'], '{:.2f}')} cores while all waited, "
              f"{fmt(r['cores'] and r['cores'] / n, '{:.3f}')} a trial", flush=True)


if __name__ == "__main__":
    main()
