"""Scenario files: schema, computed complexity, and errors that name the file, line and field."""

import pytest

from pytest_itbench.scenario import ScenarioError, loads
from pytest_itbench.scenario.durations import parse_duration

VALID = """\
id: sre-checkout-wrong-port
title: Checkout cannot reach the cart
domain: sre
application: astronomy-shop
complexity_inputs: {chain_length: 3, resolution_steps: 2, technologies: 2}
faults:
  - fault: modified-kubernetes-workload-container-environment-variable
    target: {kind: Deployment, namespace: astronomy-shop, name: checkout}
    args: {container: checkout, env: {name: CART_ADDR, value: "cart:7071"}}
expected_alerts: [HighRequestErrorRate]
task: Find the root cause and restore the service.
time_limit: 15m
evaluation: {require: [diagnosis, mitigation], stability_window: 5m}
ground_truth:
  groups:
    - {id: checkout, kind: Deployment, namespace: astronomy-shop, filter: ["^checkout$"], root_cause: true}
    - {id: cart-svc, kind: Service, namespace: astronomy-shop, filter: ["^cart$"]}
  aliases: [[checkout]]
  propagations: [{source: checkout, target: cart-svc, condition: wrong port, effect: connection refused}]
  recommended_actions: ["kubectl -n astronomy-shop rollout undo deployment/checkout"]
"""


def test_a_valid_scenario_loads_with_durations_and_computed_complexity():
    s = loads(VALID, "s.yaml")
    assert s.time_limit == 900 and s.evaluation.stability_window == 300
    assert round(s.complexity_inputs.score, 3) == 2.289 and s.level == "medium"
    assert s.truth.groups[0].root_cause and s.faults[0].target.name == "checkout"


@pytest.mark.parametrize("text,seconds", [("60", 60.0), (" 2.5 ", 2.5), ("90s", 90.0), ("1h30m", 5400.0), (45, 45.0)])
def test_durations_read_a_bare_number_as_seconds(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["0", "0.0", "-5", "1.", "soon", "5 m", ""])
def test_what_is_not_a_duration(text):
    with pytest.raises(ValueError, match="is not a duration|must be positive"):
        parse_duration(text)


@pytest.mark.parametrize("change,expected", [
    (("title: Checkout cannot reach the cart\n", ""), "s.yaml:1: title: Field required"),
    (("time_limit: 15m", "time_limit: soon"), "s.yaml:12: time_limit: 'soon' is not a duration"),
    (("complexity_inputs: {chain_length: 3,", "complexity_inputs: {chain_length: 0,"),
     "s.yaml:5: complexity_inputs.chain_length: Input should be greater than or equal to 1"),
    (("domain: sre", "domain: netops"), "s.yaml:3: domain: Input should be 'sre', 'ciso' or 'finops'"),
    (("task: Find", "tusk: Find"), "s.yaml:11: tusk: unknown field"),
    (("filter: [\"^cart$\"]}", "filter: [\"^ca(rt$\"]}"), "is not a regular expression"),
    (("target: cart-svc,", "target: nowhere,"), "names unknown group 'nowhere'"),
    (("id: sre-checkout-wrong-port", "id: Bad_Id"), "s.yaml:1: id: an id is lowercase letters"),
])
def test_bad_files_name_file_line_and_field(change, expected):
    old, new = change
    with pytest.raises(ScenarioError) as exc:
        loads(VALID.replace(old, new), "s.yaml")
    assert expected in str(exc.value)


def test_a_stated_complexity_must_agree_with_the_inputs():
    with pytest.raises(ScenarioError, match="complexity 'hard' contradicts complexity_inputs"):
        loads(VALID.replace("application:", "complexity: hard\napplication:"), "s.yaml")


def test_yaml_syntax_errors_have_a_line():
    with pytest.raises(ScenarioError, match=r"s.yaml:4: not valid YAML"):  # where the parser gave up
        loads("id: x\ntitle: y\ndomain: [sre\n", "s.yaml")
    with pytest.raises(ScenarioError, match="a scenario file is a YAML mapping"):
        loads("- just\n- a list\n", "s.yaml")


@pytest.mark.parametrize("line,level", [("noise: heavy", "heavy"), ("noise: off", "off"), ("noise: light", "light"),
                                        ("", None)])
def test_an_sre_scenario_chooses_its_noise(line, level):
    assert loads(VALID + line + "\n", "s.yaml").noise == level  # a bare YAML off is false: read as off


def test_a_noise_level_that_does_not_exist_names_the_field_and_the_choices():
    with pytest.raises(ScenarioError, match=r"s\.yaml:\d+.*noise.*'off', 'light' or 'heavy'|s\.yaml.*noise"):
        loads(VALID + "noise: loud\n", "s.yaml")


def test_only_sre_scenarios_take_noise():
    ciso = VALID.replace("domain: sre", "domain: finops")
    with pytest.raises(ScenarioError, match="only SRE scenarios take noise"):
        loads(ciso + "noise: heavy\n", "s.yaml")
