"""An optional LLM judge of diagnoses (``--itbench-judge=openai``), beside the deterministic scores.

    prompts/      the graders' instructions, versioned by their text's hash (recorded in every result)
    prompts.py    loading them and their hashes
    settings.py   model, endpoint, key and timeout: command line, ini file, environment
    grading.py    one grading: the case as JSON, the model's answer read and checked
    plugin.py     the evaluator hook: two informative checks per SRE or FinOps trial

The judge never decides a trial: its checks are informative (``judge_reasoning``: ITBench-Evaluations'
root_cause_reasoning, 0, 0.5 or 1; ``judge_rubric``: the share of a reviewer's checklist met), and a judge
that fails or answers garbage leaves every other score as it was and says why.
"""

from .plugin import JudgePlugin
from .settings import JudgeSettings

__all__ = ["JudgePlugin", "JudgeSettings"]
