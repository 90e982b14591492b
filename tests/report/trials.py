"""Hand-built trial results, and a nested pytest project that reports them the way the plugin will."""

from __future__ import annotations

import json

from pytest_itbench.agents.base import Step, Trajectory
from pytest_itbench.report.model_prices import ModelPrice, PriceTable
from pytest_itbench.report.trajectory_analysis import ATTACHMENT as ANALYSIS, analyse
from pytest_itbench.results import ERROR, FAILED, PASSED, Attachment, CheckResult, TrialResult

OUTCOME = {"P": PASSED, "F": FAILED, "E": ERROR}


def trial(scenario: str, run: int, mark: str, *, domain: str = "sre", complexity: str = "easy",
          checks: dict[str, bool] | None = None, **figures: float | None) -> TrialResult:
    """One trial; ``mark`` is P, F or E; ``checks`` maps check names to their verdicts."""
    return TrialResult(
        scenario_id=scenario, domain=domain, complexity=complexity, agent="oracle", run=run, seed=7,
        outcome=OUTCOME[mark],
        checks=[CheckResult(name, ok, detail=f"{name} {'held' if ok else 'missed'}")
                for name, ok in (checks or {}).items()],
        figures=dict(figures),
        error="the twin's API server stopped answering\nrerun: pytest --itbench-seed=7" if mark == "E" else "",
        application="astronomy-shop" if domain == "sre" else None,
        category="kyverno" if domain == "ciso" else None,
        faults=["scaled-to-zero"] if domain == "sre" else [],
        phases={"provision": 0.12, "deploy": 0.5, "agent": 3.25},
    )


def full_trial(tmp_path) -> TrialResult:
    """A failed SRE trial carrying every kind of data the reports handle, attachments included."""
    trajectory = tmp_path / "trajectory.json"
    trajectory.write_text(json.dumps([{"action": "kubectl get pods -n otel-demo", "tokens_in": 120}]))
    result = trial("sre-scaled-to-zero", 2, "F", complexity="hard",
                   checks={"diagnosis": True, "mitigation": False},
                   mttd=41.5, mttr=None, ntam=0.75, steps=6, tokens=1834)
    result.versions = {"backend": "twin 1.31.0"}
    result.started_at, result.finished_at = 1_700_000_000.0, 1_700_000_004.5
    result.attachments = [
        Attachment("task", media="text", content="The checkout service is failing. Find out why and fix it."),
        Attachment("trajectory", media="json", path=str(trajectory)),
        Attachment("submission", media="json", content={"entities": [{"name": "otel-demo/Deployment/cart",
                                                                      "contributing_factor": True}]}),
        Attachment("changed objects", media="yaml", content=[{"kind": "Deployment", "metadata": {"name": "cart"},
                                                              "spec": {"replicas": 1}}]),
        Attachment("events", media="json", path=str(tmp_path / "never-written.json")),
    ]
    return result


# An agent stuck for a moment: it lists the pods twice, calls a tool that does not exist, and its repair is
# refused (recorded the old way: an exit status in the observation, no error).
LOOPING_STEPS = [
    Step(thought="what runs?", action="kubectl get pods -n shop", observation="cart-0 Running", tool="kubectl",
         tokens_in=1000, tokens_out=100, started=100.0, ended=101.5),
    Step(action="kubectl get pods -n shop", observation="cart-0 Running", tool="kubectl", started=102.0,
         ended=102.25),
    Step(action="fetch_logs cart", tool="fetch_logs", error="unknown tool 'fetch_logs': the tools are kubectl",
         started=103.0, ended=103.0),
    Step(action="kubectl rollout undo deployment/cart", observation="exit 1: Error from server (Forbidden)",
         started=104.0, ended=105.0),
]
PRICES = PriceTable({"gpt-4o": ModelPrice("gpt-4o", 2.50, 10.00, "2026-11-30", "https://openai.com/api/pricing/")})


