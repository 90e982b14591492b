"""Reading the user's kubeconfig, and writing the two the harness hands out: its own and the agent's.

The user's file may hold many contexts and name files relative to itself (client certificates, CA
bundles, token files, exec plugins). A trial gets a copy holding only the chosen context, with those
paths made absolute, so that a kubectl or client started anywhere with ``KUBECONFIG=<copy>`` reaches the
same cluster as the same user. The agent's kubeconfig names the same cluster with a service account's
bearer token instead of the user.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass

import yaml

# Fields holding file paths, which kubectl resolves against the kubeconfig's directory.
_CLUSTER_PATHS = ("certificate-authority",)
_USER_PATHS = ("client-certificate", "client-key", "tokenFile")


class KubeconfigError(ValueError):
    """The kubeconfig cannot be used; the message names the file and what is wrong in it."""


@dataclass(frozen=True)
class Selection:
    """One context of a kubeconfig: its cluster and user entries, paths made absolute."""

    path: str  # the user's kubeconfig
    context: str
    cluster_name: str
    cluster: dict
    user_name: str
    user: dict
    namespace: str | None
    explicit: bool  # named by the user (--itbench-context), not the file's current-context

    @property
    def server(self) -> str:
        return self.cluster.get("server", "")


def select(path: str, context: str | None = None) -> Selection:
    """The context ``context`` of the kubeconfig at ``path`` (default: its current-context)."""
    try:
        with open(path, encoding="utf-8") as fh:
            config = yaml.safe_load(fh)
    except FileNotFoundError:
        raise KubeconfigError(f"kubeconfig {path}: no such file") from None
    except OSError as exc:
        raise KubeconfigError(f"kubeconfig {path}: cannot read it: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise KubeconfigError(f"kubeconfig {path}: not YAML: {exc}") from None
    if not isinstance(config, dict):
        raise KubeconfigError(f"kubeconfig {path}: not a kubeconfig (expected a mapping with clusters, users "
                              f"and contexts)")
    contexts = _named(config, "contexts", path)
    name = context or config.get("current-context")
    if not name:
        raise KubeconfigError(f"kubeconfig {path} has no current-context; name one with --itbench-context "
                              f"(contexts: {', '.join(contexts) or 'none'})")
    if name not in contexts:
        raise KubeconfigError(f"kubeconfig {path} has no context {name!r}; contexts: {', '.join(contexts) or 'none'}")
    entry = contexts[name] or {}
    clusters, users = _named(config, "clusters", path), _named(config, "users", path)
    cluster_name, user_name = entry.get("cluster"), entry.get("user")
    if cluster_name not in clusters:
        raise KubeconfigError(f"kubeconfig {path}: context {name!r} names cluster {cluster_name!r}, which the file "
                              f"does not define")
    if user_name not in users:
        raise KubeconfigError(f"kubeconfig {path}: context {name!r} names user {user_name!r}, which the file "
                              f"does not define")
    base = os.path.dirname(os.path.abspath(path))
    cluster = _absolute(clusters[cluster_name] or {}, _CLUSTER_PATHS, base)
    if not cluster.get("server"):
        raise KubeconfigError(f"kubeconfig {path}: cluster {cluster_name!r} has no server URL")
    user = _absolute(users[user_name] or {}, _USER_PATHS, base)
    command = (user.get("exec") or {}).get("command")
    if command and os.sep in command and not os.path.isabs(command):
        user["exec"]["command"] = os.path.join(base, command)  # as kubectl resolves an exec plugin's path
    return Selection(path=os.path.abspath(path), context=name, cluster_name=cluster_name, cluster=cluster,
                     user_name=user_name, user=user, namespace=entry.get("namespace"), explicit=context is not None)


def contexts_of(path: str) -> list[str]:
    """The context names of a kubeconfig, for messages; empty when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as fh:
            config = yaml.safe_load(fh) or {}
        return [c.get("name") for c in config.get("contexts") or [] if isinstance(c, dict)]
    except (OSError, yaml.YAMLError, AttributeError):
        return []


def write_admin(selection: Selection, path: str) -> str:
    """A kubeconfig holding the selected context alone; mode 0600 (it carries the user's credentials)."""
    return _write(path, {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": selection.cluster_name, "cluster": selection.cluster}],
        "users": [{"name": selection.user_name, "user": selection.user}],
        "contexts": [{"name": selection.context,
                      "context": {"cluster": selection.cluster_name, "user": selection.user_name,
                                  **({"namespace": selection.namespace} if selection.namespace else {})}}],
        "current-context": selection.context, "preferences": {}})


def write_service_account(selection: Selection, account: str, namespace: str, token: str, path: str) -> str:
    """A kubeconfig for ``system:serviceaccount:<namespace>:<account>`` on the selected cluster."""
    user = f"system:serviceaccount:{namespace}:{account}"
    context = f"{account}@{selection.cluster_name}"
    return _write(path, {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": selection.cluster_name, "cluster": selection.cluster}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": selection.cluster_name, "user": user,
                                                   "namespace": namespace}}],
        "current-context": context, "preferences": {}})


def _named(config: dict, key: str, path: str) -> dict[str, dict]:
    entries = config.get(key) or []
    if not isinstance(entries, list):
        raise KubeconfigError(f"kubeconfig {path}: {key} must be a list")
    found = {}
    for entry in entries:
        if not isinstance(entry, dict) or "name" not in entry:
            raise KubeconfigError(f"kubeconfig {path}: an entry of {key} has no name")
        found[entry["name"]] = entry.get(key[:-1])  # clusters -> cluster, users -> user, contexts -> context
    return found


def _absolute(entry: dict, fields: tuple[str, ...], base: str) -> dict:
    entry = copy.deepcopy(entry)
    for name in fields:
        value = entry.get(name)
        if value and not os.path.isabs(value):
            entry[name] = os.path.join(base, value)
    return entry


def _write(path: str, config: dict) -> str:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        yaml.safe_dump(config, fh, sort_keys=False)
    return path
