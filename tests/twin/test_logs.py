"""pods/log: the LogStore model, then kubectl logs and the Python client against the twin."""

from __future__ import annotations

import json
import queue
import random
import re
import subprocess
import threading

import pytest
from kubernetes import client as k8s

from pytest_itbench.twin.clock import SimClock, format_time
from pytest_itbench.twin.logs import LogQuery, LogReader, LogStore, rfc3339_nano_fixed
from pytest_itbench.twin.store import Store
from tests.conftest import KUBECTL
from tests.twin.pod_states import container_status, create_pod, running, set_status, start_running_pod, waiting

T0 = 1_800_000_000.0


# ---- the model ----------------------------------------------------------------------------------------------

@pytest.fixture
def log_store():
    clock = SimClock(start=T0)
    store = Store(clock, random.Random(0))
    return LogStore(clock, store), clock, store


def test_append_splits_lines_and_stamps_them_with_the_twin_clock(log_store):
    logs, clock, _ = log_store
    logs.append("ns", "p", "c", "one\ntwo\n")
    clock.warp(2)
    logs.append("ns", "p", "c", "oops", stream="stderr")
    lines = logs.lines("ns", "p", "c")
    assert [(line.text, line.stream) for line in lines] == [("one", "stdout"), ("two", "stdout"), ("oops", "stderr")]
    assert [line.time_ns for line in lines] == [int(T0) * 10 ** 9] * 2 + [int(T0 + 2) * 10 ** 9]


def test_restart_keeps_one_previous_instance(log_store):
    logs, _, _ = log_store
    logs.append("ns", "p", "c", "first run")
    logs.restart("ns", "p", "c")
    logs.append("ns", "p", "c", "second run")
    logs.restart("ns", "p", "c")
    logs.append("ns", "p", "c", "third run")
    assert [line.text for line in logs.lines("ns", "p", "c")] == ["third run"]
    assert [line.text for line in logs.lines("ns", "p", "c", previous=True)] == ["second run"]


def test_followers_see_new_lines_and_the_end_of_the_instance(log_store):
    logs, _, _ = log_store
    logs.append("ns", "p", "c", "before")
    seen = []
    backlog, subscription = logs.follow("ns", "p", "c", seen.append)
    logs.append("ns", "p", "c", "after")
    logs.restart("ns", "p", "c")
    logs.append("ns", "p", "c", "next instance")
    assert [line.text for line in backlog] == ["before"]
    assert [line.text if line else None for line in seen] == ["after", None]
    subscription.cancel()


def test_a_deleted_pod_loses_its_logs(log_store):
    logs, _, store = log_store
    store.create("pods", {"metadata": {"name": "p", "namespace": "ns"}})
    logs.append("ns", "p", "c", "hello")
    store.delete("pods", "ns", "p")
    assert logs.lines("ns", "p", "c") == []


def test_reader_applies_tail_then_since_then_the_byte_limit(log_store):
    logs, clock, _ = log_store
    for i in range(5):
        logs.append("ns", "p", "c", f"line {i}")
        clock.warp(10)
    lines = logs.lines("ns", "p", "c")
    since_third = int(T0 + 20) * 10 ** 9
    assert LogReader(LogQuery(tail_lines=4, since_ns=since_third)).initial(lines) == b"line 2\nline 3\nline 4\n"
    assert LogReader(LogQuery(tail_lines=2, limit_bytes=9)).initial(lines) == b"line 3\nli"
    assert LogReader(LogQuery(tail_lines=0)).initial(lines) == b""


def test_timestamps_have_nine_fractional_digits_like_the_kubelets():
    assert rfc3339_nano_fixed(1_800_000_000_250_000_000) == "2027-01-15T08:00:00.250000000Z"


# ---- kubectl logs ---------------------------------------------------------------------------------------------

def test_kubectl_logs_of_a_single_container_pod(twin, kubectl):
    start_running_pod(twin, "web")
    twin.logs.append("default", "web", "app", "GET / 200\nGET /health 200")
    twin.logs.append("default", "web", "app", "upstream timed out", stream="stderr")
    assert kubectl("logs", "web") == "GET / 200\nGET /health 200\nupstream timed out\n"
    assert kubectl("logs", "web", "--tail=1") == "upstream timed out\n"
    assert kubectl("logs", "pod/web", "--limit-bytes=5") == "GET /"


