"""The CronJob controller on the twin's clock. Most tests run it alone and play the Job controller (a Job's
Complete or Failed status written through the status subresource); the kubectl test runs both controllers."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin.clock import parse_time
from pytest_itbench.twin.store import clone

from .kubelet_standin import complete_pods, events, messages

START = datetime(2026, 3, 2, 9, 40, tzinfo=timezone.utc).timestamp()  # a Monday, 09:40 UTC
HOUR = 3600.0


def make_twin(seed: int = 12) -> Twin:
    return Twin(seed=seed, nodes=1, start_time=START, controllers={"cronjob"})


def manifest(name: str = "report", schedule: str = "0 * * * *", **spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedule": schedule, "jobTemplate": {
                "metadata": {"labels": {"team": "finance"}},
                "spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                                               "containers": [{"name": "report", "image": "busybox:1.36"}]}}}},
                     **spec}}


def cronjobs(twin: Twin):
    return twin.api.catalog.lookup("batch", "v1", "cronjobs")


def create(twin: Twin, obj: dict) -> dict:
    return twin.api.create(cronjobs(twin), "default", obj, twin.admin_ctx)


def change(twin: Twin, edit, name: str = "report") -> None:
    obj = clone(twin.api.get(cronjobs(twin), "default", name))
    edit(obj["spec"])
    twin.api.update(cronjobs(twin), "default", name, obj, twin.admin_ctx)


def jobs(twin: Twin) -> dict[str, dict]:
    return {j["metadata"]["name"]: j for j in twin.store.list("jobs.batch", "default")[0]}


def status(twin: Twin, name: str = "report") -> dict:
    return twin.store.get("cronjobs.batch", "default", name)["status"]


def at(hour: int, minute: int = 0, day: int = 2) -> float:
    return datetime(2026, 3, day, hour, minute, tzinfo=timezone.utc).timestamp()


def name_at(t: float, cronjob: str = "report") -> str:
    return f"{cronjob}-{int(t) // 60}"


def warp_to(twin: Twin, t: float) -> None:
    twin.warp(t - twin.clock.now())


def end_job(twin: Twin, name: str, outcome: str = "Complete") -> None:
    """Play the Job controller: the Job finished."""
    res = twin.api.catalog.lookup("batch", "v1", "jobs")
    job = clone(twin.api.get(res, "default", name))
    now = twin.clock.timestamp()
    cond = {"type": outcome, "status": "True", "lastProbeTime": now, "lastTransitionTime": now}
    job["status"] = {"startTime": job["metadata"]["creationTimestamp"], "conditions": [cond],
                     "succeeded" if outcome == "Complete" else "failed": 1}
    if outcome == "Complete":
        job["status"]["completionTime"] = now
    twin.api.update(res, "default", name, job, twin.admin_ctx, subresource="status")


def test_jobs_are_created_at_the_scheduled_times_with_names_from_those_times():
    twin = make_twin()
    create(twin, manifest())
    warp_to(twin, at(10) - 1)
    assert jobs(twin) == {}
    twin.warp(1)
    first = name_at(at(10))
    assert list(jobs(twin)) == [first]
    job = jobs(twin)[first]
    assert job["metadata"]["creationTimestamp"] == "2026-03-02T10:00:00Z"
    assert job["metadata"]["annotations"] == {"batch.kubernetes.io/cronjob-scheduled-timestamp":
                                              "2026-03-02T10:00:00Z"}
    assert job["metadata"]["labels"]["team"] == "finance"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    st = status(twin)
    assert st["lastScheduleTime"] == "2026-03-02T10:00:00Z"
    assert st["active"] == [{"kind": "Job", "namespace": "default", "name": first,
                             "uid": job["metadata"]["uid"], "apiVersion": "batch/v1",
                             "resourceVersion": st["active"][0]["resourceVersion"]}]
    twin.warp(90)
    end_job(twin, first)
    twin.warp(1)
    assert "active" not in status(twin) and status(twin)["lastSuccessfulTime"] == "2026-03-02T10:01:30Z"
    assert f"Saw completed job: {first}, status: Complete" in messages(twin, "report")

    warp_to(twin, at(13) + 30)
    assert sorted(jobs(twin)) == [name_at(at(h)) for h in (10, 11, 12, 13)], "Allow lets runs overlap"
    assert len(status(twin)["active"]) == 3
    assert f"Created job {name_at(at(13))}" in messages(twin, "report")


def test_forbid_skips_a_run_while_the_previous_one_is_still_active():
    twin = make_twin()
    create(twin, manifest(concurrencyPolicy="Forbid"))
    create(twin, manifest("strict", concurrencyPolicy="Forbid", startingDeadlineSeconds=600))
    warp_to(twin, at(11) + 1)
    assert sorted(jobs(twin)) == [name_at(at(10)), name_at(at(10), "strict")]
    assert ("Normal", "JobAlreadyActive",
            "Not starting job because prior execution is running and concurrency policy is Forbid") in \
        events(twin, "report")
    warp_to(twin, at(11, 20))
    end_job(twin, name_at(at(10)))
    end_job(twin, name_at(at(10), "strict"))
    twin.warp(1)
    # The 11:00 run is still unmet: it starts once the previous Job is done, unless its deadline has passed.
    assert sorted(jobs(twin)) == [name_at(at(10)), name_at(at(11)), name_at(at(10), "strict")]
    warp_to(twin, at(12) + 1)
    assert name_at(at(12), "strict") in jobs(twin) and name_at(at(12)) not in jobs(twin)


def test_replace_deletes_the_running_job_for_the_new_one():
    twin = make_twin()
    create(twin, manifest(concurrencyPolicy="Replace"))
    warp_to(twin, at(10) + 1)
    old = jobs(twin)[name_at(at(10))]["metadata"]["uid"]
    warp_to(twin, at(11) + 1)
    assert list(jobs(twin)) == [name_at(at(11))]
    assert [ref["uid"] for ref in status(twin)["active"]] == [jobs(twin)[name_at(at(11))]["metadata"]["uid"]] != [old]
    assert f"Deleted job {name_at(at(10))}" in messages(twin, "report")


def test_history_limits_keep_the_newest_finished_jobs():
    twin = make_twin()
    create(twin, manifest(schedule="*/10 * * * *", successfulJobsHistoryLimit=2, failedJobsHistoryLimit=1))
    outcomes = ["Complete", "Failed", "Complete", "Failed", "Complete", "Complete"]
    for number, outcome in enumerate(outcomes):
        t = at(9, 50) + number * 600
        warp_to(twin, t + 60)
        end_job(twin, name_at(t), outcome)
    twin.warp(1)
    kept = sorted(jobs(twin))
    succeeded = [name_at(at(9, 50) + n * 600) for n, o in enumerate(outcomes) if o == "Complete"]
    failed = [name_at(at(9, 50) + n * 600) for n, o in enumerate(outcomes) if o == "Failed"]
    assert kept == sorted(succeeded[-2:] + failed[-1:])
    deleted = [m for m in messages(twin, "report") if m.startswith("Deleted job")]
    assert sorted(deleted) == sorted(f"Deleted job {n}" for n in succeeded[:-2] + failed[:-1])


def test_after_a_suspension_only_the_most_recent_missed_run_starts_within_the_starting_deadline():
    twin = make_twin()
    create(twin, manifest(suspend=True))
    warp_to(twin, at(13, 10))
    assert jobs(twin) == {}
    change(twin, lambda spec: spec.update(suspend=False))
    twin.warp(1)
    assert list(jobs(twin)) == [name_at(at(13))], "one Job, for the latest missed time"

    create(twin, manifest("strict", suspend=True, startingDeadlineSeconds=300))
    warp_to(twin, at(14, 10))
    change(twin, lambda spec: spec.update(suspend=False), name="strict")
    twin.warp(1)
    assert not [n for n in jobs(twin) if n.startswith("strict-")], "14:00 is more than 300 s ago"
    warp_to(twin, at(15) + 1)
    assert [n for n in jobs(twin) if n.startswith("strict-")] == [name_at(at(15), "strict")]


def test_a_new_schedule_takes_effect_at_its_next_time_without_making_up_past_ones():
    twin = make_twin()
    create(twin, manifest())
    warp_to(twin, at(10, 31))
    change(twin, lambda spec: spec.update(schedule="*/15 * * * *"))
    warp_to(twin, at(10, 44))
    assert list(jobs(twin)) == [name_at(at(10))], "10:15 and 10:30 were before the change"
    warp_to(twin, at(10, 45))
    assert sorted(jobs(twin)) == [name_at(at(10)), name_at(at(10, 45))]


def test_a_time_zone_moves_the_schedule_and_the_scheduled_timestamp():
    twin = make_twin()
    create(twin, manifest(schedule="30 19 * * *", timeZone="Asia/Tokyo"))
    warp_to(twin, at(10, 31))
    (job,) = jobs(twin).values()
    assert job["metadata"]["name"] == name_at(at(10, 30))
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == \
        "2026-03-02T19:30:00+09:00"


def test_an_unknown_time_zone_stops_the_schedule_with_a_warning():
    twin = make_twin()
    create(twin, manifest(timeZone="Mars/Olympus_Mons"))
    twin.warp(HOUR / 2)
    assert jobs(twin) == {}
    assert ("Warning", "UnknownTimeZone", 'invalid timeZone: "Mars/Olympus_Mons": unknown time zone '
                                          "Mars/Olympus_Mons") in events(twin, "report")


def test_the_same_seed_and_actions_give_the_same_cronjob():
    def scenario() -> list:
        twin = make_twin(seed=41)
        create(twin, manifest(schedule="*/20 * * * *", successfulJobsHistoryLimit=1))
        for _ in range(6):
            twin.warp(20 * 60)
            for name, job in sorted(jobs(twin).items()):
                if not job["status"].get("conditions"):
                    end_job(twin, name)
        return [sorted((n, j["metadata"]["uid"]) for n, j in jobs(twin).items()), status(twin),
                events(twin, "report")]

    assert scenario() == scenario()


@pytest.fixture
def twin():
    """For kubectl: a clock at wall time, which the twin's certificates are valid for; the Job controller too."""
    with Twin(seed=13, nodes=1, controllers={"cronjob", "job"}) as t:
        yield t


def test_kubectl_create_job_from_a_cronjob(twin, kubectl):
    import yaml

    kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest(schedule="0 0 1 1 *")))
    assert kubectl("create", "job", "manual-run", "--from=cronjob/report") == "job.batch/manual-run created\n"
    twin.warp(2)
    job = jobs(twin)["manual-run"]
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert job["metadata"]["ownerReferences"][0]["name"] == "report"
    assert ("Warning", "UnexpectedJob", "Saw a job that the controller did not create or forgot: manual-run") in \
        events(twin, "report")
    assert kubectl("get", "jobs", "--no-headers").split()[:3] == ["manual-run", "Running", "0/1"]
    complete_pods(twin)
    twin.warp(2)
    assert kubectl("get", "jobs", "--no-headers").split()[:3] == ["manual-run", "Complete", "1/1"]
    row = kubectl("get", "cronjob", "report", "--no-headers").split()
    assert row[:2] == ["report", "0"] and row[-4:-1] == ["False", "0", "<none>"]
    assert parse_time(job["metadata"]["creationTimestamp"]) <= twin.clock.now()
