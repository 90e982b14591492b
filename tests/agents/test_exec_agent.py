"""exec: agents in bash and Python: the environment they get, every outcome, and nothing left running."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from pytest_itbench.agents import (AgentCrashed, AgentExited, AgentOutputInvalid, AgentOutputMissing, AgentSpecError,
                                   AgentTimedOut, ExecAgent, Trajectory)
from pytest_itbench.agents import process_group
from pytest_itbench.agents.registry import resolve

from .helpers import alive, requires_procfs

DIAGNOSIS = {"entities": [{"name": "shop/Deployment/cart", "contributing_factor": True}], "propagations": [],
             "alerts_explained": []}

GOOD_BASH = f"""#!/usr/bin/env bash
set -eu
test -s "$ITBENCH_TASK"
echo "looking at the cluster"
echo '{{"action": "kubectl get deployments", "observation": "cart 0/0", "started": 1.5}}' >> "$ITBENCH_TRAJECTORY"
cat > "$ITBENCH_OUTPUT" <<'JSON'
{json.dumps(DIAGNOSIS)}
JSON
"""

# Records its environment and working directory, then submits.
ENV_PY = """import json, os
with open("seen.json", "w") as fh:
    json.dump({"env": dict(os.environ), "cwd": os.getcwd()}, fh)
with open(os.environ["ITBENCH_OUTPUT"], "w") as fh:
    json.dump({"diagnosis": {"entities": []}, "notes": "looked"}, fh)