def test_timestamps_and_since_use_the_twin_clock(twin, kubectl):
    start_running_pod(twin, "web")
    twin.logs.append("default", "web", "app", "old")
    written = twin.clock.now()
    twin.warp(300)
    twin.logs.append("default", "web", "app", "new")
    stamped = kubectl("logs", "web", "--timestamps").splitlines()
    assert stamped[0] == f"{format_time(written)[:-1]}.000000000Z old"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z new", stamped[1])
    assert kubectl("logs", "web", "--since=1m") == "new\n"
    assert kubectl("logs", "web", f"--since-time={format_time(written + 1)}") == "new\n"


def test_container_flag_and_the_default_container_annotation(twin, kubectl):
    containers = [{"name": "app", "image": "nginx"}, {"name": "proxy", "image": "envoy"}]
    create_pod(twin, "mesh", containers)
    set_status(twin, "mesh", running(twin, "app", "proxy"))
    twin.logs.append("default", "mesh", "app", "from app")
    twin.logs.append("default", "mesh", "proxy", "from proxy")
    assert kubectl("logs", "mesh", "-c", "proxy") == "from proxy\n"
    create_pod(twin, "annotated", containers, annotations={"kubectl.kubernetes.io/default-container": "proxy"})
    set_status(twin, "annotated", running(twin, "app", "proxy"))
    twin.logs.append("default", "annotated", "proxy", "chosen by annotation")
    assert kubectl("logs", "annotated") == "chosen by annotation\n"


def test_previous_reads_the_instance_before_the_restart(twin, kubectl):
    start_running_pod(twin, "crashy")
    twin.logs.append("default", "crashy", "app", "panic: nil map")
    missing = kubectl.fails("logs", "crashy", "--previous")
    assert missing.stderr.strip() == ('Error from server (BadRequest): previous terminated container "app" in pod '
                                      '"crashy" not found')
    twin.logs.restart("default", "crashy", "app")
    twin.logs.append("default", "crashy", "app", "starting again")
    last = {"terminated": {"exitCode": 2, "reason": "Error", "containerID": "containerd://app-0"}}
    restarted = container_status("app", {"running": {"startedAt": twin.clock.timestamp()}}, last=last, restarts=1)
    set_status(twin, "crashy", {"phase": "Running", "containerStatuses": [restarted]})
    assert kubectl("logs", "crashy", "-p") == "panic: nil map\n"
    assert kubectl("logs", "crashy") == "starting again\n"


def test_logs_of_a_deployment_pick_a_pod_by_its_selector(twin, kubectl):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "cart"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "cart"}},
                           "template": {"metadata": {"labels": {"app": "cart"}},
                                        "spec": {"containers": [{"name": "app", "image": "cart:1"}]}}}}
    kubectl("apply", "-f", "-", input=json.dumps(deployment))
    start_running_pod(twin, "cart-5d9c7b-x2x9k", labels={"app": "cart"})
    start_running_pod(twin, "other", labels={"app": "other"})
    twin.logs.append("default", "cart-5d9c7b-x2x9k", "app", "cart ready")
    twin.logs.append("default", "other", "app", "not this one")
    assert kubectl("logs", "deploy/cart") == "cart ready\n"


def test_errors_for_containers_that_have_no_log_yet(twin, kubectl):
    create_pod(twin, "pending", [{"name": "app", "image": "nginx"}])
    set_status(twin, "pending", waiting("app"))
    create_pod(twin, "pulling", [{"name": "app", "image": "nginx:nope"}])
    set_status(twin, "pulling", waiting("app", reason="ImagePullBackOff"))
    create_pod(twin, "unreported", [{"name": "app", "image": "nginx"}])
    create_pod(twin, "unscheduled", [{"name": "app", "image": "nginx"}], node=None)
    assert kubectl.fails("logs", "pending").stderr.strip() == (
        'Error from server (BadRequest): container "app" in pod "pending" is waiting to start: ContainerCreating')
    assert kubectl.fails("logs", "pulling").stderr.strip() == (
        'Error from server (BadRequest): container "app" in pod "pulling" is waiting to start: trying and failing '
        'to pull image')
    assert kubectl.fails("logs", "unreported").stderr.strip() == (
        'Error from server (BadRequest): container "app" in pod "unreported" is not available')
    quiet = kubectl.run("logs", "unscheduled")
    assert (quiet.returncode, quiet.stdout) == (0, "")


# ---- the API as the Python client sees it --------------------------------------------------------------------

