"""Shards, the selection id, merging shards' results, and resuming a session that was killed halfway."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Before pytester's in-process runs: the Kyverno engine's CEL extension panics when a nested run imports it again.
import pytest_itbench.policy.kyverno  # noqa: F401
from pytest_itbench.report import cli, leaderboard, merged
from pytest_itbench.report.jsonl import load
from pytest_itbench.scenario import catalog
from pytest_itbench.scenario.loader import load as load_scenario
from pytest_itbench.study.selection import parse_shard, selection_id, shard_of_each

KYVERNO = Path(__file__).resolve().parents[2] / "scenarios" / "ciso" / "kyverno"
FOUR = sorted(KYVERNO.iterdir())[:4]


def catalog_ids() -> list[str]:
    root = catalog.bundled()
    return [load_scenario(p).id for p in [*root.glob("sre/*.yaml"), *root.glob("finops/*.yaml"),
                                          *root.glob("ciso/*/*/scenario.yaml")]]


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_shards_are_disjoint_complete_balanced_and_stable(count):
    ids = catalog_ids()
    assert len(ids) == 153
    shards = shard_of_each(ids, count)
    assert set(shards) == set(ids) and set(shards.values()) <= set(range(1, count + 1))
    sizes = [sum(1 for s in shards.values() if s == k) for k in range(1, count + 1)]
    assert sum(sizes) == len(ids) and max(sizes) - min(sizes) <= 1
    assert shard_of_each(reversed(ids), count) == shards  # however the items came
    assert shard_of_each(ids + ids, count) == shards  # a scenario's runs and variants go together


def test_a_shard_is_k_of_n():
    assert str(parse_shard("2/8")) == "2/8"
    for bad in ("0/3", "4/3", "3", "a/b", "1/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def test_the_selection_id_changes_with_the_files_the_trials_and_the_options():
    trials = [("a", 0, 1, "h1"), ("b", 0, 1, "h2")]
    base = selection_id(trials, {"itbench_seed": 0})
    assert selection_id(list(reversed(trials)), {"itbench_seed": 0}) == base
    assert selection_id([("a", 0, 1, "h1"), ("b", 0, 1, "h3")], {"itbench_seed": 0}) != base  # a file changed
    assert selection_id(trials[:1], {"itbench_seed": 0}) != base
    assert selection_id(trials, {"itbench_seed": 1}) != base


@pytest.fixture
def project(pytester):
    for directory in FOUR:
        shutil.copytree(directory, pytester.path / directory.name)
    return pytester


def session(project, results: str, *args: str):
    outcome = project.runpytest("-p", "no:cacheprovider", "--itbench-agent=oracle", f"--itbench-results={results}",
                                *args, *(d.name for d in FOUR))
    return outcome, load(project.path / results)


@pytest.mark.end_to_end
def test_merging_two_shards_gives_the_leaderboard_of_one_session_and_other_selections_are_refused(project):
    _, whole = session(project, "whole.jsonl")
    first_run, first = session(project, "first.jsonl", "--itbench-shard=1/2")
    _, second = session(project, "second.jsonl", "--itbench-shard=2/2")
    assert len(first) + len(second) == len(whole) == 4 and first and second
    assert "deselected" in first_run.stdout.str()
    assert {r.shard for r in first} == {"1/2"} and {r.shard for r in second} == {"2/2"}
    assert {r.selection for r in whole + first + second} == {whole[0].selection}
    assert not {r.scenario_id for r in first} & {r.scenario_id for r in second}
    together, notes = merged.merge([project.path / "first.jsonl", project.path / "second.jsonl"])
    assert notes == [] and leaderboard.render(together) == leaderboard.render(sorted(whole, key=lambda r: r.scenario_id))
    assert cli.main([
        "merge", str(project.path / "first.jsonl"), str(project.path / "second.jsonl"),
        "--results", str(project.path / "merged.jsonl"), "--junitxml", str(project.path / "merged.xml")]) == 0
    assert len(load(project.path / "merged.jsonl")) == 4
    assert (project.path / "merged.xml").read_text().count("<testcase") == 4

    session(project, "seeded.jsonl", "--itbench-shard=2/2", "--itbench-seed=1")
    with pytest.raises(merged.MergeError, match="different selections"):
        merged.merge([project.path / "first.jsonl", project.path / "seeded.jsonl"])
    assert cli.main(["merge", str(project.path / "first.jsonl"), str(project.path / "seeded.jsonl")]) == 2


@pytest.mark.end_to_end
def test_a_session_killed_halfway_and_resumed_records_every_trial_exactly_once(project):
    results = project.path / "results.jsonl"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--itbench-agent=oracle",
               f"--itbench-results={results}", *(d.name for d in FOUR)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    killed = subprocess.Popen(command, cwd=project.path, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and killed.poll() is None:
        if results.exists() and len(results.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    before = [json.loads(line) for line in results.read_text().splitlines()]
    assert 2 <= len(before) < 4, "the session ended before it could be killed halfway"

    resumed = project.runpytest("-p", "no:cacheprovider", "--itbench-agent=oracle", f"--itbench-results={results}",
                                f"--itbench-resume={results}", "--junitxml=resumed.xml", *(d.name for d in FOUR))
    resumed.assert_outcomes(passed=4)
    after = load(results)
    scored = [(r.scenario_id, r.variant, r.run) for r in after if r.outcome != "error"]
    assert len(scored) == len(set(scored)) == 4  # every trial once: the replayed ones were not written again
    assert [r.scenario_id for r in after[:len(before)]] == [b["scenario_id"] for b in before]
    # The trial the kill caught in flight (if it caught one between two trials, none) is recorded too, by the
    # resumed session from its in-flight journal, as an error; then it ran again.
    lost = after[len(before):-(4 - len(before))]
    assert len(lost) <= 1 and all(r.outcome == "error" and r.error.startswith("the process running this trial died")
                                  for r in lost)
    assert len(after) == 4 + len(lost)
    assert (project.path / "resumed.xml").read_text().count("<testcase") == 4
    assert "leaderboard" in resumed.stdout.str() and "4 trials of 4 scenarios" in resumed.stdout.str()


def test_resuming_from_a_file_that_is_not_a_results_file_names_it_and_its_line(project):
    (project.path / "broken.jsonl").write_text('{"scenario_id": "x"}\nnot json\n')
    result = project.runpytest("-p", "no:cacheprovider", "--itbench-agent=oracle", "--itbench-resume=broken.jsonl",
                               FOUR[0].name)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--itbench-resume=broken.jsonl" in result.stderr.str() and "broken.jsonl:" in result.stderr.str()


def test_a_resume_that_replays_nothing_says_why(project):
    def one(results: str, *args: str) -> str:
        outcome = project.runpytest("-p", "no:cacheprovider", "--itbench-agent=oracle",
                                    f"--itbench-results={results}", *args, FOUR[0].name)
        outcome.assert_outcomes(passed=1)
        return outcome.stdout.str()

    assert "itbench resume: nothing to replay, missing.jsonl does not exist yet; every trial ran" in one(
        "first.jsonl", "--itbench-resume=missing.jsonl")
    assert ("itbench resume: nothing to replay, first.jsonl holds 1 record(s), none of this selection"
            in one("again.jsonl", "--itbench-resume=first.jsonl", "--itbench-seed=3"))
    assert "itbench resume: 1 trial(s) replayed from first.jsonl, 0 run" in one(
        "third.jsonl", "--itbench-resume=first.jsonl")
