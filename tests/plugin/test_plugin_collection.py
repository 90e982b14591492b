"""Collection: scenario files become ordinary test items with stable ids, markers and keywords."""

from __future__ import annotations

import pytest

from pytest_itbench.scenario import catalog

from .conftest import ANSWERING_SCRIPT, SRE_SCENARIO, scenario_text


def collected(result) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def three_domains(bench):
    bench.scenario("finops/budget", tags=("budget",))
    bench.scenario("ciso/host-network", domain="ciso", complexity="hard")
    bench.write("sre/shop-catalog-down.yaml", SRE_SCENARIO)


def test_node_ids_name_domain_and_scenario_and_are_stable(bench):
    three_domains(bench)
    first = bench.run("--collect-only", "-q")
    assert collected(first) == [
        "ciso/host-network.yaml::ciso-host-network",
        "finops/budget.yaml::finops-budget",
        "sre/shop-catalog-down.yaml::sre-shop-catalog-down",
    ]
    # another run, and a run from a different order of arguments, give the same ids
    assert collected(bench.run("--collect-only", "-q")) == collected(first)
    again = bench.run("--collect-only", "-q", "sre", "finops", "ciso")
    assert sorted(collected(again)) == collected(first)


def test_an_id_already_starting_with_its_domain_is_not_prefixed_twice(bench):
    bench.scenario("x", sid="finops-idle-nodes")
    assert collected(bench.run("--collect-only", "-q")) == ["x.yaml::finops-idle-nodes"]


def test_markers_select_by_domain_and_complexity(bench):
    three_domains(bench)
    bench.scenario("ciso/easy-one", domain="ciso", complexity="easy")
    result = bench.run("--collect-only", "-q", "-m", "sre and easy")
    assert collected(result) == ["sre/shop-catalog-down.yaml::sre-shop-catalog-down"]
    result = bench.run("--collect-only", "-q", "-m", "ciso")
    assert collected(result) == ["ciso/easy-one.yaml::ciso-easy-one", "ciso/host-network.yaml::ciso-host-network"]
    result = bench.run("--collect-only", "-q", "-m", "easy and not sre")
    assert collected(result) == ["ciso/easy-one.yaml::ciso-easy-one", "finops/budget.yaml::finops-budget"]
    # the markers are registered: --strict-markers accepts them
    assert bench.run("--collect-only", "-q", "--strict-markers", "-m", "itbench").ret == 0


def test_items_carry_application_and_fault_markers(bench):
    three_domains(bench)
    items, _ = bench.pytester.inline_genitems("-p", "no:cacheprovider")
    by_name = {item.name: item for item in items}
    sre = by_name["sre-shop-catalog-down"]
    assert {m.name for m in sre.iter_markers()} >= {"itbench", "sre", "easy", "application", "fault"}
    assert sre.get_closest_marker("application").args == ("astronomy-shop",)
    assert [m.args for m in sre.iter_markers("fault")] == [("scaled-to-zero-kubernetes-workload",)]
    ciso = by_name["ciso-host-network"]
    assert {m.name for m in ciso.iter_markers()} == {"itbench", "ciso", "hard"}
    # ordinary test functions: fixtures and the scenario file as their location
    assert all(isinstance(item, pytest.Function) for item in items)
    assert "itbench_trial" in sre.fixturenames


def test_k_selects_by_id_domain_application_fault_and_tag(bench):
    three_domains(bench)

    def selected(expression):
        return [nid.split("::")[1] for nid in collected(bench.run("--collect-only", "-q", "-k", expression))]

    assert selected("ciso") == ["ciso-host-network"]
    assert selected("budget") == ["finops-budget"]  # id and tag
    assert selected("astronomy-shop") == ["sre-shop-catalog-down"]  # the application
    assert selected("scaled-to-zero-kubernetes-workload") == ["sre-shop-catalog-down"]  # the fault
    assert selected("not sre") == ["ciso-host-network", "finops-budget"]


