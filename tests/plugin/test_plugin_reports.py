"""What a session reports: the leaderboard (checked against figures computed by hand), the JSONL file,
JUnit XML properties and Allure results, from one real session over a known mix of outcomes.

The mix (three runs each):
- alpha (finops, easy): passes runs 1 and 2, misses run 3; NTAM 0.5, 0.6, 0.7; MTTD 10 s x run and
  MTTR 30 s x run when it passes; its agent takes 3 steps of 20 tokens;
- beta (ciso, hard): misses every run; NTAM 0.2; 1 step of 20 tokens;
- gamma (ciso, medium): its expected alert never fires, so every run is an environment error.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from pytest_itbench.report.jsonl import SCHEMA

from .conftest import Project

PLAN = '''
import math

from pytest_itbench.results import CheckResult

PASSES = {"alpha": {1: True, 2: True, 3: False}, "beta": {1: False, 2: False, 3: False}}
NTAM = {"alpha": {1: 0.5, 2: 0.6, 3: 0.7}, "beta": {1: 0.2, 2: 0.2, 3: 0.2}}


def pytest_itbench_evaluate(trial):
    sid, run = trial.scenario.id, trial.run
    ok = PASSES[sid][run]
    figures = trial.result.figures
    figures["ntam"] = NTAM[sid][run]
    figures["mttd"] = 10.0 * run if ok else math.inf
    figures["mttr"] = 30.0 * run if ok else math.inf
    return [CheckResult("answer", ok, f"planned {'pass' if ok else 'miss'} of run {run}")]
'''

AGENT = '''
from pytest_itbench.agents import Submission

STEPS = {"alpha": 3, "beta": 1}


class Planned:
    name = "planned"

    def run(self, task, trajectory):
        for n in range(STEPS[task.scenario_id]):
            trajectory.add(thought=f"step {n}", action="kubectl get pods", tokens_in=15, tokens_out=5)
        return Submission(notes="done")
'''

# Every row of the leaderboard, computed by hand from the mix above. pass@k is the unbiased estimator
# averaged over the scenarios with valid trials (gamma's errors leave it out):
#   pass@1 = mean(2/3, 0) = 33.3%, its standard error sqrt(((1/3)^2 + (1/3)^2) / 1 / 2) = 33.3%;
#   pass@2: alpha 1 - C(1,2)/C(3,2) = 1, beta 0 -> 50%; pass@3 likewise 50%.
#   pass^2 (both of two runs pass): alpha C(2,2)/C(3,2) = 1/3, beta 0 -> 16.7%; pass^3: C(2,3) = 0 -> 0%.
#   NTAM: mean per scenario (alpha 0.6, beta 0.2), then over scenarios: 0.40.
#   MTTD, MTTR: medians over alpha's two passes: (10 + 20) / 2 = 15 s, (30 + 60) / 2 = 45 s.
#   steps, tokens: means over the six valid trials: (3*3 + 3*1) / 6 = 2.0, (3*60 + 3*20) / 6 = 40.
#   calls: every step is a kubectl call (inferred from the action): 2.0 like steps; repeats: alpha repeats
#   its action twice, beta never: (3*2 + 3*0) / 6 = 1.0; cmd-fails: none. No model named: no cost column.
HEADER = ["group", "trials", "scen", "pass", "fail", "err", "pass@1", "pass@2", "pass@3", "pass^2", "pass^3",
          "NTAM", "MTTD", "MTTR",
          "steps", "tokens", "calls", "repeats", "cmd-fails"]
ROWS = [
    ["all", "9", "3", "2", "4", "3", "33.3±33.3", "50.0", "50.0", "16.7", "0.0", "0.40", "15.0s", "45.0s", "2.0", "40", "2.0", "1.0",
     "0.0"],
    ["ciso", "6", "2", "0", "3", "3", "0.0", "0.0", "0.0", "0.0", "0.0", "0.20", "-", "-", "1.0", "20", "1.0", "0.0", "0.0"],
    ["finops", "3", "1", "2", "1", "0", "66.7", "100.0", "100.0", "33.3", "0.0", "0.60", "15.0s", "45.0s", "3.0", "60", "3.0", "2.0",
     "0.0"],
    ["easy", "3", "1", "2", "1", "0", "66.7", "100.0", "100.0", "33.3", "0.0", "0.60", "15.0s", "45.0s", "3.0", "60", "3.0", "2.0",
     "0.0"],
    ["medium", "3", "1", "0", "0", "3", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"],
    ["hard", "3", "1", "0", "3", "0", "0.0", "0.0", "0.0", "0.0", "0.0", "0.20", "-", "-", "1.0", "20", "1.0", "0.0", "0.0"],
]
OUTCOMES = {("alpha", 1): "passed", ("alpha", 2): "passed", ("alpha", 3): "failed",
            **{("beta", run): "failed" for run in (1, 2, 3)}, **{("gamma", run): "error" for run in (1, 2, 3)}}


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """The session, run once in a subprocess; returns (project, completed process)."""
    project = Project(tmp_path_factory.mktemp("reports"))
    project.write("conftest.py", PLAN)
    project.write("planned_agent.py", AGENT)
    project.scenario("alpha", tags=("budget",))
    project.scenario("beta", domain="ciso", complexity="hard")
    project.scenario("gamma", domain="ciso", complexity="medium", expected_alerts=("PolicyViolation",))
    done = project.subprocess("--itbench-agent=planned_agent:Planned", "--itbench-runs=3", "--itbench-seed=11",
                              "--itbench-results=out/results.jsonl", "--junitxml=out/junit.xml",
                              "--alluredir=out/allure", "-p", "planned_agent", ".")
    return project, done


def table(output: str) -> list[list[str]]:
    """The leaderboard's group table as cells (the rules left out)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["group"])
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        if not line.startswith("-"):
            rows.append(line.split())
    return rows


