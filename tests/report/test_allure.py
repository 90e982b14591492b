"""Allure results written by allure-pytest in a nested run, parsed and checked."""

import json

import pytest

from pytest_itbench.report.allure import environment, results_dir, write_session_files
from pytest_itbench.report.versions import runtime_versions

from .trials import ISOLATED, analysed_trial, full_trial, trial, write_project

pytest.importorskip("allure_pytest", reason="allure-pytest is the 'allure' extra")


def allure_run(pytester, results, *args, directory="allure"):
    write_project(pytester, results)
    pytester.runpytest_subprocess(*ISOLATED, f"--alluredir={directory}", *args)
    found = {}
    for path in (pytester.path / directory).glob("*-result.json"):
        data = json.loads(path.read_text())
        found[data["name"]] = data
    return found


def labels(result, name):
    return [label["value"] for label in result["labels"] if label["name"] == name]


def session(pytester, tmp_path, *args):
    ciso = trial("ciso-host-network", 1, "P", domain="ciso", complexity="medium", checks={"posture": True},
                 mttr=12.0)
    broken = trial("sre-bad-image", 1, "E", complexity="easy")
    return allure_run(pytester, [full_trial(tmp_path), ciso, broken], *args)


@pytest.mark.parametrize("where", ["body", "makereport"])
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_labels_status_and_parameters(pytester, tmp_path, where, workers):
    found = session(pytester, tmp_path, f"--annotate-in={where}", *workers)
    sre, ciso, broken = (found["test_trial[sre-scaled-to-zero-2]"], found["test_trial[ciso-host-network-1]"],
                         found["test_trial[sre-bad-image-1]"])
    assert (labels(sre, "epic"), labels(sre, "feature"), labels(sre, "story")) == (
        ["sre"], ["astronomy-shop"], ["sre-scaled-to-zero"])
    assert labels(sre, "severity") == ["critical"] and labels(ciso, "severity") == ["normal"]
    assert labels(broken, "severity") == ["minor"]
    assert labels(ciso, "feature") == ["kyverno"]  # the CISO class, not an application
    assert "scaled-to-zero" in labels(sre, "tag")
    # the agent's miss is failed with the verdict as its message, the environment's error broken
    assert (sre["status"], ciso["status"], broken["status"]) == ("failed", "passed", "broken")
    assert "failed mitigation" in sre["statusDetails"]["message"]
    # per-run figures are parameters excluded from the history id
    figures = {p["name"]: p for p in sre["parameters"] if p["name"] != "index"}
    assert {name: p["value"] for name, p in figures.items()} == {
        "seed": "7", "mttd": "41.5", "ntam": "0.75", "steps": "6", "tokens": "1834",
        "provision (s)": "0.12", "deploy (s)": "0.5", "agent (s)": "3.25"}
    assert all(p.get("excluded") is True for p in figures.values())


def test_history_ids_do_not_move_with_the_figures(pytester, tmp_path):
    fast = trial("a", 1, "P", checks={"mitigation": True}, mttr=10.0, tokens=100)
    slow = trial("a", 1, "P", checks={"mitigation": True}, mttr=900.0, tokens=99999)
    first = allure_run(pytester, [fast], directory="one")["test_trial[a-1]"]
    second = allure_run(pytester, [slow], directory="two")["test_trial[a-1]"]
    assert {p["value"] for p in first["parameters"]} != {p["value"] for p in second["parameters"]}
    assert first["historyId"] == second["historyId"]


def test_attachments(pytester, tmp_path):
    sre = session(pytester, tmp_path)["test_trial[sre-scaled-to-zero-2]"]
    attached = {a["name"]: a for a in sre["attachments"]}
    assert list(attached) == ["verdict", "task", "trajectory", "submission", "changed objects", "events"]

    def body(name):
        return (pytester.path / "allure" / attached[name]["source"]).read_text()

    assert body("verdict") == "PASS diagnosis: diagnosis held\nFAIL mitigation: mitigation missed"
    assert body("task").startswith("The checkout service is failing.")
    assert json.loads(body("trajectory")) == [{"action": "kubectl get pods -n otel-demo", "tokens_in": 120}]
    assert attached["trajectory"]["type"] == "application/json"
    assert json.loads(body("submission"))["entities"][0]["name"] == "otel-demo/Deployment/cart"
    assert attached["changed objects"]["type"] == "application/yaml"
    assert "replicas: 1" in body("changed objects")
    assert body("events").endswith("never-written.json was not written")
    broken = session(pytester, tmp_path)["test_trial[sre-bad-image-1]"]
    error = next(a for a in broken["attachments"] if a["name"] == "error")
    assert (pytester.path / "allure" / error["source"]).read_text().startswith("the twin's API server")


