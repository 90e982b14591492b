"""An application's history before the trial: what a cluster that has run for a while has been through.

The behaviour sheet's ``background.history`` says what (``twin/workload/sheet.py``, :class:`History`); this
module makes it happen through the Kubernetes API (ARCHITECTURE.md, rule 1), right after the application is
deployed and before the healthy baseline, so that the twin (or a real cluster) records it itself:

* a rollout that named an image tag the registry does not have: the new pod's ``ErrImagePull`` and
  ``ImagePullBackOff`` (Warning events, a waiting container) until the tag is set back, after which the
  Deployment has a third revision and an old ReplicaSet scaled to zero;
* Jobs: one that completes (its pod ``Succeeded``, a ``Completed`` event) and one that hangs and is stopped by
  its ``activeDeadlineSeconds`` (``DeadlineExceeded``, the Job ``Failed``, its pod deleted by the Job
  controller, so no pod stays in the Failed phase).

Every step stays under the shipped alerts' ``for`` (the back-off lasts ``after``, less than the 5 minutes of
KubeContainerWaiting), so the history fires none of the scenarios' alerts. Time passes through ``advance``.
"""

from __future__ import annotations

from typing import Callable

import yaml
from kubernetes import client as k8s
from kubernetes.client import ApiClient

from .catalog import Application
from .deploy import POLL, DeployError, not_available

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
JOB_WAIT = 600.0  # cluster seconds a history Job may take to finish


def history_of(app: Application) -> dict:
    """The sheet's ``background.history`` (empty when it has none)."""
    with app.behaviour_path.open() as fh:
        sheet = yaml.load(fh, Loader=_Loader) or {}
    return ((sheet.get("background") or {}).get("history")) or {}


def make_history(api: ApiClient, app: Application, advance: Callable[[float], None]) -> float:
    """Play the application's history; return the cluster seconds it took."""
    history = history_of(app)
    waited = 0.0
    if history.get("image_pull"):
        waited += _image_pull(api, app, history["image_pull"], advance)
    if history.get("jobs"):
        waited += _jobs(api, app, history["jobs"], advance)
    return waited


def _seconds(text: str | float) -> float:
    from ..twin.workload.units import parse_go_duration  # the sheet's units, as the twin reads them
    return float(text) if isinstance(text, (int, float)) else parse_go_duration(text)


def _image_pull(api: ApiClient, app: Application, spec: dict, advance: Callable[[float], None]) -> float:
    apps = k8s.AppsV1Api(api)
    name = spec["deployment"]
    deployment = apps.read_namespaced_deployment(name, app.namespace)
    container = deployment.spec.template.spec.containers[0]
    good = container.image
    repository = good.rsplit(":", 1)[0] if ":" in good.rsplit("/", 1)[-1] else good
    bad = f"{repository}:{spec['tag']}"

    def set_image(image: str) -> None:
        apps.patch_namespaced_deployment(name, app.namespace, {"spec": {"template": {"spec": {
            "containers": [{"name": container.name, "image": image}]}}}})

    set_image(bad)
    after = _seconds(spec.get("after", 90))
    advance(after)
    set_image(good)
    waited = after
    while not_available(api, app.namespace) or _rolling(apps, app.namespace, name):
        if waited >= after + JOB_WAIT:
            raise DeployError(f"{app.name}: Deployment {name} did not roll back to {good} within {JOB_WAIT:.0f} s")
        advance(POLL)
        waited += POLL
    return waited


def _rolling(apps: k8s.AppsV1Api, namespace: str, name: str) -> bool:
    d = apps.read_namespaced_deployment(name, namespace)
    status = d.status
    return (status.observed_generation or 0) < d.metadata.generation or \
        (status.updated_replicas or 0) < (d.spec.replicas or 0) or (status.replicas or 0) > (d.spec.replicas or 0)


def _jobs(api: ApiClient, app: Application, jobs: list[dict], advance: Callable[[float], None]) -> float:
    batch = k8s.BatchV1Api(api)
    for job in jobs:
        spec: dict = {"backoffLimit": 0, "template": {"metadata": {"labels": {"app.kubernetes.io/part-of": "history"}},
                                                      "spec": {"restartPolicy": "Never", "containers": [
                                                          {"name": "job", "image": job["image"],
                                                           "command": list(job["command"])}]}}}
        if job.get("deadline") is not None:
            spec["activeDeadlineSeconds"] = int(_seconds(job["deadline"]))
        batch.create_namespaced_job(app.namespace, {"apiVersion": "batch/v1", "kind": "Job",
                                                    "metadata": {"name": job["name"]}, "spec": spec})
    waited = 0.0
    while True:
        pending = [j["name"] for j in jobs if not _finished(batch.read_namespaced_job(j["name"], app.namespace))]
        if not pending:
            return waited
        if waited >= JOB_WAIT:
            raise DeployError(f"{app.name}: the history Job(s) {', '.join(pending)} did not finish within "
                              f"{JOB_WAIT:.0f} s")
        advance(POLL)
        waited += POLL


def _finished(job) -> bool:
    return any(c.type in ("Complete", "Failed") and c.status == "True" for c in (job.status.conditions or ()))
