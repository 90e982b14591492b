"""--itbench-results: one strict JSON object per trial, written by the controller only."""

import dataclasses
import json
import math
import multiprocessing

import pytest

from pytest_itbench.report.jsonl import SCHEMA, ResultsFile, load
from pytest_itbench.report.versions import runtime_versions
from pytest_itbench.results import Attachment

from .test_figures import catalog
from .trials import ISOLATED, analysed_trial, full_trial, trial, write_project


def strict(line: str) -> dict:
    def refuse(constant):
        raise AssertionError(f"not strict JSON: {constant}")
    return json.loads(line, parse_constant=refuse)


def test_a_record_round_trips(tmp_path):
    result = full_trial(tmp_path)
    path = tmp_path / "out" / "results.jsonl"  # the directory is made on first use
    ResultsFile(path, session="s1").append(result, "tests/test_x.py::test[sre-scaled-to-zero-2]")
    record = strict(path.read_text())
    assert (record["schema"], record["session"], record["nodeid"]) == (
        SCHEMA, "s1", "tests/test_x.py::test[sre-scaled-to-zero-2]")
    assert record["recorded_at"].endswith("+00:00")
    assert record["checks"][1] == {"name": "mitigation", "passed": False, "detail": "mitigation missed",
                                   "required": True, "value": None}
    assert record["figures"] == {"mttd": 41.5, "mttr": None, "ntam": 0.75, "steps": 6, "tokens": 1834}
    assert record["phases"] == {"provision": 0.12, "deploy": 0.5, "agent": 3.25}
    assert (record["started_at"], record["finished_at"]) == (1_700_000_000.0, 1_700_000_004.5)
    # versions: the backend's from the run, the rest from this process
    assert record["versions"]["backend"] == "twin 1.31.0"
    assert set(record["versions"]) >= {"pytest-itbench", "python", "pytest", "kubernetes-client"}
    assert record["versions"]["python"] == runtime_versions()["python"]
    [loaded] = load(path)
    assert loaded == dataclasses.replace(result, versions=record["versions"])
    assert isinstance(loaded.attachments[0], Attachment)


def test_the_trajectory_analysis_round_trips(tmp_path):
    result = analysed_trial()
    result.figures["cost_usd"] = None  # unpriced: written as null, read back as None
    path = tmp_path / "r.jsonl"
    ResultsFile(path, session="s1").append(result, "t::loop")
    record = strict(path.read_text())
    assert record["figures"] == {"steps": 4.0, "tokens": 1100.0, "tokens_in": 1000.0, "tokens_out": 100.0,
                                 "tool_calls": 4.0, "repeated_actions": 1.0, "longest_repeat": 2.0,
                                 "unknown_tools": 1.0, "failed_commands": 2.0, "cost_usd": None}
    analysis = next(a for a in record["attachments"] if a["name"] == "trajectory analysis")
    assert analysis["media"] == "json"
    assert analysis["content"]["calls_by_tool"] == {"kubectl": 3, "fetch_logs": 1}
    assert analysis["content"]["unknown_tool_names"] == ["fetch_logs"]
    assert [f["step"] for f in analysis["content"]["failures"]] == [3, 4]
    assert analysis["content"]["prices"]["gpt-4o"]["read_on"] == "2026-11-30"
    [loaded] = load(path)
    assert loaded == dataclasses.replace(result, versions=record["versions"])


def test_infinite_and_missing_figures_are_null(tmp_path):
    result = trial("a", 1, "F", mttd=math.inf, mttr=math.nan)
    path = tmp_path / "r.jsonl"
    ResultsFile(path).append(result, "t::a")
    assert strict(path.read_text())["figures"] == {"mttd": None, "mttr": None}


def test_sessions_append_and_are_told_apart(tmp_path):
    path = tmp_path / "r.jsonl"
    ResultsFile(path, session="first").append(trial("a", 1, "P"), "t::a1")
    ResultsFile(path, session="second").append(trial("a", 1, "F"), "t::a1")
    records = [strict(line) for line in path.read_text().splitlines()]
    assert [(r["session"], r["outcome"]) for r in records] == [("first", "passed"), ("second", "failed")]
    assert [r.outcome for r in load(path)] == ["passed", "failed"]


def test_a_broken_line_is_named(tmp_path):
    path = tmp_path / "r.jsonl"
    ResultsFile(path).append(trial("a", 1, "P"), "t::a1")
    with path.open("a") as out:
        out.write('{"scenario_id": "a", \n')
    with pytest.raises(ValueError, match=r"r\.jsonl:2: not a JSON object"):
        load(path)


def _append_many(path: str, session: str) -> None:
    results = ResultsFile(path, session=session)
    big = trial("a", 1, "P")
    big.attachments = [Attachment("trajectory", content=["x" * 1000] * 60)]  # ~60 kB a line
    for i in range(60):
        results.append(big, f"t::{session}-{i}")


def test_two_sessions_writing_at_once_do_not_interleave_lines(tmp_path):
    path = str(tmp_path / "r.jsonl")
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_append_many, args=(path, name)) for name in ("one", "two")]
    for w in writers:
        w.start()
    for w in writers:
        w.join(60)
        assert w.exitcode == 0
    records = [strict(line) for line in open(path).read().splitlines()]
    assert sorted(r["nodeid"] for r in records) == sorted(f"t::{s}-{i}" for s in ("one", "two") for i in range(60))


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_every_trial_is_written_once(pytester, workers):
    write_project(pytester, catalog())
    pytester.runpytest_subprocess(*ISOLATED, *workers, "--results-file=results.jsonl")
    lines = (pytester.path / "results.jsonl").read_text().splitlines()
    records = [strict(line) for line in lines]
    # twelve trials, twelve lines: a worker writing too would double them
    assert len(records) == 12
    assert len({r["nodeid"] for r in records}) == 12
    assert sorted((r["scenario_id"], r["run"], r["outcome"]) for r in records) == sorted(
        (t.scenario_id, t.run, t.outcome) for t in catalog())