@pytest.mark.parametrize("where", ["body", "makereport"])
def test_each_trajectory_step_is_an_allure_step(pytester, where):
    found = allure_run(pytester, [analysed_trial()], f"--annotate-in={where}")["test_trial[sre-loop-1]"]
    steps = found["steps"]
    assert [s["name"] for s in steps] == ["1. kubectl get pods -n shop", "2. kubectl get pods -n shop",
                                          "3. fetch_logs cart", "4. kubectl rollout undo deployment/cart"]
    # failed by the step's error, or by the exit status a kubectl step observed
    assert [s["status"] for s in steps] == ["passed", "passed", "failed", "failed"]
    assert "unknown tool 'fetch_logs'" in steps[2]["statusDetails"]["message"]
    assert "exit 1: Error from server (Forbidden)" in steps[3]["statusDetails"]["message"]
    params = [{p["name"]: p["value"] for p in s["parameters"]} for s in steps]
    assert params[0] == {"tool": "kubectl", "duration (s)": "1.500", "tokens in": "1000", "tokens out": "100"}
    assert [p["tool"] for p in params] == ["kubectl", "kubectl", "fetch_logs", "kubectl"]  # the last one inferred
    assert [p["duration (s)"] for p in params[1:]] == ["0.250", "0.000", "1.000"]
    [attached] = steps[0]["attachments"]
    assert (pytester.path / "allure" / attached["source"]).read_text() == (
        "thought:\nwhat runs?\n\naction:\nkubectl get pods -n shop\n\nobservation:\ncart-0 Running")
    # the test itself keeps its own status, attachments and figures
    assert found["status"] == "failed"
    assert {a["name"] for a in found["attachments"]} == {"trajectory", "trajectory analysis"}
    assert {p["name"]: p["value"] for p in found["parameters"]}["failed_commands"] == "2.0"


def test_session_files_from_the_controller(pytester, tmp_path):
    session(pytester, tmp_path, "-n", "2")
    directory = pytester.path / "allure"
    properties = dict(line.split("=", 1) for line in (directory / "environment.properties").read_text().splitlines())
    assert properties["agent"] == "oracle" and properties["backend"] == "twin"
    assert properties["workers"] == "2"
    assert properties["version.backend"] == "twin 1.31.0"
    assert properties["version.python"] == runtime_versions()["python"]
    categories = json.loads((directory / "categories.json").read_text())
    assert [(c["name"], c["matchedStatuses"]) for c in categories] == [
        ("Agent failures", ["failed"]), ("Environment errors", ["broken"])]


def test_categories_already_there_are_kept_and_values_escaped(tmp_path):
    (tmp_path / "categories.json").write_text(json.dumps([{"name": "Agent failures", "matchedStatuses": ["x"]},
                                                          {"name": "Flaky", "matchedStatuses": ["broken"]}]))
    write_session_files(tmp_path, {"agent": "exec:./a.sh --mode=fast", "run notes": "line one\nline two"})
    names = [(c["name"], c["matchedStatuses"]) for c in json.loads((tmp_path / "categories.json").read_text())]
    assert names == [("Agent failures", ["x"]), ("Flaky", ["broken"]), ("Environment errors", ["broken"])]
    assert (tmp_path / "environment.properties").read_text().splitlines() == [
        "agent=exec:./a.sh --mode=fast", "run\\ notes=line one\\nline two"]


def test_environment_joins_differing_values():
    a, b = trial("a", 1, "P"), trial("b", 1, "P")
    b.agent, b.versions = "noop", {"backend": "kind 1.30"}
    a.versions = {"backend": "twin 1.31.0"}
    env = environment([a, b])
    assert env["agent"] == "noop, oracle" and env["version.backend"] == "kind 1.30, twin 1.31.0"


def test_off_without_alluredir(pytester):
    config = pytester.parseconfig()
    assert results_dir(config) is None
    assert results_dir(pytester.parseconfig("--alluredir=out")) == pytester.path / "out"
    assert results_dir(pytester.parseconfig("-p", "no:allure_pytest")) is None
