"""ResourceQuota admission and status, and LimitRange defaults and limits."""

from __future__ import annotations

import pytest
import yaml

from pytest_itbench.twin import Twin
from pytest_itbench.twin.errors import Forbidden
from tests.twin.node_agent import create, delete, patch, pod, report

T0 = 1_700_000_000


def _twin(start_time: float | None = T0) -> Twin:
    return Twin(seed=13, nodes=1, start_time=start_time, controllers={"resourcequota"})


@pytest.fixture
def twin():
    """For kubectl: the quota controller alone, on a clock near wall time."""
    with _twin(start_time=None) as t:
        yield t


def _quota(twin, hard: dict, name="compute-quota", **spec) -> dict:
    return create(twin, {"apiVersion": "v1", "kind": "ResourceQuota",
                         "metadata": {"name": name, "namespace": "default"}, "spec": {"hard": hard, **spec}})


def _status(twin, name="compute-quota") -> dict:
    return twin.store.get("resourcequotas", "default", name)["status"]


def _pod(twin, name: str, cpu: str = "500m", memory: str = "128Mi", limits: bool = True, **kw) -> dict:
    resources = {"requests": {"cpu": cpu, "memory": memory}}
    if limits:
        resources["limits"] = {"cpu": cpu, "memory": memory}
    return pod(twin, name, labels={"app": "web"}, resources=resources, **kw)


def _generated_pod(twin, cpu: str) -> dict:
    return create(twin, {"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"generateName": "web-5d8f7c6b9-", "namespace": "default",
                                      "labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "app", "image": "nginx:1.25",
                                                  "resources": {"requests": {"cpu": cpu}}}]}})


def test_a_create_over_the_quota_is_refused_with_upstreams_message_and_raising_the_quota_lets_it_through():
    with _twin() as twin:
        _quota(twin, {"requests.cpu": "2"})
        for _ in range(3):
            _generated_pod(twin, "600m")
        with pytest.raises(Forbidden) as refused:
            _generated_pod(twin, "500m")
        message = refused.value.message
        name = message.split('"')[1]
        assert name.startswith("web-5d8f7c6b9-") and len(name) == len("web-5d8f7c6b9-") + 5
        assert message == (f'pods "{name}" is forbidden: exceeded quota: compute-quota, requested: '
                           f'requests.cpu=500m, used: requests.cpu=1800m, limited: requests.cpu=2')
        assert refused.value.code == 403
        patch(twin, "", "v1", "resourcequotas", "compute-quota",
              lambda q: q["spec"]["hard"].update({"requests.cpu": "4"}))
        _generated_pod(twin, "500m")
        assert _status(twin)["used"] == {"requests.cpu": "2300m"}


def test_a_quota_on_cpu_or_memory_requires_every_container_to_state_it():
    with _twin() as twin:
        _quota(twin, {"limits.cpu": "4", "limits.memory": "4Gi", "requests.cpu": "2"})
        with pytest.raises(Forbidden) as refused:
            pod(twin, "bare", labels={"app": "web"})
        assert refused.value.message == (
            'pods "bare" is forbidden: failed quota: compute-quota: must specify limits.cpu for: app; limits.memory '
            'for: app; requests.cpu for: app')
        _pod(twin, "stated")


def test_a_burst_of_creates_cannot_overrun_the_quota_before_the_controller_recounts():
    with _twin() as twin:
        _quota(twin, {"pods": "3"})
        made = []
        for i in range(5):
            try:
                made.append(_pod(twin, f"p{i}")["metadata"]["name"])
            except Forbidden as exc:
                assert "exceeded quota: compute-quota, requested: pods=1, used: pods=3, limited: pods=3" in exc.message
        assert made == ["p0", "p1", "p2"]
        assert _status(twin) == {"hard": {"pods": "3"}, "used": {"pods": "3"}}


