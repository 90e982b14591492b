"""Namespaces on a shared cluster: a trial claims its namespaces before deploying and deletes them when done.

Scenarios name their namespaces (``astronomy-shop``, a CISO scenario's ``ledger``): the application's
manifests, the faults' targets and the ground truth all do, so trials cannot be given renamed copies.
Instead two trials that need the same namespace run one after the other. Creating the Namespace is the
claim (the API server lets one creator win), labelled ``app.kubernetes.io/managed-by=pytest-itbench``
with the claiming process in an annotation; a trial that finds it taken waits until its holder deletes
it. A namespace that exists without the label belongs to someone else, and the harness refuses to touch
it: a trial ends by deleting its namespaces with everything in them.
"""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime, timezone
from typing import Callable, Iterable

from kubernetes import client as k8s

from .base import BackendError
from .ledger import MANAGED_BY, MANAGED_BY_LABEL

OWNER = "itbench.io/owner"  # hostname:pid of the process whose trial holds the namespace
TRIAL = "itbench.io/trial"  # which trial (scenario, run), for people reading the cluster
CLAIMED_AT = "itbench.io/claimed-at"
# Namespaces every cluster has: a trial may use them but never claims or deletes them.
SYSTEM = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
POLL = 2.0  # wall seconds between looks while waiting
CLEANUP_COMMAND = f"kubectl delete namespace -l {MANAGED_BY_LABEL}={MANAGED_BY}"


class NamespaceNotOurs(BackendError):
    """The namespace exists and was not made by pytest-itbench."""


def this_process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def claim(core: k8s.CoreV1Api, names: Iterable[str], trial: str, *, where: str, wait_limit: float,
          sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> list[str]:
    """Create each namespace as this trial's; wait while another trial holds one; return those claimed.

    In sorted order, so that two trials needing overlapping sets never hold one each and wait for the
    other's. Raises NamespaceNotOurs for a namespace someone else made, BackendError when one stays taken
    for ``wait_limit`` wall seconds (naming its holder). On an error, the namespaces claimed so far are
    deleted again (``release``) by the caller, who gets them from ``claimed``.
    """
    claimed: list[str] = []
    for name in sorted(set(names) - SYSTEM):
        _claim_one(core, name, trial, where, wait_limit, sleep, clock)
        claimed.append(name)
    return claimed


def _claim_one(core, name, trial, where, wait_limit, sleep, clock) -> None:
    body = {"metadata": {"name": name, "labels": {MANAGED_BY_LABEL: MANAGED_BY},
                         "annotations": {OWNER: this_process(), TRIAL: trial,
                                         CLAIMED_AT: datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}}}
    deadline = clock() + wait_limit
    holder = ""
    while True:
        try:
            core.create_namespace(body)
            return
        except k8s.ApiException as exc:
            if exc.status != 409:
                raise BackendError(f"cannot create namespace {name} on {where}: {exc.status} {exc.reason}") from None
        try:
            existing = core.read_namespace(name)
        except k8s.ApiException as exc:
            if exc.status == 404:
                continue  # deleted meanwhile: try again at once
            raise BackendError(f"cannot read namespace {name} on {where}: {exc.status} {exc.reason}") from None
        meta = existing.metadata
        if (meta.labels or {}).get(MANAGED_BY_LABEL) != MANAGED_BY:
            raise NamespaceNotOurs(
                f"namespace {name} already exists on {where} and was not created by pytest-itbench (it has no "
                f"label {MANAGED_BY_LABEL}={MANAGED_BY}); a trial deletes its namespaces when it ends, so it will "
                f"not use one it did not make. Delete it yourself (kubectl delete namespace {name}) or run on "
                f"another cluster.")
        holder = (meta.annotations or {}).get(OWNER, "")
        if holder == this_process() and meta.deletion_timestamp is None:
            # Only a trial kept for inspection (--itbench-keep) holds namespaces past its end; it lets go at the
            # end of the session, so waiting for it here would wait for ourselves.
            raise BackendError(
                f"namespace {name} on {where} is held by an earlier trial of this session "
                f"({(meta.annotations or {}).get(TRIAL, '?')}), kept for inspection by --itbench-keep; on a shared "
                f"cluster a kept trial keeps its namespaces until the session ends")
        if meta.deletion_timestamp is None and _abandoned(holder):
            # Left by a process of this machine that died before its teardown (a killed xdist worker).
            _delete(core, name)
        if clock() >= deadline:
            trial_of = (meta.annotations or {}).get(TRIAL, "?")
            raise BackendError(
                f"namespace {name} on {where} is still held by another pytest-itbench trial ({trial_of}, process "
                f"{holder or 'unknown'}) after {wait_limit:.0f} s; if that run is gone, delete its namespaces: "
                f"{CLEANUP_COMMAND}")
        sleep(POLL)


def _abandoned(holder: str) -> bool:
    host, _, pid = holder.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's process: only it (or a person) can tell
    if int(pid) == os.getpid():
        return False  # a trial of this process did not clean up yet; ours to wait for, not to take
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, someone else's
    return False


def _delete(core: k8s.CoreV1Api, name: str) -> None:
    try:
        core.delete_namespace(name, propagation_policy="Background")
    except k8s.ApiException as exc:
        if exc.status != 404:
            raise


def release(core: k8s.CoreV1Api, names: Iterable[str], *, where: str, wait_limit: float,
            sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> list[str]:
    """Delete the namespaces and wait until they are gone; return one problem per namespace that is not."""
    names = [n for n in names if n not in SYSTEM]
    problems = []
    for name in names:
        try:
            _delete(core, name)
        except k8s.ApiException as exc:
            problems.append(f"deleting namespace {name} on {where}: {exc.status} {exc.reason}")
    deadline = clock() + wait_limit
    pending = [n for n in names if not any(p.startswith(f"deleting namespace {n} ") for p in problems)]
    while pending:
        still = []
        for name in pending:
            try:
                ns = core.read_namespace(name)
            except k8s.ApiException as exc:
                if exc.status == 404:
                    continue
                raise
            still.append((name, ns))
        pending = [name for name, _ in still]
        if not pending:
            break
        if clock() >= deadline:
            for name, ns in still:
                finalizers = ", ".join((ns.spec.finalizers if ns.spec else None) or []) or "none"
                conditions = "; ".join(f"{c.type}: {c.message}" for c in (ns.status.conditions or [])
                                       if c.status == "True") if ns.status else ""
                problems.append(f"namespace {name} on {where} is still terminating after {wait_limit:.0f} s "
                                f"(finalizers: {finalizers}{'; ' + conditions if conditions else ''})")
            break
        sleep(POLL)
    return problems