def test_runs_make_one_item_per_trial(bench):
    bench.scenario("budget")
    result = bench.run("--collect-only", "-q", "--itbench-runs=3")
    assert collected(result) == [f"budget.yaml::finops-budget[run{n}]" for n in (1, 2, 3)]
    # each run is its own test: one of them can be selected alone
    result = bench.run("--collect-only", "-q", "--itbench-runs=3", "budget.yaml::finops-budget[run2]")
    assert collected(result) == ["budget.yaml::finops-budget[run2]"]


def test_a_bad_file_fails_collection_with_file_line_and_field_and_the_others_still_run(bench):
    bench.scenario("good")
    bench.write("bad-field.yaml", """\
        id: bad-field
        title: A time limit that is no duration
        domain: ciso
        complexity: easy
        task: x
        time_limit: soon
        ground_truth: {}
        """)
    bench.write("bad-yaml.yaml", "domain: finops\nid: [unclosed\n")
    bench.write("bad-fault.yaml", SRE_SCENARIO.replace("scaled-to-zero-kubernetes-workload", "no-such-fault"))
    bench.program("agent.sh", ANSWERING_SCRIPT)
    result = bench.run("--itbench-agent=exec:./agent.sh", ".")
    result.assert_outcomes(passed=1, errors=3)
    assert result.ret != 0  # the session still says something was wrong
    output = result.stdout.str()
    assert f"{bench.path / 'bad-field.yaml'}:6: time_limit: 'soon' is not a duration" in output
    assert f"{bench.path / 'bad-yaml.yaml'}:3: not valid YAML" in output
    assert f"{bench.path / 'bad-fault.yaml'}:7: faults[0].fault:" in output and "no-such-fault" in output
    assert "Traceback" not in output  # the reason, not the plugin's stack


def test_yaml_files_that_are_not_scenarios_are_left_alone(bench):
    bench.scenario("budget")
    bench.write("deploy.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")
    bench.write("solution.yml", "domain_notes: this mentions domain: sre but not at top level\n  domain: sre\n")
    bench.write("values.yaml", "{{ not: even: yaml\n")
    result = bench.run("--collect-only", "-q")
    assert collected(result) == ["budget.yaml::finops-budget"]
    assert result.ret == 0


def test_without_an_agent_scenarios_are_skipped_with_the_reason(bench):
    bench.scenario("budget")
    bench.scenario("posture", domain="ciso")
    result = bench.run("-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] budget.yaml:1: no agent to run: pass --itbench-agent=NAME *",
                                 "SKIPPED [[]1[]] posture.yaml:1: no agent to run: pass --itbench-agent=NAME *"])


def test_no_paths_with_an_agent_runs_the_bundled_catalog_not_testpaths(bench):
    bench.write("pytest.ini", "[pytest]\ntestpaths = tests\n")
    bench.write("tests/test_unit.py", "def test_unit():\n    pass\n")
    result = bench.run("--itbench-agent=noop", "--collect-only", "-q")
    files = {nid.split("::")[0] for nid in collected(result)}
    shipped = catalog.bundled()
    assert {"sre/astronomy-product-catalog-scaled-to-zero.yaml", "sre/astronomy-ad-nonexistent-image.yaml"} <= files
    assert all(catalog.is_scenario_file(shipped / name) for name in files)
    assert not any("test_unit" in line for line in result.outlines)
    # without an agent, testpaths is honoured as usual
    assert collected(bench.run("--collect-only", "-q")) == ["tests/test_unit.py::test_unit"]
    # --itbench-catalog adds the catalog to the paths given
    result = bench.run("--itbench-agent=noop", "--itbench-catalog", "--collect-only", "-q", "tests")
    assert {nid.split("::")[0] for nid in collected(result)} == files | {"tests/test_unit.py"}


def test_a_broken_python_test_file_still_stops_the_session(bench):
    bench.scenario("good")
    bench.write("bad-field.yaml", scenario_text("bad-field", time_limit="soon"))
    bench.write("test_broken.py", "def test_x(:\n    pass\n")
    result = bench.run("--itbench-agent=noop", ".")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*Interrupted: 2 errors during collection*"])
