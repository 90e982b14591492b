"""The leaderboard's numbers against a hand computation.

Three scenarios:
  a (sre, easy)    runs P F P F   -> n=4, c=2
  b (sre, hard)    runs F F F E   -> n=3 valid, c=0, one environment error
  c (ciso, medium) runs P P P P   -> n=4, c=4
"""

import math

import pytest

from pytest_itbench.report.figures import per_scenario, sections, shown_k, summarize

from .trials import trial

INF = math.inf


def catalog():
    ok, miss = True, False
    return [
        trial("a", 1, "P", checks={"diagnosis": ok, "mitigation": ok}, mttd=30, mttr=100, ntam=0.8, steps=4,
              tokens=1000),
        trial("a", 2, "F", checks={"diagnosis": ok, "mitigation": miss}, mttd=50, mttr=400, ntam=0.2, steps=6,
              tokens=2000),
        trial("a", 3, "P", checks={"diagnosis": ok, "mitigation": ok}, mttd=70, mttr=300, ntam=0.6, steps=8,
              tokens=3000),
        trial("a", 4, "F", checks={"diagnosis": miss, "mitigation": miss}, mttd=10, mttr=None, ntam=None,
              steps=10, tokens=4000),
        trial("b", 1, "F", complexity="hard", checks={"diagnosis": ok, "mitigation": miss}, mttd=90, ntam=0.1,
              steps=3, tokens=500),
        trial("b", 2, "F", complexity="hard", checks={"diagnosis": miss, "mitigation": miss}, ntam=0.3, steps=5,
              tokens=500),
        trial("b", 3, "F", complexity="hard", checks={"diagnosis": miss}, steps=7, tokens=500),
        # an environment error: its figures must not count anywhere
        trial("b", 4, "E", complexity="hard", mttd=5, mttr=5, ntam=0.9, steps=100, tokens=99999),
        # CISO: no diagnosis or mitigation check, so the trial's outcome decides what counts as a success
        trial("c", 1, "P", domain="ciso", complexity="medium", checks={"posture": ok}, mttr=20),
        trial("c", 2, "P", domain="ciso", complexity="medium", checks={"posture": ok}, mttr=INF),
        trial("c", 3, "P", domain="ciso", complexity="medium", checks={"posture": ok}),
        trial("c", 4, "P", domain="ciso", complexity="medium", checks={"posture": ok}),
    ]


def test_k_runs_up_to_the_most_runs_per_scenario():
    assert shown_k(catalog()) == [1, 2, 3, 4]
    ten = [trial("x", i, "P") for i in range(1, 11)]
    assert shown_k(ten) == [1, 2, 3, 5, 10]
    assert shown_k([trial("x", 1, "P")]) == [1]
    assert shown_k([]) == []


def test_overall_figures_match_the_hand_computation():
    figures = summarize("all", catalog(), [1, 2, 3, 4])
    assert (figures.trials, figures.scenarios, figures.passed, figures.failed, figures.errors) == (12, 3, 6, 5, 1)

    # pass@1 per scenario: a 2/4, b 0/3, c 4/4 -> mean 0.5; sample sd of (0.5, 0, 1) is 0.5
    assert figures.pass_at[1] == pytest.approx(0.5)
    assert figures.stderr == pytest.approx(0.5 / math.sqrt(3))
    # pass@2: a 1 - C(2,2)/C(4,2) = 5/6; b 1 - C(3,2)/C(3,2) = 0; c 1
    assert figures.pass_at[2] == pytest.approx((5 / 6 + 0 + 1) / 3)
    # pass@3: a has fewer failures (2) than k, so 1; b 0; c 1
    assert figures.pass_at[3] == pytest.approx(2 / 3)
    # pass@4: b has only three valid runs, so no figure rather than one over fewer scenarios
    assert figures.pass_at[4] is None

    # NTAM per scenario: a (0.8+0.2+0.6)/3, b (0.1+0.3)/2 (the errored 0.9 left out); c unscored
    assert figures.ntam == pytest.approx(((0.8 + 0.2 + 0.6) / 3 + 0.2) / 2)
    # MTTD over passed diagnoses: a 30, 50, 70 and b 90 (a's 10 missed, b's error 5 left out)
    assert figures.mttd == pytest.approx(60)
    # MTTR over passed mitigations: a 100 and 300 (400 came with a failed mitigation), c 20 (its
    # infinite time is no time at all) -> median 100
    assert figures.mttr == pytest.approx(100)
    # steps and tokens: the seven valid trials that recorded them
    assert figures.steps == pytest.approx((4 + 6 + 8 + 10 + 3 + 5 + 7) / 7)
    assert figures.tokens == pytest.approx((1000 + 2000 + 3000 + 4000 + 500 * 3) / 7)


def test_sections_group_by_domain_then_complexity():
    blocks = sections(catalog(), [1, 2, 3, 4])
    assert [[f.label for f in block] for block in blocks] == [["all"], ["sre", "ciso"], ["easy", "medium", "hard"]]
    sre, ciso = blocks[1]
    assert sre.pass_at[1] == pytest.approx(0.25)
    assert sre.stderr == pytest.approx(0.25)  # sd of (0.5, 0) is sqrt(0.125); over sqrt(2)
    assert sre.pass_at[2] == pytest.approx(5 / 12)
    assert sre.pass_at[4] is None
    assert sre.mttr == pytest.approx(200)  # median of 100 and 300
    assert ciso.pass_at == {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}
    assert ciso.stderr is None  # one scenario: no spread to speak of
    assert ciso.ntam is None and ciso.mttd is None and ciso.steps is None
    easy, medium, hard = blocks[2]
    assert easy.pass_at[4] == 1.0  # all four runs drawn: they include a's two passes
    assert (hard.trials, hard.errors, hard.pass_at[1]) == (4, 1, 0.0)


def test_a_scenario_whose_trials_all_errored_drops_out_of_pass_at_k():
    results = [trial("a", 1, "P"), trial("z", 1, "E")]
    figures = summarize("all", results, [1])
    assert (figures.scenarios, figures.errors, figures.pass_at[1]) == (2, 1, 1.0)
    only_errors = summarize("all", [trial("z", 1, "E")], [1])
    assert only_errors.pass_at[1] is None and only_errors.steps is None


def test_per_scenario_rows():
    rows = {f.label: f for f in per_scenario(catalog(), [1, 2])}
    assert list(rows) == ["a", "b", "c"]
    assert rows["a"].pass_at[2] == pytest.approx(5 / 6)
    assert rows["b"].errors == 1 and rows["b"].mttd == pytest.approx(90)
