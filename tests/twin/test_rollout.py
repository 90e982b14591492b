"""``kubectl rollout`` and friends against the deployment and replicaset controllers; the test plays kubelet.

The twin here runs only the workload controllers, so that the test decides when
pods turn ready. It starts ten minutes in the past: kubectl computes some ages
from wall time, and the warps below stay behind it.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time

import pytest

from pytest_itbench.twin import Twin

from .rollout_helpers import WORKLOAD_CONTROLLERS, get, make_ready, pods, replica_set_of, replica_sets, settle


@pytest.fixture
def twin():
    with Twin(seed=9, start_time=time.time() - 600, controllers=WORKLOAD_CONTROLLERS) as t:
        yield t


def _deploy(kubectl, twin, replicas: int = 3) -> None:
    kubectl("create", "deployment", "web", "--image=nginx:1.25", f"--replicas={replicas}")
    settle(twin, 2)


def _roll(kubectl, twin, image: str, cause: str) -> None:
    kubectl("set", "image", "deployment/web", f"nginx={image}")
    kubectl("annotate", "deployment/web", f"kubernetes.io/change-cause={cause}", "--overwrite")
    settle(twin, 5)


def test_rollout_status_waits_for_the_rollout_and_returns_once_it_is_complete(kubectl, twin):
    _deploy(kubectl, twin)
    kubectl("set", "image", "deployment/web", "nginx=nginx:1.26")
    watches = twin.store.watch_count()
    proc = subprocess.Popen([shutil.which("kubectl"), "rollout", "status", "deployment/web",
                             "--timeout=60s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=kubectl.env)
    done = threading.Event()

    def play_kubelet():
        while twin.store.watch_count() <= watches and not done.is_set():  # kubectl is watching the Deployment
            time.sleep(0.05)
        while not done.is_set():
            twin.warp(1)
            make_ready(twin, limit=1)
            time.sleep(0.05)

    helper = threading.Thread(target=play_kubelet, daemon=True)
    helper.start()
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        done.set()
        helper.join(5)
    assert proc.returncode == 0, err
    lines = out.strip().splitlines()
    assert lines[-1] == 'deployment "web" successfully rolled out'
    assert any(line.startswith('Waiting for deployment "web" rollout to finish: ') for line in lines[:-1])
    new = replica_set_of(twin, "web")
    assert new["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert len(pods(twin, new["metadata"]["name"])) == 3


def test_rollout_status_reports_an_exceeded_progress_deadline(kubectl, twin):
    _deploy(kubectl, twin)
    kubectl("patch", "deployment/web", "-p", '{"spec":{"progressDeadlineSeconds":20}}')
    kubectl("set", "image", "deployment/web", "nginx=nginx:no-such-tag")  # its pods never become ready
    twin.warp(30)
    result = kubectl.fails("rollout", "status", "deployment/web", "--timeout=10s")
    assert 'error: deployment "web" exceeded its progress deadline' in result.stderr


def test_rollout_history_and_undo_to_a_revision(kubectl, twin):
    _deploy(kubectl, twin)
    _roll(kubectl, twin, "nginx:1.26", "upgrade to 1.26")
    _roll(kubectl, twin, "nginx:1.27", "upgrade to 1.27")
    history = kubectl("rollout", "history", "deployment/web")
    assert history.split() == ["deployment.apps/web", "REVISION", "CHANGE-CAUSE", "1", "<none>", "2", "upgrade", "to",
                               "1.26", "3", "upgrade", "to", "1.27"]
    revision_2 = kubectl("rollout", "history", "deployment/web", "--revision=2")
    assert revision_2.startswith("deployment.apps/web with revision #2\n") and "Image:\tnginx:1.26\n" in revision_2
    first = next(rs for rs in replica_sets(twin)
                 if rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1")
    assert kubectl("rollout", "undo", "deployment/web", "--to-revision=1").strip() == "deployment.apps/web rolled back"
    settle(twin, 5)
    current = replica_set_of(twin, "web")
    assert current["metadata"]["name"] == first["metadata"]["name"]
    assert current["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "4"
    assert current["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert {p["spec"]["containers"][0]["image"] for p in pods(twin)} == {"nginx:1.25"}
    assert [line.split()[0] for line in kubectl("rollout", "history", "deployment/web").splitlines()[2:] if line] \
        == ["2", "3", "4"]
    described = kubectl("describe", "deployment", "web")
    assert f"NewReplicaSet:   {current['metadata']['name']} (3/3 replicas created)" in described
    assert "Progressing    True    NewReplicaSetAvailable" in described
    # Past ten different ScalingReplicaSet messages in ten minutes, client-go folds the rest into one
    # "(combined from similar events)" event, as here after three rollouts of three replicas.
    assert "Scaled up replica set web-" in described
    assert f"Scaled up replica set {current['metadata']['name']} from 0 to 1" in described or \
        "(combined from similar events): Scaled" in described
    kubectl("rollout", "undo", "deployment/web")  # back to the previous revision, 3
    settle(twin, 5)
    assert {p["spec"]["containers"][0]["image"] for p in pods(twin)} == {"nginx:1.27"}


def test_rollout_restart_pause_and_resume(kubectl, twin):
    _deploy(kubectl, twin)
    first = replica_set_of(twin, "web")["metadata"]["name"]
    assert kubectl("rollout", "restart", "deployment/web").strip() == "deployment.apps/web restarted"
    settle(twin, 5)
    restarted = replica_set_of(twin, "web")
    assert restarted["metadata"]["name"] != first
    assert "kubectl.kubernetes.io/restartedAt" in restarted["spec"]["template"]["metadata"]["annotations"]
    assert kubectl("rollout", "pause", "deployment/web").strip() == "deployment.apps/web paused"
    kubectl("set", "image", "deployment/web", "nginx=nginx:1.26")
    settle(twin, 3)
    assert len(replica_sets(twin)) == 2
    assert "Progressing    Unknown  DeploymentPaused" in kubectl("describe", "deployment", "web")
    result = kubectl.fails("rollout", "undo", "deployment/web")
    assert "you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume" in result.stderr
    assert kubectl("rollout", "resume", "deployment/web").strip() == "deployment.apps/web resumed"
    settle(twin, 6)
    assert len(replica_sets(twin)) == 3
    assert {p["spec"]["containers"][0]["image"] for p in pods(twin)} == {"nginx:1.26"}
    assert kubectl("rollout", "status", "deployment/web", "--timeout=5s").strip() == \
        'deployment "web" successfully rolled out'


def test_scaled_to_zero_shows_in_kubectl_and_kubectl_scale_repairs_it(kubectl, twin):
    _deploy(kubectl, twin)
    kubectl("scale", "deployment/web", "--replicas=0")
    twin.warp(1)
    terminating = kubectl("get", "pods", "--no-headers", "-l", "app=web").strip().splitlines()
    assert len(terminating) == 3 and all(line.split()[2] == "Terminating" for line in terminating)
    settle(twin, 1)  # their kubelet stops them
    row = kubectl("get", "deployment", "web", "--no-headers").split()
    assert row[:4] == ["web", "0/0", "0", "0"]
    assert kubectl("get", "pods", "--no-headers", "-l", "app=web").strip() == ""
    assert get(twin, "deployments.apps", "web")["spec"]["replicas"] == 0
    kubectl("scale", "deployment/web", "--replicas=3")
    settle(twin, 2)
    row = kubectl("get", "deployment", "web", "--no-headers").split()
    assert row[:4] == ["web", "3/3", "3", "3"]
    assert len(kubectl("get", "pods", "--no-headers", "-l", "app=web").strip().splitlines()) == 3