"""


def test_a_bash_agent_that_finishes_hands_in_its_diagnosis_and_trajectory(make_task, script):
    agent = ExecAgent(str(script("good.sh", GOOD_BASH)))
    trajectory = Trajectory()
    submission = agent.run(make_task(), trajectory)
    assert submission.diagnosis == DIAGNOSIS
    assert [(s.action, s.observation, s.started, s.ended) for s in trajectory.steps] == [
        ("kubectl get deployments", "cart 0/0", 1.5, 1.5)]
    assert trajectory.problems == []


def test_the_agent_gets_its_task_its_files_and_nothing_else_of_the_parent_environment(make_task, script, tmp_path,
                                                                                     monkeypatch):
    monkeypatch.setenv("ITBENCH_ADMIN_KUBECONFIG", "/secret/admin")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
    monkeypatch.setenv("MY_API_KEY", "k")
    agent = ExecAgent([sys.executable, str(script("env.py", ENV_PY))], pass_env=["MY_API_KEY"])
    task = make_task(urls={"prometheus": "http://p:9090", "jaeger": "http://j:16686"})
    submission = agent.run(task, Trajectory())
    assert submission.notes == "looked"
    workdir = Path(task.workdir).resolve()
    seen = json.loads((workdir / "seen.json").read_text())
    env = seen["env"]
    assert seen["cwd"] == str(workdir)
    assert set(env) - {"LC_CTYPE"} == {  # Python may set LC_CTYPE itself (PEP 538)
        *(k for k in ("PATH", "HOME", "LANG") if k in os.environ), "MY_API_KEY", "KUBECONFIG", "KUBECACHEDIR",
        "ITBENCH_TASK", "ITBENCH_WORKDIR", "ITBENCH_OUTPUT", "ITBENCH_TRAJECTORY", "ITBENCH_DEADLINE",
        "ITBENCH_PROMETHEUS_URL", "ITBENCH_JAEGER_URL"}
    assert env["ITBENCH_PROMETHEUS_URL"] == "http://p:9090" and env["ITBENCH_JAEGER_URL"] == "http://j:16686"
    assert env["KUBECONFIG"] == task.kubeconfig and env["ITBENCH_WORKDIR"] == str(workdir)
    assert Path(env["KUBECACHEDIR"]).parent == workdir and not any(Path(env["KUBECACHEDIR"]).iterdir())
    assert float(env["ITBENCH_DEADLINE"]) == pytest.approx(task.deadline, abs=0.001)
    assert json.loads(Path(env["ITBENCH_TASK"]).read_text()) == json.loads(json.dumps(task.to_dict()))


def test_exit_status_3_fails_with_the_status_and_the_stderr_tail(make_task, script):
    agent = ExecAgent(str(script("three.sh", "#!/bin/sh\necho 'cannot reach prometheus' >&2\n"
                                             "echo '{}' > \"$ITBENCH_OUTPUT\"\nexit 3\n")))
    with pytest.raises(AgentExited) as failure:
        agent.run(make_task(), Trajectory())
    assert failure.value.exit_code == 3 and failure.value.reason == "exited"
    message = str(failure.value)
    assert "exited with status 3" in message and "cannot reach prometheus" in message
    assert failure.value.evidence["stderr (last lines)"] == "cannot reach prometheus"
    assert failure.value.evidence["output"].strip() == "{}"


def test_a_python_agent_killed_by_a_signal_says_which(make_task, script):
    die = script("die.py", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    agent = ExecAgent([sys.executable, str(die)])
    with pytest.raises(AgentExited, match="was killed by SIGKILL") as failure:
        agent.run(make_task(), Trajectory())
    assert failure.value.exit_code == -9


HANGS = """#!/usr/bin/env bash
{trap}
sleep 300 &
echo $! > "$ITBENCH_WORKDIR/child.pid"
echo $$ > "$ITBENCH_WORKDIR/leader.pid"
echo "still thinking" >&2
while true; do sleep 1; done
"""


@requires_procfs
@pytest.mark.parametrize("trap", ["", "trap '' TERM"], ids=["obeys-sigterm", "ignores-sigterm"])
def test_an_agent_past_its_deadline_is_killed_with_its_whole_process_group(make_task, script, trap):
    agent = ExecAgent(str(script("hang.sh", HANGS.format(trap=trap))), grace=0.5)
    task = make_task(time_limit=2.5)
    with pytest.raises(AgentTimedOut) as failure:
        agent.run(task, Trajectory())
    workdir = Path(task.workdir)
    leader, child = (int((workdir / name).read_text()) for name in ("leader.pid", "child.pid"))
    assert process_group.members(leader) == []
    assert not alive(leader) and not alive(child)
    assert failure.value.time_limit == 2.5 and "still running at its deadline" in str(failure.value)
    assert "still thinking" in str(failure.value)


@requires_procfs
def test_processes_left_behind_by_an_agent_that_exited_are_ended_and_reported(make_task, script):
    agent = ExecAgent(str(script("leaves.sh", "#!/bin/sh\nsleep 300 &\necho $! > child.pid\n"
                                              "echo '{}' > \"$ITBENCH_OUTPUT\"\n")), grace=0.5)
    task = make_task()
    trajectory = Trajectory()
    agent.run(task, trajectory)
    child = int((Path(task.workdir) / "child.pid").read_text())
    assert not alive(child)
    assert trajectory.problems == [f"the agent left 1 process(es) running after it exited (pids {child}); "
                                   f"they were ended"]


@pytest.mark.parametrize("content,expected", [
    ("{not json", "it is not JSON: Expecting property name"),
    ("", "it is empty"),
    ('{"entities": "shop/Deployment/cart"}', "not a submission: diagnosis.entities must be a list"),
    ('["shop/Deployment/cart"]', "not a submission: a submission is a JSON object, got list"),
])
def test_output_that_is_not_a_submission_fails_with_the_output_shown(make_task, script, content, expected):
    path = script("bad.sh", f"#!/bin/sh\nprintf '%s' '{content}' > \"$ITBENCH_OUTPUT\"\n")
    with pytest.raises(AgentOutputInvalid) as failure:
        ExecAgent(str(path)).run(make_task(), Trajectory())
    assert expected in str(failure.value)
    assert failure.value.evidence.get("output", "") == content


def test_exiting_0_without_output_fails_and_says_where_to_write(make_task, script):
    task = make_task()
    with pytest.raises(AgentOutputMissing) as failure:
        ExecAgent(str(script("silent.sh", "#!/bin/sh\necho 'done, I think'\n"))).run(task, Trajectory())
    message = str(failure.value)
    assert "without writing its submission" in message and str(Path(task.workdir).resolve() / "output.json") in message
    assert "done, I think" in message and "write {} to submit nothing" in message


def test_an_output_left_from_an_earlier_run_does_not_count(make_task, script):
    task = make_task()
    (Path(task.workdir) / "output.json").write_text("{}")
    with pytest.raises(AgentOutputMissing):
        ExecAgent(str(script("silent.sh", "#!/bin/sh\n"))).run(task, Trajectory())


TRAJECTORY_PY = """import json, os
lines = [
    {"thought": "check pods", "action": "kubectl get pods", "observation": {"pods": 3}, "tokens_in": 10,
     "tokens_out": 5, "started": 100.0, "ended": 101.0},
    "not an object",
    {"action": "curl", "tokens_in": -1},
    {"action": "scale", "tool": "kubectl", "confidence": "high"},
]
with open(os.environ["ITBENCH_TRAJECTORY"], "a") as fh:
    for line in lines:
        fh.write(json.dumps(line) + "\\n")
    fh.write("{truncated\\n\\n")
