"""Validation of workloads: Deployments, ReplicaSets, ReplicationControllers, StatefulSets, DaemonSets, Jobs and
CronJobs.

Follows pkg/apis/apps/validation, pkg/apis/batch/validation and pkg/apis/core/validation, plus the
selector immutability the registry strategies add on update.
"""

from __future__ import annotations

from ... import errors
from ...errors import FieldError
from .. import gosyntax
from . import cron_schedule, name_rules, objectmeta, pod as validation_pod
from ..strategies import JOB_NAME_LABELS, JOB_UID_LABELS

IMMUTABLE = "field is immutable"
_NOT_MATCHING = "`selector` does not match template `labels`"
MAX_INDEXED_PARALLELISM = 100000


def _nonnegative(value, path: str) -> list[FieldError]:
    if isinstance(value, int) and value < 0:
        return [errors.invalid(path, value, "must be greater than or equal to 0")]
    return []


def _template_labels(spec: dict) -> dict | None:
    template = spec.get("template")
    return ((template or {}).get("metadata") or {}).get("labels") if isinstance(template, dict) else None


def _strict_selector(spec: dict, kind: str, path: str) -> list[FieldError]:
    """Selector required, valid and not empty (Deployments, ReplicaSets and StatefulSets)."""
    selector = spec.get("selector")
    if selector is None:
        return [errors.required(f"{path}.selector")]
    problems = objectmeta.label_selector(selector, f"{path}.selector")
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        problems.append(errors.invalid(f"{path}.selector", gosyntax.label_selector(selector),
                                       f"empty selector is invalid for {kind}"))
    return problems


def _selector_matches_template(spec: dict, path: str, invalid_detail: str = "invalid label selector"
                               ) -> list[FieldError]:
    selector = spec.get("selector")
    parsed = objectmeta.selector_of(selector)
    if parsed is None:
        return [errors.invalid(f"{path}.selector", gosyntax.label_selector(selector or {}), invalid_detail)]
    labels = _template_labels(spec)
    if not parsed.empty and not parsed.matches(labels):
        return [errors.invalid(f"{path}.template.metadata.labels", gosyntax.string_map(labels), _NOT_MATCHING)]
    return []


def _replica_set_template(spec: dict, path: str, kind: str) -> list[FieldError]:
    """ValidatePodTemplateSpecForReplicaSet: a full pod template whose pods always restart."""
    template = spec.get("template")
    problems = validation_pod.pod_template(template, f"{path}.template")
    pod_spec = (template or {}).get("spec") or {}
    problems += _restart_always(pod_spec, f"{path}.template.spec")
    if pod_spec.get("activeDeadlineSeconds") is not None:
        problems.append(errors.forbidden(f"{path}.template.spec.activeDeadlineSeconds",
                                         f"activeDeadlineSeconds in {kind} is not Supported"))
    return problems


def _restart_always(pod_spec: dict, path: str) -> list[FieldError]:
    if pod_spec.get("restartPolicy") != "Always":
        return [errors.not_supported(f"{path}.restartPolicy", pod_spec.get("restartPolicy") or "", ["Always"])]
    return []


def _immutable_selector(spec: dict, old_spec: dict, path: str = "spec.selector") -> list[FieldError]:
    if spec.get("selector") != old_spec.get("selector"):
        return [errors.invalid(path, gosyntax.label_selector(spec.get("selector") or {}), IMMUTABLE)]
    return []


# ---- Deployment and ReplicaSet ---------------------------------------------------------------------

