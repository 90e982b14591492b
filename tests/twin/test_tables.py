"""Server-side printing: what ``kubectl get`` shows for each built-in kind, and the cell logic behind it."""

from __future__ import annotations

import re
import subprocess
import textwrap

import pytest
from kubernetes.dynamic import DynamicClient

from pytest_itbench.twin.apiserver import tables
from pytest_itbench.twin.apiserver.tables.autoscaling import format_metrics
from pytest_itbench.twin.apiserver.tables.batch import job_row
from pytest_itbench.twin.apiserver.tables.core import human_duration, printer_for
from pytest_itbench.twin.apiserver.tables.events import event_row
from pytest_itbench.twin.apiserver.tables.formatting import format_label_selector, selector_string
from pytest_itbench.twin.apiserver.tables.networking import endpoints_cell, ingress_hosts
from pytest_itbench.twin.apiserver.tables.pods import pod_conditions, pod_row
from pytest_itbench.twin.quantity import printable as canonical
from pytest_itbench.twin.clock import format_micro_time, format_time
from pytest_itbench.twin.schema import builtin_definitions
from tests.conftest import KUBECTL

NOW = 1_800_000_000.0


def ts(seconds_ago: float, now: float = NOW) -> str:
    return format_time(now - seconds_ago)


def lines(text: str) -> list[str]:
    """kubectl output, line by line, without the padding that trails an empty last cell."""
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def table(text: str) -> list[str]:
    return lines(textwrap.dedent(text))


def cells(line: str) -> list[str]:
    """The cells of one output line (kubectl separates columns by at least three spaces)."""
    return re.split(r"\s{3,}", line.strip())


# ---- duration formatting --------------------------------------------------------------------------------


@pytest.mark.parametrize("seconds,expected", [
    (-3, "<invalid>"), (-2, "<invalid>"), (-1.5, "0s"), (-1, "0s"), (0, "0s"), (1, "1s"), (70, "70s"),
    (119.9, "119s"), (120, "2m"), (190, "3m10s"), (599, "9m59s"), (600, "10m"), (70 * 60, "70m"),
    (179 * 60 + 59, "179m"), (3 * 3600, "3h"), (3 * 3600 + 30 * 60, "3h30m"), (8 * 3600, "8h"),
    (47 * 3600, "47h"), (48 * 3600, "2d"), (49 * 3600, "2d1h"), ((8 * 24 + 2) * 3600, "8d"),
    (367 * 24 * 3600, "367d"), ((365 * 2 * 24 + 25) * 3600, "2y1d"), ((365 * 8 * 24 + 2) * 3600, "8y"),
])
def test_human_duration_matches_upstream_breakpoints(seconds, expected):
    assert human_duration(seconds) == expected


@pytest.mark.parametrize("written,shown", [
    ("1.5", "1500m"), ("0.25", "250m"), ("2000m", "2"), ("1000", "1k"), ("100m", "100m"), ("0.1n", "1n"),
    ("2048Ki", "2Mi"), ("1536Ki", "1536Ki"), ("0.5Gi", "512Mi"), ("512", "512"), ("0Gi", "0"), ("10Gi", "10Gi"),
    ("1e3", "1e3"), ("1.5e3", "1500"), ("12e6", "12e6"), ("1E", "1E"),
])
def test_quantities_print_in_canonical_form(written, shown):
    assert canonical(written) == shown


# ---- pod STATUS, READY and RESTARTS --------------------------------------------------------------------


def pod(*, containers=("app",), statuses=(), init=(), init_statuses=(), phase="Running", reason=None,
        conditions=(), deleted=False, gates=()) -> dict:
    status = {"phase": phase, "containerStatuses": list(statuses), "initContainerStatuses": list(init_statuses),
              "conditions": list(conditions)}
    if reason:
        status["reason"] = reason
    meta = {"name": "p", "creationTimestamp": ts(600)}
    if deleted:
        meta["deletionTimestamp"] = ts(5)
    return {"metadata": meta, "status": status,
            "spec": {"containers": [{"name": n} for n in containers],
                     "initContainers": [c if isinstance(c, dict) else {"name": c} for c in init],
                     "readinessGates": [{"conditionType": g} for g in gates]}}


