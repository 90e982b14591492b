"""Graceful pod deletion: the API server marks the pod, the kubelet stops its containers and removes it."""

from __future__ import annotations

import pytest

from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.clock import parse_time

from tests.conftest import KUBECTL, Kubectl
from tests.twin.kubelet_helpers import (NODE, container, create_pod, kubelet_twin, messages, pod, pods_resource,
                                        set_node_ready, status, table_status, warp_until)

NGINX = {"name": "web", "image": "nginx:1.27"}
SLEEPER = {"name": "app", "image": "busybox:1.36", "command": ["sleep", "3600"]}


def delete(twin, name: str, **options) -> dict:
    return twin.api.delete(pods_resource(twin), "default", name, DeleteOptions(**options), twin.admin_ctx)


def running(twin, name: str) -> None:
    warp_until(twin, lambda: table_status(twin, name)[1] == "Running", 30)


def test_a_running_pod_is_marked_then_stopped_by_its_kubelet_and_removed():
    with kubelet_twin() as twin:
        create_pod(twin, "web", [NGINX])
        running(twin, "web")
        now = twin.clock.now()
        marked = delete(twin, "web")
        meta = marked["metadata"]
        assert meta["deletionGracePeriodSeconds"] == 30
        assert parse_time(meta["deletionTimestamp"]) == now + 30
        assert table_status(twin, "web")[1] == "Terminating"
        took = warp_until(twin, lambda: pod(twin, "web") is None, 40)
        assert took <= 3  # nginx exits at once on SIGTERM
        assert "Stopping container web" in [e["message"] for e in twin.store.list("events", "default")[0]
                                             if e["reason"] == "Killing"]


def test_a_process_that_ignores_sigterm_holds_the_pod_for_the_whole_grace_period():
    with kubelet_twin() as twin:
        create_pod(twin, "sleeper", [SLEEPER], terminationGracePeriodSeconds=20)
        running(twin, "sleeper")
        delete(twin, "sleeper")
        twin.warp(19)
        assert pod(twin, "sleeper") is not None and table_status(twin, "sleeper")[1] == "Terminating"
        warp_until(twin, lambda: pod(twin, "sleeper") is None, 5)


