"""Each kind of agent, end to end through the plugin: a miss of any kind is a failed test with a readable
verdict, never an error (the environment worked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_itbench.report.jsonl import load

from .conftest import ANSWERING_SCRIPT

PYTHON_AGENTS = '''
import time

from pytest_itbench.agents import Submission


class Answering:
    name = "answering"

    def run(self, task, trajectory):
        trajectory.add(thought="read the task", action="think", observation=task.text, tokens_in=7, tokens_out=3)
        return Submission(notes="42")


class Raising:
    name = "raising"

    def run(self, task, trajectory):
        raise RuntimeError("the model endpoint refused the request")


def garbage():
    class Garbage:
        name = "garbage"

        def run(self, task, trajectory):
            return ["not", "a", "submission"]
    return Garbage()


class Slow:
    """Works past its deadline, but stops when the harness sets task.cancelled."""
    name = "slow"

    def run(self, task, trajectory):
        task.cancelled.wait(60)
        return Submission(notes="42")
'''


def failure_text(result) -> str:
    """The failure section of the nested run (pytest's FAILURES block)."""
    text = result.stdout.str()
    return text[text.index("= FAILURES ="):]


def run_python_agent(bench, attribute, *args):
    bench.scenario("budget")
    bench.python_agent("my_agents", PYTHON_AGENTS)
    return bench.run(f"--itbench-agent=my_agents:{attribute}", "-rA", *args, ".")


def test_a_python_agent_passes(bench):
    result = run_python_agent(bench, "Answering", "--itbench-results=results.jsonl")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*agent my_agents:Answering on twin: 1 trial of 1 scenario*"])
    [record] = load(bench.path / "results.jsonl")
    assert record.outcome == "passed" and record.agent == "my_agents:Answering"
    assert (record.figures["steps"], record.figures["tokens"]) == (1.0, 10.0)  # its trajectory was recorded


def test_a_python_agent_that_raises_fails_with_its_exception(bench):
    result = run_python_agent(bench, "Raising")
    result.assert_outcomes(failed=1)
    text = failure_text(result)
    assert ("budget run 1 (seed " in text and "agent my_agents:Raising): failed agent" in text)
    assert "FAIL agent: my_agents:Raising raised RuntimeError: the model endpoint refused the request" in text
    assert "Traceback" not in text  # the verdict, not the harness's stack (the traceback is evidence)


def test_a_python_agent_returning_garbage_fails(bench):
    result = run_python_agent(bench, "garbage")
    result.assert_outcomes(failed=1)
    assert "FAIL agent: my_agents:garbage returned list, not a Submission" in failure_text(result)


@pytest.mark.parametrize("timeout", ["2s", "2"])  # a bare number from the command line is seconds
def test_a_python_agent_past_its_deadline_fails(bench, timeout):
    result = run_python_agent(bench, "Slow", f"--itbench-timeout={timeout}")
    result.assert_outcomes(failed=1)
    assert ("FAIL agent: my_agents:Slow did not return within its time limit (2 s) and returned only after "
            "task.cancelled was set") in failure_text(result)


ENV_DUMP = """\
#!/bin/sh
env | grep -E '^(KUBECONFIG|ITBENCH_)' | sort > "$ITBENCH_WORKDIR/../env.txt"
printf '{"thought": "looked", "action": "env", "tokens_in": 5, "tokens_out": 1}\\n' >> "$ITBENCH_TRAJECTORY"
printf '{"notes": "42"}' > "$ITBENCH_OUTPUT"
"""


def test_an_exec_agent_passes_and_gets_the_protocol_environment(bench):
    bench.scenario("budget")
    bench.program("agent.sh", ENV_DUMP)
    result = bench.run("--itbench-agent=exec:./agent.sh", "--basetemp=trials", ".")
    result.assert_outcomes(passed=1)
    [dump] = (bench.path / "trials").rglob("env.txt")
    env = dict(line.split("=", 1) for line in dump.read_text().splitlines())
    assert {"KUBECONFIG", "ITBENCH_TASK", "ITBENCH_WORKDIR", "ITBENCH_OUTPUT", "ITBENCH_TRAJECTORY",
            "ITBENCH_DEADLINE", "ITBENCH_PROMETHEUS_URL", "ITBENCH_ALERTMANAGER_URL", "ITBENCH_JAEGER_URL",
            "ITBENCH_TOPOLOGY_URL"} <= set(env)
    task = json.loads(Path(env["ITBENCH_TASK"]).read_text())
    assert task["scenario_id"] == "budget" and task["domain"] == "finops"
    assert task["text"] == "Write 42 into the notes of your submission."
    assert "ground_truth" not in json.dumps(task) and "answer" not in task  # the truth stays with the harness
    # the agent's kubeconfig is not the harness's admin one
    assert Path(env["KUBECONFIG"]).name == "agent.kubeconfig"


def test_without_a_signal_the_agent_gets_no_url_for_it(bench):
    bench.scenario("budget")
    bench.program("agent.sh", ENV_DUMP)
    result = bench.run("--itbench-agent=exec:./agent.sh", "--itbench-without=traces", "--basetemp=trials", ".")
    result.assert_outcomes(passed=1)
    [dump] = (bench.path / "trials").rglob("env.txt")
    names = {line.split("=", 1)[0] for line in dump.read_text().splitlines()}
    assert "ITBENCH_JAEGER_URL" not in names and "ITBENCH_PROMETHEUS_URL" in names


def test_an_exec_agent_that_crashes_fails_with_its_status_and_stderr(bench):
    bench.scenario("budget")
    bench.program("agent.sh", "#!/bin/sh\necho 'cannot reach the model: connection refused' >&2\nexit 3\n")
    result = bench.run("--itbench-agent=exec:./agent.sh", "--itbench-results=results.jsonl", ".")
    result.assert_outcomes(failed=1)
    text = failure_text(result)
    assert "FAIL agent: exec:./agent.sh exited with status 3 after" in text
    # the evidence goes with the result
    [record] = load(bench.path / "results.jsonl")
    evidence = {a.name: a.content for a in record.attachments}
    assert "cannot reach the model: connection refused" in evidence["agent stderr (last lines)"]


def test_an_exec_agent_past_its_deadline_is_ended_and_fails(bench):
    bench.scenario("budget")
    bench.program("agent.sh", "#!/bin/sh\necho $$ > \"$ITBENCH_WORKDIR/../agent.pid\"\nsleep 60\n")
    result = bench.run("--itbench-agent=exec:./agent.sh", "--itbench-timeout=2s", "--basetemp=trials",
                       "--durations=0", "-vv", ".")
    result.assert_outcomes(failed=1)
    assert ("FAIL agent: exec:./agent.sh was still running at its deadline (2 s); its process group was sent "
            "SIGTERM, then SIGKILL after") in failure_text(result)
    [pid_file] = (bench.path / "trials").rglob("agent.pid")
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    # the deadline was the option's, not the scenario's 60 s
    call = next(line for line in result.outlines if line.strip().endswith("finops-budget") and " call " in line)
    assert float(call.split("s", 1)[0]) < 30


def test_an_exec_agent_writing_invalid_json_fails(bench):
    bench.scenario("budget")
    bench.program("agent.sh", "#!/bin/sh\nprintf '{\"notes\": 42,' > \"$ITBENCH_OUTPUT\"\n")
    result = bench.run("--itbench-agent=exec:./agent.sh", ".")
    result.assert_outcomes(failed=1)
    text = failure_text(result)
    assert "FAIL agent: exec:./agent.sh wrote " in text and "output.json, but it is not JSON" in text


def test_an_exec_agent_that_writes_nothing_fails(bench):
    bench.scenario("budget")
    bench.program("agent.sh", "#!/bin/sh\nexit 0\n")
    result = bench.run("--itbench-agent=exec:./agent.sh", ".")
    result.assert_outcomes(failed=1)
    assert "without writing its submission" in failure_text(result)


def test_an_exec_agent_with_the_wrong_answer_fails_on_the_check(bench):
    bench.scenario("budget")
    bench.program("agent.sh", ANSWERING_SCRIPT.replace("42", "41"))
    result = bench.run("--itbench-agent=exec:./agent.sh", ".")
    result.assert_outcomes(failed=1)
    text = failure_text(result)
    assert "failed answer" in text and "FAIL answer: submitted '41', expected '42'" in text