def test_the_session_has_the_planned_outcomes(session):
    _, done = session
    assert done.returncode == 1, done.stdout + done.stderr
    assert "= 4 failed, 2 passed, 3 errors in" in done.stdout.rstrip().splitlines()[-1]


def test_the_leaderboard_matches_a_hand_computation(session):
    _, done = session
    assert "agent planned_agent:Planned on twin: 9 trials of 3 scenarios, 3 runs each" in done.stdout
    assert table(done.stdout) == [HEADER] + ROWS


def test_jsonl_has_one_record_per_trial_with_every_figure(session):
    project, _ = session
    lines = (project.path / "out" / "results.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]  # strict JSON: an infinite MTTD is written as null
    assert len(records) == 9
    assert {(r["scenario_id"], r["run"]): r["outcome"] for r in records} == OUTCOMES
    assert {r["schema"] for r in records} == {SCHEMA} and len({r["session"] for r in records}) == 1
    assert len({r["seed"] for r in records}) == 9  # a seed per trial, derived from --itbench-seed
    alpha2 = next(r for r in records if (r["scenario_id"], r["run"]) == ("alpha", 2))
    assert alpha2["nodeid"] == "alpha.yaml::finops-alpha[run2]"
    assert alpha2["agent"] == "planned_agent:Planned" and alpha2["domain"] == "finops"
    assert alpha2["figures"] == {"ntam": 0.6, "mttd": 20.0, "mttr": 60.0, "steps": 3.0, "tokens": 60.0,
                                 "tokens_in": 45.0, "tokens_out": 15.0, "tool_calls": 3.0, "repeated_actions": 2.0,
                                 "longest_repeat": 3.0, "unknown_tools": 0.0, "failed_commands": 0.0,
                                 "cost_usd": None}  # tokens, but no model named to price them
    assert alpha2["checks"] == [{"name": "answer", "passed": True, "detail": "planned pass of run 2",
                                 "required": True, "value": None}]
    assert {"pytest-itbench", "python", "pytest", "backend"} <= set(alpha2["versions"])
    beta1 = next(r for r in records if (r["scenario_id"], r["run"]) == ("beta", 1))
    assert beta1["figures"]["mttd"] is None and beta1["figures"]["ntam"] == 0.2
    gamma3 = next(r for r in records if (r["scenario_id"], r["run"]) == ("gamma", 3))
    assert "PolicyViolation did not fire" in gamma3["error"] and "rerun this trial alone" in gamma3["error"]
    assert {a["name"] for a in alpha2["attachments"]} >= {"task", "trajectory", "trajectory analysis", "submission"}


def test_junit_has_the_figures_as_properties_and_the_verdicts(session):
    project, _ = session
    root = ET.parse(project.path / "out" / "junit.xml").getroot()
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert len(cases) == 9
    alpha1 = cases["finops-alpha[run1]"]
    props = {p.get("name"): p.get("value") for p in alpha1.iter("property")}
    assert {k: props[k] for k in ("itbench.scenario", "itbench.domain", "itbench.complexity", "itbench.agent",
                                  "itbench.run", "itbench.outcome", "itbench.check.answer", "itbench.mttd",
                                  "itbench.ntam", "itbench.steps")} == {
        "itbench.scenario": "alpha", "itbench.domain": "finops", "itbench.complexity": "easy",
        "itbench.agent": "planned_agent:Planned", "itbench.run": "1", "itbench.outcome": "passed",
        "itbench.check.answer": "pass", "itbench.mttd": "10.0", "itbench.ntam": "0.5", "itbench.steps": "3.0"}
    assert {"itbench.phase.provision", "itbench.phase.agent", "itbench.seed"} <= set(props)
    assert all(name.startswith("itbench.") for name in props)
    assert alpha1.find("failure") is None and alpha1.find("error") is None
    failure = cases["ciso-beta[run2]"].find("failure")
    assert "beta run 2" in failure.get("message") and "failed answer" in failure.get("message")
    gamma = cases["ciso-gamma[run1]"]
    error = gamma.find("error")
    assert error is not None and "PolicyViolation did not fire" in error.get("message")
    gamma_props = {p.get("name"): p.get("value") for p in gamma.iter("property")}
    assert gamma_props["itbench.outcome"] == "error" and "rerun this trial alone" in gamma_props["itbench.error"]


@pytest.fixture(scope="module")
def allure_results(session):
    pytest.importorskip("allure_pytest", reason="allure-pytest is the 'allure' extra")
    project, _ = session
    found = {}
    for path in (project.path / "out" / "allure").glob("*-result.json"):
        data = json.loads(path.read_text())
        found[data["name"]] = data
    return project.path / "out" / "allure", found


def labels(result, name):
    return [label["value"] for label in result["labels"] if label["name"] == name]


def test_allure_labels_and_statuses(allure_results):
    _, found = allure_results
    assert len(found) == 9
    alpha, beta, gamma = found["finops-alpha[run1]"], found["ciso-beta[run1]"], found["ciso-gamma[run1]"]
    assert (labels(alpha, "epic"), labels(alpha, "story")) == (["finops"], ["alpha"])
    assert (labels(beta, "epic"), labels(beta, "story")) == (["ciso"], ["beta"])
    assert labels(alpha, "feature") == []  # no application and no CISO class
    assert (labels(alpha, "severity"), labels(gamma, "severity"), labels(beta, "severity")) == (
        ["minor"], ["normal"], ["critical"])
    statuses = {name: data["status"] for name, data in found.items()}
    assert statuses == {f"{'finops' if s == 'alpha' else 'ciso'}-{s}[run{run}]":
                        {"passed": "passed", "failed": "failed", "error": "broken"}[outcome]
                        for (s, run), outcome in OUTCOMES.items()}
    assert "failed answer" in beta["statusDetails"]["message"]
    assert "PolicyViolation did not fire" in gamma["statusDetails"]["message"]


def test_allure_figures_are_excluded_parameters(allure_results):
    _, found = allure_results
    alpha = found["finops-alpha[run2]"]
    params = {p["name"]: p for p in alpha["parameters"]}
    assert {"seed", "ntam", "mttd", "mttr", "steps", "tokens", "provision (s)", "agent (s)"} <= set(params)
    assert (params["mttd"]["value"], params["ntam"]["value"]) == ("20.0", "0.6")
    assert all(p.get("excluded") is True for p in params.values())
    # so the history of a scenario's run does not move with its figures or seed
    assert found["finops-alpha[run2]"]["historyId"] != found["finops-alpha[run1]"]["historyId"]


def test_allure_attachments(allure_results):
    directory, found = allure_results
    alpha = found["finops-alpha[run3]"]
    attached = {a["name"]: a for a in alpha["attachments"]}
    assert {"verdict", "task", "trajectory", "submission"} <= set(attached)

    def body(name):
        return (directory / attached[name]["source"]).read_text()

    assert body("verdict") == "FAIL answer: planned miss of run 3"
    assert json.loads(body("task"))["scenario_id"] == "alpha"
    assert [step["thought"] for step in json.loads(body("trajectory"))] == ["step 0", "step 1", "step 2"]
    assert json.loads(body("submission"))["notes"] == "done"
    assert [(s["name"], s["status"]) for s in alpha["steps"]] == [(f"{n}. kubectl get pods", "passed")
                                                                  for n in (1, 2, 3)]
    gamma = {a["name"]: a for a in found["ciso-gamma[run2]"]["attachments"]}
    assert "rerun this trial alone" in (directory / gamma["error"]["source"]).read_text()


def test_allure_environment_and_categories(allure_results):
    directory, _ = allure_results
    environment = dict(line.split("=", 1) for line in (directory / "environment.properties").read_text().splitlines())
    assert environment["agent"] == "planned_agent:Planned"
    assert environment["backend"] == "twin" and "version.pytest-itbench" in environment
    categories = json.loads((directory / "categories.json").read_text())
    assert [(c["name"], c["matchedStatuses"]) for c in categories] == [
        ("Agent failures", ["failed"]), ("Environment errors", ["broken"])]
