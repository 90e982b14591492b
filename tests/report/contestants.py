"""Two contestants' results files, hand-made, with figures worked out by hand for the comparison tests.

gpt (two shards of one selection):  s-easy PP, s-medium FF, s-hard PF            cost $0.01, 1000 tokens a trial
claude (one file, another selection): s-easy PP, s-medium PF, s-hard PF, s-extra P   cost $0.02, 3000 tokens

Over the three scenarios both ran: pass@1 gpt (1 + 0 + 0.5) / 3 = 50.0 %, claude (1 + 0.5 + 0.5) / 3 = 66.7 %;
pass@2 gpt (1 + 0 + 1) / 3 = 66.7 %, claude 100 %; pass^2 gpt (1 + 0 + 0) / 3 = 33.3 %, claude 33.3 %.
They differ on s-medium only; s-extra (claude's alone) is left out.
"""

from __future__ import annotations

from pytest_itbench.report.jsonl import ResultsFile

from .trials import trial

LEVEL = {"s-easy": "easy", "s-medium": "medium", "s-hard": "hard", "s-extra": "easy"}


def runs(agent: str, selection: str, marks: dict[str, str], cost: float, tokens: int) -> list:
    results = []
    for scenario, outcomes in marks.items():
        for run, mark in enumerate(outcomes, 1):
            result = trial(scenario, run, mark, complexity=LEVEL.get(scenario, "easy"), cost_usd=cost, tokens=tokens,
                           checks={"diagnosis": mark == "P"})
            result.agent, result.selection = agent, selection
            results.append(result)
    return results


def write(path, results) -> str:
    out = ResultsFile(path)
    for result in results:
        out.append(result, nodeid=f"{result.trial_id}[run{result.run}]")
    return str(path)


def files(tmp_path) -> dict[str, list[str]]:
    gpt = runs("openai", "sel-gpt", {"s-easy": "PP", "s-medium": "FF", "s-hard": "PF"}, 0.01, 1000)
    claude = runs("exec:claude.sh", "sel-claude", {"s-easy": "PP", "s-medium": "PF", "s-hard": "PF", "s-extra": "P"},
                  0.02, 3000)
    return {"gpt": [write(tmp_path / "gpt-1.jsonl", gpt[:3]), write(tmp_path / "gpt-2.jsonl", gpt[3:])],
            "claude": [write(tmp_path / "claude.jsonl", claude)]}


def specs(tmp_path) -> list[str]:
    return [f"{label}={path}" for label, paths in files(tmp_path).items() for path in paths]
