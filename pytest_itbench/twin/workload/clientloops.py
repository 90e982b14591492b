"""What a container that runs the API's client in a loop costs: ``while true; do kubectl get ...; sleep 0.1; done``.

Scanners, exporters and careless batch jobs poll the API server from a shell loop. What such a
container does is read from the text of its command, as :mod:`.scripts` reads a wrapper script: each
turn of the loop runs its ``kubectl`` calls one after the other and then sleeps. A kubectl run is a
process start (a 50 MB Go binary, the kubeconfig, the discovery cache read from disk) plus one list
request per kind, whose answers it decodes whole before printing even ``-o name``. So a call costs a
fixed CPU time plus a little per object listed, and takes about as long on the wall as it burns CPU
(it is one busy process). The loop's CPU demand is its turns per second times their CPU time: close
to one core for a loop that does not sleep, whatever it lists.

Figures, measured with kubectl 1.31 against the twin on this project's 2-core machine (user plus
system time, and wall time, per run of ``kubectl get pods,services,deployments,replicasets -A -o
name``): 62 ms of CPU and 67 ms of wall time on an empty cluster, 137 ms and 155 ms on the
astronomy shop (79 objects listed), 255 ms and 284 ms with 400 small pods.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, replace
from typing import Callable

from ..containers.timed_shell import FOREVER, sleep_seconds, split_forever_loop

KUBECTL_CPU = 0.06  # CPU seconds of a kubectl run before it decodes any object
CPU_PER_OBJECT = 0.001  # CPU seconds per object a list returns (decoding a pod as the shop's pods are)
WALL_PER_CPU = 1.1  # wall time over CPU time of a run: a single busy process, plus the round trips
MIN_TURN = 0.001  # a loop turn takes at least this long (a shell spawning nothing still forks)

# What kubectl's resource names (and its "all" category) list: the store's buckets, and whether namespaced.
_KINDS = {
    "pods": ("pods", True), "po": ("pods", True), "pod": ("pods", True),
    "services": ("services", True), "svc": ("services", True), "service": ("services", True),
    "deployments": ("deployments.apps", True), "deploy": ("deployments.apps", True),
    "deployment": ("deployments.apps", True),
    "replicasets": ("replicasets.apps", True), "rs": ("replicasets.apps", True),
    "replicaset": ("replicasets.apps", True),
    "statefulsets": ("statefulsets.apps", True), "sts": ("statefulsets.apps", True),
    "daemonsets": ("daemonsets.apps", True), "ds": ("daemonsets.apps", True),
    "jobs": ("jobs.batch", True), "job": ("jobs.batch", True),
    "cronjobs": ("cronjobs.batch", True), "cj": ("cronjobs.batch", True),
    "configmaps": ("configmaps", True), "cm": ("configmaps", True), "secrets": ("secrets", True),
    "endpoints": ("endpoints", True), "ep": ("endpoints", True), "events": ("events", True), "ev": ("events", True),
    "nodes": ("nodes", False), "no": ("nodes", False), "node": ("nodes", False),
    "namespaces": ("namespaces", False), "ns": ("namespaces", False), "namespace": ("namespaces", False),
}
_ALL = ("pods", "services", "daemonsets", "deployments", "replicasets", "statefulsets", "jobs", "cronjobs")
# Between commands: a list or pipe operator, a newline, or a lone ``&`` (not ``&&``, ``2>&1`` or ``&>file``).
_SEPARATORS = re.compile(r"\s*(&&|\|\||;|\n|\||(?<![<>])&(?![&>]))\s*")
_REDIRECT = re.compile(r"^\d*[<>]")

Count = Callable[[str, str | None], int]  # (bucket, namespace or None for all) -> objects


@dataclass(frozen=True)
class Call:
    """One kubectl run in the loop: the buckets it lists, in one namespace or all (None)."""

    buckets: tuple[tuple[str, bool], ...]  # (bucket, namespaced)
    namespace: str | None
    background: bool = False  # started with ``&``: the turn does not wait for it


@dataclass(frozen=True)
class ClientLoop:
    calls: tuple[Call, ...]
    sleep: float  # seconds slept per turn


@dataclass(frozen=True)
class Cost:
    requests: float  # list requests a second the loop sends the API server
    cpu: float  # cores it burns when nothing holds it back


def parse(script: str, namespace: str) -> ClientLoop | None:
    """The loop of kubectl calls ``script`` runs forever (in a pod of ``namespace``), or None if it runs none."""
    loop = split_forever_loop(script)
    if loop is None:
        return None
    calls: list[Call] = []
    sleep = 0.0
    pieces = _SEPARATORS.split(loop[1])
    for command, separator in zip(pieces[::2], [*pieces[1::2], ""]):
        try:
            words = [w for w in shlex.split(command, comments=True)
                     if not _REDIRECT.match(w) and w != "/dev/null"]
        except ValueError:
            return None
        if not words:
            continue
        name = posixpath.basename(words[0])
        if name == "sleep" and separator != "&":
            seconds = sleep_seconds(words[1:])
            if seconds is None or seconds == FOREVER:
                return None  # an invalid sleep ends the loop's shell; an endless one stops the loop
            sleep += seconds
        elif name == "kubectl":
            calls.append(replace(_call(words[1:], namespace), background=separator == "&"))
    return ClientLoop(tuple(calls), sleep) if calls else None


def cost(loop: ClientLoop, count: Count) -> Cost:
    """What the loop costs with the cluster holding what ``count`` says."""
    cpu = requests = waited = 0.0
    for call in loop.calls:
        objects = sum(count(bucket, call.namespace if namespaced else None) for bucket, namespaced in call.buckets)
        run = KUBECTL_CPU + CPU_PER_OBJECT * objects
        cpu += run
        waited += 0.0 if call.background else run * WALL_PER_CPU
        requests += len(call.buckets)
    turn = max(waited + loop.sleep, MIN_TURN)
    return Cost(requests / turn, cpu / turn)


def _call(args: list[str], namespace: str) -> Call:
    """A kubectl command line: ``get`` lists the kinds it names; any other verb costs the run alone."""
    everywhere = any(a in ("-A", "--all-namespaces") or a.startswith("--all-namespaces=true") for a in args)
    positional: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg in ("-n", "--namespace"):
            namespace = args[i + 1] if i + 1 < len(args) else namespace
            skip = True
        elif arg.startswith("--namespace="):
            namespace = arg.partition("=")[2]
        elif arg in ("-o", "--output", "-l", "--selector", "--field-selector", "--context", "--kubeconfig"):
            skip = True  # these take a value; selectors narrow the answer, which the cost leaves out
        elif not arg.startswith("-"):
            positional.append(arg)
    if not positional or positional[0] != "get" or len(positional) < 2:
        return Call((), None)
    names: list[str] = []
    for name in positional[1].split(","):
        names.extend(_ALL if name == "all" else (name.split(".")[0],))
    buckets = tuple(dict.fromkeys(_KINDS[n] for n in names if n in _KINDS))
    return Call(buckets, None if everywhere else namespace)
