"""The judge as an evaluator: two informative checks per SRE or FinOps trial that handed in a diagnosis.

Registered by the plugin when ``--itbench-judge`` is on. Each trial's result gets the checks
``judge_reasoning`` and ``judge_rubric`` (their ``value`` the score), the figures of the same names (None
when the judge could not grade), the prompts' versions and the model in ``versions``, and an attachment
``judge`` with the model's answers. A failure of the judge is a check that says why, never an error of the
trial, and the required checks stay as the deterministic evaluators made them.
"""

from __future__ import annotations

from typing import Any

import pytest

from ...results import Attachment, CheckResult
from . import grading
from .prompts import all_prompts
from .settings import JudgeSettings

DOMAINS = ("sre", "finops")
ATTACHMENT = "judge"


class JudgePlugin:
    def __init__(self, settings: JudgeSettings):
        self.settings = settings
        self.prompts = all_prompts()

    @pytest.hookimpl
    def pytest_itbench_evaluate(self, trial) -> list[CheckResult] | None:
        if trial.scenario.domain not in DOMAINS:
            return None
        result = trial.result
        result.versions["judge_model"] = self.settings.model
        for name, prompt in self.prompts.items():
            result.versions[f"judge_prompt_{name}"] = prompt.version
        diagnosis = trial.submission.diagnosis if trial.submission is not None else None
        if not diagnosis or not diagnosis.get("entities"):
            result.figures.update(judge_reasoning=0.0, judge_rubric=0.0)
            why = "no diagnosis handed in: nothing to reason about (scored 0 without asking the judge)"
            return [CheckResult("judge_reasoning", False, why, required=False, value=0.0),
                    CheckResult("judge_rubric", False, why, required=False, value=0.0)]
        text = grading.case(trial.scenario, diagnosis)
        record: dict[str, Any] = {"model": self.settings.model, "endpoint": self.settings.base_url or "openai",
                                  "prompts": {n: p.version for n, p in self.prompts.items()}, "answers": {}}
        checks = [self._grade("judge_reasoning", "root_cause_reasoning", grading.read_reasoning, text, record,
                              result.figures),
                  self._grade("judge_rubric", "rubric", grading.read_rubric, text, record, result.figures)]
        result.attachments.append(Attachment(ATTACHMENT, "json", content=record))
        return checks

    def _grade(self, check: str, prompt: str, read, text: str, record: dict[str, Any],
               figures: dict[str, float | None]) -> CheckResult:
        try:
            answer = grading.ask(self.settings, self.prompts[prompt], text)
        except Exception as exc:  # noqa: BLE001  any failure of the judge leaves the trial's other scores be
            figures[check] = None
            why = self.settings.redact(f"the judge failed: {type(exc).__name__}: {exc}")
            record["answers"][prompt] = {"error": why}
            return CheckResult(check, False, why, required=False)
        record["answers"][prompt] = {"answer": answer}
        try:
            grade = read(answer)
        except grading.BadAnswer as exc:
            figures[check] = None
            record["answers"][prompt]["error"] = str(exc)
            return CheckResult(check, False, f"the judge's answer was not usable: {exc}", required=False)
        figures[check] = grade.score
        if grade.items is not None:
            record["answers"][prompt]["items"] = grade.items
            missed = [name for name, met in grade.items.items() if not met]
            detail = (f"{sum(grade.items.values())}/{len(grade.items)} met"
                      + (f" (missed: {', '.join(missed)})" if missed else "") + f"; {grade.justification}")
            return CheckResult(check, not missed, detail.rstrip("; "), required=False, value=grade.score)
        return CheckResult(check, grade.score == 1, f"{grade.score:g}; {grade.justification}".rstrip("; "),
                           required=False, value=grade.score)