def running(name="app", ready=True, restarts=0, last_exit_ago=None, now=NOW) -> dict:
    cs = {"name": name, "ready": ready, "restartCount": restarts, "started": True,
          "state": {"running": {"startedAt": ts(60, now)}}}
    if last_exit_ago is not None:
        cs["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ts(last_exit_ago, now)}}
    return cs


def waiting(reason, name="app", restarts=0) -> dict:
    return {"name": name, "ready": False, "restartCount": restarts, "state": {"waiting": {"reason": reason}}}


def terminated(name="app", exit_code=1, reason=None, signal=None, now=NOW) -> dict:
    state = {"exitCode": exit_code, "finishedAt": ts(30, now)}
    if reason:
        state["reason"] = reason
    if signal:
        state["signal"] = signal
    return {"name": name, "ready": False, "restartCount": 0, "state": {"terminated": state}}


def cond(type_, status="True", reason=None) -> dict:
    return {"type": type_, "status": status, **({"reason": reason} if reason else {})}


@pytest.mark.parametrize("case,ready,status,restarts", [
    (pod(phase="Pending"), "0/1", "Pending", "0"),
    (pod(phase="Pending", conditions=[cond("PodScheduled", "False", "SchedulingGated")]), "0/1", "SchedulingGated",
     "0"),
    (pod(phase="Pending", statuses=[waiting("ContainerCreating")]), "0/1", "ContainerCreating", "0"),
    (pod(phase="Pending", statuses=[waiting("ErrImagePull")]), "0/1", "ErrImagePull", "0"),
    (pod(phase="Pending", statuses=[waiting("ImagePullBackOff")]), "0/1", "ImagePullBackOff", "0"),
    (pod(statuses=[running()]), "1/1", "Running", "0"),
    (pod(statuses=[running(restarts=3, last_exit_ago=150)]), "1/1", "Running", "3 (2m30s ago)"),
    (pod(containers=("app", "log"), statuses=[running(), waiting("CrashLoopBackOff", "log", restarts=7)]),
     "1/2", "CrashLoopBackOff", "7"),
    (pod(statuses=[terminated(exit_code=137, reason="OOMKilled")]), "0/1", "OOMKilled", "0"),
    (pod(phase="Failed", statuses=[terminated(reason="Error")]), "0/1", "Error", "0"),
    (pod(phase="Failed", statuses=[terminated(exit_code=2)]), "0/1", "ExitCode:2", "0"),
    (pod(phase="Failed", statuses=[terminated(exit_code=137, signal=9)]), "0/1", "Signal:9", "0"),
    (pod(phase="Succeeded", statuses=[terminated(exit_code=0, reason="Completed")]), "0/1", "Completed", "0"),
    (pod(phase="Failed", reason="Evicted"), "0/1", "Evicted", "0"),
    # A finished container next to a running one: the pod is Running only if it is Ready.
    (pod(containers=("job", "web"), statuses=[terminated("job", 0, "Completed"), running("web")],
         conditions=[cond("Ready", "False")]), "1/2", "NotReady", "0"),
    (pod(containers=("job", "web"), statuses=[terminated("job", 0, "Completed"), running("web")],
         conditions=[cond("Ready")]), "1/2", "Running", "0"),
    # Init containers: the first one that has not succeeded decides.
    (pod(phase="Pending", init=("a", "b"), init_statuses=[running("a", ready=False), waiting("PodInitializing", "b")],
         statuses=[waiting("PodInitializing")]), "0/1", "Init:0/2", "0"),
    (pod(phase="Pending", init=("a", "b"), init_statuses=[terminated("a", 0, "Completed"), running("b", False)],
         statuses=[waiting("PodInitializing")]), "0/1", "Init:1/2", "0"),
    (pod(phase="Pending", init=("a",), init_statuses=[waiting("CrashLoopBackOff", "a", restarts=4)],
         statuses=[waiting("PodInitializing")]), "0/1", "Init:CrashLoopBackOff", "4"),
    (pod(phase="Pending", init=("a",), init_statuses=[terminated("a", 1, "Error")],
         statuses=[waiting("PodInitializing")]), "0/1", "Init:Error", "0"),
    (pod(phase="Pending", init=("a",), init_statuses=[terminated("a", 3)], statuses=[waiting("PodInitializing")]),
     "0/1", "Init:ExitCode:3", "0"),
    (pod(phase="Pending", init=("a",), init_statuses=[terminated("a", 0, "Completed")],
         statuses=[waiting("PodInitializing")]), "0/1", "PodInitializing", "0"),
    # A sidecar (restartable init container) counts toward READY and RESTARTS once started.
    (pod(init=({"name": "proxy", "restartPolicy": "Always"},),
         init_statuses=[running("proxy", restarts=2, last_exit_ago=30)], statuses=[running()],
         conditions=[cond("Initialized")]), "2/2", "Running", "2 (30s ago)"),
    (pod(statuses=[running()], deleted=True), "1/1", "Terminating", "0"),
    (pod(phase="Succeeded", statuses=[terminated(exit_code=0, reason="Completed")], deleted=True), "0/1",
     "Completed", "0"),
    (pod(statuses=[running()], deleted=True, reason="NodeLost"), "1/1", "Unknown", "0"),
])
def test_pod_ready_status_and_restarts(case, ready, status, restarts):
    assert pod_row(case, NOW)[1:5] == [ready, status, restarts, "10m"]


def test_pod_wide_cells_and_row_conditions():
    case = pod(statuses=[running()], gates=("lb.example.com/ready", "other"),
               conditions=[cond("lb.example.com/ready"), cond("other", "False")])
    case["status"].update(podIPs=[{"ip": "10.244.1.7"}, {"ip": "fd00::7"}], nominatedNodeName="n2")
    case["spec"]["nodeName"] = "n1"
    assert pod_row(case, NOW)[5:] == ["10.244.1.7", "n1", "n2", "1/2"]
    assert pod_row(pod(phase="Pending"), NOW)[5:] == ["<none>", "<none>", "<none>", "<none>"]
    assert pod_conditions(pod(phase="Running")) == []
    assert pod_conditions(pod(phase="Succeeded")) == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                                       "message": "The pod has completed successfully."}]


# ---- other cell logic ---------------------------------------------------------------------------------------


def job(conditions=(), deleted=False, completions=None, parallelism=None, succeeded=0, start=None, end=None):
    spec = {"template": {"spec": {"containers": [{"name": "work", "image": "busybox"}]}}}
    if completions is not None:
        spec["completions"] = completions
    if parallelism is not None:
        spec["parallelism"] = parallelism
    status = {"succeeded": succeeded, "conditions": [cond(c) for c in conditions]}
    if start is not None:
        status["startTime"] = ts(start)
    if end is not None:
        status["completionTime"] = ts(end)
    meta = {"name": "j", "creationTimestamp": ts(3600), **({"deletionTimestamp": ts(1)} if deleted else {})}
    return {"metadata": meta, "spec": spec, "status": status}


@pytest.mark.parametrize("case,cells", [
    (job(completions=3, succeeded=2, start=300), ["Running", "2/3", "5m"]),
    (job(parallelism=4, succeeded=1, start=60, end=20), ["Running", "1/1 of 4", "40s"]),
    (job(), ["Running", "0/1", ""]),
    (job(["Complete"], completions=1, succeeded=1, start=100, end=90), ["Complete", "1/1", "10s"]),
    (job(["Failed"], deleted=True), ["Failed", "0/1", ""]),
    (job(["Suspended"], deleted=True), ["Terminating", "0/1", ""]),
    (job(["Suspended"]), ["Suspended", "0/1", ""]),
    (job(["FailureTarget"]), ["FailureTarget", "0/1", ""]),
])
def test_job_status_completions_and_duration(case, cells):
    assert job_row(case, NOW)[1:4] == cells


def resource(name, target, current=None):
    spec = {"type": "Resource", "resource": {"name": name, "target": target}}
    status = {"type": "Resource", "resource": {"name": name, "current": current}} if current is not None else {}
    return spec, status


