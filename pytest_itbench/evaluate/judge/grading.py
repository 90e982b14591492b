"""One grading: the case (what happened, what the agent said) to the model with a prompt, its answer checked.

The model must answer one JSON object of the prompt's shape; anything else (prose, a score of 0.7, a missing
checklist item) is refused with what was wrong, never read as a score.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .prompts import Prompt
from .settings import PLACEHOLDER_KEY, JudgeSettings

RUBRIC_ITEMS = ("component", "mechanism", "evidence", "propagation", "alerts", "no_red_herrings")
REASONING_SCORES = (0, 0.5, 1)


class BadAnswer(ValueError):
    """The model's answer is not the JSON the prompt asks for."""


@dataclass(frozen=True)
class Grade:
    score: float  # reasoning: 0, 0.5 or 1; rubric: the share of items met
    justification: str
    items: dict[str, bool] | None = None  # the rubric's items, each met or not
    answer: str = ""  # the model's answer as it came


def case(scenario, diagnosis: dict[str, Any]) -> str:
    """What the judge reads: the truth (title, faults, ground truth, expected alerts) and the diagnosis."""
    truth = {"title": scenario.title, "expected_alerts": list(scenario.expected_alerts),
             "faults": [fault.model_dump(exclude_none=True, mode="json") for fault in scenario.faults],
             "ground_truth": {k: v for k, v in scenario.ground_truth.items() if k != "recommended_actions"}}
    return json.dumps({"what_happened": truth, "agent_diagnosis": diagnosis}, indent=1, sort_keys=True,
                      default=str)


def ask(settings: JudgeSettings, prompt: Prompt, text: str) -> str:
    import openai  # only when a judge grades: the plugin loads without the package

    client = openai.OpenAI(api_key=settings.api_key or PLACEHOLDER_KEY, base_url=settings.base_url,
                           timeout=settings.timeout, max_retries=2)
    try:
        response = client.chat.completions.create(
            model=settings.model, temperature=0, seed=0,
            messages=[{"role": "system", "content": prompt.text}, {"role": "user", "content": text}])
    finally:
        client.close()
    return response.choices[0].message.content or ""


def read_reasoning(answer: str) -> Grade:
    data = _object(answer)
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or score not in REASONING_SCORES:
        raise BadAnswer(f"score must be 0, 0.5 or 1, got {score!r}")
    return Grade(float(score), _justification(data), answer=answer)


def read_rubric(answer: str) -> Grade:
    data = _object(answer)
    items = data.get("items")
    if not isinstance(items, dict):
        raise BadAnswer("items must be an object of the checklist's items, each true or false")
    missing = [name for name in RUBRIC_ITEMS if name not in items]
    wrong = [name for name in RUBRIC_ITEMS if name in items and not isinstance(items[name], bool)]
    unknown = sorted(set(items) - set(RUBRIC_ITEMS))
    if missing or wrong or unknown:
        problems = ([f"missing {', '.join(missing)}"] if missing else []) + \
                   ([f"not true or false: {', '.join(wrong)}"] if wrong else []) + \
                   ([f"not on the checklist: {', '.join(unknown)}"] if unknown else [])
        raise BadAnswer("items: " + "; ".join(problems))
    met = {name: items[name] for name in RUBRIC_ITEMS}
    return Grade(sum(met.values()) / len(met), _justification(data), met, answer)


def _object(answer: str) -> dict[str, Any]:
    text = answer.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)
    if fenced:  # a fence around the object is tolerated; prose is not
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except ValueError:
        raise BadAnswer(f"not one JSON object: {_excerpt(answer)}") from None
    if not isinstance(data, dict):
        raise BadAnswer(f"not a JSON object: {_excerpt(answer)}")
    return data


def _justification(data: dict[str, Any]) -> str:
    value = data.get("justification", "")
    return value.strip() if isinstance(value, str) else ""


def _excerpt(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit] + "...")
