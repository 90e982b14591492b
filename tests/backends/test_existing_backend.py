"""--itbench-backend=existing through the plugin, against an in-process twin standing in for the user's cluster:
option errors before any trial, the marker rule, missing signals, and a trial that leaves nothing behind."""

from __future__ import annotations

import json

import pytest
import yaml
from kubernetes import client as k8s, config as k8s_config

from pytest_itbench.backends.base import MissingSignal, SignalURLs

from ..plugin.conftest import Bench


@pytest.fixture
def bench(pytester) -> Bench:
    return Bench(pytester)


def usage_error(bench, *args) -> str:
    bench.scenario("budget")
    result = bench.run(*args, ".")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    assert "collected" not in result.stdout.str()
    return result.stderr.str()


def renamed(live_twin, tmp_path, context: str) -> str:
    """The twin's kubeconfig with its context renamed, as a user's production context might be called."""
    config = yaml.safe_load(open(live_twin.kubeconfig_path))
    config["contexts"][0]["name"] = config["current-context"] = context
    path = tmp_path / f"{context}.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_existing_needs_a_kubeconfig_that_exists_with_the_context_named(bench, tmp_path):
    assert "--itbench-backend=existing needs --itbench-kubeconfig=PATH" in usage_error(
        bench, "--itbench-agent=noop", "--itbench-backend=existing")
    message = usage_error(bench, "--itbench-agent=noop", "--itbench-backend=existing",
                          f"--itbench-kubeconfig={tmp_path / 'nope'}")
    assert f"--itbench-backend=existing: kubeconfig {tmp_path / 'nope'}: no such file" in message


def test_options_of_the_existing_backend_are_refused_elsewhere_and_urls_checked(bench):
    assert "--itbench-kubeconfig is for --itbench-backend=existing (the backend is twin)" in usage_error(
        bench, "--itbench-agent=noop", "--itbench-kubeconfig=k")
    assert "--itbench-prometheus-url=localhost:9090: not an http:// or https:// URL" in usage_error(
        bench, "--itbench-agent=noop", "--itbench-backend=existing", "--itbench-kubeconfig=k",
        "--itbench-prometheus-url=localhost:9090")


def test_an_unknown_context_lists_the_contexts(bench, live_twin):
    message = usage_error(bench, "--itbench-agent=noop", "--itbench-backend=existing",
                          f"--itbench-kubeconfig={live_twin.kubeconfig_path}", "--itbench-context=prod")
    assert "has no context 'prod'; contexts: kubernetes-admin@itbench" in message


def test_an_unreachable_cluster_is_a_usage_error(bench, tmp_path):
    path = tmp_path / "gone.kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "itbench-gone",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "itbench-gone", "context": {"cluster": "c", "user": "u"}}]}))
    message = usage_error(bench, "--itbench-agent=noop", "--itbench-backend=existing", f"--itbench-kubeconfig={path}")
    assert "--itbench-backend=existing: cannot reach the cluster of context 'itbench-gone' (https://127.0.0.1:1)" \
        in message


def test_a_context_not_marked_for_benchmarking_is_refused_unless_named(bench, live_twin, tmp_path):
    prod = renamed(live_twin, tmp_path, "prod")
    message = usage_error(bench, "--itbench-agent=noop", "--itbench-backend=existing", f"--itbench-kubeconfig={prod}")
    assert "refusing to run benchmark trials on context 'prod'" in message
    assert "--itbench-context=prod" in message and "itbench.io/benchmark=allowed" in message
    bench.program("answer.sh", ANSWER)
    result = bench.run("--itbench-agent=exec:./answer.sh", "--itbench-backend=existing",
                       f"--itbench-kubeconfig={prod}", "--itbench-context=prod", ".")
    assert "itbench backend: existing, Kubernetes v1.31" in result.stdout.str()
    assert "context 'prod' named with --itbench-context" in result.stdout.str()
    result.assert_outcomes(passed=1)


