"""JUnit XML: a trial's figures as ``<property>`` elements of its testcase, its verdict as the failure message.

pytest's junitxml writes every ``(name, value)`` of a test's ``user_properties`` as a ``<property>`` of
its testcase, under every ``junit_family`` (legacy, xunit1 and the default xunit2). It reads them from
the teardown report, so they must be on ``item.user_properties`` before the item's teardown ends (the
end of the test body or a fixture's teardown will do). Only the ``record_property`` fixture warns under
xunit2, whose schema has no testcase properties; appending to ``item.user_properties`` directly does
not warn, and Jenkins, GitLab and the common GitHub Actions reporters read the properties anyway.
``user_properties`` travel with the report, so the xdist controller writes them too.
"""

from __future__ import annotations

from typing import Any

from pytest_itbench.report.trajectory_analysis import ATTACHMENT as ANALYSIS
from pytest_itbench.results import TrialResult

PREFIX = "itbench."


def add_properties(item: Any, result: TrialResult) -> None:
    item.user_properties.extend(properties(result))


def properties(result: TrialResult) -> list[tuple[str, str]]:
    """Flat name/value pairs: identity, outcome, each check's verdict, each figure and phase time, and the
    agent's calls per tool (``calls.<tool>``, from the trajectory analysis)."""
    pairs = [
        ("scenario", result.scenario_id), ("domain", result.domain), ("complexity", result.complexity),
        ("agent", result.agent), ("backend", result.backend), ("run", str(result.run)),
        ("variant", str(result.variant)), ("noise", result.noise), ("seed", str(result.seed)),
        ("outcome", result.outcome),
    ]
    pairs += [(f"check.{c.name}", "pass" if c.passed else "fail") for c in result.checks]
    pairs += [(name, str(value)) for name, value in sorted(result.figures.items()) if value is not None]
    pairs += [(f"calls.{tool}", str(count)) for tool, count in _calls_by_tool(result).items()]
    pairs += [(f"phase.{name}", f"{seconds:.3f}") for name, seconds in result.phases.items()]
    if result.error:
        pairs.append(("error", result.error))
    return [(PREFIX + name, value) for name, value in pairs]


def _calls_by_tool(result: TrialResult) -> dict[str, int]:
    analysis = next((a.content for a in result.attachments if a.name == ANALYSIS), None)
    calls = analysis.get("calls_by_tool") if isinstance(analysis, dict) else None
    return dict(calls) if isinstance(calls, dict) else {}


def failure_message(result: TrialResult) -> str:
    """The message to fail the test with: which required checks failed, then one line per check.

    The first line names the failed checks because junitxml keeps only the first lines of a message
    (about 500 characters) in the ``message`` attribute.
    """
    missed = [c.name for c in result.checks if c.required and not c.passed]
    head = f"{result.trial_id} run {result.run} (seed {result.seed}, agent {result.agent}): "
    head += f"failed {', '.join(missed)}" if missed else "no required check was evaluated"
    return "\n".join([head, result.verdict()]).rstrip()