def test_the_controller_keeps_status_used_and_gives_back_what_deleted_objects_held():
    with _twin() as twin:
        _quota(twin, {"requests.cpu": "2", "requests.memory": "1Gi", "limits.cpu": "4", "pods": "10",
                      "count/pods": "20", "configmaps": "5", "services": "2", "count/deployments.apps": "3"})
        twin.warp(1)
        used = _status(twin)["used"]
        assert used == {"configmaps": "1", "count/deployments.apps": "0", "count/pods": "0", "limits.cpu": "0",
                        "pods": "0", "requests.cpu": "0", "requests.memory": "0", "services": "1"}  # kubernetes
        _pod(twin, "a", cpu="250m", memory="256Mi")
        _pod(twin, "b", cpu="250m", memory="512Mi")
        create(twin, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default"}})
        twin.warp(1)
        used = _status(twin)["used"]
        assert (used["requests.cpu"], used["requests.memory"], used["limits.cpu"], used["pods"], used["configmaps"]) \
            == ("500m", "768Mi", "500m", "2", "2")
        report(twin, "b", ip="10.244.1.3", phase="Succeeded", ready=False)  # finished: no compute use
        delete(twin, "", "v1", "pods", "a", grace=0)
        twin.warp(1)
        used = _status(twin)["used"]
        assert (used["requests.cpu"], used["pods"], used["count/pods"]) == ("0", "0", "1")


def test_scoped_quotas_count_only_the_pods_they_select():
    with _twin() as twin:
        _quota(twin, {"pods": "1"}, name="best-effort", scopes=["BestEffort"])
        pod(twin, "free", labels={"app": "web"})
        _pod(twin, "paid-1")
        _pod(twin, "paid-2")
        with pytest.raises(Forbidden):
            pod(twin, "free-2", labels={"app": "web"})
        assert _status(twin, "best-effort")["used"] == {"pods": "1"}


def test_limit_range_defaults_show_on_the_pod(twin, kubectl):
    create(twin, {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults", "namespace": "default"},
                  "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                                       "defaultRequest": {"cpu": "100m"}, "max": {"memory": "1Gi"}}]}})
    kubectl("run", "web", "--image=nginx:1.25")
    manifest = yaml.safe_load(kubectl("get", "pod", "web", "-o", "yaml"))
    assert manifest["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "500m", "memory": "256Mi"},
                                                              "requests": {"cpu": "100m", "memory": "256Mi"}}
    assert manifest["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == \
        "LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit for container web"


def test_limit_range_limits_are_enforced_with_upstreams_messages(twin, kubectl):
    create(twin, {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits", "namespace": "default"},
                  "spec": {"limits": [{"type": "Container", "max": {"memory": "1Gi"}, "min": {"cpu": "50m"},
                                       "maxLimitRequestRatio": {"cpu": "2"}}]}})
    refused = kubectl.fails("run", "big", "--image=nginx:1.25", "--overrides", '{"spec":{"containers":[{"name":"big",'
                            '"image":"nginx:1.25","resources":{"limits":{"memory":"2Gi","cpu":"1"},'
                            '"requests":{"cpu":"100m"}}}]}}')
    assert 'pods "big" is forbidden: [maximum memory usage per Container is 1Gi, but limit is 2Gi, cpu max limit ' \
           'to request ratio per Container is 2, but provided ratio is 10.000000]' in refused.stderr
    kubectl.fails("run", "tiny", "--image=nginx:1.25", "--overrides", '{"spec":{"containers":[{"name":"tiny",'
                  '"image":"nginx:1.25","resources":{"limits":{"cpu":"20m"}}}]}}')
    kubectl("run", "fits", "--image=nginx:1.25", "--overrides", '{"spec":{"containers":[{"name":"fits",'
            '"image":"nginx:1.25","resources":{"limits":{"memory":"512Mi","cpu":"100m"},'
            '"requests":{"cpu":"100m"}}}]}}')


def test_kubectl_sees_the_refusal_and_the_quota_status(twin, kubectl):
    _quota(twin, {"requests.cpu": "1", "pods": "5"})
    twin.warp(1)
    kubectl("run", "a", "--image=nginx:1.25", "--overrides",
            '{"spec":{"containers":[{"name":"a","image":"nginx:1.25","resources":{"requests":{"cpu":"800m"}}}]}}')
    refused = kubectl.fails("run", "b", "--image=nginx:1.25", "--overrides",
                            '{"spec":{"containers":[{"name":"b","image":"nginx:1.25","resources":{"requests":'
                            '{"cpu":"300m"}}}]}}')
    assert 'Error from server (Forbidden): pods "b" is forbidden: exceeded quota: compute-quota, requested: ' \
           'requests.cpu=300m, used: requests.cpu=800m, limited: requests.cpu=1' in refused.stderr
    described = kubectl("describe", "quota", "compute-quota")
    assert [line.split() for line in described.splitlines()[-2:]] == [["pods", "1", "5"],
                                                                       ["requests.cpu", "800m", "1"]]


def _claim(twin, name: str, size: str) -> dict:
    return create(twin, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                         "metadata": {"name": name, "namespace": "default"},
                         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}})


def test_claims_count_their_storage_in_total_and_per_class_and_a_limit_range_bounds_them():
    with _twin() as twin:
        _quota(twin, {"requests.storage": "8Gi", "standard.storageclass.storage.k8s.io/persistentvolumeclaims": "2"},
               name="storage")
        create(twin, {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "claims", "namespace": "default"},
                      "spec": {"limits": [{"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"},
                                           "max": {"storage": "6Gi"}}]}})
        _claim(twin, "data", "5Gi")
        with pytest.raises(Forbidden) as refused:
            _claim(twin, "logs", "4Gi")
        assert refused.value.message == (
            'persistentvolumeclaims "logs" is forbidden: exceeded quota: storage, requested: requests.storage=4Gi, '
            'used: requests.storage=5Gi, limited: requests.storage=8Gi')
        with pytest.raises(Forbidden) as refused:
            _claim(twin, "huge", "7Gi")
        assert refused.value.message == ('persistentvolumeclaims "huge" is forbidden: maximum storage usage per '
                                         'PersistentVolumeClaim is 6Gi, but request is 7Gi')
        _claim(twin, "cache", "2Gi")
        twin.warp(1)
        assert _status(twin, "storage")["used"] == {
            "requests.storage": "7Gi", "standard.storageclass.storage.k8s.io/persistentvolumeclaims": "2"}
