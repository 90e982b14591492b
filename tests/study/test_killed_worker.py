"""A trial whose process is killed outright (SIGKILL, the OOM killer) is still recorded, with what it had.

The agent of the ``doomed`` scenario records two steps, waits for the in-flight journal to take them, and
SIGKILLs the process that runs it (its parent: the xdist worker, or the whole session without xdist); then
it sleeps on, as an agent orphaned by its harness would. Its trial must reach the results file as an error
with its steps and tokens, and the orphaned agent must be ended.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from pytest_itbench.agents import process_group
from ..agents.helpers import requires_procfs
from ..plugin.conftest import Project

pytestmark = requires_procfs

AGENT = """\
#!/bin/sh
case "$(cat "$ITBENCH_TASK")" in
  *'"scenario_id": "doomed"'*)
    if [ -e "{armed}" ]; then
      rm "{armed}"
      echo $$ > "{group}"
      echo '{{"action": "kubectl get pods -A", "tokens_in": 1200, "tokens_out": 80}}' >> "$ITBENCH_TRAJECTORY"
      echo '{{"action": "kubectl describe pod x", "tokens_in": 1500, "tokens_out": 60}}' >> "$ITBENCH_TRAJECTORY"
      sleep 3
      kill -KILL $PPID
      sleep 300
    fi ;;
esac
printf '{{"notes": "42"}}' > "$ITBENCH_OUTPUT"
"""


# The same, as an agent in pytest's process: its steps are in the trial's trajectory, not in a file.
PYTHON_AGENT = """\
import os
import signal
import time


class Dying:
    name = "dying"

    def run(self, task, trajectory):
        if task.scenario_id == "doomed":
            trajectory.add(action="kubectl get pods -A", tokens_in=1200, tokens_out=80)
            trajectory.add(action="kubectl describe pod x", tokens_in=1500, tokens_out=60)
            time.sleep(3)
            os.kill(os.getpid(), signal.SIGKILL)
        from pytest_itbench.agents.base import Submission
        return Submission(notes="42")
"""


@pytest.fixture
def project(tmp_path) -> Project:
    bench = Project(tmp_path)
    bench.program("agent.sh", AGENT.format(armed=tmp_path / "armed", group=tmp_path / "group"))
    (tmp_path / "armed").touch()
    bench.scenario("doomed")
    bench.scenario("later")
    bench.write("dying.py", PYTHON_AGENT)
    return bench


def records(bench: Project) -> list[dict]:
    path = bench.path / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def journals(bench: Project) -> list[Path]:
    folder = bench.path / "results.jsonl.in-flight"
    return sorted(folder.glob("*.json")) if folder.exists() else []


def agent_left(bench: Project) -> list[int]:
    return process_group.members(int((bench.path / "group").read_text()))


def assert_kept_what_it_had(record: dict) -> None:
    assert record["scenario_id"] == "doomed" and record["outcome"] == "error"
    assert record["error"].startswith("the process running this trial died during its agent phase (killed: SIGKILL, "
                                      "the OOM killer, or a crash) and the trial was not scored; kept: 2 step(s), "
                                      "2840 token(s)\nrerun this trial alone: pytest ")
    assert record["figures"]["steps"] == 2 and record["figures"]["tokens"] == 2840
    [trajectory] = [a["content"] for a in record["attachments"] if a["name"] == "trajectory"]
    assert [step["action"] for step in trajectory] == ["kubectl get pods -A", "kubectl describe pod x"]
    assert {"provision", "access"} <= set(record["phases"])


def test_a_worker_killed_during_the_agent_keeps_the_trial(project):
    done = project.subprocess("-n", "1", "--itbench-agent=exec:./agent.sh", "--itbench-results=results.jsonl",
                              "doomed.yaml", "later.yaml")
    output = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, output
    assert "worker 'gw0' crashed while running 'doomed.yaml::finops-doomed'" in output
    assert "the process running this trial died during its agent phase" in output  # on the crash report
    doomed, later = sorted(records(project), key=lambda r: r["scenario_id"])
    assert_kept_what_it_had(doomed)
    assert later["scenario_id"] == "later" and later["outcome"] == "passed"  # the restarted worker went on
    assert doomed["session"] == later["session"]
    assert re.search(r"^all +2 +2 +1 +0 +1 ", output, re.M), output  # the leaderboard counts it as an error
    assert "= 1 passed, 1 error in" in output  # and so does pytest
    assert journals(project) == [] and not (project.path / "results.jsonl.in-flight").exists()
    assert agent_left(project) == []  # the orphaned agent was ended


def test_a_worker_killed_by_its_python_agent_keeps_the_steps_recorded_in_memory(project):
    done = project.subprocess("-n", "1", "--itbench-agent=dying:Dying", "--itbench-results=results.jsonl",
                              "doomed.yaml", "later.yaml")
    output = done.stdout + done.stderr
    assert "= 1 passed, 1 error in" in output, output
    doomed, later = sorted(records(project), key=lambda r: r["scenario_id"])
    assert_kept_what_it_had(doomed)
    assert later["outcome"] == "passed"


def test_a_session_killed_outright_is_recorded_by_the_next_one(project):
    killed = project.subprocess("--itbench-agent=exec:./agent.sh", "--itbench-results=results.jsonl", "doomed.yaml")
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert records(project) == []
    assert len(journals(project)) == 1
    assert agent_left(project)  # orphaned, still sleeping
    resumed = project.subprocess("--itbench-agent=exec:./agent.sh", "--itbench-results=results.jsonl",
                                 "--itbench-resume=results.jsonl", "doomed.yaml")
    output = resumed.stdout + resumed.stderr
    assert resumed.returncode == pytest.ExitCode.OK, output
    assert ("itbench: 1 trial left in flight by a process that died recorded as errors in results.jsonl (resume "
            "runs them again): doomed.yaml::finops-doomed (pid ") in output
    recovered, rerun = records(project)
    assert_kept_what_it_had(recovered)
    assert rerun["scenario_id"] == "doomed" and rerun["outcome"] == "passed"
    assert recovered["session"] != rerun["session"]
    assert journals(project) == []
    deadline = time.monotonic() + 5
    while agent_left(project) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert agent_left(project) == []