def analysed_trial(scenario: str = "sre-loop", run: int = 1, mark: str = "F", **kw) -> TrialResult:
    """A trial whose figures and attachments come from the trajectory analysis of LOOPING_STEPS, as run.py
    makes them: 4 steps, 4 tool calls (kubectl 3, fetch_logs 1), 1 repeated action in a run of 2, 1 unknown
    tool, 2 failed commands, 1000 tokens in and 100 out of gpt-4o: 1000 * 2.50 + 100 * 10.00 = $0.0035."""
    trajectory = Trajectory(steps=[Step(**s.to_dict()) for s in LOOPING_STEPS], model="gpt-4o")
    result = trial(scenario, run, mark, **kw)
    analysis = analyse(trajectory, PRICES)
    result.figures.update(analysis.figures())
    result.attachments = [Attachment("trajectory", "json", content=trajectory.to_list()),
                          Attachment(ANALYSIS, "json", content=analysis.to_dict())]
    return result


# The plugin's side, as the lead wires it (pytest_itbench/report/__init__.py): a fixture that finishes
# a trial, the report hooks, the session files. Options are named apart from the real plugin's, which
# the nested runs block with -p no:itbench.
CONFTEST = '''
import pytest

from pytest_itbench.report import allure as allure_report, carry, jsonl, junit, leaderboard
from pytest_itbench.report.progress import PhaseProgress
from pytest_itbench.results import TrialResult

RESULT = pytest.StashKey()


def pytest_addoption(parser):
    parser.addoption("--results-file")
    parser.addoption("--annotate-in", default="body", choices=("body", "makereport"))


class Reporting:
    def __init__(self, config):
        self.config = config
        path = config.getoption("--results-file")
        self.file = jsonl.ResultsFile(path, session="s1") if path and carry.is_controller(config) else None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        if call.when == "call" and RESULT in item.stash:
            carry.put(report, item.stash[RESULT])
            if self.config.getoption("--annotate-in") == "makereport" and allure_report.results_dir(self.config):
                allure_report.annotate(item.stash[RESULT])
        return report

    def pytest_runtest_logreport(self, report):
        result = carry.result_of(report)
        if result is not None and self.file is not None:
            self.file.append(result, report.nodeid)

    def pytest_terminal_summary(self, terminalreporter):
        leaderboard.write(terminalreporter, carry.results_from_stats(terminalreporter.stats))

    def pytest_sessionfinish(self, session):
        directory = allure_report.results_dir(self.config)
        if directory is not None and carry.is_controller(self.config):
            results = carry.results_from_stats(self.config.pluginmanager.get_plugin("terminalreporter").stats)
            allure_report.write_session_files(directory, {**allure_report.environment(results), "workers": "2"})


def pytest_configure(config):
    config.pluginmanager.register(Reporting(config), "reporting")


@pytest.fixture
def finish(request):
    def finish(result):
        progress = PhaseProgress(request.config, f"{result.scenario_id} run {result.run}")
        for phase, seconds in result.phases.items():
            if phase == "agent":
                progress.started(phase, "(limit 900s)")
            progress.finished(phase, seconds)
        request.node.stash[RESULT] = result
        junit.add_properties(request.node, result)
        if allure_report.results_dir(request.config) and request.config.getoption("--annotate-in") == "body":
            allure_report.annotate(result)
        if result.outcome == "failed":
            pytest.fail(junit.failure_message(result), pytrace=False)
        if result.outcome == "error":
            raise RuntimeError(result.error)
    return finish
'''

TEST_FILE = '''
import json

import pytest

from pytest_itbench.results import TrialResult

TRIALS = json.loads({data!r})


# Parametrized by position, not by the data, so that a test's pytest parameters (which feed Allure's
# history id) stay the same when only its figures change.
@pytest.mark.parametrize("index", range(len(TRIALS)), ids=[f"{{t['scenario_id']}}-{{t['run']}}" for t in TRIALS])
def test_trial(finish, index):
    finish(TrialResult.from_dict(TRIALS[index]))
'''


def write_project(pytester, results: list[TrialResult]) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_trials=TEST_FILE.format(data=json.dumps([r.to_dict() for r in results])))


# Every nested run: the real plugin (once installed) kept out, so only the wiring above reports.
ISOLATED = ("-p", "no:itbench", "-p", "no:cacheprovider")
