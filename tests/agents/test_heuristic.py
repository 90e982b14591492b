"""The heuristic baseline through the plugin, on scenarios of the shipped catalog: it solves the
scaled-to-zero one (diagnosis and repair), and misses one it has no rule for (a feature flag)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import yaml

from pytest_itbench.agents import Submission, Trajectory, resolve
from pytest_itbench.agents.heuristic import HeuristicAgent
from tests.conftest import KUBECTL

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "scenarios" / "sre"
SCALED_TO_ZERO = CATALOG / "astronomy-product-catalog-scaled-to-zero.yaml"


def _feature_flag_scenario() -> Path | None:
    """A catalog scenario whose only fault is a feature flag: no rule of the heuristic reads flags."""
    for path in sorted(CATALOG.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        faults = [f.get("fault") for f in (data or {}).get("faults") or []]
        if faults and set(faults) == {"opentelemetry-demo-feature-flag"}:
            return path
    return None


def run_plugin(tmp_path: Path, *paths: Path) -> dict[str, dict]:
    """Run the given scenario files with --itbench-agent=heuristic; the JSONL results by scenario id."""
    results = tmp_path / "results.jsonl"
    proc = subprocess.run([sys.executable, "-m", "pytest", *map(str, paths), "--itbench-agent=heuristic",
                           f"--itbench-results={results}", "-p", "no:cacheprovider", "-q", "-p", "no:xdist"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert results.exists(), f"no results written:\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
    records = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    return {r["scenario_id"]: r for r in records}


@pytest.mark.skipif(KUBECTL is None, reason="the heuristic drives the real kubectl")
def test_solves_scaled_to_zero_and_misses_a_feature_flag(tmp_path):
    flag = _feature_flag_scenario()
    if flag is None:
        pytest.skip("the catalog holds no feature-flag scenario")
    results = run_plugin(tmp_path, SCALED_TO_ZERO, flag)
    solved = results["astronomy-product-catalog-scaled-to-zero"]
    checks = {c["name"]: c for c in solved["checks"]}
    assert solved["outcome"] == "passed", json.dumps(solved["checks"], indent=1)
    assert checks["diagnosis"]["passed"] and checks["mitigation"]["passed"]
    submission = next(a["content"] for a in solved["attachments"] if a["name"] == "submission")
    roots = [e["name"] for e in submission["diagnosis"]["entities"] if e["contributing_factor"]]
    assert roots == ["astronomy-shop/Deployment/product-catalog"]
    trajectory = next(a["content"] for a in solved["attachments"] if a["name"] == "trajectory")
    assert any(s["action"].startswith("kubectl scale deployment/product-catalog --replicas=1") for s in trajectory)

    missed = results[yaml.safe_load(flag.read_text())["id"]]
    assert missed["outcome"] == "failed", f"{flag.name}: {missed['outcome']} {missed['error']}"
    assert not all(c["passed"] for c in missed["checks"])


def test_registered_as_builtin():
    agent = resolve("heuristic")
    assert agent.name == "heuristic"


def test_without_signals_it_reads_the_cluster_alone(shop, make_task):
    """No observability URL at all: the namespace's state still shows the Deployment scaled to zero."""
    task = make_task(time_limit=60, urls={}, kubeconfig=shop.agent_kubeconfig)
    trajectory = Trajectory()
    submission = HeuristicAgent().run(task, trajectory)
    roots = [e["name"] for e in submission.diagnosis["entities"] if e["contributing_factor"]]
    assert roots == ["shop/Deployment/cart"]
    assert submission.diagnosed_at is not None and 0 <= submission.diagnosed_at <= 60
    assert shop.replicas("cart") == 1
    assert not any(s.action.startswith(("GET ", "PromQL")) for s in trajectory.steps)


def test_past_its_deadline_it_hands_in_without_acting(shop, make_task):
    task = make_task(time_limit=60, urls={}, kubeconfig=shop.agent_kubeconfig)
    task.cancelled.set()
    submission = HeuristicAgent().run(task, Trajectory())
    assert isinstance(submission, Submission)
    assert submission.diagnosis["entities"] == []
    assert shop.replicas("cart") == 0
