"""batch/v1 printers: jobs (STATUS, COMPLETIONS, DURATION) and cron jobs."""

from __future__ import annotations

from ...clock import parse_time
from .core import (
    Column, age, age_column, api_doc, containers_column, human_duration, images_column, name_column, register, since,
)
from .formatting import container_cells, format_label_selector, template_spec

# Job conditions in the order they decide STATUS; deletion ranks after the two final ones.
_FINAL_CONDITIONS = ("Complete", "Failed")
_PENDING_CONDITIONS = ("Suspended", "FailureTarget")


def _has_condition(obj: dict, type_: str) -> bool:
    for condition in (obj.get("status") or {}).get("conditions") or ():
        if condition.get("type") == type_:
            return condition.get("status") == "True"
    return False


def job_status(job: dict) -> str:
    for type_ in _FINAL_CONDITIONS:
        if _has_condition(job, type_):
            return type_
    if (job.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    for type_ in _PENDING_CONDITIONS:
        if _has_condition(job, type_):
            return type_
    return "Running"


def job_completions(job: dict) -> str:
    spec, succeeded = job.get("spec") or {}, (job.get("status") or {}).get("succeeded", 0)
    if spec.get("completions") is not None:
        return f"{succeeded}/{spec['completions']}"
    parallelism = spec.get("parallelism") or 0
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def job_duration(job: dict, now: float) -> str:
    status = job.get("status") or {}
    if not status.get("startTime"):
        return ""
    end = parse_time(status["completionTime"]) if status.get("completionTime") else now
    return human_duration(end - parse_time(status["startTime"]))


def job_row(job: dict, now: float) -> list:
    spec = job.get("spec") or {}
    return [job["metadata"].get("name", ""), job_status(job), job_completions(job), job_duration(job, now),
            age(job, now), *container_cells(template_spec(job)), format_label_selector(spec.get("selector"))]


register("batch", "Job", [
    name_column(),
    Column("Status", description="Status of the job."),
    Column("Completions", description=api_doc("batch.v1.JobStatus", "succeeded")),
    Column("Duration", description="Time required to complete the job."),
    age_column(),
    containers_column(),
    images_column(),
    Column("Selector", description=api_doc("batch.v1.JobSpec", "selector"), priority=1),
], job_row)


def _bool_pointer(value: bool | None) -> str:
    if value is None:
        return "<unset>"
    return "True" if value else "False"


def cron_job_row(obj: dict, now: float) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    last = status.get("lastScheduleTime")
    return [obj["metadata"].get("name", ""), spec.get("schedule", ""), spec.get("timeZone") or "<none>",
            _bool_pointer(spec.get("suspend")), len(status.get("active") or ()),
            since(last, now) if last else "<none>", age(obj, now),
            *container_cells(((job_spec.get("template") or {}).get("spec"))),
            format_label_selector(job_spec.get("selector"))]


register("batch", "CronJob", [
    name_column(),
    Column("Schedule", description=api_doc("batch.v1.CronJobSpec", "schedule")),
    Column("Timezone", description=api_doc("batch.v1.CronJobSpec", "timeZone")),
    Column("Suspend", "boolean", description=api_doc("batch.v1.CronJobSpec", "suspend")),
    Column("Active", "integer", description=api_doc("batch.v1.CronJobStatus", "active")),
    Column("Last Schedule", description=api_doc("batch.v1.CronJobStatus", "lastScheduleTime")),
    age_column(),
    containers_column(),
    images_column(),
    Column("Selector", description=api_doc("batch.v1.JobSpec", "selector"), priority=1),
], cron_job_row)