@pytest.mark.parametrize("metrics,cell", [
    ([], "<none>"),
    ([resource("cpu", {"type": "Utilization", "averageUtilization": 80}, {"averageUtilization": 45})],
     "cpu: 45%/80%"),
    ([resource("cpu", {"type": "Utilization", "averageUtilization": 80})], "cpu: <unknown>/80%"),
    ([resource("memory", {"type": "AverageValue", "averageValue": "0.5Gi"}, {"averageValue": "262144Ki"})],
     "memory: 256Mi/512Mi"),
    ([({"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue",
                                                                           "averageValue": "1k"}}},
       {"type": "Pods", "pods": {"current": {"averageValue": "1500m"}}})], "1500m/1k"),
    ([({"type": "External", "external": {"target": {"type": "AverageValue", "averageValue": "30"}}}, {})],
     "<unknown>/30 (avg)"),
    ([({"type": "Object", "object": {"target": {"type": "Value", "value": "2"}}},
       {"type": "Object", "object": {"current": {"value": "3"}}})], "3/2"),
    ([({"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "app",
                                                           "target": {"type": "Utilization"}}}, {})],
     "cpu: <unknown>/<auto>"),
    ([resource("cpu", {"type": "Utilization", "averageUtilization": 80}, {"averageUtilization": 95}),
      resource("memory", {"type": "Utilization", "averageUtilization": 70}, {"averageUtilization": 50}),
      resource("ephemeral-storage", {"type": "Utilization", "averageUtilization": 60})],
     "cpu: 95%/80%, memory: 50%/70% + 1 more..."),
])
def test_hpa_targets(metrics, cell):
    assert format_metrics([m[0] for m in metrics], [m[1] for m in metrics]) == cell


def test_events_take_last_seen_from_their_series_and_count_singletons_once():
    new_style = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "web.1"},
                 "eventTime": format_micro_time(NOW - 600), "series": {"count": 5, "lastObservedTime":
                                                                        format_micro_time(NOW - 180)},
                 "regarding": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{app}"},
                 "reason": "BackOff", "type": "Warning", "note": "Back-off restarting failed container \n",
                 "reportingController": "kubelet", "reportingInstance": "node-1"}
    assert event_row(new_style, NOW) == ["3m", "Warning", "BackOff", "pod/web", "spec.containers{app}",
                                         "kubelet, node-1", "Back-off restarting failed container", "10m", 5,
                                         "web.1"]
    singleton = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "n.1"}, "eventTime":
                 format_micro_time(NOW - 30), "involvedObject": {"kind": "Node"}, "reason": "RegisteredNode",
                 "type": "Normal", "message": "registered", "reportingComponent": "node-controller"}
    assert event_row(singleton, NOW) == ["30s", "Normal", "RegisteredNode", "node", "", "node-controller",
                                         "registered", "30s", 1, "n.1"]


def test_selectors_print_in_key_order_with_sorted_values():
    selector = {"matchLabels": {"tier": "web", "app": "shop"},
                "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["qa", "dev"]},
                                     {"key": "canary", "operator": "DoesNotExist"},
                                     {"key": "zone", "operator": "Exists"}]}
    assert selector_string(selector) == "app=shop,!canary,env notin (dev,qa),tier=web,zone"
    assert format_label_selector(None) == format_label_selector({}) == "<none>"
    assert format_label_selector({"matchExpressions": [{"key": "a", "operator": "In"}]}) == "<error>"