ANSWER = """\
#!/bin/sh
printf '{"notes": "42"}' > "$ITBENCH_OUTPUT"
"""

NEEDS_PROMETHEUS = '''
from pytest_itbench.results import CheckResult


def pytest_itbench_evaluate(trial):
    trial.cluster.urls["prometheus"]
    return [CheckResult("answer", True, "")]
'''


def test_a_trial_on_an_existing_cluster_cleans_up_after_itself(bench, live_twin):
    bench.program("answer.sh", ANSWER)
    bench.scenario("budget")
    api = k8s_config.new_client_from_config(config_file=live_twin.kubeconfig_path)
    rbac = k8s.RbacAuthorizationV1Api(api)
    roles_before = {r.metadata.name for r in rbac.list_cluster_role().items}
    result = bench.run("--itbench-agent=exec:./answer.sh", "--itbench-backend=existing",
                       f"--itbench-kubeconfig={live_twin.kubeconfig_path}", ".")
    result.assert_outcomes(passed=1)
    stdout = result.stdout.str()
    assert "itbench backend: existing, Kubernetes v1.31.4, context name 'kubernetes-admin@itbench' contains 'itbench'" in stdout
    assert "missing: prometheus, alertmanager, jaeger, topology, opencost" in stdout
    assert "agent exec:./answer.sh on existing" in stdout
    # the agent's ClusterRoles and bindings and its ServiceAccount in default are gone again
    assert {r.metadata.name for r in rbac.list_cluster_role().items} == roles_before
    assert not [b for b in rbac.list_cluster_role_binding().items if b.metadata.name.startswith("itbench-agent")]
    assert not [s for s in k8s.CoreV1Api(api).list_namespaced_service_account("default").items
                if s.metadata.name == "itbench-agent"]
    api.close()


def test_a_signal_not_given_errors_saying_which_option_gives_it(bench, live_twin):
    bench.program("answer.sh", ANSWER)
    bench.scenario("budget")
    bench.write("conftest.py", NEEDS_PROMETHEUS)
    result = bench.run("--itbench-agent=exec:./answer.sh", "--itbench-backend=existing",
                       f"--itbench-kubeconfig={live_twin.kubeconfig_path}", "--itbench-results=out.jsonl", ".")
    # Raised in the test body (the evaluation) here, so pytest counts a failure; the trial is an error, and in
    # setup (an SRE scenario's baseline reads Prometheus) it is a pytest error as well.
    assert json.loads((bench.path / "out.jsonl").read_text())["outcome"] == "error"
    assert ("MissingSignal: the prometheus URL of this existing cluster was not given; pass "
            "--itbench-prometheus-url=URL") in result.stdout.str()


def test_signal_urls_say_what_is_missing():
    urls = SignalURLs({"prometheus": "http://p", "jaeger": ""}, "no {signal}: pass --itbench-{signal}-url")
    assert urls["prometheus"] == "http://p" and urls.get("jaeger") is None and "jaeger" not in urls
    assert urls.missing == ("alertmanager", "jaeger", "topology", "opencost")
    with pytest.raises(MissingSignal) as missing:
        urls["alertmanager"]
    assert str(missing.value) == "no alertmanager: pass --itbench-alertmanager-url"


def test_kind_without_docker_is_a_usage_error(bench, fake_bin):
    fake_bin.add("docker", "echo 'Cannot connect to the Docker daemon' >&2; exit 1\n")
    message = usage_error(bench, "--itbench-agent=noop", "--itbench-backend=kind")
    assert "--itbench-backend=kind: Docker is not running: `docker info` failed (Cannot connect to the Docker " \
           "daemon)" in message
    fake_bin.add("docker", 'echo "4 8589934592"\n')
    message = usage_error(bench, "--itbench-agent=noop", "--itbench-backend=kind")
    assert "--itbench-backend=kind: `kind` is not installed" in message
