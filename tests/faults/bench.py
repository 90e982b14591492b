"""A settled application on a serving twin, faults injected through the official client, and the alerts they raise.

One twin serves several faults in turn (each removed and its alerts cleared before the next), which keeps the
module's wall time small; the checks after each removal make a fault that leaves anything behind fail the next.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubernetes import client as k8s, config

from pytest_itbench.apps.catalog import application
from pytest_itbench.faults import FaultRecord, get
from pytest_itbench.scenario.schema import ObjectRef
from pytest_itbench.twin import Twin

START = 1_700_000_000
STEP = 30.0  # one rule evaluation


@dataclass
class Bench:
    twin: Twin
    api: k8s.ApiClient
    namespace: str
    log: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, app: str, tmp_path, seed: int = 11, settle: float = 420.0) -> "Bench":
        twin = Twin(seed=seed, nodes=3, start_time=START).start()
        docs = application(app).documents()
        namespace = next(d["metadata"]["name"] for d in docs if d["kind"] == "Namespace")
        for doc in docs:
            res = twin.api.catalog.for_api_version(doc["apiVersion"], doc["kind"])
            twin.api.create(res, doc["metadata"].get("namespace") or namespace, doc, twin.admin_ctx)
        twin.warp(settle)
        configuration = k8s.Configuration()
        config.load_kube_config(config_file=twin.write_kubeconfig(tmp_path / "kubeconfig"),
                                client_configuration=configuration)
        bench = cls(twin, k8s.ApiClient(configuration), namespace)
        assert bench.alerts() == [], f"{app} is not healthy before any fault: {bench.alerts()}"
        return bench

    def close(self) -> None:
        self.api.close()
        self.twin.stop()

    # ---- faults ----
    def inject(self, fault: str, name: str, kind: str = "Deployment", **args) -> FaultRecord:
        target = ObjectRef(kind=kind, namespace=self.namespace, name=name)
        f = get(fault)
        record = FaultRecord(fault, target, f.check(target, args))
        f.inject(self.api, record)
        saved = dict(record.saved)
        f.inject(self.api, record)  # idempotent: a second injection changes nothing it saved
        assert record.saved == saved, f"{fault}: a second injection changed what remove needs"
        return record

    def remove(self, record: FaultRecord) -> None:
        f = get(record.fault)
        f.remove(self.api, record)
        f.remove(self.api, record)  # idempotent too

    # ---- alerts ----
    def alerts(self, state: str | None = None) -> list[dict[str, str]]:
        selector = f'namespace="{self.namespace}", severity!="info"' + (f', alertstate="{state}"' if state else "")
        result = self.twin.monitoring.engine.instant_query(f"ALERTS{{{selector}}}", self.twin.clock.now()).value
        return [s["metric"] for s in result.to_json()]

    def firing(self, alert: str, workload: str | None = None) -> list[dict[str, str]]:
        """Firing ``alert`` series; with ``workload``, those about its pods (or, for service alerts, any)."""
        return [a for a in self.alerts("firing") if a["alertname"] == alert
                and (workload is None or "pod" not in a or a["pod"].startswith(f"{workload}-"))]

    def until_firing(self, alerts: tuple[str, ...], workload: str, within: float = 900.0) -> float:
        """Warp an evaluation at a time until every alert fires about ``workload``; the simulated seconds taken."""
        begun = self.twin.clock.now()
        while any(not self.firing(a, workload) for a in alerts):
            assert self.twin.clock.now() - begun < within, (
                f"{[a for a in alerts if not self.firing(a, workload)]} not firing about {workload} "
                f"{within:.0f}s after the fault; ALERTS: {self.alerts()}")
            self.twin.warp(STEP)
        return self.twin.clock.now() - begun

    def until_clear(self, within: float = 900.0) -> float:
        """Warp until nothing is pending or firing in the namespace."""
        begun = self.twin.clock.now()
        while self.alerts():
            assert self.twin.clock.now() - begun < within, \
                f"alerts still active {within:.0f}s after the fault was removed: {self.alerts()}"
            self.twin.warp(STEP)
        return self.twin.clock.now() - begun

    # ---- state ----
    def pods(self, workload: str, label: str) -> list[dict]:
        listed = k8s.CoreV1Api(self.api).list_namespaced_pod(self.namespace, label_selector=f"{label}={workload}")
        return [self.api.sanitize_for_serialization(p) for p in listed.items if not p.metadata.deletion_timestamp]

    def deployment(self, name: str) -> dict:
        return self.api.sanitize_for_serialization(k8s.AppsV1Api(self.api).read_namespaced_deployment(
            name, self.namespace))
