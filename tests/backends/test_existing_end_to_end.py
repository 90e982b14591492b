"""--itbench-backend=existing end to end, against a twin serving as a separate process
(``python -m pytest_itbench.twin --time-scale 60``), as a user's cluster would: an SRE scenario fails with noop
and then passes with the oracle (after the noop trial's alert has resolved), a CISO Kyverno scenario passes with
the oracle, and the cluster is left as it was.

The harness cannot warp that twin: every wait is real. The twin runs 60 simulated seconds per wall second and
says so in kube-public/itbench-twin-clock, so the harness waits 1/60 as long (a real cluster has scale 1: the
same trials take their minutes of alert waits and stability windows in full). About a minute and a half.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from kubernetes import client as k8s, config as k8s_config

from pytest_itbench.scenario import catalog

from ..plugin.conftest import Project

pytestmark = pytest.mark.end_to_end

SCALE = 60
SRE = catalog.bundled() / "sre" / "astronomy-product-catalog-scaled-to-zero.yaml"
CISO = catalog.bundled() / "ciso" / "kyverno" / "ciso-kyverno-5.2.2-privileged" / "scenario.yaml"


@pytest.fixture(scope="module")
def twin_process(tmp_path_factory):
    directory = tmp_path_factory.mktemp("twin")
    kubeconfig = directory / "kubeconfig"
    process = subprocess.Popen([sys.executable, "-m", "pytest_itbench.twin", "--kubeconfig", str(kubeconfig),
                                "--time-scale", str(SCALE), "--seed", "5"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = process.stdout.readline().split()
        assert ready[:1] == ["ready"], " ".join(ready) + process.stderr.read()
        kind, _, text = process.stdout.readline().partition(" ")
        assert kind == "urls"
        urls = json.loads(text)
        assert set(urls) == {"prometheus", "alertmanager", "jaeger", "topology", "opencost"}
        yield kubeconfig, urls
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            assert process.wait(timeout=20) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def run(project: Project, kubeconfig, urls, agent: str, *paths) -> subprocess.CompletedProcess:
    url_options = [f"--itbench-{signal}-url={url}" for signal, url in urls.items() if signal != "opencost"]
    return project.subprocess("--itbench-backend=existing", f"--itbench-kubeconfig={kubeconfig}", *url_options,
                              f"--itbench-agent={agent}", f"--itbench-results={agent}.jsonl", *map(str, paths),
                              timeout=240)


def outcomes(path) -> dict[str, str]:
    return {r["scenario_id"]: r["outcome"] for r in map(json.loads, path.read_text().splitlines())}


def test_sre_and_ciso_scenarios_on_an_existing_cluster(twin_process, tmp_path):
    kubeconfig, urls = twin_process
    project = Project(tmp_path)
    project.write("conftest.py", "")  # the catalog's own evaluators only

    noop = run(project, kubeconfig, urls, "noop", SRE)
    assert noop.returncode == 1, noop.stdout[-5000:] + noop.stderr[-2000:]
    assert outcomes(tmp_path / "noop.jsonl") == {"astronomy-product-catalog-scaled-to-zero": "failed"}
    assert "itbench backend: existing, Kubernetes v1.31" in noop.stdout

    # The noop trial left HighRequestErrorRate firing; the next trial in the namespace waits until it resolves.
    oracle = run(project, kubeconfig, urls, "oracle", SRE, CISO)
    assert oracle.returncode == 0, oracle.stdout[-5000:] + oracle.stderr[-2000:]
    assert outcomes(tmp_path / "oracle.jsonl") == {"astronomy-product-catalog-scaled-to-zero": "passed",
                                                    "ciso-kyverno-5.2.2-privileged": "passed"}
    records = {r["scenario_id"]: r for r in map(json.loads, (tmp_path / "oracle.jsonl").read_text().splitlines())}
    assert records["astronomy-product-catalog-scaled-to-zero"]["backend"] == "existing"

    # Nothing of the trials is left: their namespaces, the agent's cluster roles, the agent's ClusterPolicy.
    api = k8s_config.new_client_from_config(config_file=str(kubeconfig))
    try:
        names = {n.metadata.name for n in k8s.CoreV1Api(api).list_namespace().items}
        assert names == {"default", "kube-system", "kube-public", "kube-node-lease"}
        rbac = k8s.RbacAuthorizationV1Api(api)
        labelled = "app.kubernetes.io/managed-by=pytest-itbench"
        assert rbac.list_cluster_role(label_selector=labelled).items == []
        assert rbac.list_cluster_role_binding(label_selector=labelled).items == []
        policies = k8s.CustomObjectsApi(api).list_cluster_custom_object("kyverno.io", "v1", "clusterpolicies")
        assert policies["items"] == []
    finally:
        api.close()
