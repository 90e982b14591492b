"""itbench-report compare: contestants side by side over the scenarios they all ran, and its errors."""

from __future__ import annotations

import pytest

from pytest_itbench.report import cli
from pytest_itbench.report.compare import CompareError, compare, parse, render

from .contestants import files, runs, specs, write
from .test_leaderboard import cells


def test_the_figures_are_over_the_shared_scenarios_and_shards_of_one_contestant_are_gathered(tmp_path):
    comparison, notes = compare(specs(tmp_path))
    assert comparison.labels == ["gpt", "claude"]
    assert [len(c.results) for c in comparison.contestants] == [6, 6]  # claude's s-extra left out
    assert comparison.left_out == {"claude": ["s-extra"]}
    assert any("claude: 1 scenario(s) the others did not run are left out" in n and "s-extra" in n for n in notes)
    overall = dict(comparison.blocks()[0])
    assert round(overall["gpt"].pass_at[1], 4) == 0.5 and round(overall["claude"].pass_at[1], 4) == 0.6667
    assert round(overall["gpt"].pass_at[2], 4) == 0.6667 and overall["claude"].pass_at[2] == 1.0
    assert round(overall["gpt"].pass_hat[2], 4) == round(overall["claude"].pass_hat[2], 4) == 0.3333
    assert overall["gpt"].cost_usd == pytest.approx(0.01) and overall["claude"].tokens == 3000
    assert comparison.differences() == ["s-medium"]


def test_the_text_shows_each_group_per_contestant_and_where_they_differ(tmp_path):
    lines = render(compare(specs(tmp_path))[0])
    assert lines[0] == ("3 scenario(s) compared: gpt (agent openai, 6 trials); claude (agent exec:claude.sh, "
                        "6 trials)")
    header = next(line for line in lines if line.startswith("group"))
    rows = [line.split() for line in lines[lines.index(header) + 1:] if line and not line.startswith("-")]
    rows = rows[:rows.index(["scenarios", "where", "they", "differ:", "1", "of", "3"])]
    by_group = {(row[0], row[1]): dict(zip(header.split(), row)) for row in rows}
    assert set(by_group) == {(g, c) for g in ("all", "sre", "easy", "medium", "hard") for c in ("gpt", "claude")}
    assert by_group["all", "gpt"]["pass@1"] == "50.0±28.9" and by_group["all", "claude"]["pass@1"] == "66.7±16.7"
    assert by_group["all", "gpt"]["pass@2"] == "66.7" and by_group["all", "claude"]["pass@2"] == "100.0"
    assert by_group["medium", "gpt"]["pass@1"] == "0.0" and by_group["medium", "claude"]["pass@1"] == "50.0"
    assert by_group["all", "claude"]["cost"] == "$0.0200" and by_group["all", "gpt"]["tokens"] == "1,000"
    table = lines[lines.index("scenarios where they differ: 1 of 3") + 1:]
    assert table[0].split() == ["scenario", "gpt", "claude"] and table[1].split() == ["s-medium", "FF", "PF"]


def test_the_command_prints_the_comparison_and_the_notes(tmp_path, capsys):
    assert cli.main(["compare", *specs(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "scenarios where they differ: 1 of 3" in out and "s-medium" in out
    assert "note: claude: 1 scenario(s) the others did not run" in err


def test_a_label_defaults_to_the_file_stem():
    assert parse(["runs/gpt.jsonl", "claude=a.jsonl", "claude=b.jsonl"]) == [
        ("gpt", ["runs/gpt.jsonl"]), ("claude", ["a.jsonl", "b.jsonl"])]


@pytest.mark.parametrize("make, words", [
    (lambda t, f: [f"gpt={f['gpt'][0]}"], "name two contestants or more"),
    (lambda t, f: [f"gpt={f['gpt'][0]}", f"x={t / 'missing.jsonl'}"], "contestant x: "),
    (lambda t, f: ["gpt=", f"claude={f['claude'][0]}"], "'gpt=': no results file after '='"),
    # one contestant's files must be shards of one selection
    (lambda t, f: [f"gpt={f['gpt'][0]}", f"gpt={f['claude'][0]}", f"c={f['claude'][0]}"],
     "contestant gpt: these results are of different selections"),
    (lambda t, f: [f"gpt={f['gpt'][0]}",
                   "other=" + write(t / "other.jsonl", runs("noop", "s", {"s-extra": "F"}, 0, 0))],
     "the contestants ran no scenario in common"),
])
def test_what_cannot_be_compared_is_a_clear_error(tmp_path, capsys, make, words):
    given = make(tmp_path, files(tmp_path))
    with pytest.raises(CompareError, match=words.replace("(", r"\(")):
        compare(given)
    assert cli.main(["compare", *given]) == 2
    assert words in capsys.readouterr().err


def test_an_empty_file_is_a_contestant_without_trials(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(CompareError, match="contestant empty: .*empty.jsonl hold no trials"):
        compare([str(tmp_path / "empty.jsonl"), *specs(tmp_path)])


def test_the_leaderboard_rows_of_one_group_line_up(tmp_path):
    lines = render(compare(specs(tmp_path))[0])
    rows = cells(lines, "group")  # every row has as many cells as the header
    assert set(rows) == {"all", "sre", "easy", "medium", "hard"}  # keyed by group (its last row)


def test_pass_at_k_goes_as_far_as_the_contestants_own_runs(tmp_path):
    comparison, _ = compare(specs(tmp_path))
    assert comparison.ks == [1, 2]  # two runs each, though both together hold four of a scenario
