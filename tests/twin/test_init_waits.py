"""Init containers that wait for the cluster (``until nc -z svc 80; do sleep 2; done``) and that hand files over
through an emptyDir, run by the kubelet's default container model on a whole twin."""

from __future__ import annotations

from pytest_itbench.twin.clock import parse_time
from pytest_itbench.twin.containers import ContainerRef
from pytest_itbench.twin.containers.exec_commands import run, sandbox_for
from tests.twin.kubelet_helpers import container, create, create_pod, log_text, status, table_status, warp_until

NGINX = {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}
WAIT = {"name": "wait-for-db", "image": "busybox:1.36",
        "command": ["sh", "-c", "until nc -z -v -w30 db 80; do echo waiting for db; sleep 2; done;"]}
DB_SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db"},
              "spec": {"selector": {"app": "db"}, "ports": [{"port": 80, "targetPort": 80}]}}


def _ready_since(twin, name: str) -> float | None:
    ready = next((c for c in status(twin, name).get("conditions") or () if c["type"] == "Ready"), {})
    return parse_time(ready["lastTransitionTime"]) if ready.get("status") == "True" else None


def test_an_init_container_waits_for_a_ready_endpoint_and_goes_on_at_its_next_attempt(cluster):
    twin = cluster
    create(twin, "services", DB_SERVICE)
    create_pod(twin, "app", [NGINX], init=[WAIT], node=None)
    twin.warp(30)
    assert table_status(twin, "app")[1] == "Init:0/1", "no endpoint: the init container keeps trying"
    assert container(twin, "app", "wait-for-db", init=True)["state"].get("running") is not None
    refused = log_text(twin, "app", "wait-for-db")
    assert "nc: db (" in refused and ":80): Connection refused\nwaiting for db\n" in refused
    assert refused.count("waiting for db") >= 10  # an attempt every two seconds, not a single verdict

    create_pod(twin, "db", [NGINX], node=None, **{})
    pod = twin.store.get("pods", "default", "db")
    pod["metadata"]["labels"] = {"app": "db"}  # labelled only now: the Service gets its endpoint when it is ready
    res = twin.api.catalog.lookup("", "v1", "pods")
    twin.api.update(res, "default", "db", pod, twin.admin_ctx)
    warp_until(twin, lambda: table_status(twin, "app")[1] == "Running", 60)
    db_ready = _ready_since(twin, "db")
    finished = parse_time(container(twin, "app", "wait-for-db", init=True)["state"]["terminated"]["finishedAt"])
    assert db_ready is not None and 0 <= finished - db_ready <= 4, "noticed at the next attempt after the endpoint"
    assert log_text(twin, "app", "wait-for-db").endswith(":80) open\n")


def test_a_service_that_never_gets_an_endpoint_keeps_the_pod_initializing(cluster):
    twin = cluster
    create(twin, "services", dict(DB_SERVICE, spec={"selector": {"app": "nothing"}, "ports": [{"port": 80}]}))
    create_pod(twin, "app", [NGINX], init=[WAIT], node=None)
    twin.warp(600)
    assert table_status(twin, "app") == ("0/1", "Init:0/1", "0")
    assert status(twin, "app")["phase"] == "Pending"


def test_a_file_an_init_container_copies_into_an_emptydir_is_there_for_the_app(cluster):
    twin = cluster
    create(twin, "configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flags"},
                                "data": {"flags.json": '{"flags": {"a": 1}}\n'}})
    init = {"name": "init-config", "image": "busybox", "command": [
        "sh", "-c", "cp /config-ro/flags.json /config-rw/flags.json && cat /config-rw/flags.json"],
        "volumeMounts": [{"name": "config-ro", "mountPath": "/config-ro"},
                         {"name": "config-rw", "mountPath": "/config-rw"}]}
    app = dict(NGINX, volumeMounts=[{"name": "config-rw", "mountPath": "/etc/app"}])
    create_pod(twin, "app", [app], init=[init], node=None,
               volumes=[{"name": "config-rw", "emptyDir": {}}, {"name": "config-ro", "configMap": {"name": "flags"}}])
    warp_until(twin, lambda: table_status(twin, "app")[1] == "Running", 60)
    assert log_text(twin, "app", "init-config") == '{"flags": {"a": 1}}\n'
    pod = twin.store.get("pods", "default", "app")
    box = sandbox_for(twin.store, pod, ContainerRef("containers", app), lambda *_: "", twin.clock.now(), exec_pid=9)
    result = run(box, ["cat", "/etc/app/flags.json"], b"")
    assert (result.exit_code, b"".join(d for _, d in result.output)) == (0, b'{"flags": {"a": 1}}\n')


def test_an_init_container_copying_a_missing_file_fails_in_busybox_words(cluster):
    twin = cluster
    init = {"name": "init-config", "image": "busybox", "command": ["sh", "-c", "cp /config-ro/x /tmp/x && cat /tmp/x"]}
    create_pod(twin, "app", [NGINX], init=[init], node=None)
    warp_until(twin, lambda: container(twin, "app", "init-config", init=True).get("restartCount", 0) >= 1, 60)
    assert log_text(twin, "app", "init-config", previous=True) == \
        "cp: can't stat '/config-ro/x': No such file or directory\n"
