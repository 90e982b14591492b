"""The terminal table: its cells carry the hand-computed figures, and its columns line up."""

import re

from pytest_itbench.report.leaderboard import render

from .test_figures import catalog
from .trials import trial


def table(lines, header_start):
    """The header line and the row lines of the table whose header starts with ``header_start``."""
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 1:]:
        if not line or line.startswith("error:"):
            break
        if not line.startswith("-"):  # the rules between blocks
            rows.append(line)
    return lines[start], rows


def cells(lines, header_start):
    """That table as {first cell: {header: cell}}."""
    header, rows = table(lines, header_start)
    found = {}
    for row in rows:
        assert len(row.split()) == len(header.split()), row
        found[row.split()[0]] = dict(zip(header.split(), row.split()))
    return found


def test_the_group_rows_show_the_figures():
    lines = render(catalog())
    assert lines[0] == "agent oracle on twin: 12 trials of 3 scenarios, 4 runs each"
    rows = cells(lines, "group")
    assert list(rows) == ["all", "sre", "ciso", "easy", "medium", "hard"]
    assert rows["all"] == {
        "group": "all", "trials": "12", "scen": "3", "pass": "6", "fail": "5", "err": "1",
        "pass@1": "50.0±28.9",  # 0.5 ± 0.5/sqrt(3)
        "pass@2": "61.1",  # (5/6 + 0 + 1) / 3
        "pass@3": "66.7", "pass@4": "-",
        "pass^2": "38.9",  # all of two runs pass: (C(2,2)/C(4,2) + 0 + 1) / 3 = (1/6 + 1) / 3
        "pass^3": "33.3", "pass^4": "-",  # (0 + 0 + 1) / 3: two passes of four never give three
        "NTAM": "0.37", "MTTD": "60.0s", "MTTR": "100.0s", "steps": "6.1", "tokens": "1,643",
    }
    assert rows["sre"]["pass@1"] == "25.0±25.0"
    assert rows["ciso"]["pass@1"] == "100.0"  # one scenario: no ± at all
    assert rows["hard"]["err"] == "1" and rows["hard"]["MTTR"] == "-"


def test_columns_line_up():
    lines = render(catalog(), verbosity=1)
    for header_start in ("group", "scenario"):
        header, body = table(lines, header_start)
        assert len(body) >= 3
        heads = list(re.finditer(r"\S+", header))
        for line in body:
            found = list(re.finditer(r"\S+", line))
            assert len(found) == len(heads)
            for head, cell in zip(heads, found):
                if head.group() in ("group", "scenario", "domain", "level", "runs"):
                    assert cell.start() == head.start(), (line, head.group())  # text: aligned left
                else:
                    assert cell.end() == head.end(), (line, head.group())  # numbers: aligned right


def test_verbose_adds_scenarios_and_errors():
    assert not any(line.startswith("scenario") for line in render(catalog()))
    lines = render(catalog(), verbosity=1)
    rows = cells(lines, "scenario")
    assert {name: (row["domain"], row["level"], row["runs"]) for name, row in rows.items()} == {
        "a": ("sre", "easy", "PFPF"), "b": ("sre", "hard", "FFFE"), "c": ("ciso", "medium", "PPPP")}
    assert rows["a"]["pass@2"] == "83.3" and rows["b"]["pass@4"] == "-"
    assert "error: b run 4 (seed 7): the twin's API server stopped answering" in lines


def test_uneven_runs_are_said_so():
    results = catalog()[:5]  # a: 4 runs, b: 1 run
    assert render(results)[0] == "agent oracle on twin: 5 trials of 2 scenarios, 1 to 4 runs each"


def test_finops_proximity_is_averaged_per_scenario_then_over_scenarios():
    results = [
        trial("cost-a", 1, "P", domain="finops", proximity_cpu_cost=1.0, proximity_memory_cost=0.5),
        trial("cost-a", 2, "F", domain="finops", proximity_cpu_cost=0.5),  # cost-a's CPU: (1.0 + 0.5) / 2
        trial("cost-b", 1, "F", domain="finops", proximity_cpu_cost=0.25),
        trial("cost-c", 1, "E", domain="finops", proximity_cpu_cost=0.0),  # an error is no attempt
    ]
    [line] = [x for x in render(results) if x.startswith("finops proximity")]
    # CPU: (0.75 + 0.25) / 2; memory: cost-a alone
    assert line == "finops proximity to the optimum (mean over scenarios): CPU cost 0.50, memory cost 0.50"
    assert not [x for x in render([trial("s", 1, "P")]) if "proximity" in x]  # no FinOps, no line


def trajectory_results():
    """Three valid trials and an error, with the trajectory analysis' figures; c (ciso) recorded none."""
    return [
        trial("s1", 1, "P", tool_calls=4, repeated_actions=1, failed_commands=2, cost_usd=0.0035),
        trial("s1", 2, "F", tool_calls=2, repeated_actions=0, failed_commands=0, cost_usd=None),  # unpriced
        trial("s2", 1, "F", complexity="hard", tool_calls=6, repeated_actions=3, failed_commands=1, cost_usd=0.0125),
        # an environment error: its figures must not count anywhere
        trial("s2", 2, "E", complexity="hard", tool_calls=100, repeated_actions=100, failed_commands=100,
              cost_usd=9.0),
        trial("c", 1, "P", domain="ciso", complexity="medium"),
    ]


def test_trajectory_columns_are_means_per_valid_trial():
    lines = render(trajectory_results())
    rows = cells(lines, "group")
    header = lines[1].split()
    assert header[-6:] == ["steps", "tokens", "calls", "repeats", "cmd-fails", "cost"]
    # calls (4 + 2 + 6 + c's none) / 3 trials that recorded them; repeats (1 + 0 + 3) / 3; cmd-fails (2 + 0 + 1) / 3;
    # cost: only s1 run 1 and s2 run 1 were priced: (0.0035 + 0.0125) / 2
    assert {k: rows["all"][k] for k in ("calls", "repeats", "cmd-fails", "cost")} == {
        "calls": "4.0", "repeats": "1.3", "cmd-fails": "1.0", "cost": "$0.0080"}
    assert {k: rows["hard"][k] for k in ("calls", "repeats", "cmd-fails", "cost")} == {
        "calls": "6.0", "repeats": "3.0", "cmd-fails": "1.0", "cost": "$0.0125"}
    assert {k: rows["ciso"][k] for k in ("calls", "repeats", "cmd-fails", "cost")} == {
        "calls": "-", "repeats": "-", "cmd-fails": "-", "cost": "-"}
    assert any(line.startswith("calls, repeats (actions identical to an earlier one)") for line in lines)


def test_cost_is_shown_only_when_some_trial_was_priced():
    results = [r for r in trajectory_results() if r.figures.get("cost_usd") is None or r.outcome == "error"]
    header = render(results)[1].split()
    assert header[-4:] == ["tokens", "calls", "repeats", "cmd-fails"]  # the error's cost does not count
    assert "calls" not in render(catalog())[1].split()  # results without the analysis: the table as it was
    assert not any(line.startswith("calls, repeats") for line in render(catalog()))


def test_trajectory_columns_line_up_in_both_tables():
    lines = render(trajectory_results(), verbosity=1)
    for header_start in ("group", "scenario"):
        header, body = table(lines, header_start)
        heads = list(re.finditer(r"\S+", header))
        assert heads[-1].group() == "cost"
        for line in body:
            found = list(re.finditer(r"\S+", line))
            assert len(found) == len(heads) and found[-1].end() == heads[-1].end(), line
