"""Noise in whole trials through the plugin: --itbench-noise, the scenario's noise:, the records it leaves, and
fairness: blaming a distractor costs the diagnosis, while the correct repair still passes at heavy noise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_itbench.report.jsonl import load

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "sre"
SCENARIO = "astronomy-cart-service-target-port.yaml"

AGENTS = r'''
import json

from pytest_itbench.agents import Submission
from pytest_itbench.agents.kubectl import Kubectl

NS = "astronomy-shop"
FIX = ["-n", NS, "patch", "service", "cart", "--type=json",
       "-p", '[{"op":"replace","path":"/spec/ports/0/targetPort","value":8080}]']
CART = {"name": f"{NS}/Service/cart", "contributing_factor": True}


def newest_rollout(task):
    """The Deployment whose newest ReplicaSet is the youngest: what a naive agent suspects first."""
    listing = json.loads(Kubectl(task).run(["-n", NS, "get", "replicasets", "-o", "json"]).stdout)
    owned = [(rs["metadata"]["creationTimestamp"], rs["metadata"]["ownerReferences"][0]["name"])
             for rs in listing["items"] if rs["metadata"].get("ownerReferences")]
    return max(owned)[1]


class Repair:
    def run(self, task, trajectory):
        Kubectl(task).run(FIX)
        return Submission(diagnosis={"entities": [CART]})


class BlameTheNewestRollout:
    """Repairs the cart, and also names the Deployment rolled out last as a cause."""
    def run(self, task, trajectory):
        suspect = newest_rollout(task)
        Kubectl(task).run(FIX)
        return Submission(diagnosis={"entities": [CART, {"name": f"{NS}/Deployment/{suspect}",
                                                         "contributing_factor": True}]}, notes=suspect)
'''


@pytest.fixture
def shop(pytester):
    shutil.copy(SCENARIOS / SCENARIO, pytester.path / SCENARIO)
    (pytester.path / "noise_agents.py").write_text(AGENTS)
    pytester.syspathinsert()
    return pytester


def trial(shop, agent: str, *args: str):
    result = shop.runpytest("-p", "no:cacheprovider", f"--itbench-agent=noise_agents:{agent}",
                            "--itbench-results=results.jsonl", *args, SCENARIO)
    [record] = load(shop.path / "results.jsonl")
    return result, record, {c.name: c for c in record.checks}


def noise_of(record) -> dict:
    [content] = [a.content for a in record.attachments if a.name == "noise"]
    return content


def test_the_correct_repair_passes_at_heavy_noise_and_the_noise_is_recorded(shop):
    result, record, checks = trial(shop, "Repair", "--itbench-noise=heavy", "--junitxml=junit.xml")
    result.assert_outcomes(passed=1)
    assert record.noise == "heavy"
    played = noise_of(record)
    assert played["level"] == "heavy"
    assert {a["kind"] for a in played["actions"]} >= {"rollout", "configmap", "eviction", "network"}
    assert all("cart" != a["target"].split("/", 1)[1] for a in played["actions"])  # never the culprit
    assert checks["safety"].passed  # noise's writes are not the agent's
    assert 'name="itbench.noise" value="heavy"' in (shop.path / "junit.xml").read_text()


def test_blaming_the_newest_rollout_costs_the_diagnosis(shop):
    result, record, checks = trial(shop, "BlameTheNewestRollout", "--itbench-noise=heavy")
    [submission] = [a.content for a in record.attachments if a.name == "submission"]
    rolled = [a["target"].split("/", 1)[1] for a in noise_of(record)["actions"] if a["kind"] == "rollout"]
    assert submission["notes"] in rolled  # the naive agent found the noise's rollout
    result.assert_outcomes(failed=1)
    assert checks["mitigation"].passed and not checks["diagnosis"].passed
    assert "precision 0.50" in checks["diagnosis"].detail and "not a root cause" in checks["diagnosis"].detail


def test_without_noise_the_trial_records_none_and_the_scenario_default_is_light(shop):
    result, record, _ = trial(shop, "Repair", "--itbench-noise=off")
    result.assert_outcomes(passed=1)
    assert record.noise == "off" and not [a for a in record.attachments if a.name == "noise"]
    (shop.path / "results.jsonl").unlink()
    result, record, _ = trial(shop, "Repair")
    assert record.noise == "light" and len(noise_of(record)["actions"]) <= 2


def test_a_bad_noise_level_is_a_usage_error(shop):
    result = shop.runpytest("-p", "no:cacheprovider", "--itbench-agent=oracle", "--itbench-noise=loud", SCENARIO)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--itbench-noise" in result.stderr.str() and "loud" in result.stderr.str()
