"""Held-out variants (issue 17, item 4): the draw, what follows from it, bad input, and the reports.

The end-to-end checks at the bottom run the oracle (passes) and noop (fails) on the twin at variants 1 to 3
of four scenarios of different fault kinds; the whole catalog at variants 0 to 3 is benchmarks/variants.py.
"""

from __future__ import annotations

import json
import re
from xml.etree import ElementTree

import pytest

from pytest_itbench.apps.catalog import application
from pytest_itbench.plugin import _check_references
from pytest_itbench.report import junit, leaderboard
from pytest_itbench.results import PASSED, TrialResult
from pytest_itbench.scenario import catalog, variants
from pytest_itbench.scenario.loader import ScenarioError, load, loads

from .conftest import Project

SRE = catalog.bundled() / "sre"
SHOP = tuple(application("astronomy-shop").documents())
HOTEL = tuple(application("hotel-reservation").documents())
MOVABLE = {"astronomy-ad-nonexistent-image": SHOP, "astronomy-product-catalog-scaled-to-zero": SHOP,
           "net-astronomy-cart-service-selector": SHOP, "pods-hotel-geo-invalid-command": HOTEL,
           "astronomy-checkout-readiness-probe": SHOP, "pods-astronomy-email-hanging-init": SHOP}


def scenario(name: str):
    return load(SRE / f"{name}.yaml", _check_references)


# ---- the draw --------------------------------------------------------------------------------------------------
def test_the_draw_is_deterministic_and_differs_across_variants():
    names = ["cart", "currency", "checkout", "recommendation", "ad", "shipping"]
    first = [variants.pick("some-scenario", n, names) for n in range(1, 13)]
    assert first == [variants.pick("some-scenario", n, list(reversed(names))) for n in range(1, 13)]
    # variants 1..k are k different targets, and so are k+1..2k (a new round, in another order)
    assert sorted(first[:6]) == sorted(names) and sorted(first[6:]) == sorted(names)
    assert first[:6] != first[6:]
    # another scenario draws in another order
    assert first[:6] != [variants.pick("another-scenario", n, names) for n in range(1, 7)]


def test_the_draw_does_not_depend_on_the_trial_seed_or_the_run():
    # the draw takes (N, scenario) only: rendering twice, in any order, gives the same scenario
    s = scenario("astronomy-product-catalog-scaled-to-zero")
    one = [variants.render(s, n, SHOP)[1].drawn for n in (3, 1, 2)]
    two = [variants.render(s, n, SHOP)[1].drawn for n in (3, 1, 2)]
    assert one == two and len(set(one)) == 3 and s.faults[0].target.name not in one


@pytest.mark.parametrize("name", sorted(MOVABLE))
def test_variant_zero_is_the_scenario_as_written(name):
    s = scenario(name)
    rendered, drawn = variants.render(s, 0, MOVABLE[name])
    assert rendered is s and drawn.variant == 0
    assert variants.task_id(s, 0) == s.id


def test_a_scenario_whose_target_cannot_move_runs_unchanged_as_variant_zero():
    s = scenario("flag-ad-failure")
    assert s.variants is None
    rendered, drawn = variants.render(s, 3, SHOP)
    assert rendered is s and drawn.variant == 0


# ---- what follows from the draw ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MOVABLE))
@pytest.mark.parametrize("n", [1, 2, 3])
def test_ground_truth_task_alerts_and_actions_follow_the_draw(name, n):
    s = scenario(name)
    documents = MOVABLE[name]
    rendered, drawn = variants.render(s, n, documents)
    public, new = s.faults[0].target.name, drawn.drawn
    assert drawn.variant == n and new != public and drawn.public == public
    assert rendered.faults[0].target.name == new
    assert rendered.faults[0].target.kind == s.faults[0].target.kind
    truth = rendered.truth
    root = [g for g in truth.groups if g.root_cause]
    assert root and all(re.search(p, new) for g in root for p in g.filter)
    assert not any(re.search(p, public) for g in root for p in g.filter)
    text = json.dumps(rendered.ground_truth)
    assert not re.search(rf"(?<![\w-]){re.escape(public)}(?![\w])", text.replace("frontend-proxy", "")), text
    assert any(new in action for action in truth.recommended_actions)
    assert not any(re.search(rf"[/= ]{re.escape(public)}\b", a) for a in truth.recommended_actions)
    assert rendered.expected_alerts == s.expected_alerts  # these targets raise the public target's alerts
    assert not re.search(rf"(?<![\w-]){re.escape(public)}(?![\w])", rendered.task)
    assert rendered.title.endswith(f"(variant {n})")
    # the oracle is handed the rendered scenario: its diagnosis names the drawn target
    from pytest_itbench.agents.oracle import Oracle
    assert Oracle(rendered).scenario.truth.groups[0].filter != s.truth.groups[0].filter


