"""The in-flight journal (study/journal.py): written whole, read back, and recorded only for a process gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from pytest_itbench.agents import process_group
from pytest_itbench.report.jsonl import ResultsFile
from pytest_itbench.results import TrialResult
from pytest_itbench.study import journal
from ..agents.helpers import requires_procfs

pytestmark = requires_procfs


def result(steps: int = 0, error: str = "the process running this trial died") -> TrialResult:
    return TrialResult(scenario_id="s1", domain="finops", complexity="easy", agent="exec:./a.sh", run=1, seed=7,
                       backend="twin", error=error, figures={"steps": steps, "tokens": 100 * steps})


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def results(tmp_path) -> ResultsFile:
    return ResultsFile(tmp_path / "results.jsonl", session="s-now")


def written_by(results: ResultsFile, nodeid: str, process: journal.Process, steps: int = 2,
               agent_group: int | None = None) -> journal.Journal:
    kept = journal.Journal(results.path, "s-then", nodeid)
    kept.process = process
    kept.write(result(steps), agent_group)
    return kept


def lines(results: ResultsFile) -> list[dict]:
    return [json.loads(line) for line in results.path.read_text().splitlines()] if results.path.exists() else []


def test_a_journal_is_read_back_as_written(results):
    kept = journal.Journal(results.path, "s-then", "a.yaml::finops-s1")
    kept.write(result(3))
    assert kept.path.parent == results.path.with_name("results.jsonl.in-flight")
    assert [p.name for p in kept.path.parent.iterdir()] == [kept.path.name]  # nothing written aside is left
    entry = journal.read(kept.path)
    assert (entry.session, entry.nodeid, entry.process.pid) == ("s-then", "a.yaml::finops-s1", os.getpid())
    assert entry.result.figures == {"steps": 3, "tokens": 300} and entry.agent_group is None
    kept.write(result(4))  # replaced whole
    assert journal.read(kept.path).result.figures["steps"] == 4
    kept.discard()
    assert not kept.path.parent.exists()  # the emptied folder goes too


def test_the_same_test_of_two_sessions_has_two_journals(results):
    assert (journal.Journal(results.path, "s1", "a.yaml::t").path
            != journal.Journal(results.path, "s2", "a.yaml::t").path)


def test_a_process_is_gone_only_when_this_machine_can_tell():
    me = journal.Process.of(os.getpid())
    assert me.here() and not me.gone()
    assert journal.Process.of(dead_pid()).gone()
    assert replace(me, started=me.started - 1).gone()  # the pid now names a later process
    elsewhere = replace(me, host=me.host + "-other", pid=dead_pid())
    assert not elsewhere.here() and not elsewhere.gone()
    rebooted = replace(me, boot="another-boot", pid=dead_pid())
    assert not rebooted.gone()


def test_recover_records_the_trials_of_dead_processes_only(results):
    dead = journal.Process.of(os.getpid())
    dead = replace(dead, pid=dead_pid(), started=1)
    lost = written_by(results, "a.yaml::lost", dead, steps=2)
    running = written_by(results, "a.yaml::running", journal.Process.of(os.getpid()))
    away = written_by(results, "a.yaml::away", replace(dead, host="ci-runner-7"))
    broken = results.path.with_name("results.jsonl.in-flight") / "broken.json"
    broken.write_text("{not json")
    before = journal.read(lost.path).written_at

    found = journal.recover(results)

    assert [e.nodeid for e in found.recorded] == ["a.yaml::lost"]
    assert [e.nodeid for e in found.elsewhere] == ["a.yaml::away"]
    assert len(found.unreadable) == 1 and found.unreadable[0].startswith(f"{broken}: ")
    [record] = lines(results)
    assert record["nodeid"] == "a.yaml::lost" and record["session"] == "s-then"  # the session that ran it
    assert record["outcome"] == "error" and record["figures"]["steps"] == 2
    assert record["finished_at"] == before  # its last sign of life
    assert not lost.path.exists() and running.path.exists() and away.path.exists() and broken.exists()
    assert journal.recover(results).recorded == []  # once
    said = journal.describe(found, "results.jsonl")
    assert said[0] == ("itbench: 1 trial left in flight by a process that died recorded as errors in results.jsonl "
                       f"(resume runs them again): a.yaml::lost (pid {dead.pid}; kept 2 step(s), 200 token(s))")
    assert "1 in-flight journal in results.jsonl.in-flight of processes on another machine or boot (ci-runner-7)" \
        in said[1]
    assert said[2].startswith(f"itbench: an in-flight journal was left alone, unreadable: {broken}: ")


def test_recording_a_trial_ends_the_agent_its_process_left_running(results):
    agent = subprocess.Popen(["sh", "-c", "sleep 300 & sleep 300"], start_new_session=True)
    try:
        deadline = time.monotonic() + 5
        while len(process_group.members(agent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(process_group.members(agent.pid)) >= 2
        dead = replace(journal.Process.of(os.getpid()), pid=dead_pid(), started=1)
        written_by(results, "a.yaml::lost", dead, agent_group=agent.pid)
        journal.recover(results)
        assert process_group.members(agent.pid) == []
    finally:
        process_group.kill_leader(agent)


def test_an_agent_group_is_not_ended_for_a_journal_of_another_machine(results):
    agent = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        entry = journal.Entry(path=results.path.with_name("x.json"), session="s", nodeid="a.yaml::t",
                              process=journal.Process("ci-runner-7", "b", 1, 1), written_at=time.time(),
                              agent_group=replace(journal.Process.of(agent.pid), host="ci-runner-7"),
                              result=result())
        journal.settle(entry, results)
        assert process_group.members(agent.pid) == [agent.pid]
    finally:
        process_group.kill_leader(agent)


class FakeTrial:
    agent = None

    def __init__(self):
        self.steps = 0

    def so_far(self) -> TrialResult:
        return result(self.steps)


class Quiet:
    def __init__(self):
        self.said = []

    def started(self, phase, note=""):
        self.said.append(("started", phase))

    def finished(self, phase, seconds, ok=True):
        self.said.append(("finished", phase))


def test_the_keeper_writes_at_each_phase_and_as_the_agents_turn_changes(results, monkeypatch):
    monkeypatch.setattr(journal, "REFRESH", 0.02)
    inner, kept = Quiet(), journal.Journal(results.path, "s", "a.yaml::t")
    keeper = journal.Keeper(inner, kept)
    keeper.trial = trial = FakeTrial()
    keeper.started("provision")
    assert journal.read(kept.path).result.figures["steps"] == 0
    keeper.finished("provision", 0.1)
    keeper.started("agent")
    for steps in (1, 2, 3):
        trial.steps = steps
        deadline = time.monotonic() + 5
        while journal.read(kept.path).result.figures["steps"] != steps and time.monotonic() < deadline:
            time.sleep(0.01)
        assert journal.read(kept.path).result.figures["steps"] == steps
    keeper.finished("agent", 1.0)
    assert keeper._thread is None  # the refresher ended with the turn
    assert inner.said == [("started", "provision"), ("finished", "provision"), ("started", "agent"),
                          ("finished", "agent")]
    assert keeper.failure == ""


def test_a_journal_that_cannot_be_written_leaves_the_trial_going(tmp_path):
    blocker = tmp_path / "results.jsonl.in-flight"
    blocker.write_text("a file where the folder would be")
    keeper = journal.Keeper(Quiet(), journal.Journal(tmp_path / "results.jsonl", "s", "a.yaml::t"))
    keeper.trial = FakeTrial()
    keeper.started("provision")
    assert keeper.failure.startswith(("FileExistsError", "NotADirectoryError"))
