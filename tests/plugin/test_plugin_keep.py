"""--itbench-keep: a failed trial's environment stays up until the session ends, its kubeconfig and URLs
printed; a passed trial's goes at once; nothing is left after the session."""

from __future__ import annotations

import re
import subprocess

from .conftest import ANSWERING_SCRIPT


def test_a_failed_trial_is_kept_until_the_session_ends_and_a_passed_one_is_not(bench):
    bench.scenario("solved")
    bench.scenario("missed", answer="43")
    bench.program("agent.sh", ANSWERING_SCRIPT)
    # A conftest that, when the session is about to end, checks the kept twin still answers kubectl.
    bench.write("conftest.py", (bench.path / "conftest.py").read_text() + '''

import subprocess

KEPT_ANSWERED = []


def pytest_terminal_summary(terminalreporter, config):
    import pytest_itbench.plugin as plugin
    for trial in config.stash.get(plugin._KEPT, []):
        done = subprocess.run(["kubectl", "--kubeconfig", trial.cluster.admin_kubeconfig, "get", "nodes", "-o", "name"],
                              capture_output=True, text=True)
        terminalreporter.write_line(f"kept-twin-check: {done.returncode} {len(done.stdout.split())} nodes")
''')
    result = bench.run("--itbench-agent=exec:./agent.sh", "--itbench-keep", "-s", ".")
    result.assert_outcomes(passed=1, failed=1)
    kept = [line for line in result.outlines if line.startswith("kept ") and not line.startswith("kept-")]
    assert len(kept) == 1 and kept[0].startswith("kept missed run 1 (failed): KUBECONFIG=")
    assert re.search(r"prometheus=http://127\.0\.0\.1:\d+", kept[0])
    result.stdout.fnmatch_lines(["kept-twin-check: 0 3 nodes"])
    # after the session the kept twin is gone: its API server no longer answers
    kubeconfig = kept[0].split("KUBECONFIG=")[1].split()[0]
    after = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "nodes", "--request-timeout=3s"],
                           capture_output=True, text=True)
    assert after.returncode != 0