def test_endpoints_and_ingress_hosts_show_three_then_count_the_rest():
    subsets = [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}, {"port": 443}]},
               {"addresses": [{"ip": "fd00::1"}]}]
    assert endpoints_cell(subsets) == "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more..."
    assert endpoints_cell([{"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 53}]}]) == "[fd00::1]:53"
    assert endpoints_cell([]) == "<none>"
    rules = [{"host": "a.example"}, {}, {"host": "b.example"}, {"host": "c.example"}, {"host": "d.example"}]
    assert ingress_hosts(rules) == "a.example,b.example,c.example + 2 more..."
    assert ingress_hosts([{}]) == "*"


def test_column_descriptions_come_from_the_api_documentation():
    definitions = builtin_definitions()
    pod_columns = tables.render(printer_for("", "Pod"), [], now=NOW)["columnDefinitions"]
    assert [(c["name"], c["type"], c["priority"]) for c in pod_columns] == [
        ("Name", "string", 0), ("Ready", "string", 0), ("Status", "string", 0), ("Restarts", "string", 0),
        ("Age", "string", 0), ("IP", "string", 1), ("Node", "string", 1), ("Nominated Node", "string", 1),
        ("Readiness Gates", "string", 1)]
    assert pod_columns[0]["format"] == "name"
    assert pod_columns[5]["description"] == \
        definitions["io.k8s.api.core.v1.PodStatus"]["properties"]["podIP"]["description"]
    assert pod_columns[4]["description"] == definitions["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"][
        "properties"]["creationTimestamp"]["description"]


# ---- kubectl get against the twin ------------------------------------------------------------------------


class Objects:
    """Creates objects through the API, the way a client would, and sets their status through /status."""

    def __init__(self, twin, api_client, cache_file):
        self.twin = twin
        self.dynamic = DynamicClient(api_client, cache_file=str(cache_file))

    def ago(self, seconds: float) -> str:
        return self.twin.clock.timestamp(self.twin.clock.now() - seconds)

    def micro_ago(self, seconds: float) -> str:
        return self.twin.clock.micro_timestamp(self.twin.clock.now() - seconds)

    def create(self, obj: dict, status: dict | None = None) -> dict:
        res = self.dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        namespace = obj["metadata"].get("namespace", "default") if res.namespaced else None
        created = res.create(body=obj, namespace=namespace).to_dict()
        if status is not None:
            created = res.status.patch(body={"status": status}, name=obj["metadata"]["name"], namespace=namespace,
                                       content_type="application/merge-patch+json").to_dict()
        return created

    def patch(self, api_version: str, kind: str, name: str, body: dict, namespace: str | None = None,
              subresource: str = "") -> None:
        res = self.dynamic.resources.get(api_version=api_version, kind=kind)
        target = res.status if subresource == "status" else res
        target.patch(body=body, name=name, namespace=namespace, content_type="application/merge-patch+json")


@pytest.fixture
def objects(twin, client, tmp_path):
    return Objects(twin, client, tmp_path / "discovery-cache")


def namespace(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def pod_manifest(name: str, containers: tuple[str, ...] = ("app",), labels: dict | None = None,
                 node: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": c, "image": f"registry.example/{c}:1.0"} for c in containers]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop", "labels": labels or {}},
            "spec": spec}


def running_status(ip: str, *container_statuses: dict, ready: str = "True") -> dict:
    return {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}], "conditions": [cond("Ready", ready)],
            "containerStatuses": [dict(cs, image=f"registry.example/{cs['name']}:1.0", imageID="")
                                  for cs in container_statuses]}


def make_shop_pods(twin, objects: Objects) -> None:
    objects.create(namespace("shop"))
    objects.create(pod_manifest("pending", labels={"app": "batch"}))
    now = twin.clock.now
    objects.create(pod_manifest("web-0", labels={"app": "web"}, node="itbench-worker"),
                   running_status("10.244.1.5", running(now=now())))
    twin.warp(120)
    objects.create(pod_manifest("migrate", labels={"app": "batch"}, node="itbench-worker2"),
                   {"phase": "Succeeded", "containerStatuses": [
                       dict(terminated(exit_code=0, reason="Completed", now=now()), image="registry.example/app:1.0",
                            imageID="")]})
    twin.warp(60)
    api_status = running_status("10.244.2.9", running("app", restarts=1, last_exit_ago=40, now=now()),
                                waiting("CrashLoopBackOff", "log", restarts=4), ready="False")
    api_status["containerStatuses"][1]["lastState"] = {"terminated": {"exitCode": 2, "reason": "Error",
                                                                      "finishedAt": objects.ago(90)}}
    objects.create(pod_manifest("api-0", ("app", "log"), {"app": "api", "tier": "backend"}, "itbench-worker3"),
                   api_status)
    twin.warp(30)


def test_get_pods(twin, objects, kubectl):
    make_shop_pods(twin, objects)
    assert lines(kubectl("get", "pods", "-n", "shop")) == table("""
        NAME      READY   STATUS             RESTARTS      AGE
        api-0     1/2     CrashLoopBackOff   5 (70s ago)   30s
        migrate   0/1     Completed          0             90s
        pending   0/1     Pending            0             3m30s
        web-0     1/1     Running            0             3m30s
    """)
    assert lines(kubectl("get", "pods", "-n", "shop", "-o", "wide")) == table("""
        NAME      READY   STATUS             RESTARTS      AGE     IP           NODE              NOMINATED NODE   READINESS GATES
        api-0     1/2     CrashLoopBackOff   5 (70s ago)   30s     10.244.2.9   itbench-worker3   <none>           <none>
        migrate   0/1     Completed          0             90s     <none>       itbench-worker2   <none>           <none>
        pending   0/1     Pending            0             3m30s   <none>       <none>            <none>           <none>
        web-0     1/1     Running            0             3m30s   10.244.1.5   itbench-worker    <none>           <none>
    """)


def test_kubectl_adds_namespace_labels_and_sorts_client_side(twin, objects, kubectl):
    make_shop_pods(twin, objects)
    assert lines(kubectl("get", "pods", "-A", "--show-labels")) == table("""
        NAMESPACE   NAME      READY   STATUS             RESTARTS      AGE     LABELS
        shop        api-0     1/2     CrashLoopBackOff   5 (70s ago)   30s     app=api,tier=backend
        shop        migrate   0/1     Completed          0             90s     app=batch
        shop        pending   0/1     Pending            0             3m30s   app=batch
        shop        web-0     1/1     Running            0             3m30s   app=web
    """)
    assert lines(kubectl("get", "pods", "-n", "shop", "-L", "app,tier", "--no-headers",
                         "--sort-by=.status.containerStatuses[0].restartCount")) == table("""
        pending   0/1   Pending            0             3m30s   batch
        migrate   0/1   Completed          0             90s     batch
        web-0     1/1   Running            0             3m30s   web
        api-0     1/2   CrashLoopBackOff   5 (70s ago)   30s     api     backend
    """)


def test_watch_rows_keep_every_column(twin, objects, kubectl):
    objects.create(namespace("shop"))
    objects.create(pod_manifest("web-0", node="itbench-worker"))
    # Each watch event is a one-row Table; kubectl reuses the columns of the first one it printed.
    with subprocess.Popen([KUBECTL, "get", "pods", "-n", "shop", "-w", "-o", "wide", "--request-timeout=30s"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=kubectl.env,
                          cwd=kubectl.workdir) as watch:
        try:
            header, listed = watch.stdout.readline(), watch.stdout.readline()
            objects.patch("v1", "Pod", "web-0", {"status": running_status("10.244.1.5", running(now=twin.clock.now()))},
                          "shop", "status")
            changed = watch.stdout.readline()
        finally:
            watch.terminate()
    assert header.split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
                              "READINESS", "GATES"]
    assert listed.split() == ["web-0", "0/1", "Pending", "0", "0s", "<none>", "itbench-worker", "<none>", "<none>"]
    assert changed.split() == ["web-0", "1/1", "Running", "0", "0s", "10.244.1.5", "itbench-worker", "<none>",
                               "<none>"]


def template(labels: dict, *containers: str) -> dict:
    return {"metadata": {"labels": labels},
            "spec": {"containers": [{"name": c, "image": f"registry.example/{c}:1.0"} for c in containers]}}


def make_workloads(twin, objects: Objects) -> None:
    web = {"app": "web"}
    objects.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                    "spec": {"replicas": 3, "selector": {"matchLabels": web},
                             "template": template(web, "app", "proxy")}},
                   {"replicas": 3, "updatedReplicas": 3, "readyReplicas": 2, "availableReplicas": 2})
    hashed = dict(web, **{"pod-template-hash": "5d9c7b6f4"})
    objects.create({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "metadata": {"name": "web-5d9c7b6f4", "labels": hashed},
                    "spec": {"replicas": 3, "selector": {"matchLabels": hashed},
                             "template": template(hashed, "app", "proxy")}},
                   {"replicas": 3, "readyReplicas": 2, "availableReplicas": 2})
    db = {"app": "db"}
    sts = objects.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                          "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": db},
                                   "template": template(db, "postgres")}},
                         {"replicas": 2, "readyReplicas": 1, "availableReplicas": 1})
    objects.create({"apiVersion": "apps/v1", "kind": "ControllerRevision",
                    "metadata": {"name": "db-6c5d7f8b9d", "labels": db, "ownerReferences": [
                        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": sts["metadata"]["uid"],
                         "controller": True}]},
                    "data": {}, "revision": 2})
    agent = {"app": "agent"}
    objects.create({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
                    "spec": {"selector": {"matchLabels": agent},
                             "template": dict(template(agent, "agent"), spec=dict(
                                 template(agent, "agent")["spec"], nodeSelector={"kubernetes.io/os": "linux"}))}},
                   {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                    "updatedNumberScheduled": 3, "numberAvailable": 2, "numberMisscheduled": 0})
    objects.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
                    "spec": {"minAvailable": 2, "selector": {"matchLabels": web}}},
                   {"disruptionsAllowed": 0, "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 3})
    objects.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db"},
                    "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": db}}},
                   {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 3})
    objects.create({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
                    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                             "minReplicas": 2, "maxReplicas": 10, "metrics": [
                                 {"type": "Resource", "resource": {"name": "cpu", "target": {
                                     "type": "Utilization", "averageUtilization": 80}}},
                                 {"type": "Resource", "resource": {"name": "memory", "target": {
                                     "type": "AverageValue", "averageValue": "0.5Gi"}}}]}},
                   {"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": [
                       {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 45}}}]})
    twin.warp(7200)
    batch = {"app": "batch"}
    objects.create({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
                    "spec": {"schedule": "0 3 * * *", "timeZone": "Europe/Paris", "suspend": False,
                             "jobTemplate": {"spec": {"template": dict(template(batch, "report"), spec=dict(
                                 template(batch, "report")["spec"], restartPolicy="OnFailure"))}}}},
                   {"lastScheduleTime": objects.ago(0), "active": [{"kind": "Job", "name": "nightly-29"}]})
    twin.warp(600)
    objects.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate"},
                    "spec": {"completions": 1, "manualSelector": True, "selector": {"matchLabels": batch},
                             "template": dict(template(batch, "migrate"), spec=dict(
                        template(batch, "migrate")["spec"], restartPolicy="Never"))}},
                   {"startTime": objects.ago(0), "completionTime": objects.ago(-45), "succeeded": 1,
                    "conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": objects.ago(-45),
                                    "lastProbeTime": objects.ago(-45)}]})
    objects.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "nightly-29"},
                    "spec": {"parallelism": 2, "template": dict(template(batch, "report"), spec=dict(
                        template(batch, "report")["spec"], restartPolicy="OnFailure"))}},
                   {"startTime": objects.ago(0), "active": 2, "succeeded": 0})
    twin.warp(90)


