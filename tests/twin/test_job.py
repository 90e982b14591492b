"""The Job controller, run alone: the tests play the kubelet (pods Running, then their containers exit)."""

from __future__ import annotations

import pytest
import yaml

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.clock import parse_time
from pytest_itbench.twin.store import clone

from .kubelet_standin import events, finish, messages, names, pods, run

START = 1_700_000_000.0
TRACKING = "batch.kubernetes.io/job-tracking"


def make_twin(seed: int = 8) -> Twin:
    return Twin(seed=seed, nodes=1, start_time=START, controllers={"job"})


def manifest(name: str = "pi", **spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "pi", "image": "perl:5.34"}]}}, **spec}}


def jobs(twin: Twin):
    return twin.api.catalog.lookup("batch", "v1", "jobs")


def create(twin: Twin, obj: dict) -> dict:
    return twin.api.create(jobs(twin), "default", obj, twin.admin_ctx)


def status(twin: Twin, name: str = "pi") -> dict:
    return twin.store.get("jobs.batch", "default", name)["status"]


def conditions(twin: Twin, name: str = "pi") -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c.get("reason", ""), c.get("message", ""))
            for c in status(twin, name).get("conditions", [])]


def live(twin: Twin) -> list[str]:
    """Pods not finished and not being deleted."""
    return [p["metadata"]["name"] for p in pods(twin)
            if p["status"].get("phase") not in ("Succeeded", "Failed") and not p["metadata"].get("deletionTimestamp")]


def created_at(twin: Twin, name: str) -> float:
    return parse_time(twin.store.get("pods", "default", name)["metadata"]["creationTimestamp"])


def complete(twin: Twin, name: str, exit_code: int = 0) -> None:
    run(twin, name)
    finish(twin, name, exit_code=exit_code)


def test_completions_and_parallelism_with_tracked_pods():
    twin = make_twin()
    job = create(twin, manifest(completions=3, parallelism=2))
    twin.warp(1)
    first, second = names(twin)
    pod = twin.store.get("pods", "default", first)
    uid = job["metadata"]["uid"]
    assert first.startswith("pi-") and len(first) == len("pi-") + 5
    assert pod["metadata"]["finalizers"] == [TRACKING]
    assert pod["metadata"]["labels"] == {"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid,
                                         "batch.kubernetes.io/job-name": "pi", "job-name": "pi"}
    owner = pod["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"], owner["blockOwnerDeletion"]) == ("Job", "pi", True, True)
    st = status(twin)
    assert st == {"startTime": twin.clock.timestamp(START + 1), "active": 2, "ready": 0, "terminating": 0,
                  "uncountedTerminatedPods": {}}

    run(twin, first)
    run(twin, second)
    twin.warp(2)
    assert status(twin)["ready"] == 2
    finish(twin, first)
    twin.warp(2)
    assert len(names(twin)) == 3, "a third pod for the last completion"
    assert "finalizers" not in twin.store.get("pods", "default", first)["metadata"], "counted, then released"
    st = status(twin)
    assert (st["succeeded"], st["active"], st["uncountedTerminatedPods"]) == (1, 2, {})

    for name in live(twin):
        complete(twin, name)
    twin.warp(2)
    st = status(twin)
    stamp = st["completionTime"]
    reached = ("True", "CompletionsReached", "Reached expected number of succeeded pods")
    assert conditions(twin) == [("SuccessCriteriaMet", *reached), ("Complete", *reached)]
    assert (st["succeeded"], "active" not in st, st["ready"], st["terminating"]) == (3, True, 0, 0)
    assert all(c["lastTransitionTime"] == stamp for c in st["conditions"])
    assert not any(p["metadata"].get("finalizers") for p in pods(twin))
    assert messages(twin, "pi")[-1] == "Job completed"
    assert sum(1 for _, reason, _ in events(twin, "pi") if reason == "SuccessfulCreate") == 3