def _api_error(call) -> tuple[int, str]:
    with pytest.raises(k8s.ApiException) as caught:
        call()
    return caught.value.status, json.loads(caught.value.body)["message"]


def test_a_container_must_be_named_when_the_pod_has_several(twin, client):
    containers = [{"name": "app", "image": "nginx"}, {"name": "proxy", "image": "envoy"}]
    create_pod(twin, "mesh", containers, initContainers=[{"name": "migrate", "image": "flyway"}])
    set_status(twin, "mesh", running(twin, "app", "proxy"))
    twin.logs.append("default", "mesh", "proxy", "hello")
    api = k8s.CoreV1Api(client)
    assert _api_error(lambda: api.read_namespaced_pod_log("mesh", "default")) == (
        400, "a container name must be specified for pod mesh, choose one of: [migrate app proxy]")
    assert _api_error(lambda: api.read_namespaced_pod_log("mesh", "default", container="db")) == (
        400, "container db is not valid for pod mesh")
    assert api.read_namespaced_pod_log("mesh", "default", container="proxy") == "hello\n"


def test_log_options_are_validated_as_upstream_does(twin, client):
    start_running_pod(twin, "web")
    api = k8s.CoreV1Api(client)
    assert _api_error(lambda: api.read_namespaced_pod_log("web", "default", tail_lines=-1)) == (
        422, 'PodLogOptions "web" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0')
    assert _api_error(lambda: api.read_namespaced_pod_log("web", "default", limit_bytes=0)) == (
        422, 'PodLogOptions "web" is invalid: limitBytes: Invalid value: 0: must be greater than 0')
    assert _api_error(lambda: api.read_namespaced_pod_log("nope", "default")) == (404, 'pods "nope" not found')


def test_python_client_reads_tail_and_timestamps(twin, client):
    start_running_pod(twin, "web")
    twin.logs.append("default", "web", "app", "a\nb\nc")
    api = k8s.CoreV1Api(client)
    assert api.read_namespaced_pod_log("web", "default", tail_lines=2) == "b\nc\n"
    stamped = api.read_namespaced_pod_log("web", "default", tail_lines=1, timestamps=True)
    assert stamped == f"{rfc3339_nano_fixed(int(twin.clock.now()) * 10 ** 9)} c\n"


# ---- following -------------------------------------------------------------------------------------------------

class _Lines:
    """Lines a process prints, read on a thread so that a test can wait for each with a timeout."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def next(self, timeout: float = 10) -> str | None:
        return self._lines.get(timeout=timeout)


def _follow(kubectl, *args: str) -> _Lines:
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH")
    proc = subprocess.Popen([KUBECTL, "logs", "-f", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=kubectl.env, cwd=kubectl.workdir)
    return _Lines(proc)


def test_follow_streams_new_lines_until_the_container_stops(twin, kubectl):
    start_running_pod(twin, "web")
    twin.logs.append("default", "web", "app", "booting")
    follow = _follow(kubectl, "web")
    try:
        assert follow.next() == "booting\n"
        threading.Thread(target=twin.logs.append, args=("default", "web", "app", "serving")).start()
        assert follow.next() == "serving\n"
        finished = {"terminated": {"exitCode": 0, "reason": "Completed", "containerID": "containerd://app-0"}}
        set_status(twin, "web", {"phase": "Succeeded", "containerStatuses": [container_status("app", finished)]})
        assert follow.next() is None
        assert follow.proc.wait(timeout=10) == 0
    finally:
        follow.proc.kill()


def test_follow_ends_when_the_twin_stops(twin, kubectl):
    start_running_pod(twin, "web")
    twin.logs.append("default", "web", "app", "hello")
    follow = _follow(kubectl, "web")
    try:
        assert follow.next() == "hello\n"
        twin.stop()
        assert follow.next() is None
        follow.proc.wait(timeout=10)
    finally:
        follow.proc.kill()


def test_follow_of_a_terminated_container_returns_what_it_wrote(twin, kubectl):
    create_pod(twin, "job", [{"name": "app", "image": "busybox"}])
    done = {"terminated": {"exitCode": 0, "reason": "Completed", "containerID": "containerd://app-0"}}
    set_status(twin, "job", {"phase": "Succeeded", "containerStatuses": [container_status("app", done)]})
    twin.logs.append("default", "job", "app", "all done")
    assert kubectl("logs", "-f", "job", timeout=10) == "all done\n"