def test_get_workloads(twin, objects, kubectl):
    make_workloads(twin, objects)
    assert lines(kubectl("get", "deployments")) == table("""
        NAME   READY   UP-TO-DATE   AVAILABLE   AGE
        web    2/3     3            2           131m
    """)
    assert lines(kubectl("get", "deployments,replicasets", "-o", "wide")) == table("""
        NAME                  READY   UP-TO-DATE   AVAILABLE   AGE    CONTAINERS   IMAGES                                                SELECTOR
        deployment.apps/web   2/3     3            2           131m   app,proxy    registry.example/app:1.0,registry.example/proxy:1.0   app=web

        NAME                            DESIRED   CURRENT   READY   AGE    CONTAINERS   IMAGES                                                SELECTOR
        replicaset.apps/web-5d9c7b6f4   3         3         2       131m   app,proxy    registry.example/app:1.0,registry.example/proxy:1.0   app=web,pod-template-hash=5d9c7b6f4
    """)
    assert lines(kubectl("get", "statefulsets,daemonsets,controllerrevisions", "-o", "wide")) == table("""
        NAME                  READY   AGE    CONTAINERS   IMAGES
        statefulset.apps/db   1/3     131m   postgres     registry.example/postgres:1.0

        NAME                   DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR            AGE    CONTAINERS   IMAGES                       SELECTOR
        daemonset.apps/agent   3         3         2       3            2           kubernetes.io/os=linux   131m   agent        registry.example/agent:1.0   app=agent

        NAME                                    CONTROLLER            REVISION   AGE
        controllerrevision.apps/db-6c5d7f8b9d   statefulset.apps/db   2          131m
    """)
    assert lines(kubectl("get", "pdb,hpa")) == table("""
        NAME                             MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE
        poddisruptionbudget.policy/db    N/A             50%               1                     131m
        poddisruptionbudget.policy/web   2               N/A               0                     131m

        NAME                                      REFERENCE        TARGETS                                 MINPODS   MAXPODS   REPLICAS   AGE
        horizontalpodautoscaler.autoscaling/web   Deployment/web   cpu: 45%/80%, memory: <unknown>/512Mi   2         10        3          131m
    """)
    # autoscaling/v1 carries the memory metric in an annotation; the server prints both versions alike.
    assert lines(kubectl("get", "hpa.v1.autoscaling", "--no-headers")) == [
        "web   Deployment/web   cpu: 45%/80%, memory: <unknown>/512Mi   2     10    3     131m"]
    # A Job without manualSelector gets a generated selector on its own uid.
    uid = kubectl("get", "job", "nightly-29", "-o", "jsonpath={.metadata.uid}")
    assert lines(kubectl("get", "cronjobs,jobs", "-o", "wide")) == table(f"""
        NAME                    SCHEDULE    TIMEZONE       SUSPEND   ACTIVE   LAST SCHEDULE   AGE   CONTAINERS   IMAGES                        SELECTOR
        cronjob.batch/nightly   0 3 * * *   Europe/Paris   False     1        11m             11m   report       registry.example/report:1.0   <none>

        NAME                   STATUS     COMPLETIONS   DURATION   AGE   CONTAINERS   IMAGES                         SELECTOR
        job.batch/migrate      Complete   1/1           45s        90s   migrate      registry.example/migrate:1.0   app=batch
        job.batch/nightly-29   Running    0/1 of 2      90s        90s   report       registry.example/report:1.0    batch.kubernetes.io/controller-uid={uid}
    """)