def deployment(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    return problems + deployment_spec(obj.get("spec") or {}, "spec")


def deployment_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    spec = obj.get("spec") or {}
    return problems + deployment_spec(spec, "spec") + _immutable_selector(spec, old.get("spec") or {})


def deployment_spec(spec: dict, path: str) -> list[FieldError]:
    problems = _nonnegative(spec.get("replicas"), f"{path}.replicas")
    problems += _strict_selector(spec, "deployment", path)
    problems += _selector_matches_template(spec, path)
    problems += _replica_set_template(spec, path, "ReplicaSet")
    problems += _deployment_strategy(spec.get("strategy") or {}, f"{path}.strategy")
    problems += _nonnegative(spec.get("minReadySeconds"), f"{path}.minReadySeconds")
    problems += _nonnegative(spec.get("revisionHistoryLimit"), f"{path}.revisionHistoryLimit")
    deadline = spec.get("progressDeadlineSeconds")
    if deadline is not None:
        problems += _nonnegative(deadline, f"{path}.progressDeadlineSeconds")
        if deadline <= (spec.get("minReadySeconds") or 0):
            problems.append(errors.invalid(f"{path}.progressDeadlineSeconds", deadline,
                                           "must be greater than minReadySeconds"))
    return problems


def _deployment_strategy(strategy: dict, path: str) -> list[FieldError]:
    kind = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [errors.forbidden(f"{path}.rollingUpdate",
                                     "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if kind == "RollingUpdate":
        if rolling is None:
            return [errors.required(f"{path}.rollingUpdate", "this should be defaulted and never be nil")]
        at = f"{path}.rollingUpdate"
        unavailable, surge = rolling.get("maxUnavailable", 0), rolling.get("maxSurge", 0)
        problems = positive_int_or_percent(unavailable, f"{at}.maxUnavailable")
        problems += positive_int_or_percent(surge, f"{at}.maxSurge")
        if int_or_percent_value(unavailable) == 0 and int_or_percent_value(surge) == 0:
            problems.append(errors.invalid(f"{at}.maxUnavailable", gosyntax.int_or_string(unavailable),
                                           "may not be 0 when `maxSurge` is 0"))
        problems += not_more_than_100_percent(unavailable, f"{at}.maxUnavailable")
        return problems
    literal = gosyntax.struct("apps.DeploymentStrategy", [
        ("Type", gosyntax.quote(kind or "")),
        ("RollingUpdate", gosyntax.pointer("apps.RollingUpdateDeployment", rolling is not None))])
    return [errors.not_supported(path, literal, ["Recreate", "RollingUpdate"])]


def positive_int_or_percent(value, path: str) -> list[FieldError]:
    if isinstance(value, str):
        return [errors.invalid(path, gosyntax.int_or_string(value), m) for m in name_rules.is_valid_percent(value)]
    return _nonnegative(value, path)


def _percent(value) -> int | None:
    if isinstance(value, str) and not name_rules.is_valid_percent(value):
        return int(value[:-1])
    return None


def int_or_percent_value(value) -> int:
    percent = _percent(value)
    if percent is not None:
        return percent
    if isinstance(value, str):
        return int(value) if value.isdigit() else 0
    return value or 0


def not_more_than_100_percent(value, path: str) -> list[FieldError]:
    percent = _percent(value)
    if percent is not None and percent > 100:
        return [errors.invalid(path, gosyntax.int_or_string(value), "must not be greater than 100%")]
    return []


def replica_set(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    return problems + replica_set_spec(obj.get("spec") or {}, "spec")


def replica_set_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    spec = obj.get("spec") or {}
    return problems + replica_set_spec(spec, "spec") + _immutable_selector(spec, old.get("spec") or {})


def replica_set_spec(spec: dict, path: str) -> list[FieldError]:
    problems = _nonnegative(spec.get("replicas"), f"{path}.replicas")
    problems += _nonnegative(spec.get("minReadySeconds"), f"{path}.minReadySeconds")
    # Upstream says "deployment" here too.
    problems += _strict_selector(spec, "deployment", path)
    problems += _selector_matches_template(spec, path)
    return problems + _replica_set_template(spec, path, "ReplicaSet")


# ---- ReplicationController (core/v1; pkg/apis/core/validation) ---------------------------------------

def replication_controller(obj: dict) -> list[FieldError]:
    """ValidateReplicationController; an update checks the same (an RC's selector may change)."""
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    return problems + replication_controller_spec(obj.get("spec") or {}, "spec")


def replication_controller_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    return problems + replication_controller_spec(obj.get("spec") or {}, "spec")


def replication_controller_spec(spec: dict, path: str) -> list[FieldError]:
    problems = _nonnegative(spec.get("minReadySeconds"), f"{path}.minReadySeconds")
    selector = spec.get("selector") if isinstance(spec.get("selector"), dict) else {}
    if not selector:
        problems.append(errors.required(f"{path}.selector"))
    problems += _nonnegative(spec.get("replicas"), f"{path}.replicas")
    return problems + _template_for_rc(spec.get("template"), selector, spec.get("replicas") or 0,
                                       f"{path}.template")


def _template_for_rc(template: dict | None, selector: dict, replicas: int, path: str) -> list[FieldError]:
    """ValidatePodTemplateSpecForRC: the template matches the selector, and its pods always restart."""
    if not isinstance(template, dict):
        return [errors.required(path)]
    problems: list[FieldError] = []
    labels = (template.get("metadata") or {}).get("labels")
    if selector and any((labels or {}).get(k) != v for k, v in selector.items()):
        problems.append(errors.invalid(f"{path}.metadata.labels", gosyntax.string_map(labels), _NOT_MATCHING))
    problems += validation_pod.pod_template(template, path)
    pod_spec = template.get("spec") or {}
    if replicas > 1:
        problems += _read_only_persistent_disks(pod_spec.get("volumes") or (), f"{path}.spec.volumes")
    problems += _restart_always(pod_spec, f"{path}.spec")
    deadline = pod_spec.get("activeDeadlineSeconds")
    if deadline is not None:
        problems.append(errors.invalid(f"{path}.spec.activeDeadlineSeconds", deadline, "must not be specified"))
    return problems


def _read_only_persistent_disks(volumes, path: str) -> list[FieldError]:
    """A GCE persistent disk shared by several replicas must be mounted read-only."""
    problems = []
    for i, volume in enumerate(volumes):
        disk = volume.get("gcePersistentDisk") if isinstance(volume, dict) else None
        if isinstance(disk, dict) and not disk.get("readOnly"):
            problems.append(errors.invalid(f"{path}[{i}].gcePersistentDisk.readOnly", False,
                                           "must be true for replicated pods > 1; GCE PD can only be mounted on "
                                           "multiple machines if it is read-only"))
    return problems


def replication_controller_status(obj: dict, old: dict) -> list[FieldError]:
    """ValidateReplicationControllerStatus: counts that are not negative and add up."""
    status = obj.get("status") or {}
    path = "status"
    counts = {key: status.get(key) or 0 for key in ("replicas", "fullyLabeledReplicas", "readyReplicas",
                                                    "availableReplicas", "observedGeneration")}
    problems: list[FieldError] = []
    for key, value in counts.items():
        problems += _nonnegative(value, f"{path}.{key}")
    above = "cannot be greater than status.replicas"
    for key in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        if counts[key] > counts["replicas"]:
            problems.append(errors.invalid(f"{path}.{key}", counts[key], above))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        problems.append(errors.invalid(f"{path}.availableReplicas", counts["availableReplicas"],
                                       "cannot be greater than readyReplicas"))
    return problems


# ---- DaemonSet ---------------------------------------------------------------------------------------

def daemon_set(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_subdomain)
    return problems + daemon_set_spec(obj.get("spec") or {}, "spec")


def daemon_set_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    spec = obj.get("spec") or {}
    return problems + daemon_set_spec(spec, "spec") + _immutable_selector(spec, old.get("spec") or {})


def daemon_set_spec(spec: dict, path: str) -> list[FieldError]:
    selector = spec.get("selector")
    problems = objectmeta.label_selector(selector, f"{path}.selector")
    parsed = objectmeta.selector_of(selector)
    labels = _template_labels(spec)
    if parsed is not None and not parsed.matches(labels):
        problems.append(errors.invalid(f"{path}.template.metadata.labels", gosyntax.string_map(labels),
                                       _NOT_MATCHING))
    if selector is not None and not selector.get("matchLabels") and not selector.get("matchExpressions"):
        problems.append(errors.invalid(f"{path}.selector", gosyntax.label_selector(selector),
                                       "empty selector is invalid for daemonset"))
    template = spec.get("template")
    problems += validation_pod.pod_template(template, f"{path}.template")
    pod_spec = (template or {}).get("spec") or {}
    problems += _restart_always(pod_spec, f"{path}.template.spec")
    if pod_spec.get("activeDeadlineSeconds") is not None:
        problems.append(errors.forbidden(f"{path}.template.spec.activeDeadlineSeconds",
                                         "activeDeadlineSeconds in DaemonSet is not Supported"))
    problems += _nonnegative(spec.get("minReadySeconds"), f"{path}.minReadySeconds")
    problems += _daemon_set_strategy(spec.get("updateStrategy") or {}, f"{path}.updateStrategy")
    problems += _nonnegative(spec.get("revisionHistoryLimit"), f"{path}.revisionHistoryLimit")
    return problems


def _daemon_set_strategy(strategy: dict, path: str) -> list[FieldError]:
    kind = strategy.get("type")
    if kind == "OnDelete":
        return []
    if kind == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if rolling is None:
            return [errors.required(f"{path}.rollingUpdate")]
        at = f"{path}.rollingUpdate"
        unavailable, surge = rolling.get("maxUnavailable", 0), rolling.get("maxSurge", 0)
        problems = positive_int_or_percent(unavailable, f"{at}.maxUnavailable")
        problems += positive_int_or_percent(surge, f"{at}.maxSurge")
        problems += not_more_than_100_percent(unavailable, f"{at}.maxUnavailable")
        problems += not_more_than_100_percent(surge, f"{at}.maxSurge")
        has_unavailable, has_surge = int_or_percent_value(unavailable) != 0, int_or_percent_value(surge) != 0
        if has_unavailable and has_surge:
            problems.append(errors.invalid(f"{at}.maxSurge", gosyntax.int_or_string(surge),
                                           "may not be set when maxUnavailable is non-zero"))
        elif not has_unavailable and not has_surge:
            problems.append(errors.required(f"{at}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
        return problems
    literal = gosyntax.struct("apps.DaemonSetUpdateStrategy", [
        ("Type", gosyntax.quote(kind or "")),
        ("RollingUpdate", gosyntax.pointer("apps.RollingUpdateDaemonSet", strategy.get("rollingUpdate") is not None))])
    return [errors.not_supported(path, literal, ["RollingUpdate", "OnDelete"])]


# ---- StatefulSet -------------------------------------------------------------------------------------

_STATEFUL_SET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                         "minReadySeconds")


def stateful_set(obj: dict) -> list[FieldError]:
    problems = objectmeta.object_meta(obj["metadata"], True, name_rules.name_is_dns_label)
    return problems + stateful_set_spec(obj.get("spec") or {}, "spec")


def stateful_set_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    problems += stateful_set_spec(spec, "spec")
    fixed = {k: v for k, v in spec.items() if k not in _STATEFUL_SET_MUTABLE}
    old_fixed = {k: v for k, v in old_spec.items() if k not in _STATEFUL_SET_MUTABLE}
    if fixed != old_fixed:
        problems.append(errors.forbidden("spec", "updates to statefulset spec for fields other than 'replicas', "
                                                 "'ordinals', 'template', 'updateStrategy', "
                                                 "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                                                 "forbidden"))
    return problems


def stateful_set_spec(spec: dict, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    policy = spec.get("podManagementPolicy")
    if not policy:
        problems.append(errors.required(f"{path}.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        problems.append(errors.invalid(f"{path}.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    strategy = spec.get("updateStrategy") or {}
    kind, rolling = strategy.get("type"), strategy.get("rollingUpdate")
    if not kind:
        problems.append(errors.required(f"{path}.updateStrategy"))
    elif kind == "OnDelete":
        if rolling is not None:
            literal = gosyntax.struct("apps.RollingUpdateStatefulSetStrategy", [
                ("Partition", str(rolling.get("partition", 0))),
                ("MaxUnavailable", gosyntax.pointer("intstr.IntOrString", "maxUnavailable" in rolling))])
            problems.append(errors.invalid(f"{path}.updateStrategy.rollingUpdate", literal,
                                           "only allowed for updateStrategy 'RollingUpdate'"))
    elif kind == "RollingUpdate":
        if rolling is not None:
            problems += _nonnegative(rolling.get("partition"), f"{path}.updateStrategy.rollingUpdate.partition")
    else:
        problems.append(errors.invalid(f"{path}.updateStrategy", gosyntax.struct("apps.StatefulSetUpdateStrategy", [
            ("Type", gosyntax.quote(kind)),
            ("RollingUpdate", gosyntax.pointer("apps.RollingUpdateStatefulSetStrategy", rolling is not None))]),
            "must be 'RollingUpdate' or 'OnDelete'"))
    for when in ("whenDeleted", "whenScaled"):
        value = (spec.get("persistentVolumeClaimRetentionPolicy") or {}).get(when)
        if value is not None and value not in ("Retain", "Delete"):
            problems.append(errors.not_supported(f"{path}.persistentVolumeClaimRetentionPolicy.{when}", value,
                                                 ["Retain", "Delete"]))
    problems += _nonnegative(spec.get("replicas"), f"{path}.replicas")
    problems += _nonnegative(spec.get("minReadySeconds"), f"{path}.minReadySeconds")
    problems += _nonnegative((spec.get("ordinals") or {}).get("start"), f"{path}.ordinals.start")
    problems += _strict_selector(spec, "statefulset", path)
    problems += _selector_matches_template(spec, path, invalid_detail="")
    # Only the template's metadata is checked: its volumes may refer to volumeClaimTemplates.
    meta = (spec.get("template") or {}).get("metadata") or {}
    problems += objectmeta.labels(meta.get("labels"), f"{path}.template.labels")
    problems += objectmeta.annotations(meta.get("annotations"), f"{path}.template.annotations")
    pod_spec = (spec.get("template") or {}).get("spec") or {}
    problems += _restart_always(pod_spec, f"{path}.template.spec")
    if pod_spec.get("activeDeadlineSeconds") is not None:
        problems.append(errors.forbidden(f"{path}.template.spec.activeDeadlineSeconds",
                                         "activeDeadlineSeconds in StatefulSet is not Supported"))
    return problems


# ---- Job and CronJob -----------------------------------------------------------------------------------

def job(obj: dict) -> list[FieldError]:
    meta = obj["metadata"]
    problems = objectmeta.object_meta(meta, True, name_rules.name_is_dns_subdomain)
    spec = obj.get("spec") or {}
    problems += _generated_selector(obj, require_prefixed=True)
    problems += job_spec(spec, "spec")
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed" and isinstance(completions, int) and completions > 0:
        hostname = f"{meta.get('name', '')}-{completions - 1}"
        if name_rules.is_dns1123_label(hostname):
            problems.append(errors.invalid("metadata.name", meta.get("name", ""),
                                           f"will not able to create pod with invalid DNS label: {hostname}"))
    return problems


def job_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    old_labels = _template_labels(old_spec) or {}
    problems += _generated_selector(obj, require_prefixed=all(k in old_labels for k in (JOB_NAME_LABELS[1],
                                                                                        JOB_UID_LABELS[1])))
    problems += job_spec(spec, "spec")
    immutable = ["selector", "completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy",
                 "successPolicy"]
    # An Indexed Job may scale, changing completions together with parallelism (elastic Indexed Jobs).
    if not (spec.get("completionMode") == "Indexed" and spec.get("completions") == spec.get("parallelism")):
        immutable.insert(0, "completions")
    for key in immutable:
        if spec.get(key) != old_spec.get(key):
            value = spec.get(key)
            if key == "selector":
                value = gosyntax.label_selector(value or {})
            elif isinstance(value, (dict, list)):
                value = gosyntax.composite(f"batch.{key[:1].upper()}{key[1:]}", value)
            problems.append(errors.invalid(f"spec.{key}", value, IMMUTABLE))
    template, old_template = spec.get("template") or {}, old_spec.get("template") or {}
    suspended_and_not_started = old_spec.get("suspend") and not (old.get("status") or {}).get("startTime")
    if suspended_and_not_started:
        template, old_template = _without_scheduling_directives(template), _without_scheduling_directives(old_template)
    if template != old_template:
        problems.append(errors.invalid("spec.template", gosyntax.composite("core.PodTemplateSpec",
                                                                           spec.get("template") or {}), IMMUTABLE))
    return problems


def _without_scheduling_directives(template: dict) -> dict:
    """A suspended Job that never ran may still change where its pods go (node affinity, selectors, tolerations)."""
    spec = dict(template.get("spec") or {})
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        spec.pop(key, None)
    affinity = dict(spec.get("affinity") or {})
    affinity.pop("nodeAffinity", None)
    spec["affinity"] = affinity or None
    meta = {k: v for k, v in (template.get("metadata") or {}).items() if k not in ("labels", "annotations")}
    return {"metadata": meta, "spec": spec}


def _generated_selector(obj: dict, require_prefixed: bool) -> list[FieldError]:
    """A generated selector requires the generated labels on the template, with this Job's uid and name."""
    spec = obj.get("spec") or {}
    if spec.get("manualSelector"):
        return []
    labels = _template_labels(spec)
    if labels is None:
        return []
    meta = obj["metadata"]
    uid, name = meta.get("uid") or "", meta.get("name") or ""
    problems: list[FieldError] = []
    if not uid:
        problems.append(errors.required("metadata.uid"))
    expected = [(JOB_UID_LABELS[0], uid), (JOB_NAME_LABELS[0], name)]
    if require_prefixed:
        expected = [(JOB_UID_LABELS[0], uid), (JOB_NAME_LABELS[0], name), (JOB_UID_LABELS[1], uid),
                    (JOB_NAME_LABELS[1], name)]
    for key, want in expected:
        at = f"spec.template.metadata.labels[{key}]"
        if key not in labels:
            problems.append(errors.required(at))
        elif labels[key] != want:
            problems.append(errors.invalid(at, labels[key], f"must be '{want}'"))
    selector = objectmeta.selector_of(spec.get("selector"))
    if selector is not None and not selector.matches(dict(expected)):
        problems.append(errors.invalid("spec.selector", gosyntax.label_selector(spec.get("selector") or {}),
                                       "`selector` not auto-generated"))
    return problems


def job_spec(spec: dict, path: str) -> list[FieldError]:
    problems = _job_spec_fields(spec, path)
    selector = spec.get("selector")
    if selector is None:
        problems.append(errors.required(f"{path}.selector"))
    else:
        problems += objectmeta.label_selector(selector, f"{path}.selector")
    parsed = objectmeta.selector_of(selector)
    labels = _template_labels(spec)
    if parsed is not None and not parsed.matches(labels):
        problems.append(errors.invalid(f"{path}.template.metadata.labels", gosyntax.string_map(labels),
                                       _NOT_MATCHING))
    return problems


def _job_spec_fields(spec: dict, path: str) -> list[FieldError]:
    """validateJobSpec: what a Job and a CronJob's job template share."""
    problems: list[FieldError] = []
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        problems += _nonnegative(spec.get(key), f"{path}.{key}")
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in ("NonIndexed", "Indexed"):
            problems.append(errors.not_supported(f"{path}.completionMode", mode, ["NonIndexed", "Indexed"]))
        if mode == "Indexed":
            if spec.get("completions") is None:
                problems.append(errors.required(f"{path}.completions", "when completion mode is Indexed"))
            if (spec.get("parallelism") or 0) > MAX_INDEXED_PARALLELISM:
                problems.append(errors.invalid(f"{path}.parallelism", spec["parallelism"],
                                               f"must be less than or equal to {MAX_INDEXED_PARALLELISM} when "
                                               f"completion mode is Indexed"))
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and replacement not in ("TerminatingOrFailed", "Failed"):
        problems.append(errors.not_supported(f"{path}.podReplacementPolicy", replacement,
                                             ["TerminatingOrFailed", "Failed"]))
    template = spec.get("template")
    problems += validation_pod.pod_template(template, f"{path}.template")
    restart = ((template or {}).get("spec") or {}).get("restartPolicy") or ""
    at = f"{path}.template.spec.restartPolicy"
    if restart in ("Always", ""):
        problems.append(errors.required(at, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        problems.append(errors.not_supported(at, restart, ["OnFailure", "Never"]))
    elif spec.get("podFailurePolicy") is not None and restart != "Never":
        problems.append(errors.invalid(at, restart, 'only "Never" is supported when podFailurePolicy is specified'))
    return problems


def cron_job(obj: dict) -> list[FieldError]:
    meta = obj["metadata"]
    problems = objectmeta.object_meta(meta, True, name_rules.name_is_dns_subdomain)
    problems += cron_job_spec(obj.get("spec") or {}, None, "spec")
    if len(meta.get("name") or "") > 52:
        # The controller appends an 11-character suffix to name its Jobs, which must stay DNS labels.
        problems.append(errors.invalid("metadata.name", meta["name"], "must be no more than 52 characters"))
    return problems


def cron_job_update(obj: dict, old: dict) -> list[FieldError]:
    problems = objectmeta.object_meta_update(obj["metadata"], old["metadata"])
    return problems + cron_job_spec(obj.get("spec") or {}, old.get("spec") or {}, "spec")


def cron_job_spec(spec: dict, old_spec: dict | None, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    schedule = spec.get("schedule") or ""
    if not schedule:
        problems.append(errors.required(f"{path}.schedule"))
    else:
        problem = cron_schedule.schedule_error(schedule)
        if problem:
            problems.append(errors.invalid(f"{path}.schedule", schedule, problem))
        tz_allowed = old_spec is not None and "TZ" in (old_spec.get("schedule") or "")
        if "TZ" in schedule and not tz_allowed:
            problems.append(errors.invalid(f"{path}.schedule", schedule,
                                           "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
        elif "TZ" in schedule and spec.get("timeZone") is not None:
            problems.append(errors.invalid(f"{path}.schedule", schedule,
                                           "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
    problems += _nonnegative(spec.get("startingDeadlineSeconds"), f"{path}.startingDeadlineSeconds")
    policy = spec.get("concurrencyPolicy")
    if not policy:
        problems.append(errors.required(f"{path}.concurrencyPolicy"))
    elif policy not in ("Allow", "Forbid", "Replace"):
        problems.append(errors.not_supported(f"{path}.concurrencyPolicy", policy, ["Allow", "Forbid", "Replace"]))
    job_template = spec.get("jobTemplate") or {}
    job_spec_ = job_template.get("spec") or {}
    problems += _job_spec_fields(job_spec_, f"{path}.jobTemplate.spec")
    if job_spec_.get("selector") is not None:
        problems.append(errors.invalid(f"{path}.jobTemplate.spec.selector", gosyntax.label_selector(
            job_spec_["selector"]), "`selector` will be auto-generated"))
    if job_spec_.get("manualSelector"):
        problems.append(errors.not_supported(f"{path}.jobTemplate.spec.manualSelector", True, ["nil", "false"]))
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        problems += _nonnegative(spec.get(key), f"{path}.{key}")
    return problems
