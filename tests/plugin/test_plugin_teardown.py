"""Teardown leaves nothing behind: no thread, no listening port, no process, also after Ctrl-C.

The nested session records, at its very end (``pytest_unconfigure``, after every teardown), the threads
its process still runs, the TCP ports it still listens on and its child processes; the agents record
their process ids and the URLs they were given, which are checked from outside once pytest exited.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from .conftest import EVALUATOR, PYTHON, clean_env
from ..agents.helpers import alive, requires_procfs

pytestmark = requires_procfs

LEFTOVERS = '''
import json
import os
import threading
import time


def _listening_ports():
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = []
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with open(table) as fh:
            for row in fh.readlines()[1:]:
                fields = row.split()
                if fields[3] == "0A" and fields[9] in inodes:  # LISTEN, and ours
                    ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _children():
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2:].split()
            if int(fields[1]) == os.getpid() and fields[0] != b"Z":
                found.append(int(entry))
    return found


def pytest_unconfigure(config):
    deadline = time.monotonic() + 5  # threads being joined get a moment
    while time.monotonic() < deadline and threading.active_count() > 1:
        time.sleep(0.05)
    threads = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    with open("leftovers.json", "w") as fh:
        json.dump({"threads": threads, "ports": _listening_ports(), "children": _children()}, fh)
'''

# Records its pids and URLs, starts a grandchild, and answers (or sleeps past any deadline).
AGENT = """\
#!/bin/sh
sleep 300 &
echo "$$ $!" >> "{pids}"
echo "$KUBECONFIG $ITBENCH_PROMETHEUS_URL $ITBENCH_ALERTMANAGER_URL" \\
  "$ITBENCH_JAEGER_URL $ITBENCH_TOPOLOGY_URL" >> "{urls}"
case "$(cat "$ITBENCH_TASK")" in
  *'"scenario_id": "slow"'*)
    echo '{{"action": "kubectl get pods -A", "tokens_in": 1200, "tokens_out": 80}}' >> "$ITBENCH_TRAJECTORY"
    echo '{{"action": "kubectl describe pod x", "tokens_in": 1500, "tokens_out": 60}}' >> "$ITBENCH_TRAJECTORY"
    sleep 300 ;;
esac
printf '{{"notes": "42"}}' > "$ITBENCH_OUTPUT"
"""


def project(bench) -> tuple[Path, Path]:
    bench.write("conftest.py", EVALUATOR + LEFTOVERS)
    pids, urls = bench.path / "pids.txt", bench.path / "urls.txt"
    bench.program("agent.sh", AGENT.format(pids=pids, urls=urls))
    return pids, urls


def ports_of(urls: Path) -> set[int]:
    ports = set()
    for line in urls.read_text().splitlines():
        kubeconfig, *signals = line.split()
        server = next(row.split()[-1] for row in Path(kubeconfig).read_text().splitlines() if "server:" in row)
        ports |= {urlparse(url).port for url in [server, *signals]}
    return ports


def listening(port: int) -> bool:
    with open("/proc/net/tcp") as v4, open("/proc/net/tcp6") as v6:
        rows = v4.readlines()[1:] + v6.readlines()[1:]
    return any(int(r.split()[1].rsplit(":", 1)[1], 16) == port and r.split()[3] == "0A" for r in rows)


def assert_nothing_left(bench, pids: Path, urls: Path) -> None:
    left = json.loads((bench.path / "leftovers.json").read_text())
    assert left == {"threads": [], "ports": [], "children": []}
    agent_pids = [int(pid) for line in pids.read_text().splitlines() for pid in line.split()]
    assert agent_pids and not [pid for pid in agent_pids if alive(pid)]
    ports = ports_of(urls)
    assert len(ports) >= 5  # the API server and four signals
    assert not [port for port in ports if listening(port)]


def test_nothing_is_left_after_passed_failed_and_error_trials(bench):
    pids, urls = project(bench)
    bench.scenario("solved")
    bench.scenario("missed", answer="7")
    bench.scenario("broken", expected_alerts=("BudgetExceeded",))
    done = bench.subprocess("--itbench-agent=exec:./agent.sh", ".")
    assert "= 1 failed, 1 passed, 1 error in" in done.stdout, done.stdout + done.stderr
    assert_nothing_left(bench, pids, urls)


def _ctrl_c_as_in_a_terminal():
    # A session started in the background by a shell without job control (`(cmd &)`, nohup, some CI
    # runners) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler, so
    # Ctrl-C could never reach it. The user this test stands for presses Ctrl-C in a terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_nothing_is_left_after_ctrl_c_during_the_agent(bench):
    pids, urls = project(bench)
    bench.scenario("slow")
    bench.scenario("later")
    proc = subprocess.Popen([PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-v",
                             "--itbench-agent=exec:./agent.sh", "--itbench-results=results.jsonl",
                             "slow.yaml", "later.yaml"], cwd=bench.path, env=clean_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=_ctrl_c_as_in_a_terminal)
    try:
        deadline = time.monotonic() + 120
        while not (pids.exists() and pids.read_text().strip()):  # the agent is running
            assert proc.poll() is None and time.monotonic() < deadline, "the agent never started"
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "KeyboardInterrupt" in output
    assert "slow: teardown" in output  # the trial was torn down
    assert "later: provision" not in output  # and no other trial started
    assert_nothing_left(bench, pids, urls)
    # The cut trial is recorded as an error that keeps the steps and tokens the agent had spent.
    [record] = [json.loads(line) for line in (bench.path / "results.jsonl").read_text().splitlines()]
    assert record["scenario_id"] == "slow" and record["outcome"] == "error"
    assert "the trial was cut during the agent's turn (Ctrl-C" in record["error"]
    assert "kept: 2 step(s), 2840 token(s)" in record["error"]
    assert record["figures"]["steps"] == 2 and record["figures"]["tokens"] == 2840
    trajectory = next(a["content"] for a in record["attachments"] if a["name"] == "trajectory")
    assert [step["action"] for step in trajectory] == ["kubectl get pods -A", "kubectl describe pod x"]