def test_get_nodes(twin, objects, kubectl):
    objects.patch("v1", "Node", "itbench-worker", {"metadata": {"labels": {
        "node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/etcd": ""}}})
    objects.patch("v1", "Node", "itbench-worker2", {"spec": {"unschedulable": True}})
    worker3 = objects.dynamic.resources.get(api_version="v1", kind="Node").get(name="itbench-worker3").to_dict()
    conditions = [dict(c, status="Unknown", reason="NodeStatusUnknown") if c["type"] == "Ready" else c
                  for c in worker3["status"]["conditions"]]
    objects.patch("v1", "Node", "itbench-worker3", {"metadata": {"labels": {"kubernetes.io/role": "ingress"}}})
    objects.patch("v1", "Node", "itbench-worker3", {"status": {"conditions": conditions, "addresses": [
        {"type": "InternalIP", "address": "172.18.0.5"}, {"type": "ExternalIP", "address": "203.0.113.7"},
        {"type": "Hostname", "address": "itbench-worker3"}]}}, subresource="status")
    twin.warp(3 * 86400 + 5 * 3600)
    assert lines(kubectl("get", "nodes")) == table("""
        NAME              STATUS                     ROLES                AGE    VERSION
        itbench-worker    Ready                      control-plane,etcd   3d5h   v1.31.4
        itbench-worker2   Ready,SchedulingDisabled   <none>               3d5h   v1.31.4
        itbench-worker3   NotReady                   ingress              3d5h   v1.31.4
    """)
    assert cells(lines(kubectl("get", "nodes", "-o", "wide", "--no-headers"))[2]) == [
        "itbench-worker3", "NotReady", "ingress", "3d5h", "v1.31.4", "172.18.0.5", "203.0.113.7",
        "Debian GNU/Linux 12 (bookworm)", "6.1.0-28-cloud-amd64", "containerd://1.7.24"]


def service(name: str, spec: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "shop"}, "spec": spec}


def port(number: int, node_port: int | None = None, name: str | None = None) -> dict:
    return {"port": number, "protocol": "TCP", **({"nodePort": node_port} if node_port else {}),
            **({"name": name} if name else {})}