def test_the_container_argument_follows_the_target_by_its_place_in_the_pod():
    s = scenario("pods-hotel-geo-invalid-command")
    assert s.faults[0].args["container"] == "hotel-reserv-geo"
    for n in range(1, 8):
        rendered, drawn = variants.render(s, n, HOTEL)
        assert rendered.faults[0].args["container"] == f"hotel-reserv-{drawn.drawn}"


def test_a_target_of_its_own_gives_its_own_expected_alerts():
    text = (SRE / "astronomy-product-catalog-scaled-to-zero.yaml").read_text().replace(
        "targets: [cart, currency, checkout, recommendation, ad, shipping]",
        "targets: [{name: cart, expected_alerts: [HighRequestErrorRate, KubeDeploymentReplicasMismatch]}]")
    s = loads(text, "x.yaml", _check_references)
    rendered, drawn = variants.render(s, 5, SHOP)
    assert drawn.drawn == "cart"
    assert rendered.expected_alerts == ("HighRequestErrorRate", "KubeDeploymentReplicasMismatch")


def test_names_move_as_tokens_not_inside_longer_names():
    names = frozenset({"frontend", "frontend-proxy", "cart", "valkey-cart"})
    moved = variants._substitute(
        ["^cart$", "^cart-", "deployment/cart", "valkey-cart", "frontend-proxy", "cart-deploy", "=cart", "carts"],
        {"cart": "ad"}, names)
    assert moved == ["^ad$", "^ad-", "deployment/ad", "valkey-cart", "frontend-proxy", "ad-deploy", "=ad", "carts"]
    assert variants._substitute("frontend and frontend-proxy", {"frontend": "cart"}, names) == \
        "cart and frontend-proxy"


def test_the_agent_is_not_told_the_public_id_at_a_held_out_variant():
    s = scenario("astronomy-product-catalog-scaled-to-zero")
    held_out = variants.task_id(s, 2)
    assert "product-catalog" not in held_out and held_out.startswith("sre-held-out-")
    assert held_out == variants.task_id(s, 2) != variants.task_id(s, 3)


# ---- bad input ---------------------------------------------------------------------------------------------------
def _with_variants(block: str) -> str:
    text = (SRE / "astronomy-product-catalog-scaled-to-zero.yaml").read_text()
    return text[:text.index("variants:")] + block


def test_a_target_the_application_does_not_have_names_the_file_and_line():
    text = _with_variants("variants:\n  targets: [cart, basket]\n")
    with pytest.raises(ScenarioError) as caught:
        loads(text, "scenarios/sre/x.yaml", _check_references)
    line = text.splitlines().index("  targets: [cart, basket]") + 1
    message = str(caught.value)
    assert f"scenarios/sre/x.yaml:{line}: variants.targets[1]:" in message
    assert "no Deployment in namespace astronomy-shop called 'basket'" in message


@pytest.mark.parametrize("block, expected", [
    ("variants:\n  fault: 3\n  targets: [cart]\n", "variants.fault: 3 is not the index"),
    ("variants:\n  targets: [product-catalog]\n", "no eligible target besides the public one"),
    ("variants:\n  targets: [cart]\n  select: {stateless: true}\n", "either targets"),
    ("variants:\n  targets: [frontend]\n", "group ids must be unique"),  # frontend-svc would be there twice
    ("variants:\n  select: {exclude: [nosuch]}\n", "variants.select.exclude[0]: the application"),
])
def test_bad_variants_sections_are_collection_errors(block, expected):
    with pytest.raises(ScenarioError) as caught:
        loads(_with_variants(block), "x.yaml", _check_references)
    assert expected in str(caught.value)


def test_a_task_naming_the_public_target_in_prose_is_refused():
    text = _with_variants("variants:\n  targets: [cart]\n").replace("Find the root cause",
                                                                    "The product catalog fails. Find the root cause")
    assert "The product catalog fails" in text
    with pytest.raises(ScenarioError, match="still names the public target"):
        loads(text, "x.yaml", _check_references)


def test_a_negative_variant_is_a_usage_error_naming_the_option(tmp_path):
    project = Project(tmp_path)
    project.scenario("tiny")
    done = project.subprocess("--itbench-agent=noop", "--itbench-variant=-1", "tiny.yaml")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "--itbench-variant=-1: a variant is 0 (the public catalog) or a positive number" in done.stderr


