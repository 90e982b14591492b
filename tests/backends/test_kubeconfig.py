"""The user's kubeconfig: choosing a context, and the copies the harness writes for itself and the agent."""

from __future__ import annotations

import os

import pytest
import yaml

from pytest_itbench.backends import kubeconfig
from pytest_itbench.backends.kubeconfig import KubeconfigError

CONFIG = {
    "apiVersion": "v1", "kind": "Config", "current-context": "prod",
    "clusters": [{"name": "prod", "cluster": {"server": "https://prod:6443", "certificate-authority": "ca.crt"}},
                 {"name": "bench", "cluster": {"server": "https://bench:6443",
                                               "certificate-authority-data": "Q0E="}}],
    "users": [{"name": "alice", "user": {"client-certificate": "certs/alice.crt", "client-key": "/abs/alice.key"}},
              {"name": "bot", "user": {"exec": {"command": "./bin/get-token", "apiVersion": "v1"}}}],
    "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "alice"}},
                 {"name": "itbench-bench", "context": {"cluster": "bench", "user": "bot", "namespace": "x"}},
                 {"name": "broken", "context": {"cluster": "nowhere", "user": "alice"}}],
}


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "conf" / "kubeconfig"
    p.parent.mkdir()
    p.write_text(yaml.safe_dump(CONFIG))
    return str(p)


def test_the_current_context_is_chosen_unless_one_is_named(path):
    chosen = kubeconfig.select(path)
    assert (chosen.context, chosen.server, chosen.explicit) == ("prod", "https://prod:6443", False)
    named = kubeconfig.select(path, "itbench-bench")
    assert (named.context, named.server, named.namespace, named.explicit) == ("itbench-bench", "https://bench:6443",
                                                                              "x", True)


def test_relative_paths_become_absolute_against_the_kubeconfigs_directory(path):
    base = os.path.dirname(path)
    chosen = kubeconfig.select(path)
    assert chosen.cluster["certificate-authority"] == os.path.join(base, "ca.crt")
    assert chosen.user["client-certificate"] == os.path.join(base, "certs/alice.crt")
    assert chosen.user["client-key"] == "/abs/alice.key"
    assert kubeconfig.select(path, "itbench-bench").user["exec"]["command"] == os.path.join(base, "./bin/get-token")


def test_bad_kubeconfigs_are_clear_errors_naming_the_file(path, tmp_path):
    with pytest.raises(KubeconfigError, match=r"kubeconfig .*missing: no such file"):
        kubeconfig.select(str(tmp_path / "missing"))
    with pytest.raises(KubeconfigError, match=r"has no context 'nope'; contexts: prod, itbench-bench, broken"):
        kubeconfig.select(path, "nope")
    with pytest.raises(KubeconfigError, match=r"context 'broken' names cluster 'nowhere', which the file does not"):
        kubeconfig.select(path, "broken")
    bad = tmp_path / "bad"
    bad.write_text("- just\n- a list\n")
    with pytest.raises(KubeconfigError, match="not a kubeconfig"):
        kubeconfig.select(str(bad))
    none = tmp_path / "none"
    none.write_text(yaml.safe_dump({**CONFIG, "current-context": ""}))
    with pytest.raises(KubeconfigError, match="has no current-context; name one with --itbench-context"):
        kubeconfig.select(str(none))


def test_the_admin_copy_holds_the_chosen_context_alone_and_the_agents_a_token(path, tmp_path):
    chosen = kubeconfig.select(path, "itbench-bench")
    admin = yaml.safe_load(open(kubeconfig.write_admin(chosen, str(tmp_path / "admin"))))
    assert [c["name"] for c in admin["contexts"]] == ["itbench-bench"]
    assert admin["current-context"] == "itbench-bench"
    assert [c["name"] for c in admin["clusters"]] == ["bench"] and [u["name"] for u in admin["users"]] == ["bot"]
    assert oct(os.stat(tmp_path / "admin").st_mode & 0o777) == "0o600"
    agent = yaml.safe_load(open(kubeconfig.write_service_account(chosen, "itbench-agent", "shop", "T0KEN",
                                                                 str(tmp_path / "agent"))))
    assert agent["users"] == [{"name": "system:serviceaccount:shop:itbench-agent", "user": {"token": "T0KEN"}}]
    assert agent["clusters"][0]["cluster"] == {"server": "https://bench:6443", "certificate-authority-data": "Q0E="}
    assert agent["contexts"][0]["context"]["namespace"] == "shop"
