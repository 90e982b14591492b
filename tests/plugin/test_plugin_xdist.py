"""``-n 2``: trials run on the workers, their figures arrive at the controller, which alone writes the
leaderboard and the JSONL file, with every trial."""

from __future__ import annotations

import json

from .conftest import ANSWERING_SCRIPT


def test_figures_arrive_at_the_controller(bench):
    bench.scenario("solved")
    bench.scenario("missed", domain="ciso", answer="7")
    bench.program("agent.sh", ANSWERING_SCRIPT)
    done = bench.subprocess("-n", "2", "-v", "--itbench-agent=exec:./agent.sh", "--itbench-runs=2",
                            "--itbench-results=results.jsonl", "--junitxml=junit.xml", ".")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 workers [4 items]" in done.stdout
    assert "= 2 failed, 2 passed in" in done.stdout
    # the leaderboard counts the trials of both workers
    assert done.stdout.count("itbench leaderboard") == 1
    assert "agent exec:./agent.sh on twin: 4 trials of 2 scenarios, 2 runs each" in done.stdout
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()
            if line.split()[:1] in (["all"], ["finops"], ["ciso"])}
    assert rows["all"][1:7] == ["4", "2", "2", "2", "0", "50.0±50.0"]
    assert rows["finops"][1:7] == ["2", "1", "2", "0", "0", "100.0"]
    assert rows["ciso"][1:7] == ["2", "1", "0", "2", "0", "0.0"]
    # one record per trial, written once, by the controller, with what the workers measured
    records = [json.loads(line) for line in (bench.path / "results.jsonl").read_text().splitlines()]
    assert sorted((r["scenario_id"], r["run"], r["outcome"]) for r in records) == [
        ("missed", 1, "failed"), ("missed", 2, "failed"), ("solved", 1, "passed"), ("solved", 2, "passed")]
    assert len({r["session"] for r in records}) == 1
    assert all(r["phases"]["agent"] > 0 and r["phases"]["provision"] > 0 for r in records)
    # both workers ran trials (each its own twin)
    assert {"[gw0]", "[gw1]"} <= {line.split()[0] for line in done.stdout.splitlines()
                                  if line.startswith("[gw") and ("PASSED" in line or "FAILED" in line)}
    assert sorted({r["nodeid"] for r in records}) == sorted([
        "missed.yaml::ciso-missed[run1]", "missed.yaml::ciso-missed[run2]",
        "solved.yaml::finops-solved[run1]", "solved.yaml::finops-solved[run2]"])
    junit = (bench.path / "junit.xml").read_text()
    assert junit.count('name="itbench.outcome"') == 4
