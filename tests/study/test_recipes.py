"""The recipes of docs/recipes: the Kubernetes Indexed Job gives each pod its own shard (applied to the twin,
each pod's command run with pytest replaced by echo under the pod's own environment), and the CI matrix covers
every shard and merges them."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from pytest_itbench.twin import Twin
from tests.conftest import KUBECTL, Kubectl

RECIPES = Path(__file__).resolve().parents[2] / "docs" / "recipes"


@pytest.mark.skipif(KUBECTL is None, reason="applies the manifest with the real kubectl")
def test_the_indexed_job_gives_each_pod_its_own_shard_and_results_file(tmp_path):
    with Twin(seed=3, nodes=2) as twin:
        kubectl = Kubectl(twin, tmp_path / "admin")
        kubectl("apply", "-f", str(RECIPES / "indexed-job.yaml"))
        twin.warp(30)
        pods = kubectl.run("get", "pods", "-l", "batch.kubernetes.io/job-name=itbench-shards", "-o", "json").json()
    assert len(pods["items"]) == 4
    shards, files = set(), set()
    for pod in pods["items"]:
        container = pod["spec"]["containers"][0]
        env = {e["name"]: e["value"] if "value" in e else downward(pod, e["valueFrom"]["fieldRef"]["fieldPath"])
               for e in container.get("env", [])}
        index = pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        assert env["JOB_COMPLETION_INDEX"] == index
        command = [word.replace("pytest ", "echo pytest ") for word in container["command"]]
        printed = subprocess.run(command, env={"PATH": "/usr/bin:/bin", **env}, capture_output=True, text=True,
                                 check=True).stdout
        shard = re.search(r"--itbench-shard=(\d+)/4", printed).group(1)
        assert int(shard) == int(index) + 1
        shards.add(shard)
        files.add(re.search(r"--itbench-results=(\S+)", printed).group(1))
    assert shards == {"1", "2", "3", "4"} and len(files) == 4


def downward(pod: dict, field_path: str) -> str:
    """A downward-API field as the kubelet resolves it: metadata.annotations['KEY'] or metadata.labels['KEY']."""
    match = re.fullmatch(r"metadata\.(annotations|labels)\['([^']+)'\]", field_path)
    assert match, f"a field path this test does not resolve: {field_path}"
    return pod["metadata"][match.group(1)][match.group(2)]


def test_the_ci_matrix_runs_every_shard_and_merges_them():
    workflow = yaml.safe_load((RECIPES / "github-actions.yml").read_text())
    shards = workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    run = " ".join(step.get("run", "") for step in workflow["jobs"]["shard"]["steps"])
    count = int(re.search(r"--itbench-shard=\$\{\{ matrix.shard \}\}/(\d+)", run).group(1))
    assert sorted(shards) == list(range(1, count + 1))
    merge = " ".join(step.get("run", "") for step in workflow["jobs"]["merge"]["steps"])
    assert workflow["jobs"]["merge"]["needs"] == "shard" and "itbench-report merge shard-*.jsonl" in merge