def test_get_services_and_networking(twin, objects, kubectl):
    objects.create(namespace("shop"))
    web = {"app": "web"}
    objects.create(service("web", {"type": "ClusterIP", "clusterIP": "10.96.10.10", "clusterIPs": ["10.96.10.10"],
                                   "ports": [port(80)], "selector": web}))
    objects.create(service("api", {"type": "NodePort", "clusterIP": "10.96.10.11", "clusterIPs": ["10.96.10.11"],
                                   "ports": [port(80, 30080, "http"), port(443, 30443, "https")],
                                   "selector": {"app": "api", "tier": "backend"}}))
    objects.create(service("lb-pending", {"type": "LoadBalancer", "clusterIP": "10.96.10.12",
                                          "clusterIPs": ["10.96.10.12"], "ports": [port(443, 31443)],
                                          "selector": web}))
    objects.create(service("lb", {"type": "LoadBalancer", "clusterIP": "10.96.10.13", "clusterIPs": ["10.96.10.13"],
                                  "externalIPs": ["203.0.113.9"], "ports": [port(80, 31080)], "selector": web}),
                   {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}, {"ip": "198.51.100.20"}]}})
    objects.create(service("db", {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"],
                                  "ports": [port(5432)], "selector": {"app": "db"}}))
    objects.create(service("legacy", {"type": "ExternalName", "externalName": "db.example.com"}))
    objects.create({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web", "namespace": "shop"},
                    "subsets": [{"addresses": [{"ip": "10.244.1.5"}, {"ip": "10.244.2.6"}], "ports": [port(80)]}]})
    objects.create({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"name": "web-x7k2p", "namespace": "shop",
                                 "labels": {"kubernetes.io/service-name": "web"}},
                    "addressType": "IPv4", "ports": [port(80, name="http")],
                    "endpoints": [{"addresses": ["10.244.1.5"]}, {"addresses": ["10.244.2.6"]}]})
    objects.create({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "nginx"},
                    "spec": {"controller": "k8s.io/ingress-nginx", "parameters": {
                        "apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external"}}})
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    http = {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}
    objects.create({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                    "metadata": {"name": "shop", "namespace": "shop"},
                    "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["shop.example.com"]}],
                             "rules": [{"host": "shop.example.com", "http": http},
                                       {"host": "api.example.com", "http": http}]}},
                   {"loadBalancer": {"ingress": [{"ip": "198.51.100.30"}]}})
    objects.create({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                    "metadata": {"name": "deny-all", "namespace": "shop"},
                    "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}})
    objects.create({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                    "metadata": {"name": "web-allow", "namespace": "shop"},
                    "spec": {"podSelector": {"matchLabels": web}, "ingress": [{}]}})
    twin.warp(45 * 60)
    assert lines(kubectl("get", "services", "-n", "shop", "-o", "wide")) == table("""
        NAME         TYPE           CLUSTER-IP    EXTERNAL-IP                                PORT(S)                      AGE   SELECTOR
        api          NodePort       10.96.10.11   <none>                                     80:30080/TCP,443:30443/TCP   45m   app=api,tier=backend
        db           ClusterIP      None          <none>                                     5432/TCP                     45m   app=db
        lb           LoadBalancer   10.96.10.13   198.51.100.20,lb.example.com,203.0.113.9   80:31080/TCP                 45m   app=web
        lb-pending   LoadBalancer   10.96.10.12   <pending>                                  443:31443/TCP                45m   app=web
        legacy       ExternalName   <none>        db.example.com                             <none>                       45m   <none>
        web          ClusterIP      10.96.10.10   <none>                                     80/TCP                       45m   app=web
    """)
    assert lines(kubectl("get", "endpoints,endpointslices", "-n", "shop")) == table("""
        NAME            ENDPOINTS                     AGE
        endpoints/web   10.244.1.5:80,10.244.2.6:80   45m

        NAME                                       ADDRESSTYPE   PORTS   ENDPOINTS               AGE
        endpointslice.discovery.k8s.io/web-x7k2p   IPv4          80      10.244.1.5,10.244.2.6   45m
    """)
    assert lines(kubectl("get", "ingress,networkpolicies", "-n", "shop")) == table("""
        NAME                             CLASS   HOSTS                              ADDRESS         PORTS     AGE
        ingress.networking.k8s.io/shop   nginx   shop.example.com,api.example.com   198.51.100.30   80, 443   45m

        NAME                                        POD-SELECTOR   AGE
        networkpolicy.networking.k8s.io/deny-all    <none>         45m
        networkpolicy.networking.k8s.io/web-allow   app=web        45m
    """)
    assert lines(kubectl("get", "ingressclasses")) == table("""
        NAME    CONTROLLER             PARAMETERS                                   AGE
        nginx   k8s.io/ingress-nginx   IngressParameters.k8s.example.com/external   45m
    """)


def test_get_events_in_both_apis(twin, objects, kubectl):
    objects.create(namespace("shop"))
    twin.warp(3600)
    pod_ref = {"kind": "Pod", "namespace": "shop", "name": "web-0", "apiVersion": "v1"}
    objects.create({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": "shop"},
                    "involvedObject": {"kind": "Deployment", "namespace": "shop", "name": "web",
                                       "apiVersion": "apps/v1"},
                    "reason": "ScalingReplicaSet", "type": "Normal", "count": 1,
                    "message": "Scaled up replica set web-5d9c7b6f4 to 3",
                    "source": {"component": "deployment-controller"},
                    "firstTimestamp": objects.ago(3600), "lastTimestamp": objects.ago(3600)})
    objects.create({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web-0.2", "namespace": "shop"},
                    "involvedObject": dict(pod_ref, fieldPath="spec.containers{app}"), "reason": "BackOff",
                    "type": "Warning", "count": 5, "message": "Back-off restarting failed container app in pod web-0",
                    "source": {"component": "kubelet", "host": "itbench-worker"},
                    "firstTimestamp": objects.ago(600), "lastTimestamp": objects.ago(120)})
    objects.create({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                    "metadata": {"name": "web-0.3", "namespace": "shop"},
                    "regarding": dict(pod_ref, fieldPath="spec.containers{app}"), "reason": "Unhealthy",
                    "type": "Warning", "action": "Probe",
                    "note": "Readiness probe failed: HTTP probe failed with statuscode: 503",
                    "eventTime": objects.micro_ago(240), "reportingController": "kubelet",
                    "reportingInstance": "itbench-worker",
                    "series": {"count": 3, "lastObservedTime": objects.micro_ago(30)}})
    listing = table("""
        LAST SEEN   TYPE      REASON              OBJECT           MESSAGE
        2m          Warning   BackOff             pod/web-0        Back-off restarting failed container app in pod web-0
        30s         Warning   Unhealthy           pod/web-0        Readiness probe failed: HTTP probe failed with statuscode: 503
        60m         Normal    ScalingReplicaSet   deployment/web   Scaled up replica set web-5d9c7b6f4 to 3
    """)
    assert lines(kubectl("get", "events", "-n", "shop")) == listing
    assert lines(kubectl("get", "events.events.k8s.io", "-n", "shop")) == listing
    assert lines(kubectl("get", "events", "-n", "shop", "-o", "wide")) == table("""
        LAST SEEN   TYPE      REASON              OBJECT           SUBOBJECT              SOURCE                    MESSAGE                                                          FIRST SEEN   COUNT   NAME
        2m          Warning   BackOff             pod/web-0        spec.containers{app}   kubelet, itbench-worker   Back-off restarting failed container app in pod web-0            10m          5       web-0.2
        30s         Warning   Unhealthy           pod/web-0        spec.containers{app}   kubelet, itbench-worker   Readiness probe failed: HTTP probe failed with statuscode: 503   4m           3       web-0.3
        60m         Normal    ScalingReplicaSet   deployment/web                          deployment-controller     Scaled up replica set web-5d9c7b6f4 to 3                         60m          1       web.1
    """)


def test_get_config_and_storage(twin, objects, kubectl):
    objects.create(namespace("shop"))
    objects.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "shop"},
                    "data": {"mode": "fast", "level": "3"}, "binaryData": {"logo.png": "iVBORw0KGgo="}})
    objects.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db-credentials", "namespace": "shop"},
                    "type": "Opaque", "data": {"user": "YWRtaW4=", "password": "czNjcjN0"}})
    objects.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "shop-tls", "namespace": "shop"},
                    "type": "kubernetes.io/tls", "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5"}})
    objects.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "deployer", "namespace": "shop"},
                    "secrets": [{"name": "deployer-token"}]})
    objects.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
                    "provisioner": "pd.csi.storage.gke.io", "reclaimPolicy": "Retain", "allowVolumeExpansion": True})
    objects.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-data"},
                    "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                             "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "fast",
                             "volumeMode": "Filesystem", "hostPath": {"path": "/data"},
                             "claimRef": {"namespace": "shop", "name": "data"}}},
                   {"phase": "Bound"})
    objects.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {
                        "name": "pv-old", "annotations": {"volume.beta.kubernetes.io/storage-class": "legacy"}},
                    "spec": {"capacity": {"storage": "1536Mi"}, "accessModes": ["ReadWriteMany"],
                             "persistentVolumeReclaimPolicy": "Recycle",
                             "nfs": {"server": "nfs.example", "path": "/"}}},
                   {"phase": "Failed", "reason": "RecyclerFailed"})
    objects.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "data", "namespace": "shop"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "8Gi"}},
                             "storageClassName": "fast", "volumeName": "pv-data", "volumeMode": "Filesystem"}},
                   {"phase": "Bound", "capacity": {"storage": "10Gi"},
                    "accessModes": ["ReadOnlyMany", "ReadWriteOnce"]})
    objects.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "scratch", "namespace": "shop"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                             "storageClassName": "standard"}})
    twin.warp(20 * 86400)
    assert lines(kubectl("get", "configmaps,secrets,serviceaccounts", "-n", "shop")) == table("""
        NAME                         DATA   AGE
        configmap/kube-root-ca.crt   1      20d
        configmap/settings           3      20d

        NAME                    TYPE                DATA   AGE
        secret/db-credentials   Opaque              2      20d
        secret/shop-tls         kubernetes.io/tls   2      20d

        NAME                      SECRETS   AGE
        serviceaccount/default    0         20d
        serviceaccount/deployer   1         20d
    """)
    assert lines(kubectl("get", "pvc", "-n", "shop", "-o", "wide")) == table("""
        NAME      STATUS    VOLUME    CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE   VOLUMEMODE
        data      Bound     pv-data   10Gi       RWO,ROX        fast           <unset>                 20d   Filesystem
        scratch   Pending                                       standard       <unset>                 20d   Filesystem
    """)
    assert lines(kubectl("get", "pv", "-o", "wide")) == table("""
        NAME      CAPACITY   ACCESS MODES   RECLAIM POLICY   STATUS   CLAIM       STORAGECLASS   VOLUMEATTRIBUTESCLASS   REASON           AGE   VOLUMEMODE
        pv-data   10Gi       RWO,ROX        Retain           Bound    shop/data   fast           <unset>                                  20d   Filesystem
        pv-old    1536Mi     RWX            Recycle          Failed               legacy         <unset>                 RecyclerFailed   20d   Filesystem
    """)
    assert lines(kubectl("get", "storageclasses")) == table("""
        NAME                 PROVISIONER             RECLAIMPOLICY   VOLUMEBINDINGMODE      ALLOWVOLUMEEXPANSION   AGE
        fast                 pd.csi.storage.gke.io   Retain          Immediate              true                   20d
        standard (default)   rancher.io/local-path   Delete          WaitForFirstConsumer   false                  20d
    """)