with open(os.environ["ITBENCH_OUTPUT"], "w") as fh:
    fh.write("{}")
"""


def test_trajectory_lines_are_read_back_and_bad_ones_reported_without_failing(make_task, script):
    trajectory = Trajectory()
    submission = ExecAgent([sys.executable, str(script("traj.py", TRAJECTORY_PY))]).run(make_task(), trajectory)
    assert submission.diagnosis is None
    assert [(s.action, s.observation, s.tokens_in + s.tokens_out, s.tool) for s in trajectory.steps] == [
        ("kubectl get pods", '{"pods": 3}', 15, ""), ("scale", "", 0, "kubectl")]
    assert trajectory.tokens == 15
    problems = "\n".join(trajectory.problems)
    assert "trajectory.jsonl:2: a step is a JSON object, got str" in problems
    assert "trajectory.jsonl:3: tokens_in must be a whole number" in problems
    assert "trajectory.jsonl:4: ignored unknown fields confidence" in problems
    assert "trajectory.jsonl:5: not JSON" in problems
    assert len(trajectory.problems) == 4


def test_relative_paths_are_taken_from_where_pytest_started(make_task, script, monkeypatch):
    path = script("good.sh", GOOD_BASH)
    monkeypatch.chdir(path.parent)
    agent = resolve("exec:./good.sh")
    assert agent.argv == [str(path)]
    assert agent.run(make_task(), Trajectory()).diagnosis == DIAGNOSIS
    interpreted = resolve("exec:bash good.sh --verbose")
    assert interpreted.argv[1:] == [str(path), "--verbose"]


def test_a_program_that_is_not_executable_is_a_usage_error_saying_how_to_fix_it(script, monkeypatch):
    path = script("plain.sh", GOOD_BASH)
    path.chmod(0o644)
    monkeypatch.chdir(path.parent)
    with pytest.raises(AgentSpecError, match=r"not executable: run chmod \+x ./plain.sh, or name its interpreter, "
                                             r"as in exec:bash ./plain.sh"):
        resolve("exec:./plain.sh")
    with pytest.raises(AgentSpecError, match="'no-such-agent' is not on PATH"):
        resolve("exec:no-such-agent --fast")
    with pytest.raises(AgentSpecError, match="exec: needs a command"):
        resolve("exec:  ")


def test_a_program_the_kernel_cannot_start_is_reported_as_crashed(make_task, script):
    agent = ExecAgent(str(script("noshebang", "echo hi\n")))
    with pytest.raises(AgentCrashed, match="could not be started: Exec format error") as failure:
        agent.run(make_task(), Trajectory())
    assert "#! line" in str(failure.value)


def test_an_agent_started_after_its_deadline_is_timed_out_at_once(make_task, script):
    task = make_task(time_limit=0.01)
    time.sleep(0.02)
    with pytest.raises(AgentTimedOut):
        ExecAgent(str(script("good.sh", GOOD_BASH.replace("set -eu", "sleep 5"))), grace=0.5).run(task, Trajectory())
