"""Settled application twins for the fault tests, driven through the official client as the harness drives them.

Each test injects its fault through the API, warps a minute at a time until the fault's expected alerts fire (the
shipped rules' ``for`` plus the time the fault needs to take hold, bounded), removes the fault, and warps until no
alert of the application's namespace is pending or firing. A twin is shared by a module's tests: each test leaves it
as it found it, and checks that it starts clean.
"""

from __future__ import annotations

from kubernetes import config

from pytest_itbench.apps.catalog import application
from pytest_itbench.faults import FaultRecord, get
from pytest_itbench.scenario.schema import ObjectRef
from pytest_itbench.twin import Twin

START = 1_700_000_000
SETTLE = 180 + 300  # every workload serving, then five healthy minutes to fill the rules' rate windows


class AppTwin:
    def __init__(self, app: str, namespace: str, workdir):
        self.namespace = namespace
        self.twin = Twin(seed=7, nodes=3, start_time=START, telemetry=True).start()
        docs = application(app).documents()
        for doc in docs:  # the waits of init containers only slow the start; the tests are about the faults
            if doc["kind"] == "Deployment":
                doc["spec"]["template"]["spec"].pop("initContainers", None)
        for doc in sorted(docs, key=lambda d: d["kind"] != "Namespace"):
            res = self.twin.api.catalog.for_api_version(doc["apiVersion"], doc["kind"])
            self.twin.api.create(res, doc["metadata"].get("namespace") or namespace, doc, self.twin.admin_ctx)
        self.twin.warp(SETTLE)
        self.api = config.new_client_from_config(self.twin.write_kubeconfig(workdir / "kubeconfig"))

    def alerts(self, state: str | None = None) -> set[tuple[str, str]]:
        """(alertname, the service, Deployment of the pod, or autoscaler it is about) of the namespace's ALERTS series."""
        selector = f'namespace="{self.namespace}", severity!="info"' + (f', alertstate="{state}"' if state else "")
        result = self.twin.monitoring.engine.instant_query(f"ALERTS{{{selector}}}", self.twin.clock.now()).value
        metrics = [s["metric"] for s in result.to_json()]
        return {(m["alertname"],
                 m.get("service_name") or m.get("horizontalpodautoscaler") or _owner(m.get("pod", "")))
                for m in metrics}

    def inject(self, fault: str, target: dict, **args) -> FaultRecord:
        ref = ObjectRef(**target)
        f = get(fault)
        record = FaultRecord(fault, ref, f.check(ref, args))
        f.inject(self.api, record)
        saved = repr(record.saved)
        f.inject(self.api, record)  # idempotent: a second injection changes nothing it saved
        assert repr(record.saved) == saved, f"{fault}: a second inject changed what remove restores"
        return record

    def remove(self, record: FaultRecord) -> None:
        get(record.fault).remove(self.api, record)
        get(record.fault).remove(self.api, record)  # idempotent

    def warp_until_firing(self, wanted: set[tuple[str, str]], within_minutes: int) -> int:
        """Warp a minute at a time until every ``wanted`` alert fires; the minutes it took."""
        for minute in range(1, within_minutes + 1):
            self.twin.warp(60)
            if wanted <= self.alerts("firing"):
                return minute
        raise AssertionError(f"within {within_minutes} min, {sorted(wanted - self.alerts('firing'))} did not fire; "
                             f"firing: {sorted(self.alerts('firing'))}")

    def warp_until_clear(self, within_minutes: int) -> int:
        for minute in range(1, within_minutes + 1):
            self.twin.warp(60)
            if not self.alerts():
                return minute
        raise AssertionError(f"{within_minutes} min after the fault was removed, still pending or firing: "
                             f"{sorted(self.alerts())}")

    def stop(self) -> None:
        self.twin.stop()


def _owner(pod: str) -> str:
    """A Deployment's pod by its Deployment's name (the ReplicaSet's hash and the pod's suffix dropped)."""
    return pod.rsplit("-", 2)[0] if pod.count("-") >= 2 else pod


def check_fault(app: AppTwin, fault: str, target: dict, expected: set[tuple[str, str]], *, fire_within: int = 12,
                clear_within: int = 10, **args) -> FaultRecord:
    """Inject, see ``expected`` fire (and each alert name the fault declares among them), remove, see all clear."""
    assert not app.alerts(), f"the twin is not clean before {fault}: {sorted(app.alerts())}"
    declared = set(get(fault).expected_alerts)
    assert declared <= {name for name, _ in expected}, f"{fault} declares {declared}; the test expects {expected}"
    record = app.inject(fault, target, **args)
    minutes = app.warp_until_firing(expected, fire_within)
    assert minutes >= 3, f"{fault}: {expected} fired after {minutes} min, before the rules' `for` could elapse"
    app.remove(record)
    app.warp_until_clear(clear_within)
    return record
