"""Claiming namespaces on a shared cluster: one trial at a time per namespace, never someone else's."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
from kubernetes import client as k8s, config as k8s_config

from pytest_itbench.backends import namespaces
from pytest_itbench.backends.base import BackendError


@pytest.fixture
def core(live_twin):
    api = k8s_config.new_client_from_config(config_file=live_twin.kubeconfig_path)
    yield k8s.CoreV1Api(api)
    api.close()


def test_a_claim_creates_the_namespace_labelled_with_its_owner_and_release_deletes_it(core):
    assert namespaces.claim(core, ["shop", "default", "ledger"], "trial 1", where="here", wait_limit=5) == [
        "ledger", "shop"]  # system namespaces are used, never claimed
    ns = core.read_namespace("shop")
    assert ns.metadata.labels["app.kubernetes.io/managed-by"] == "pytest-itbench"
    assert ns.metadata.annotations[namespaces.OWNER] == f"{socket.gethostname()}:{os.getpid()}"
    assert ns.metadata.annotations[namespaces.TRIAL] == "trial 1"
    assert namespaces.release(core, ["shop", "ledger", "default"], where="here", wait_limit=10) == []
    assert {n.metadata.name for n in core.list_namespace().items} >= {"default"}
    assert "shop" not in {n.metadata.name for n in core.list_namespace().items}


def test_a_namespace_someone_else_made_is_refused_with_what_to_do(core):
    core.create_namespace({"metadata": {"name": "astronomy-shop"}})
    with pytest.raises(namespaces.NamespaceNotOurs) as refused:
        namespaces.claim(core, ["astronomy-shop"], "t", where="context 'prod'", wait_limit=5)
    message = str(refused.value)
    assert "namespace astronomy-shop already exists on context 'prod' and was not created by pytest-itbench" in message
    assert "kubectl delete namespace astronomy-shop" in message


def test_a_namespace_held_by_another_running_trial_is_waited_for_then_an_error(core):
    core.create_namespace({"metadata": {"name": "shop", "labels": {"app.kubernetes.io/managed-by": "pytest-itbench"},
                                        "annotations": {namespaces.OWNER: "other-machine:1", namespaces.TRIAL: "x"}}})
    now = [0.0]
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    with pytest.raises(BackendError, match=r"still held by another pytest-itbench trial \(x, process other-machine:1\) "
                                           r"after 10 s; .*kubectl delete namespace -l app.kubernetes.io/managed-by="):
        namespaces.claim(core, ["shop"], "t", where="here", wait_limit=10, sleep=sleep, clock=lambda: now[0])
    assert slept == [namespaces.POLL] * 5


def test_a_namespace_left_by_a_dead_process_of_this_machine_is_taken_over(core):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    owner = f"{socket.gethostname()}:{dead.stdout.strip()}"
    core.create_namespace({"metadata": {"name": "shop", "labels": {"app.kubernetes.io/managed-by": "pytest-itbench"},
                                        "annotations": {namespaces.OWNER: owner}}})
    assert namespaces.claim(core, ["shop"], "mine", where="here", wait_limit=20, sleep=lambda s: None) == ["shop"]
    assert core.read_namespace("shop").metadata.annotations[namespaces.TRIAL] == "mine"


def test_a_namespace_kept_by_this_session_fails_at_once(core):
    namespaces.claim(core, ["shop"], "kept trial", where="here", wait_limit=5)
    with pytest.raises(BackendError, match=r"held by an earlier trial of this session \(kept trial\), kept for "
                                           r"inspection by --itbench-keep"):
        namespaces.claim(core, ["shop"], "t2", where="here", wait_limit=5)
