"""The optional LLM judge against the local scripted endpoint: what it is asked, how its answers become
informative checks and figures, and that a judge that fails or answers garbage changes no other score."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("openai")

from pytest_itbench.agents import Submission  # noqa: E402
from pytest_itbench.evaluate.judge import JudgePlugin, JudgeSettings  # noqa: E402
from pytest_itbench.evaluate.judge.settings import JudgeSettingsError, from_values  # noqa: E402
from pytest_itbench.report.jsonl import load as load_results  # noqa: E402
from pytest_itbench.results import TrialResult  # noqa: E402
from pytest_itbench.scenario.loader import load  # noqa: E402
from tests.agents.fake_openai import FakeOpenAI, die, message  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "sre" / "astronomy-cart-service-target-port.yaml"
PROMPTS = ROOT / "pytest_itbench" / "evaluate" / "judge" / "prompts"
NS = "astronomy-shop"
DIAGNOSIS = {"entities": [{"name": f"{NS}/Service/cart", "contributing_factor": True,
                           "reasoning": "targetPort 8081 while cart listens on 8080", "evidence": "endpoints :8081"}],
             "propagations": [{"source": f"{NS}/Service/cart", "target": f"{NS}/Service/frontend"}],
             "alerts_explained": [{"alert": "HighRequestErrorRate", "explained": True}]}
RIGHT = json.dumps({"score": 1, "justification": "names the cart Service and its wrong targetPort"})
ALL_MET = json.dumps({"items": {k: True for k in ("component", "mechanism", "evidence", "propagation", "alerts",
                                                  "no_red_herrings")}, "justification": "complete"})


def trial(diagnosis=DIAGNOSIS):
    scenario = load(SCENARIO)
    result = TrialResult(scenario_id=scenario.id, domain="sre", complexity="easy", agent="a", run=1, seed=0)
    return SimpleNamespace(scenario=scenario, submission=Submission(diagnosis=diagnosis), result=result)


def judge(fake: FakeOpenAI) -> JudgePlugin:
    return JudgePlugin(JudgeSettings("openai", "judge-model", fake.base_url, "sk-judge-0123456789", 10.0))


def checks_of(found):
    return {c.name: c for c in found}


def test_a_correct_diagnosis_is_graded_from_the_truth_and_recorded_with_the_prompts_versions():
    t = trial()
    with FakeOpenAI([message(RIGHT), message(f"```json\n{ALL_MET}\n```")]) as fake:
        checks = checks_of(judge(fake).pytest_itbench_evaluate(t))
    reasoning, rubric = checks["judge_reasoning"], checks["judge_rubric"]
    assert (reasoning.passed, reasoning.value, reasoning.required) == (True, 1.0, False)
    assert (rubric.passed, rubric.value, rubric.required) == (True, 1.0, False)
    assert "wrong targetPort" in reasoning.detail and "6/6 met" in rubric.detail
    assert t.result.figures == {"judge_reasoning": 1.0, "judge_rubric": 1.0}
    for name in ("root_cause_reasoning", "rubric"):
        text = (PROMPTS / f"{name}.txt").read_text()
        assert t.result.versions[f"judge_prompt_{name}"] == hashlib.sha256(text.encode()).hexdigest()[:12]
    assert t.result.versions["judge_model"] == "judge-model"
    first = fake.requests[0]
    assert first["model"] == "judge-model" and first["temperature"] == 0
    assert first["messages"][0]["content"] == (PROMPTS / "root_cause_reasoning.txt").read_text()
    case = json.loads(first["messages"][1]["content"])
    assert case["agent_diagnosis"] == DIAGNOSIS
    assert case["what_happened"]["faults"][0]["args"] == {"targetPort": 8081}
    assert "recommended_actions" not in case["what_happened"]["ground_truth"]  # the fix is not the question
    assert fake.headers[0]["authorization"] == "Bearer sk-judge-0123456789"


def test_a_partial_grade_is_kept_as_such():
    t = trial()
    half = json.dumps({"score": 0.5, "justification": "right Service, vague reason"})
    some = json.dumps({"items": {"component": True, "mechanism": False, "evidence": True, "propagation": False,
                                 "alerts": True, "no_red_herrings": True}})
    with FakeOpenAI([message(half), message(some)]) as fake:
        checks = checks_of(judge(fake).pytest_itbench_evaluate(t))
    assert (checks["judge_reasoning"].passed, checks["judge_reasoning"].value) == (False, 0.5)
    assert checks["judge_rubric"].value == pytest.approx(4 / 6)
    assert "missed: mechanism, propagation" in checks["judge_rubric"].detail


@pytest.mark.parametrize("reasoning, rubric, says", [
    ("The agent is right.", ALL_MET, "not one JSON object: 'The agent is right.'"),
    (json.dumps({"score": 0.7}), ALL_MET, "score must be 0, 0.5 or 1, got 0.7"),
    (RIGHT, json.dumps({"items": {"component": True}}), "items: missing mechanism, evidence"),
    (RIGHT, json.dumps({"items": {**json.loads(ALL_MET)["items"], "style": True}}), "not on the checklist: style"),
])
def test_garbage_is_refused_saying_what_was_wrong_never_read_as_a_score(reasoning, rubric, says):
    t = trial()
    with FakeOpenAI([message(reasoning), message(rubric)]) as fake:
        checks = checks_of(judge(fake).pytest_itbench_evaluate(t))
    bad = [c for c in checks.values() if c.value is None]
    assert len(bad) == 1 and not bad[0].passed and not bad[0].required
    assert says in bad[0].detail and "not usable" in bad[0].detail
    assert t.result.figures[bad[0].name] is None


def test_a_judge_that_is_gone_fails_its_checks_only_and_says_why():
    t = trial()
    with FakeOpenAI([die()]) as fake:
        checks = checks_of(judge(fake).pytest_itbench_evaluate(t))
    for check in checks.values():
        assert not check.passed and check.value is None and "the judge failed: APIConnectionError" in check.detail
        assert "sk-judge" not in check.detail
    assert t.result.figures == {"judge_reasoning": None, "judge_rubric": None}


def test_no_diagnosis_scores_zero_without_asking():
    t = trial(diagnosis=None)
    with FakeOpenAI([]) as fake:
        checks = checks_of(judge(fake).pytest_itbench_evaluate(t))
    assert fake.requests == [] and {c.value for c in checks.values()} == {0.0}


def test_settings_name_what_is_wrong():
    with pytest.raises(JudgeSettingsError, match="needs a key: set \\$ITBENCH_JUDGE_API_KEY"):
        from_values({"itbench_judge": ("--itbench-judge", "openai")}, {})
    with pytest.raises(JudgeSettingsError, match="--itbench-judge-base-url = localhost:8000: must be an http"):
        from_values({"itbench_judge": ("", "openai"), "itbench_judge_base_url": ("--itbench-judge-base-url",
                                                                                 "localhost:8000")}, {})
    with pytest.raises(JudgeSettingsError, match="ini option itbench_judge_timeout = -1: must be a number"):
        from_values({"itbench_judge_timeout": ("ini option itbench_judge_timeout", "-1")}, {})
    chosen = from_values({"itbench_judge": ("", "openai")}, {"ITBENCH_JUDGE_API_KEY": "sk-j", "OPENAI_API_KEY": "sk-a"})
    assert chosen.api_key == "sk-j" and chosen.enabled and not from_values({}, {}).enabled


JUDGED_AGENT = f'''
from pytest_itbench.agents import Submission
from pytest_itbench.agents.kubectl import Kubectl

class Repair:
    def run(self, task, trajectory):
        Kubectl(task).run(["-n", "{NS}", "patch", "service", "cart", "--type=json",
                           "-p", '[{{"op":"replace","path":"/spec/ports/0/targetPort","value":8080}}]'])
        return Submission(diagnosis={DIAGNOSIS!r})
'''


@pytest.mark.end_to_end
def test_through_the_plugin_the_judge_adds_informative_checks_and_a_broken_answer_changes_no_other(pytester):
    shutil.copy(SCENARIO, pytester.path / SCENARIO.name)
    (pytester.path / "judged_agent.py").write_text(JUDGED_AGENT)
    pytester.syspathinsert()
    with FakeOpenAI([message(RIGHT), message("I cannot grade this.")]) as fake:
        result = pytester.runpytest("-p", "no:cacheprovider", "--itbench-agent=judged_agent:Repair",
                                    "--itbench-noise=off", "--itbench-judge=openai",
                                    f"--itbench-judge-base-url={fake.base_url}", "--itbench-results=results.jsonl",
                                    SCENARIO.name)
    result.assert_outcomes(passed=1)
    [record] = load_results(pytester.path / "results.jsonl")
    checks = {c.name: c for c in record.checks}
    assert checks["diagnosis"].passed and checks["mitigation"].passed and checks["diagnosis"].required
    assert checks["judge_reasoning"].value == 1.0 and not checks["judge_reasoning"].required
    assert not checks["judge_rubric"].passed and "not usable" in checks["judge_rubric"].detail
    assert record.figures["judge_reasoning"] == 1.0 and record.figures["judge_rubric"] is None
    assert set(record.versions) >= {"judge_model", "judge_prompt_root_cause_reasoning", "judge_prompt_rubric"}
