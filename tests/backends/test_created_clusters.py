"""kind and k3s: the commands and configs built, the lifecycle per trial, worker and session, the registry that
leaves no cluster behind. `kind` is a fake executable here whose "cluster" is an in-process twin; the tests
that need Docker are marked ``docker`` and skipped where there is none."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from pytest_itbench.backends import kind, k3s, observability
from pytest_itbench.backends.base import BackendError
from pytest_itbench.backends.cluster_registry import ClusterRegistry, Record

from .conftest import docker_available

FAKE_KIND = """\
echo "$@" >> "$FAKE_KIND_LOG"
case "$1" in
  version) echo "kind v0.29.0 go1.24.2 linux/amd64" ;;
  create)
    while [ $# -gt 0 ]; do
      if [ "$1" = "--kubeconfig" ]; then cp "$FAKE_KUBECONFIG" "$2"; fi
      if [ "$1" = "--name" ] && [ "$2" = "itbench-fail-main-1" ]; then echo "ERROR: failed to create cluster" >&2; exit 1; fi
      shift
    done ;;
esac
"""


def test_the_kind_config_has_one_control_plane_n_workers_and_the_port_mappings():
    config = kind.cluster_config(3, {30090: 41000, 30093: 41001})
    assert config["kind"] == "Cluster" and config["apiVersion"] == "kind.x-k8s.io/v1alpha4"
    assert [n["role"] for n in config["nodes"]] == ["control-plane", "worker", "worker", "worker"]
    assert config["nodes"][0]["extraPortMappings"] == [
        {"containerPort": 30090, "hostPort": 41000, "listenAddress": "127.0.0.1", "protocol": "TCP"},
        {"containerPort": 30093, "hostPort": 41001, "listenAddress": "127.0.0.1", "protocol": "TCP"}]
    assert [n["role"] for n in kind.cluster_config(0)["nodes"]] == ["control-plane"]
    with pytest.raises(ValueError, match="workers must be 0 or more"):
        kind.cluster_config(-1)


def test_the_kind_commands_pin_the_node_image_by_digest():
    assert kind.NODE_IMAGE.startswith("kindest/node:v1.31.") and "@sha256:" in kind.NODE_IMAGE
    assert len(kind.NODE_IMAGE.split("@sha256:")[1]) == 64
    assert kind.create_command("kind", "itbench-a-gw0-1", "/t/c.yaml", "/t/k") == [
        "kind", "create", "cluster", "--name", "itbench-a-gw0-1", "--image", kind.NODE_IMAGE, "--config", "/t/c.yaml",
        "--kubeconfig", "/t/k", "--wait", "5m"]
    assert kind.delete_command("kind", "itbench-a-gw0-1") == ["kind", "delete", "cluster", "--name", "itbench-a-gw0-1"]


def test_the_k3s_container_is_named_after_the_cluster_with_a_pinned_image_and_the_node_ports():
    settings = k3s.container_settings("itbench-a-main-1")
    assert settings == {"name": "itbench-a-main-1", "image": "rancher/k3s:v1.31.9-k3s1", "enable_cgroup_mount": True,
                        "exposed_ports": [30090, 30093, 30686]}
    assert k3s.delete_command("docker", "itbench-a-main-1") == ["docker", "rm", "-f", "-v", "itbench-a-main-1"]


def test_k3s_without_testcontainers_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "testcontainers", None)
    monkeypatch.setitem(sys.modules, "testcontainers.k3s", None)
    with pytest.raises(BackendError, match=r"pip install 'pytest-itbench\[k3s\]'"):
        k3s.start_container(k3s.container_settings("x"))


@pytest.fixture
def fake_kind(fake_bin, live_twin, tmp_path, monkeypatch):
    log = tmp_path / "kind.log"
    monkeypatch.setenv("FAKE_KIND_LOG", str(log))
    monkeypatch.setenv("FAKE_KUBECONFIG", live_twin.kubeconfig_path)
    fake_bin.add("kind", FAKE_KIND)

    def calls():
        return [line.split()[:4] for line in log.read_text().splitlines()] if log.exists() else []

    return calls


def backend(tmp_path, fresh, worker="main", run_id="run1", **kw):
    return kind.KindBackend(fresh=fresh, observability=False, registry=ClusterRegistry(tmp_path / "registry"),
                            worker=worker, run_id=run_id, **kw)


def test_a_fresh_cluster_per_trial_is_created_recorded_and_deleted(fake_kind, tmp_path):
    kinds = backend(tmp_path, "trial")
    workdir = tmp_path / "trial1"
    workdir.mkdir()
    cluster = kinds.provision(1, str(workdir))
    assert cluster.backend == "kind" and not cluster.tidy
    assert [r.name for r in kinds.registry.records()] == ["itbench-run1-main-1"]
    record = kinds.registry.records()[0]
    assert record.users == [os.getpid()] and record.delete[1:] == ["delete", "cluster", "--name",
                                                                   "itbench-run1-main-1"]
    cluster.reserve(["shop"])
    cluster.close()
    assert fake_kind() == [["create", "cluster", "--name", "itbench-run1-main-1"],
                           ["delete", "cluster", "--name", "itbench-run1-main-1"]]
    assert kinds.registry.records() == []
    kinds.close()


def test_a_failed_create_is_a_clear_error_and_leaves_no_record(fake_kind, tmp_path):
    kinds = backend(tmp_path, "trial", run_id="fail")
    with pytest.raises(BackendError, match=r"`kind create cluster --name itbench-fail-main-1` failed: ERROR: failed"):
        kinds.provision(1, str(tmp_path))
    assert fake_kind()[-1] == ["delete", "cluster", "--name", "itbench-fail-main-1"]  # a half-made cluster too
    assert kinds.registry.records() == []


def test_a_cluster_per_worker_serves_every_trial_and_is_deleted_at_the_end(fake_kind, tmp_path):
    kinds = backend(tmp_path, "worker", worker="gw1")
    for seed in (1, 2):
        workdir = tmp_path / f"t{seed}"
        workdir.mkdir()
        cluster = kinds.provision(seed, str(workdir))
        assert cluster.tidy  # shared: the trial cleans up its namespaces
        cluster.reserve(["shop"])
        cluster.close()
    assert fake_kind() == [["create", "cluster", "--name", "itbench-run1-gw1"]]
    kinds.close()
    assert fake_kind()[-1] == ["delete", "cluster", "--name", "itbench-run1-gw1"]
    assert kinds.registry.records() == []


def test_a_cluster_per_session_is_created_once_and_deleted_by_the_last_worker(fake_kind, tmp_path):
    first, second = backend(tmp_path, "session", worker="gw0"), backend(tmp_path, "session", worker="gw1")
    (tmp_path / "w0").mkdir()
    (tmp_path / "w1").mkdir()
    first.provision(0, str(tmp_path / "w0")).close()
    other_worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        record = first.registry.get("itbench-run1")
        record.users.append(other_worker.pid)  # another xdist worker joined it
        first.registry.put(record)
        first.close()
        assert fake_kind() == [["create", "cluster", "--name", "itbench-run1"]]  # still in use: kept
    finally:
        other_worker.kill()
        other_worker.wait()
    second.provision(1, str(tmp_path / "w1")).close()  # joins the recorded cluster: no second create
    assert fake_kind() == [["create", "cluster", "--name", "itbench-run1"]]
    second.close()  # the last one out
    assert fake_kind()[-1] == ["delete", "cluster", "--name", "itbench-run1"]
    assert first.registry.records() == []


def test_clusters_of_dead_processes_are_swept(tmp_path, fake_bin):
    log = tmp_path / "deleted"
    fake_bin.add("kind", f'echo "$@" >> {log}\n')
    registry = ClusterRegistry(tmp_path / "registry")
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)
    registry.put(Record(backend="kind", name="itbench-old", delete=["kind", "delete", "cluster", "--name",
                                                                    "itbench-old"], users=[dead]))
    registry.put(Record(backend="kind", name="itbench-live", delete=["kind", "delete", "cluster", "--name",
                                                                     "itbench-live"], users=[os.getpid()]))
    assert [r.name for r in registry.abandoned()] == ["itbench-old"]
    assert registry.sweep() == []
    assert log.read_text().split() == ["delete", "cluster", "--name", "itbench-old"]
    assert [r.name for r in registry.records()] == ["itbench-live"]


def test_the_registry_command_lists_and_sweeps(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    result = subprocess.run([sys.executable, "-m", "pytest_itbench.backends.cluster_registry"], capture_output=True,
                            text=True, env={**os.environ, "TMPDIR": str(tmp_path)}, timeout=60)
    assert result.returncode == 0, result.stderr


def test_the_observability_stack_is_installed_from_pinned_charts_and_shipped_values():
    commands = observability.helm_commands("/t/kubeconfig")
    releases = {c[3]: c for c in commands}
    assert set(releases) == {"prometheus", "jaeger", "otel-collector", "chaos-mesh", "kyverno"}
    for command in commands:
        assert command[:3] == ["helm", "upgrade", "--install"]
        version = command[command.index("--version") + 1]
        assert version[0].isdigit() and "*" not in version and "^" not in version  # an exact pin
        values = command[command.index("--values") + 1]
        assert isinstance(yaml.safe_load(open(values)), dict), values  # shipped, and YAML
        assert command[command.index("--kubeconfig") + 1] == "/t/kubeconfig"
    assert releases["prometheus"][releases["prometheus"].index("--namespace") + 1] == "prometheus"
    prometheus = yaml.safe_load(open(releases["prometheus"][releases["prometheus"].index("--values") + 1]))
    assert prometheus["prometheus"]["service"]["nodePort"] == observability.NODE_PORTS["prometheus"]
    assert prometheus["alertmanager"]["service"]["nodePort"] == observability.NODE_PORTS["alertmanager"]
    collector = yaml.safe_load(open(releases["otel-collector"][releases["otel-collector"].index("--values") + 1]))
    assert collector["config"]["connectors"]["spanmetrics"]["namespace"] == "traces.span.metrics"
    rules = observability.rule_objects()
    assert {r["metadata"]["name"] for r in rules} == {"itbench-kubernetes", "itbench-otel-demo", "itbench-background"}
    assert all(r["spec"]["groups"] for r in rules)
    alias = observability.collector_alias("astronomy-shop")
    assert alias["spec"]["externalName"] == "otel-collector.observability.svc.cluster.local"
    assert observability.urls({"prometheus": 41000}) == {"prometheus": "http://127.0.0.1:41000"}


@pytest.mark.docker
@pytest.mark.skipif(not docker_available(), reason="needs a running Docker engine (`docker info` fails here)")
@pytest.mark.parametrize("name", ["kind", "k3s"])
def test_a_real_cluster_runs_a_scenario_and_leaves_nothing(name, tmp_path):
    """On a machine with Docker (and kind, helm; testcontainers for k3s): one SRE scenario with the oracle passes
    on a cluster created for it, and no cluster is left afterwards."""
    from pytest_itbench.scenario import catalog

    scenario = catalog.bundled() / "sre" / "astronomy-product-catalog-scaled-to-zero.yaml"
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(scenario),
                             "--itbench-agent=oracle", f"--itbench-backend={name}", "--itbench-results=out.jsonl"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=3600)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    assert json.loads((tmp_path / "out.jsonl").read_text())["outcome"] == "passed"
    assert ClusterRegistry().abandoned() == []
    if name == "kind":
        listed = subprocess.run(["kind", "get", "clusters"], capture_output=True, text=True).stdout
        assert "itbench-" not in listed
