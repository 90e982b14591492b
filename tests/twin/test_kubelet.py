"""The kubelet alone: pods bound by the test go from ContainerCreating to Running, crash, restart, complete.

What is checked is what a real v1.31 node shows: phases, conditions,
container states and reasons, restart counts and back-off, events, logs.
"""

from __future__ import annotations

import ipaddress

import pytest

from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.clock import parse_time
from pytest_itbench.twin.store import clone

from tests.conftest import KUBECTL, Kubectl
from tests.twin.kubelet_helpers import (NODE, START, condition, container, create, create_pod, events, kubelet_twin, log_text,
                              messages, pod, pods_resource, set_node_ready, status, table_status, warp_until)

NGINX = {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}


def test_a_pod_is_created_then_runs_with_the_status_a_kubelet_writes():
    with kubelet_twin() as twin:
        create_pod(twin, "web", [NGINX])
        twin.warp(1)
        first = status(twin, "web")
        assert first["phase"] == "Pending" and "podIP" not in first
        assert first["hostIP"] == "172.18.0.3" and first["startTime"]
        assert container(twin, "web")["state"] == {"waiting": {"reason": "ContainerCreating"}}
        assert condition(twin, "web", "PodReadyToStartContainers")["status"] == "False"
        assert table_status(twin, "web") == ("0/1", "ContainerCreating", "0")

        warp_until(twin, lambda: condition(twin, "web", "Ready").get("status") == "True", 30)
        st = status(twin, "web")
        assert st["phase"] == "Running" and st["qosClass"] == "BestEffort"
        assert [c["type"] for c in st["conditions"]] == ["PodReadyToStartContainers", "Initialized", "Ready",
                                                         "ContainersReady", "PodScheduled"]
        assert all(c["status"] == "True" for c in st["conditions"])
        assert ipaddress.ip_address(st["podIP"]) in ipaddress.ip_network("10.244.1.0/24")
        assert st["podIPs"] == [{"ip": st["podIP"]}] and st["hostIPs"] == [{"ip": "172.18.0.3"}]
        web = container(twin, "web")
        assert web["image"] == "docker.io/library/nginx:1.27"
        assert web["imageID"].startswith("docker.io/library/nginx@sha256:") and len(web["imageID"]) == 31 + 64
        assert web["containerID"].startswith("containerd://") and len(web["containerID"]) == 13 + 64
        assert web["ready"] and web["started"] and web["restartCount"] == 0 and web["lastState"] == {}
        assert web["volumeMounts"][0]["recursiveReadOnly"] == "Disabled"  # the service account token, read-only
        reasons = [e["reason"] for e in events(twin, "web")]
        assert reasons == ["Pulling", "Pulled", "Created", "Started"]
        pulled = messages(twin, "web", "Pulled")[0]
        assert pulled.startswith('Successfully pulled image "nginx:1.27" in ') and pulled.endswith(" bytes.")
        assert "including waiting). Image size: " in pulled
        assert messages(twin, "web", "Created") == ["Created container web"]
        assert events(twin, "web")[0]["source"] == {"component": "kubelet", "host": NODE}
        assert events(twin, "web")[0]["involvedObject"]["fieldPath"] == "spec.containers{web}"
        twin.warp(2)
        assert "[notice] 1#1: nginx/1.27" in log_text(twin, "web", "web")


def test_status_writes_come_from_the_node_and_stop_when_nothing_changes():
    with kubelet_twin() as twin:
        create_pod(twin, "web", [dict(NGINX, readinessProbe={"httpGet": {"path": "/", "port": 80}})])
        twin.warp(30)
        stored = pod(twin, "web")
        managers = {(m["manager"], m.get("subresource")) for m in stored["metadata"]["managedFields"]}
        assert ("kubelet", "status") in managers
        version = stored["metadata"]["resourceVersion"]
        twin.warp(300)  # thirty readiness probes that all pass
        assert pod(twin, "web")["metadata"]["resourceVersion"] == version


