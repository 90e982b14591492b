"""The twin's two entry points: the Python API and ``python -m pytest_itbench.twin``."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading

import pytest
import yaml

from pytest_itbench.twin import Twin, TwinError


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def test_context_manager_serves_and_stops_leaving_nothing_behind():
    before = {t.name for t in threading.enumerate()}
    with Twin(nodes=2) as twin:
        port = twin.port
        config = yaml.safe_load(twin.kubeconfig())
        assert config["clusters"][0]["cluster"]["server"] == f"https://127.0.0.1:{port}"
        assert config["clusters"][0]["cluster"]["certificate-authority-data"]
        assert len(twin.store.list("nodes")[0]) == 2
        names = {o["metadata"]["name"] for o in twin.store.list("namespaces")[0]}
        assert names == {"default", "kube-system", "kube-public", "kube-node-lease"}
    assert _port_is_free(port)
    assert {t.name for t in threading.enumerate()} <= before
    twin.stop()  # idempotent


def test_a_busy_port_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(TwinError, match=f"could not start on 127.0.0.1:{port}"):
            Twin(port=port).start()


def _start_cli(tmp_path, *args):
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen([sys.executable, "-m", "pytest_itbench.twin", "--kubeconfig", str(kubeconfig), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, kubeconfig


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cli_prints_ready_serves_and_exits_zero_on_signal(tmp_path, sig):
    proc, kubeconfig = _start_cli(tmp_path, "--nodes", "1", "--seed", "3")
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("ready https://127.0.0.1:"), line + proc.stderr.read()
        url = line.split()[1]
        config = yaml.safe_load(kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["server"] == url
        assert oct(os.stat(kubeconfig).st_mode & 0o777) == "0o600"
        port = int(url.rsplit(":", 1)[1])
        assert not _port_is_free(port)
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 0
        assert _port_is_free(port)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_rejects_bad_arguments_with_a_message(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pytest_itbench.twin", "--kubeconfig", str(tmp_path / "k"),
                             "--nodes", "-1"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "--nodes must be 0 or more" in result.stderr
    result = subprocess.run([sys.executable, "-m", "pytest_itbench.twin", "--kubeconfig",
                             str(tmp_path / "missing-dir" / "k")], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "cannot write the kubeconfig" in result.stderr


def test_cli_prints_its_observability_urls_and_advertises_its_time_scale(tmp_path):
    proc, kubeconfig = _start_cli(tmp_path, "--nodes", "0", "--time-scale", "30")
    try:
        assert proc.stdout.readline().startswith("ready https://"), proc.stderr.read()
        kind, _, text = proc.stdout.readline().strip().partition(" ")
        assert kind == "urls"
        urls = json.loads(text)
        assert set(urls) == {"prometheus", "alertmanager", "jaeger", "topology", "opencost"}
        assert all(url.startswith("http://127.0.0.1:") for url in urls.values())
        from kubernetes import client as k8s, config as k8s_config
        with k8s_config.new_client_from_config(config_file=str(kubeconfig)) as api:
            data = k8s.CoreV1Api(api).read_namespaced_config_map("itbench-twin-clock", "kube-public").data
        assert float(data["timeScale"]) == 30.0 and float(data["simulatedTime"]) > 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_rejects_a_time_scale_that_is_not_positive(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pytest_itbench.twin", "--kubeconfig", str(tmp_path / "k"),
                             "--time-scale", "0"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and "--time-scale must be a positive number, got 0.0" in result.stderr
