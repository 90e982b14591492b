"""The slow end-to-end check: the catalog's first SRE slice through the plugin, on the twin, under xdist.

Every scenario passes with the oracle (so each is solvable) and fails with noop (so none passes by
itself). Deselect it with ``-m "not end_to_end"``.
"""

from __future__ import annotations

import json

import pytest

from pytest_itbench.scenario import catalog
from pytest_itbench.scenario.loader import load

from .conftest import Project

pytestmark = pytest.mark.end_to_end


# Three of the catalog's first end-to-end slice (issue 5), one fault each: an image, a Service's port, a
# Deployment scaled to zero. The whole catalog runs in a benchmark (python -m benchmarks.noise).
FIRST_SLICE = ("astronomy-ad-nonexistent-image", "astronomy-cart-service-target-port",
               "astronomy-product-catalog-scaled-to-zero")


def first_slice() -> list:
    return [catalog.bundled() / "sre" / f"{name}.yaml" for name in FIRST_SLICE]


def outcomes(path) -> dict[str, str]:
    return {r["scenario_id"]: r["outcome"] for r in map(json.loads, path.read_text().splitlines())}


def test_the_sre_catalog_passes_with_the_oracle_and_fails_with_noop(tmp_path):
    files = first_slice()
    scenarios = [load(path) for path in files]
    paths = [str(path) for path in files]
    project = Project(tmp_path)
    project.write("conftest.py", "")  # the catalog's own evaluators only
    oracle = project.subprocess("-n", "2", "--itbench-agent=oracle", "--itbench-results=oracle.jsonl",
                                "--alluredir=allure", *paths, timeout=600)
    assert oracle.returncode == 0, oracle.stdout[-6000:] + oracle.stderr
    assert outcomes(tmp_path / "oracle.jsonl") == {s.id: "passed" for s in scenarios}
    records = [json.loads(line) for line in (tmp_path / "oracle.jsonl").read_text().splitlines()]
    for record in records:  # the SRE evaluator measured the times of a success
        assert record["figures"]["mttd"] is not None and record["figures"]["mttr"] is not None, record["scenario_id"]
        assert {c["name"]: c["passed"] for c in record["checks"]} == {"diagnosis": True, "mitigation": True, "safety": True}
    assert f"agent oracle on twin: {len(scenarios)} trials of {len(scenarios)} scenarios" in oracle.stdout
    # Allure: the application as feature and each fault as a tag
    for path in (tmp_path / "allure").glob("*-result.json"):
        result = json.loads(path.read_text())
        scenario = next(s for s in scenarios if result["name"] == f"sre-{s.id}")
        labels = [(label["name"], label["value"]) for label in result["labels"]]
        assert ("feature", "astronomy-shop") in labels and ("epic", "sre") in labels
        assert {("tag", f.fault) for f in scenario.faults} <= set(labels)

    noop = project.subprocess("-n", "2", "--itbench-agent=noop", "--itbench-results=noop.jsonl", *paths,
                              timeout=600)
    assert noop.returncode == 1, noop.stdout[-6000:] + noop.stderr
    assert outcomes(tmp_path / "noop.jsonl") == {s.id: "failed" for s in scenarios}
    assert f"= {len(scenarios)} failed in" in noop.stdout


def sample(paths, every: int) -> list[str]:
    """Every ``every``-th of ``paths`` in name order, the first included: a spread of the catalog for CI, whose
    time is bounded; the whole catalog runs in a benchmark (python -m benchmarks.noise --levels off, and with
    --agent noop), see docs/plugin.md, "Noise"."""
    return [str(path) for path in sorted(paths)[::every]]


def test_the_ciso_catalog_passes_with_the_oracle_and_fails_with_noop(tmp_path):
    """A sixth of each CISO category of the shipped catalog (Kyverno generate and update, kubectl with OPA)."""
    directories = [catalog.bundled() / "ciso" / c for c in ("kyverno", "kubectl-opa", "kyverno-update")]
    assert sum(len(list(d.glob("*/scenario.yaml"))) for d in directories) >= 40
    paths = [path for d in directories for path in sample(d.glob("*/scenario.yaml"), 6)]
    _oracle_passes_noop_fails(tmp_path, paths, {load(path).id for path in paths})


def test_the_rhel9_hosts_catalog_passes_with_the_oracle_and_fails_with_noop(tmp_path):
    """CISO rhel9-ansible-opa: Ansible playbooks and Rego on simulated RHEL 9 hosts (needs root, ansible-core)."""
    from pytest_itbench.hosts import HostsUnavailable, preflight
    try:
        preflight()
    except HostsUnavailable as exc:
        pytest.skip(f"simulated hosts unavailable here: {exc}")
    directory = catalog.bundled() / "ciso" / "rhel9-ansible-opa"
    assert len(list(directory.glob("*/scenario.yaml"))) >= 20
    paths = sample(directory.glob("*/scenario.yaml"), 6)  # a sixth
    _oracle_passes_noop_fails(tmp_path, paths, {load(path).id for path in paths})


def _oracle_passes_noop_fails(tmp_path, paths: list[str], expected: set[str]) -> None:
    project = Project(tmp_path)
    project.write("conftest.py", "")  # the catalog's own evaluators only
    oracle = project.subprocess("-n", "2", "--itbench-agent=oracle", "--itbench-results=oracle.jsonl", *paths,
                                timeout=600)
    assert oracle.returncode == 0, oracle.stdout[-6000:] + oracle.stderr
    assert outcomes(tmp_path / "oracle.jsonl") == {sid: "passed" for sid in expected}
    noop = project.subprocess("-n", "2", "--itbench-agent=noop", "--itbench-results=noop.jsonl", *paths,
                              timeout=600)
    assert noop.returncode == 1, noop.stdout[-6000:] + noop.stderr
    assert outcomes(tmp_path / "noop.jsonl") == {sid: "failed" for sid in expected}


def test_the_finops_catalog_passes_with_the_oracle_and_fails_with_noop(tmp_path):
    """A quarter of the FinOps scenarios (a node group, a legitimate rise, a leak scaling out): the oracle cuts the spend (or raises the budget where the rise was legitimate)
    and comes close to the optimal cost; noop leaves every cost alert firing."""
    directory = catalog.bundled() / "finops"
    assert len(list(directory.glob("*.yaml"))) >= 10
    paths = sample(directory.glob("*.yaml"), 4)
    expected = {load(path).id for path in paths}
    project = Project(tmp_path)
    project.write("conftest.py", "")
    oracle = project.subprocess("-n", "2", "--itbench-agent=oracle", "--itbench-results=oracle.jsonl",
                                *paths, timeout=600)
    assert oracle.returncode == 0, oracle.stdout[-6000:] + oracle.stderr
    assert outcomes(tmp_path / "oracle.jsonl") == {sid: "passed" for sid in expected}
    for record in map(json.loads, (tmp_path / "oracle.jsonl").read_text().splitlines()):
        proximity = {k: v for k, v in record["figures"].items() if k.startswith("proximity_")}
        assert proximity and min(proximity.values()) > 0.75, (record["scenario_id"], proximity)
    assert "proximity" in oracle.stdout  # the leaderboard's FinOps block
    noop = project.subprocess("-n", "2", "--itbench-agent=noop", "--itbench-results=noop.jsonl", *paths,
                              timeout=600)
    assert noop.returncode == 1, noop.stdout[-6000:] + noop.stderr
    assert outcomes(tmp_path / "noop.jsonl") == {sid: "failed" for sid in expected}