def test_a_container_that_exits_restarts_with_the_kubelets_exponential_back_off():
    with kubelet_twin() as twin:
        create_pod(twin, "crash", [{"name": "app", "image": "busybox:1.36",
                                    "command": ["sh", "-c", "echo boom; echo failing >&2; exit 3"]}])
        restarts_at: list[float] = []
        seen = 0
        for _ in range(330):
            twin.warp(1)
            count = container(twin, "crash").get("restartCount", 0)
            if count != seen:
                restarts_at.append(twin.clock.now())
                seen = count
        gaps = [b - a for a, b in zip(restarts_at, restarts_at[1:])]
        # The first restart follows the exit at once; then the back-off doubles from 10 s (with the pod
        # worker's 10-15 s resync deciding the exact moment).
        assert restarts_at[0] - START <= 8, restarts_at
        for gap, back_off in zip(gaps, (10, 20, 40, 80, 160)):
            assert back_off <= gap <= back_off + 16, (gaps, back_off)
        cs = container(twin, "crash")
        assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        uid = pod(twin, "crash")["metadata"]["uid"]
        assert cs["state"]["waiting"]["message"].startswith("back-off ")
        assert cs["state"]["waiting"]["message"].endswith(f" restarting failed container=app pod=crash_default({uid})")
        last = cs["lastState"]["terminated"]
        assert (last["exitCode"], last["reason"]) == (3, "Error") and last["containerID"].startswith("containerd://")
        assert parse_time(last["finishedAt"]) >= parse_time(last["startedAt"])
        assert status(twin, "crash")["phase"] == "Running"
        assert table_status(twin, "crash")[1] == "CrashLoopBackOff"
        back_off = events(twin, "crash", "BackOff")[0]
        assert back_off["type"] == "Warning" and back_off["count"] > 5
        assert back_off["message"] == f"Back-off restarting failed container app in pod crash_default({uid})"
        assert log_text(twin, "crash", "app", previous=True) == "boom\nfailing\n"