def test_a_failing_pod_is_retried_with_exponential_back_off_until_the_backoff_limit():
    twin = make_twin()
    create(twin, manifest(backoffLimit=2))
    twin.warp(1)
    attempts = [names(twin)[0]]
    for expected_delay in (10, 20):
        failed_at = twin.clock.now()
        complete(twin, attempts[-1], exit_code=1)
        twin.warp(expected_delay - 1)
        assert live(twin) == [], f"no new pod before {expected_delay} s of back-off"
        twin.warp(1)
        (replacement,) = live(twin)
        assert created_at(twin, replacement) - failed_at == expected_delay
        attempts.append(replacement)
    assert (status(twin)["failed"], status(twin)["active"]) == (2, 1)
    complete(twin, attempts[-1], exit_code=1)
    twin.warp(2)
    limit = ("True", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert conditions(twin) == [("FailureTarget", *limit), ("Failed", *limit)]
    st = status(twin)
    assert (st["failed"], "succeeded" not in st, "completionTime" not in st) == (3, True, True)
    assert ("Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit") in events(twin, "pi")
    twin.warp(60)
    assert len(names(twin)) == 3, "a failed Job starts no more pods"


def test_restarts_of_an_on_failure_pod_count_against_the_backoff_limit():
    twin = make_twin()
    spec = manifest(backoffLimit=3)
    spec["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    create(twin, spec)
    twin.warp(1)
    (pod,) = names(twin)
    run(twin, pod)
    current = twin.api.get(twin.api.catalog.lookup("", "v1", "pods"), "default", pod)
    current["status"]["containerStatuses"][0]["restartCount"] = 3
    twin.api.update(twin.api.catalog.lookup("", "v1", "pods"), "default", pod, current, twin.admin_ctx,
                    subresource="status")
    twin.warp(3)
    assert conditions(twin)[-1][:3] == ("Failed", "True", "BackoffLimitExceeded")
    assert names(twin) == [], "the running pod was deleted"


def test_active_deadline_fails_the_job_and_deletes_its_pods():
    twin = make_twin()
    create(twin, manifest(activeDeadlineSeconds=30, parallelism=2, completions=4))
    twin.warp(1)
    for name in names(twin):
        run(twin, name)
    twin.warp(29)
    assert conditions(twin) == [] and len(live(twin)) == 2
    twin.warp(1)
    deadline = ("True", "DeadlineExceeded", "Job was active longer than specified deadline")
    assert conditions(twin)[0] == ("FailureTarget", *deadline)
    twin.warp(2)
    assert conditions(twin) == [("FailureTarget", *deadline), ("Failed", *deadline)]
    assert names(twin) == [] and status(twin)["failed"] == 2
    assert ("Warning", "DeadlineExceeded", "Job was active longer than specified deadline") in events(twin, "pi")


def test_an_indexed_job_runs_each_index_to_completion():
    twin = make_twin()
    create(twin, manifest("idx", completions=3, parallelism=3, completionMode="Indexed"))
    twin.warp(1)
    by_index = {p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p for p in pods(twin)}
    assert sorted(by_index) == ["0", "1", "2"]
    zero = by_index["0"]
    assert zero["metadata"]["name"].startswith("idx-0-") and len(zero["metadata"]["name"]) == len("idx-0-") + 5
    assert zero["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "0"
    assert zero["spec"]["hostname"] == "idx-0"
    assert {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
        "apiVersion": "v1", "fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}} in \
        zero["spec"]["containers"][0]["env"]

    complete(twin, by_index["1"]["metadata"]["name"])
    complete(twin, zero["metadata"]["name"], exit_code=1)
    twin.warp(2)
    st = status(twin, "idx")
    assert (st["completedIndexes"], st["succeeded"], st["failed"]) == ("1", 1, 1)
    twin.warp(10)
    (again,) = [p for p in pods(twin) if p["metadata"]["name"] not in (zero["metadata"]["name"],
                                                                       by_index["1"]["metadata"]["name"],
                                                                       by_index["2"]["metadata"]["name"])]
    assert again["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0"
    complete(twin, again["metadata"]["name"])
    complete(twin, by_index["2"]["metadata"]["name"])
    twin.warp(2)
    st = status(twin, "idx")
    assert (st["completedIndexes"], st["succeeded"]) == ("0-2", 3)
    assert conditions(twin, "idx")[-1][:2] == ("Complete", "True")


def test_ttl_after_finished_deletes_the_job_and_its_pods():
    twin = make_twin()
    create(twin, manifest(ttlSecondsAfterFinished=60))
    twin.warp(1)
    complete(twin, names(twin)[0])
    twin.warp(2)
    finished_at = parse_time(status(twin)["completionTime"])
    twin.warp(finished_at + 59 - twin.clock.now())
    assert twin.store.get("jobs.batch", "default", "pi") is not None
    twin.warp(2)
    assert twin.store.get("jobs.batch", "default", "pi") is None and names(twin) == []


def test_suspending_deletes_the_pods_and_resuming_starts_them_again():
    twin = make_twin()
    create(twin, manifest(suspend=True, parallelism=2, completions=2))
    twin.warp(2)
    assert names(twin) == [] and "startTime" not in status(twin)
    assert conditions(twin) == [("Suspended", "True", "JobSuspended", "Job suspended")]

    def toggle(value: bool) -> None:
        obj = clone(twin.api.get(jobs(twin), "default", "pi"))
        obj["spec"]["suspend"] = value
        twin.api.update(jobs(twin), "default", "pi", obj, twin.admin_ctx)

    toggle(False)
    twin.warp(1)
    assert len(live(twin)) == 2 and status(twin)["startTime"] == twin.clock.timestamp()
    assert conditions(twin) == [("Suspended", "False", "JobResumed", "Job resumed")]
    toggle(True)
    twin.warp(1)
    assert names(twin) == [], "a suspended Job's pods are deleted, without counting as failures"
    assert "failed" not in status(twin)
    counts = {e["reason"]: e["count"] for e in twin.store.list("events", "default")[0]
              if e["reason"] in ("Suspended", "Resumed")}
    assert counts == {"Suspended": 2, "Resumed": 1}, "the repeated event is counted on the first"


def test_deleting_a_job_releases_its_pods_from_the_tracking_finalizer():
    twin = make_twin()
    create(twin, manifest(parallelism=2, completions=2))
    twin.warp(1)
    for name in names(twin):
        run(twin, name)
    twin.api.delete(jobs(twin), "default", "pi", DeleteOptions(propagation="Background"), twin.admin_ctx)
    assert all(p["metadata"].get("deletionTimestamp") for p in pods(twin)), "the garbage collector deletes them"
    twin.warp(1)
    assert names(twin) == []


def test_the_same_seed_and_actions_give_the_same_job():
    def scenario() -> list:
        twin = make_twin(seed=31)
        create(twin, manifest(completions=3, parallelism=2, backoffLimit=4))
        twin.warp(1)
        complete(twin, names(twin)[0], exit_code=1)
        twin.warp(15)
        for name in live(twin):
            complete(twin, name)
        twin.warp(15)
        for name in live(twin):
            complete(twin, name)
        twin.warp(3)
        return [[(p["metadata"]["name"], p["metadata"]["uid"]) for p in pods(twin)], status(twin),
                events(twin, "pi")]

    assert scenario() == scenario()


@pytest.fixture
def twin():
    """For kubectl: a clock at wall time, which the twin's certificates are valid for."""
    with Twin(seed=9, nodes=1, controllers={"job"}) as t:
        yield t


def test_kubectl_get_jobs_shows_status_and_completions(twin, kubectl):
    kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest(completions=2)))
    twin.warp(1)
    assert kubectl("get", "jobs", "--no-headers").split()[:3] == ["pi", "Running", "0/2"]
    complete(twin, names(twin)[0])
    twin.warp(2)
    assert kubectl("get", "jobs", "--no-headers").split()[:3] == ["pi", "Running", "1/2"]
    complete(twin, live(twin)[0])
    twin.warp(2)
    assert kubectl("get", "jobs", "--no-headers").split()[:3] == ["pi", "Complete", "2/2"]
    assert kubectl("wait", "--for=condition=complete", "job/pi", "--timeout=5s") == "job.batch/pi condition met\n"