def test_collection_names_the_variant_in_the_test_id(tmp_path):
    project = Project(tmp_path)
    moving = str(SRE / "astronomy-product-catalog-scaled-to-zero.yaml")
    fixed = str(SRE / "flag-ad-failure.yaml")
    listed = project.subprocess("--collect-only", "-q", "--itbench-variant=2", "--itbench-runs=2", moving, fixed)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    ids = [line.split("::")[-1] for line in listed.stdout.splitlines() if "::" in line]
    assert ids == ["sre-astronomy-product-catalog-scaled-to-zero[variant2-run1]",
                   "sre-astronomy-product-catalog-scaled-to-zero[variant2-run2]",
                   "sre-flag-ad-failure[run1]", "sre-flag-ad-failure[run2]"]  # cannot move: variant 0
    public = project.subprocess("--collect-only", "-q", moving)
    assert "::sre-astronomy-product-catalog-scaled-to-zero\n" in public.stdout + "\n"


# ---- reports -----------------------------------------------------------------------------------------------------
def _result(variant: int, outcome: str = PASSED) -> TrialResult:
    return TrialResult(scenario_id="astronomy-product-catalog-scaled-to-zero", domain="sre", complexity="easy",
                       agent="oracle", run=1, seed=7, outcome=outcome, variant=variant)


def test_reports_carry_the_variant():
    held_out, public = _result(2), _result(0)
    assert held_out.trial_id == "astronomy-product-catalog-scaled-to-zero@v2"
    assert public.trial_id == public.scenario_id
    assert ("itbench.variant", "2") in junit.properties(held_out)
    assert ("itbench.variant", "0") in junit.properties(public)
    assert junit.failure_message(_result(2, "failed")).startswith("astronomy-product-catalog-scaled-to-zero@v2 run 1")
    assert TrialResult.from_dict(held_out.to_dict()).variant == 2
    old = {k: v for k, v in public.to_dict().items() if k != "variant"}  # a record written before variants
    assert TrialResult.from_dict(old).variant == 0
    # the leaderboard counts a held-out variant as a scenario of its own
    lines = leaderboard.render([held_out, public], verbosity=1)
    assert any(line.startswith("astronomy-product-catalog-scaled-to-zero@v2 ") for line in lines)
    assert "2 trials of 2 scenarios" in lines[0]


# ---- end to end, on the twin ---------------------------------------------------------------------------------------
# Two fault kinds, one per application: a Deployment scaled to zero and a command that cannot run. Every movable
# scenario's draw is checked above without a trial; each at variants 1 to 3: python -m benchmarks.variants.
END_TO_END = ("astronomy-product-catalog-scaled-to-zero", "pods-hotel-geo-invalid-command")


@pytest.mark.end_to_end
@pytest.mark.parametrize("n", [1])  # variants 2 and 3 (and every target): python -m benchmarks.variants
def test_the_oracle_passes_and_noop_fails_drawn_variants(tmp_path, n):
    files = [str(SRE / f"{name}.yaml") for name in END_TO_END]
    project = Project(tmp_path)
    project.write("conftest.py", "")  # the catalog's own evaluators only
    oracle = project.subprocess("--itbench-agent=oracle", f"--itbench-variant={n}", "--itbench-results=o.jsonl",
                                "--junitxml=o.xml", *files, timeout=900)
    assert oracle.returncode == 0, oracle.stdout[-6000:] + oracle.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert {(r["scenario_id"], r["variant"], r["outcome"]) for r in records} == {(s, n, "passed") for s in END_TO_END}
    for record in records:
        s = scenario(record["scenario_id"])
        rendered, drawn = variants.render(s, n, MOVABLE[s.id])
        task = next(a["content"] for a in record["attachments"] if a["name"] == "task")
        assert task["text"] == rendered.task and task["scenario_id"] == variants.task_id(s, n)
        changed = next(a["content"] for a in record["attachments"] if a["name"] == "changed objects")
        assert [o["metadata"]["name"] for o in changed] == [drawn.drawn]  # the fault hit the drawn target
        assert {c["name"]: c["passed"] for c in record["checks"]} == {"diagnosis": True, "mitigation": True, "safety": True}
    properties = {(p.get("name"), p.get("value")) for p in ElementTree.parse(tmp_path / "o.xml").iter("property")}
    assert ("itbench.variant", str(n)) in properties
    assert f"@v{n}" in oracle.stdout or "2 trials of 2 scenarios" in oracle.stdout

    noop = project.subprocess("--itbench-agent=noop", f"--itbench-variant={n}", "--itbench-results=n.jsonl",
                              "--itbench-noise=off", *files, timeout=900)  # noise is tested in tests/noise
    assert noop.returncode == 1, noop.stdout[-6000:] + noop.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "n.jsonl").read_text().splitlines()]
    assert {(r["scenario_id"], r["variant"], r["outcome"]) for r in records} == {(s, n, "failed") for s in END_TO_END}