def test_the_back_off_starts_over_after_ten_minutes_of_running():
    with kubelet_twin() as twin:
        create_pod(twin, "short", [{"name": "app", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 100; exit 1"]}])
        create_pod(twin, "long", [{"name": "app", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 700; exit 1"]}])
        warp_until(twin, lambda: container(twin, "long").get("restartCount") == 2, 1500)
        # Second exit of the long runner: its back-off entry had expired, so it restarted at once.
        assert "running" in container(twin, "long")["state"]
        assert container(twin, "short")["restartCount"] >= 3
        assert messages(twin, "long", "BackOff") == []
        assert messages(twin, "short", "BackOff")


def test_a_command_the_image_does_not_have_fails_to_start_and_is_repaired_by_a_new_pod():
    with kubelet_twin() as twin:
        create_pod(twin, "typo", [{"name": "app", "image": "busybox:1.36", "command": ["slepe", "3600"]}])
        error = ('failed to create containerd task: failed to create shim task: OCI runtime create failed: runc '
                 'create failed: unable to start container process: exec: "slepe": executable file not found in '
                 '$PATH: unknown')
        warp_until(twin, lambda: table_status(twin, "typo")[1] == "RunContainerError", 30)
        assert container(twin, "typo")["state"]["waiting"] == {"reason": "RunContainerError", "message": error}
        warp_until(twin, lambda: table_status(twin, "typo")[1] == "CrashLoopBackOff", 30)
        cs = container(twin, "typo")
        assert cs["restartCount"] == 1
        last = cs["lastState"]["terminated"]
        assert (last["exitCode"], last["reason"], last["message"]) == (128, "StartError", error)
        assert last["startedAt"] == "1970-01-01T00:00:00Z"
        assert f"Error: {error}" in messages(twin, "typo", "Failed")
        twin.warp(60)
        assert table_status(twin, "typo")[1] == "CrashLoopBackOff"
        assert container(twin, "typo")["restartCount"] >= 3

        twin.api.delete(pods_resource(twin), "default", "typo", DeleteOptions(grace_period=0), twin.admin_ctx)
        warp_until(twin, lambda: pod(twin, "typo") is None, 40)
        create_pod(twin, "typo", [{"name": "app", "image": "busybox:1.36", "command": ["sleep", "3600"]}])
        warp_until(twin, lambda: table_status(twin, "typo")[1] == "Running", 30)
        assert container(twin, "typo")["restartCount"] == 0


def test_job_style_pods_succeed_or_fail_by_restart_policy():
    with kubelet_twin() as twin:
        create_pod(twin, "ok", [{"name": "task", "image": "busybox:1.36", "command": ["sh", "-c", "echo done"]}],
                   restartPolicy="Never")
        create_pod(twin, "bad", [{"name": "task", "image": "busybox:1.36", "command": ["sh", "-c", "exit 2"]}],
                   restartPolicy="Never")
        create_pod(twin, "retry", [{"name": "task", "image": "busybox:1.36", "command": ["sh", "-c", "exit 2"]}],
                   restartPolicy="OnFailure")
        twin.warp(60)
        assert status(twin, "ok")["phase"] == "Succeeded"
        done = container(twin, "ok")["state"]["terminated"]
        assert (done["exitCode"], done["reason"]) == (0, "Completed")
        assert condition(twin, "ok", "Ready") == {**condition(twin, "ok", "Ready"), "status": "False",
                                                  "reason": "PodCompleted"}
        assert table_status(twin, "ok") == ("0/1", "Completed", "0")
        assert log_text(twin, "ok", "task") == "done\n"
        assert status(twin, "bad")["phase"] == "Failed"
        assert container(twin, "bad")["state"]["terminated"]["exitCode"] == 2
        assert condition(twin, "bad", "ContainersReady")["reason"] == "PodFailed"
        assert table_status(twin, "bad")[1] == "Error"
        assert status(twin, "retry")["phase"] == "Running" and container(twin, "retry")["restartCount"] >= 2


def test_init_containers_run_in_order_before_the_app():
    with kubelet_twin() as twin:
        init = [{"name": "migrate", "image": "busybox:1.36", "command": ["sh", "-c", "echo migrating; sleep 5"]},
                {"name": "warm", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 5"]}]
        create_pod(twin, "app", [NGINX], init=init)
        twin.warp(2)
        assert table_status(twin, "app")[1] == "Init:0/2"
        assert container(twin, "app", "web")["state"]["waiting"]["reason"] == "PodInitializing"
        assert condition(twin, "app", "Initialized")["message"] == "containers with incomplete status: [migrate warm]"
        warp_until(twin, lambda: table_status(twin, "app")[1] == "Init:1/2", 30)
        warp_until(twin, lambda: table_status(twin, "app")[1] == "Running", 30)
        inits = status(twin, "app")["initContainerStatuses"]
        assert [c["name"] for c in inits] == ["migrate", "warm"]
        assert all(c["ready"] and c["state"]["terminated"]["reason"] == "Completed" for c in inits)
        started = [parse_time(c["state"]["terminated"]["startedAt"]) for c in inits]
        finished = parse_time(inits[0]["state"]["terminated"]["finishedAt"])
        assert started[1] >= finished  # one after the other
        assert log_text(twin, "app", "migrate") == "migrating\n"


def test_a_hanging_init_container_keeps_the_pod_initializing_and_a_crashing_one_backs_off():
    with kubelet_twin() as twin:
        create_pod(twin, "hang", [NGINX], init=[{"name": "wait-db", "image": "busybox:1.36",
                                                 "command": ["sh", "-c", "until nslookup db; do sleep 2; done"]}])
        create_pod(twin, "crash", [NGINX], init=[{"name": "setup", "image": "busybox:1.36",
                                                  "command": ["sh", "-c", "echo cannot reach db; exit 1"]}])
        twin.warp(5)
        assert table_status(twin, "crash")[1] in ("Init:Error", "Init:0/1")
        twin.warp(300)
        assert table_status(twin, "hang") == ("0/1", "Init:0/1", "0")
        assert status(twin, "hang")["phase"] == "Pending"
        assert table_status(twin, "crash")[1] == "Init:CrashLoopBackOff"
        assert status(twin, "crash")["phase"] == "Pending"
        assert container(twin, "crash", "setup", init=True)["restartCount"] >= 3
        assert container(twin, "crash", "web")["state"]["waiting"]["reason"] == "PodInitializing"
        assert log_text(twin, "crash", "setup", previous=True) == "cannot reach db\n"


def test_a_failing_init_container_fails_a_pod_that_never_restarts():
    with kubelet_twin() as twin:
        create_pod(twin, "once", [NGINX], init=[{"name": "setup", "image": "busybox:1.36", "command": ["false"]}],
                   restartPolicy="Never")
        twin.warp(30)
        assert status(twin, "once")["phase"] == "Failed"
        assert table_status(twin, "once")[1] == "Init:Error"
        assert container(twin, "once", "setup", init=True)["restartCount"] == 0


def test_sidecars_start_before_the_app_and_stop_after_a_job_finishes():
    with kubelet_twin() as twin:
        sidecar = {"name": "proxy", "image": "nginx:1.27", "restartPolicy": "Always"}
        create_pod(twin, "svc", [NGINX], init=[sidecar])
        create_pod(twin, "job", [{"name": "task", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 10"]}],
                   init=[sidecar], restartPolicy="Never")
        warp_until(twin, lambda: table_status(twin, "svc")[0] == "2/2", 30)
        assert table_status(twin, "svc")[1] == "Running"
        proxy = container(twin, "svc", "proxy", init=True)
        assert proxy["started"] and "running" in proxy["state"]
        warp_until(twin, lambda: status(twin, "job")["phase"] == "Succeeded", 60)
        assert "terminated" in container(twin, "job", "proxy", init=True)["state"]
        assert "Stopping container proxy" in messages(twin, "job", "Killing")


def test_pods_on_a_node_that_is_not_ready_are_not_started_until_it_is():
    with kubelet_twin() as twin:
        set_node_ready(twin, NODE, False)
        create_pod(twin, "waiting", [NGINX])
        twin.warp(60)
        assert status(twin, "waiting") == {"phase": "Pending", "qosClass": "BestEffort"}
        assert events(twin, "waiting") == []
        set_node_ready(twin, NODE, True)
        warp_until(twin, lambda: status(twin, "waiting").get("phase") == "Running", 30)


def test_missing_configuration_blocks_the_container_until_it_appears():
    with kubelet_twin() as twin:
        env = [{"name": "CURRENCY", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "currency"}}}]
        create_pod(twin, "env", [dict(NGINX, env=env)])
        volumes = [{"name": "config", "configMap": {"name": "app-config"}}]
        create_pod(twin, "mount", [dict(NGINX, volumeMounts=[{"name": "config", "mountPath": "/etc/app"}])],
                   volumes=volumes)
        twin.warp(30)
        cs = container(twin, "env")
        assert cs["state"]["waiting"] == {"reason": "CreateContainerConfigError",
                                          "message": 'configmap "settings" not found'}
        assert table_status(twin, "env")[1] == "CreateContainerConfigError"
        assert 'Error: configmap "settings" not found' in messages(twin, "env", "Failed")
        assert table_status(twin, "mount")[1] == "ContainerCreating"
        failed_mount = events(twin, "mount", "FailedMount")[0]
        assert failed_mount["message"] == 'MountVolume.SetUp failed for volume "config" : configmap "app-config" not found'
        assert failed_mount["count"] >= 4 and failed_mount["type"] == "Warning"
        twin.warp(120)
        assert any(m.startswith("Unable to attach or mount volumes: unmounted volumes=[config]")
                   for m in messages(twin, "mount", "FailedMount"))

        create(twin, "configmaps", {"metadata": {"name": "settings"}, "data": {"region": "eu"}})
        twin.warp(20)
        assert container(twin, "env")["state"]["waiting"]["message"] == \
            "couldn't find key currency in ConfigMap default/settings"
        configmaps = twin.api.catalog.lookup("", "v1", "configmaps")
        fixed = clone(twin.api.get(configmaps, "default", "settings"))
        fixed["data"]["currency"] = "EUR"
        twin.api.update(configmaps, "default", "settings", fixed, twin.admin_ctx)
        create(twin, "configmaps", {"metadata": {"name": "app-config"}, "data": {"app.yaml": "x: 1"}})
        warp_until(twin, lambda: table_status(twin, "env")[1] == "Running", 30)
        warp_until(twin, lambda: table_status(twin, "mount")[1] == "Running", 200)


def test_an_image_that_wants_configuration_complains_and_exits_until_it_gets_it():
    with kubelet_twin() as twin:
        create_pod(twin, "db", [{"name": "postgres", "image": "postgres:16"}])
        warp_until(twin, lambda: container(twin, "db").get("restartCount", 0) >= 1, 60)
        assert container(twin, "db")["lastState"]["terminated"]["exitCode"] == 1
        assert log_text(twin, "db", "postgres", previous=True).startswith(
            "Error: Database is uninitialized and superuser password is not specified.")
        create(twin, "secrets", {"metadata": {"name": "db"}, "stringData": {"password": "s3cret"}})
        env = [{"name": "POSTGRES_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}]
        create_pod(twin, "db2", [{"name": "postgres", "image": "postgres:16", "env": env,
                                  "readinessProbe": {"tcpSocket": {"port": 5432}, "periodSeconds": 5}}])
        warp_until(twin, lambda: table_status(twin, "db2")[0] == "1/1", 60)
        assert "database system is ready to accept connections" in log_text(twin, "db2", "postgres")


def test_a_pod_that_does_not_fit_the_node_is_rejected():
    with kubelet_twin() as twin:
        create_pod(twin, "huge", [dict(NGINX, resources={"requests": {"cpu": "9"}})])
        twin.warp(3)
        st = status(twin, "huge")
        assert st["phase"] == "Failed" and st["reason"] == "OutOfcpu"
        assert st["message"] == ("Pod was rejected: Node didn't have enough resource: cpu, requested: 9000, used: 0, "
                                 "capacity: 8000")
        assert table_status(twin, "huge")[1] == "OutOfcpu"
        assert messages(twin, "huge", "OutOfcpu")


def test_active_deadline_fails_the_pod():
    with kubelet_twin() as twin:
        create_pod(twin, "slow", [{"name": "task", "image": "busybox:1.36", "command": ["sleep", "600"]}],
                   activeDeadlineSeconds=30, restartPolicy="Never")
        twin.warp(40)
        st = status(twin, "slow")
        assert (st["phase"], st["reason"]) == ("Failed", "DeadlineExceeded")
        assert st["message"] == "Pod was active on the node longer than the specified deadline"
        warp_until(twin, lambda: "terminated" in container(twin, "slow")["state"], 60)


def test_changing_a_pods_image_restarts_its_container():
    with kubelet_twin() as twin:
        create_pod(twin, "web", [NGINX])
        warp_until(twin, lambda: table_status(twin, "web")[1] == "Running", 30)
        pods = pods_resource(twin)
        changed = clone(twin.api.get(pods, "default", "web"))
        changed["spec"]["containers"][0]["image"] = "nginx:1.26"
        twin.api.update(pods, "default", "web", changed, twin.admin_ctx)
        warp_until(twin, lambda: container(twin, "web").get("image") == "docker.io/library/nginx:1.26", 30)
        assert container(twin, "web")["restartCount"] == 1
        assert "Container web definition changed, will be restarted" in messages(twin, "web", "Killing")


def test_the_same_seed_and_actions_give_the_same_pods_and_events():
    def run() -> tuple:
        with kubelet_twin(seed=21) as twin:
            create_pod(twin, "web", [NGINX])
            create_pod(twin, "crash", [{"name": "app", "image": "busybox:1.36", "command": ["sh", "-c", "exit 1"]}])
            create_pod(twin, "bad", [{"name": "app", "image": "nginx:nope"}])
            twin.warp(120)
            pods = {p["metadata"]["name"]: p["status"] for p in twin.store.list("pods", "default")[0]}
            evs = sorted((e["metadata"]["name"], e["reason"], e["message"], e["count"], e["lastTimestamp"])
                         for e in twin.store.list("events", "default")[0])
            return pods, evs, log_text(twin, "crash", "app")
    assert run() == run()


@pytest.mark.kubectl
def test_kubectl_shows_a_crash_loop_and_its_previous_logs(kubelet_kubectl):
    kubectl, twin = kubelet_kubectl
    kubectl("apply", "-f", "-", input="""
apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  nodeName: itbench-worker
  containers:
  - name: app
    image: busybox:1.36
    command: ["sh", "-c", "echo connecting to db; echo 'fatal: connection refused' >&2; exit 1"]
""")
    twin.warp(90)
    line = kubectl("get", "pods", "crash", "--no-headers").split()
    assert line[1:3] == ["0/1", "CrashLoopBackOff"] and int(line[3]) >= 3
    described = kubectl("describe", "pod", "crash")
    assert "Reason:       CrashLoopBackOff" in described
    assert "Last State:     Terminated" in described and "Exit Code:    1" in described
    assert "Back-off restarting failed container app in pod crash_default(" in described
    assert kubectl("logs", "crash", "--previous") == "connecting to db\nfatal: connection refused\n"


@pytest.fixture
def kubelet_kubectl(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH")
    with kubelet_twin(serve=True) as twin:
        yield Kubectl(twin, tmp_path / "admin"), twin


def _phases_watched(twin, tmp_path, pods: dict[str, list[str]], seconds: float) -> dict[str, list[str]]:
    """The phases the official client's watch sees for each pod while the twin runs ``seconds`` in 0.25 s steps."""
    import threading

    from kubernetes import client as k8s, config, watch

    configuration = k8s.Configuration()
    config.load_kube_config(config_file=twin.write_kubeconfig(tmp_path / "kubeconfig"),
                            client_configuration=configuration)
    seen: dict[str, list[str]] = {name: [] for name in pods}
    with k8s.ApiClient(configuration) as api_client:
        core = k8s.CoreV1Api(api_client)
        connected, finished = threading.Event(), threading.Event()

        def follow():
            for event in watch.Watch().stream(core.list_namespaced_pod, "default", timeout_seconds=30):
                name, phase = event["object"].metadata.name, event["object"].status.phase
                if name == "marker":
                    connected.set()
                phases = seen.get(name)
                if phases is not None and (not phases or phases[-1] != phase):
                    phases.append(phase)
                if all(p and p[-1] in ("Succeeded", "Failed") for p in seen.values()):
                    finished.set()
                    return

        watcher = threading.Thread(target=follow, daemon=True)
        watcher.start()
        create_pod(twin, "marker", [NGINX], node=None)  # the watch is open once it sees this
        assert connected.wait(10)
        for name, command in pods.items():
            create_pod(twin, name, [{"name": "task", "image": "busybox:1.36", "command": command}],
                       restartPolicy="Never")
        for _ in range(int(seconds * 4)):
            twin.warp(0.25)
        finished.wait(10)
    return seen


def test_a_short_lived_pod_is_seen_pending_running_then_succeeded(tmp_path):
    # The kubelet reports a started container from the PLEG relist after its start (every second, not in step
    # with the start): a container that lives a second or two is seen Running; one gone before the relist
    # (echo) goes from Pending to Succeeded, as on a real node.
    with kubelet_twin(serve=True) as twin:
        seen = _phases_watched(twin, tmp_path, {"sleeps": ["sleep", "1"], "prints": ["echo", "hi"]}, 12)
    assert seen == {"sleeps": ["Pending", "Running", "Succeeded"], "prints": ["Pending", "Succeeded"]}
