"""The shop's init containers run as on a real cluster: consumers wait for kafka, cart for valkey-cart, and
flagd's init-config copies the flag file into the emptyDir flagd reads."""

from __future__ import annotations

import json

from pytest_itbench.twin.clock import parse_time
from pytest_itbench.twin.containers import ContainerRef
from pytest_itbench.twin.containers.exec_commands import run, sandbox_for
from tests.workload.shop import NAMESPACE, logs, pod_of, shop_twin

WAITERS = {"accounting": "wait-for-kafka", "checkout": "wait-for-kafka", "fraud-detection": "wait-for-kafka",
           "cart": "wait-for-valkey-cart"}


def test_every_pod_runs_after_its_init_containers_completed():
    twin = shop_twin()
    for pod in twin.store.list("pods", NAMESPACE)[0]:
        name = pod["metadata"]["name"]
        assert pod["status"]["phase"] == "Running", name
        assert all(c["ready"] for c in pod["status"]["containerStatuses"]), name
        for init in pod["status"].get("initContainerStatuses") or ():
            terminated = init["state"].get("terminated") or {}
            assert terminated.get("reason") == "Completed" and init["restartCount"] == 0, (name, init["name"])


def test_consumers_were_held_until_kafka_listened():
    twin = shop_twin()
    kafka = pod_of(twin, "kafka")
    kafka_started = parse_time(kafka["status"]["containerStatuses"][0]["state"]["running"]["startedAt"])
    for deployment, init in WAITERS.items():
        lines = logs(twin, deployment, init)
        assert lines[-1].endswith(") open"), (deployment, lines[-3:])
        if init == "wait-for-kafka":
            assert "waiting for kafka" in lines, "the consumer started before kafka listened, and waited"
            status = next(c for c in pod_of(twin, deployment)["status"]["initContainerStatuses"]
                          if c["name"] == init)
            # kafka listens some seconds after its start (its start-up), and the wait notices at its next attempt
            assert parse_time(status["state"]["terminated"]["finishedAt"]) > kafka_started


def test_flagd_reads_the_flag_file_its_init_container_copied():
    twin = shop_twin()
    copied = "\n".join(logs(twin, "flagd", "init-config"))
    configmap = twin.store.get("configmaps", NAMESPACE, "flagd-config")
    assert json.loads(copied) == json.loads(configmap["data"]["demo.flagd.json"])
    pod = pod_of(twin, "flagd")
    flagd = next(c for c in pod["spec"]["containers"] if c["name"] == "flagd")
    box = sandbox_for(twin.store, pod, ContainerRef("containers", flagd), lambda *_: "", twin.clock.now(), exec_pid=9)
    result = run(box, ["cat", "/etc/flagd/demo.flagd.json"], b"")
    assert result.exit_code == 0
    assert json.loads(b"".join(d for _, d in result.output)) == json.loads(configmap["data"]["demo.flagd.json"])