def test_get_cluster_policy_and_access(twin, objects, kubectl):
    objects.create(namespace("shop"))
    objects.create(namespace("old"))
    objects.patch("v1", "Namespace", "old", {"status": {"phase": "Terminating"}}, subresource="status")
    objects.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute", "namespace": "shop"},
                    "spec": {"hard": {"pods": "20", "requests.cpu": "4", "requests.memory": "8Gi", "limits.cpu": "8",
                                      "limits.memory": "16Gi"}}},
                   {"hard": {"pods": "20", "requests.cpu": "4", "requests.memory": "8Gi", "limits.cpu": "8",
                             "limits.memory": "16Gi"},
                    "used": {"pods": "3", "requests.cpu": "750m", "requests.memory": "1536Mi", "limits.cpu": "1500m",
                             "limits.memory": "3Gi"}})
    objects.create({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults", "namespace": "shop"},
                    "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}}]}})
    objects.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "batch-low"},
                    "value": -10, "globalDefault": True, "preemptionPolicy": "Never", "description": "batch"})
    objects.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": "shop-controller", "namespace": "shop"},
                    "spec": {"holderIdentity": "shop-controller-7f9c_2b1e", "leaseDurationSeconds": 15}})
    objects.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                    "metadata": {"name": "pod-reader", "namespace": "shop"},
                    "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]})
    objects.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                    "metadata": {"name": "readers", "namespace": "shop"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
                    "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
                                 {"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"},
                                 {"kind": "Group", "name": "sre", "apiGroup": "rbac.authorization.k8s.io"},
                                 {"kind": "ServiceAccount", "name": "deployer", "namespace": "shop"}]})
    twin.warp(90)
    assert lines(kubectl("get", "namespaces")) == table("""
        NAME              STATUS        AGE
        default           Active        90s
        kube-node-lease   Active        90s
        kube-public       Active        90s
        kube-system       Active        90s
        old               Terminating   90s
        shop              Active        90s
    """)
    # LimitRange and Role have no printer upstream: the server sends its default Name / Created At table.
    created = objects.ago(90)
    assert lines(kubectl("get", "resourcequotas,limitranges,leases,roles", "-n", "shop")) == table(f"""
        NAME                    REQUEST                                                         LIMIT                                          AGE
        resourcequota/compute   pods: 3/20, requests.cpu: 750m/4, requests.memory: 1536Mi/8Gi   limits.cpu: 1500m/8, limits.memory: 3Gi/16Gi   90s

        NAME                  CREATED AT
        limitrange/defaults   {created}

        NAME                                        HOLDER                      AGE
        lease.coordination.k8s.io/shop-controller   shop-controller-7f9c_2b1e   90s

        NAME                                        CREATED AT
        role.rbac.authorization.k8s.io/pod-reader   {created}
    """)
    assert lines(kubectl("get", "rolebindings", "-n", "shop", "-o", "wide")) == table("""
        NAME      ROLE              AGE   USERS        GROUPS   SERVICEACCOUNTS
        readers   Role/pod-reader   90s   alice, bob   sre      shop/deployer
    """)
    assert lines(kubectl("get", "clusterrole/cluster-admin", "clusterrolebinding/cluster-admin", "-o", "wide")) == \
        table(f"""
        NAME                                                  CREATED AT
        clusterrole.rbac.authorization.k8s.io/cluster-admin   {created}

        NAME                                                         ROLE                        AGE   USERS   GROUPS           SERVICEACCOUNTS
        clusterrolebinding.rbac.authorization.k8s.io/cluster-admin   ClusterRole/cluster-admin   90s           system:masters
    """)
    assert lines(kubectl("get", "priorityclasses")) == table("""
        NAME                      VALUE        GLOBAL-DEFAULT   AGE   PREEMPTIONPOLICY
        batch-low                 -10          true             90s   Never
        system-cluster-critical   2000000000   false            90s   PreemptLowerPriority
        system-node-critical      2000001000   false            90s   PreemptLowerPriority
    """)