def test_the_last_status_before_removal_shows_the_killed_containers():
    with kubelet_twin() as twin:
        create_pod(twin, "sleeper", [SLEEPER], terminationGracePeriodSeconds=5)
        running(twin, "sleeper")
        delete(twin, "sleeper")
        seen = []
        watch = twin.store.watch("pods", lambda kind, obj: seen.append((kind, obj)), lambda obj: True,
                                 twin.store.resource_version)
        twin.warp(10)
        watch.stop()
        final = [obj for kind, obj in seen if kind == "MODIFIED"][-1]
        state = final["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (state["exitCode"], state["reason"]) == (137, "Error")
        assert final["status"]["phase"] == "Failed"
        assert seen[-1][0] == "DELETED"


def test_a_prestop_hook_delays_the_signal():
    with kubelet_twin() as twin:
        create_pod(twin, "drain", [dict(NGINX, lifecycle={"preStop": {"sleep": {"seconds": 10}}})])
        running(twin, "drain")
        delete(twin, "drain")
        took = warp_until(twin, lambda: pod(twin, "drain") is None, 40)
        assert 10 <= took <= 12


def test_force_deletion_and_shortening_the_grace_period():
    with kubelet_twin() as twin:
        create_pod(twin, "a", [SLEEPER])
        create_pod(twin, "b", [SLEEPER])
        running(twin, "a")
        running(twin, "b")
        delete(twin, "a", grace_period=0)  # kubectl delete --grace-period=0 --force
        assert pod(twin, "a") is None
        first = delete(twin, "b", grace_period=60)
        deadline = parse_time(first["metadata"]["deletionTimestamp"])
        again = delete(twin, "b", grace_period=120)  # a longer grace period changes nothing
        assert parse_time(again["metadata"]["deletionTimestamp"]) == deadline
        shorter = delete(twin, "b", grace_period=5)
        assert shorter["metadata"]["deletionGracePeriodSeconds"] == 5
        assert parse_time(shorter["metadata"]["deletionTimestamp"]) == deadline - 55
        warp_until(twin, lambda: pod(twin, "b") is None, 10)


def test_a_pod_with_a_finalizer_waits_for_it_after_its_kubelet_is_done():
    with kubelet_twin() as twin:
        create_pod(twin, "guarded", [NGINX])
        pods = pods_resource(twin)
        guarded = twin.api.get(pods, "default", "guarded")
        guarded["metadata"]["finalizers"] = ["example.com/audit"]
        twin.api.update(pods, "default", "guarded", guarded, twin.admin_ctx)
        running(twin, "guarded")
        delete(twin, "guarded")
        twin.warp(10)
        left = pod(twin, "guarded")
        assert left is not None and left["metadata"]["deletionGracePeriodSeconds"] == 0
        released = twin.api.get(pods, "default", "guarded")
        released["metadata"]["finalizers"] = []
        twin.api.update(pods, "default", "guarded", released, twin.admin_ctx)
        assert pod(twin, "guarded") is None


def test_unbound_and_finished_pods_go_at_once_and_dry_runs_change_nothing():
    with kubelet_twin() as twin:
        create_pod(twin, "pending", [NGINX], node=None)
        # The pod registry answers DELETE with the object as it was when it went (ReturnDeletedObject).
        gone = delete(twin, "pending")
        assert gone["kind"] == "Pod" and gone["metadata"]["name"] == "pending"
        assert pod(twin, "pending") is None
        create_pod(twin, "done", [{"name": "task", "image": "busybox:1.36", "command": ["true"]}],
                   restartPolicy="Never")
        warp_until(twin, lambda: status(twin, "done").get("phase") == "Succeeded", 30)
        delete(twin, "done")
        assert pod(twin, "done") is None
        create_pod(twin, "web", [NGINX])
        running(twin, "web")
        delete(twin, "web", dry_run=True)
        assert "deletionTimestamp" not in pod(twin, "web")["metadata"]
        assert delete(twin, "web", grace_period=-5)["metadata"]["deletionGracePeriodSeconds"] == 1


def test_without_a_running_kubelet_the_pod_stays_terminating():
    with kubelet_twin() as twin:
        create_pod(twin, "web", [NGINX])
        running(twin, "web")
        set_node_ready(twin, NODE, False)
        delete(twin, "web")
        twin.warp(120)
        assert table_status(twin, "web")[1] == "Terminating"
        assert container(twin, "web")["state"].get("running")
        set_node_ready(twin, NODE, True)
        warp_until(twin, lambda: pod(twin, "web") is None, 10)


def test_a_container_being_stopped_for_a_failed_liveness_probe_uses_the_probes_grace_period():
    with kubelet_twin() as twin:
        create_pod(twin, "stuck", [dict(SLEEPER, livenessProbe={"tcpSocket": {"port": 80}, "periodSeconds": 5,
                                                                "failureThreshold": 1,
                                                                "terminationGracePeriodSeconds": 3})])
        warp_until(twin, lambda: container(twin, "stuck").get("restartCount", 0) >= 1, 30)
        last = container(twin, "stuck")["lastState"]["terminated"]
        assert parse_time(last["finishedAt"]) - parse_time(last["startedAt"]) <= 5 + 3 + 1
        assert "Container app failed liveness probe, will be restarted" in messages(twin, "stuck", "Killing")


@pytest.mark.kubectl
def test_kubectl_delete_waits_for_the_kubelet(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH")
    with kubelet_twin(serve=True) as twin:
        kubectl = Kubectl(twin, tmp_path / "admin")
        create_pod(twin, "web", [NGINX])
        running(twin, "web")
        assert kubectl("delete", "pod", "web", "--wait=false") == 'pod "web" deleted\n'
        assert kubectl("get", "pod", "web", "--no-headers").split()[2] == "Terminating"
        twin.warp(5)
        assert "NotFound" in kubectl.fails("get", "pod", "web").stderr
        create_pod(twin, "sleeper", [SLEEPER])
        running(twin, "sleeper")
        result = kubectl.run("delete", "pod", "sleeper", "--grace-period=0", "--force")
        assert "Immediate deletion does not wait for confirmation" in result.stderr
        assert pod(twin, "sleeper") is None
