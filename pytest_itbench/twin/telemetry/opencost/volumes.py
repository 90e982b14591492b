"""One window's volume and load-balancer costs, as OpenCost's allocation model attributes them.

- A PersistentVolume costs its average ``pv_hourly_cost`` (per GiB-hour) times its size in GiB times the hours
  it existed (``kube_persistentvolume_capacity_bytes`` at the window's resolution).
- A claim mounted by pods (``pod_pvc_allocation``) is charged to them: each pod's share of the claim's time is
  split evenly among the pods mounting it at once, and its cost is ``price x GiB requested x the pod's hours x
  share``, divided among the pod's containers. What no pod covered goes to ``<namespace>-unmounted-pvcs``.
- A claim no pod mounted is charged whole (the volume's size and hours) to its namespace's
  ``<namespace>-unmounted-pvcs`` pod, container ``__unmounted__``.
- A volume no claim refers to (Released after its claim was deleted, or never claimed) is charged to the
  cluster's ``__unmounted__`` pod in namespace ``__unmounted__``: an orphaned disk still costs money.
- A LoadBalancer Service with an ingress address costs its hourly price over the hours it existed (plus one
  resolution, OpenCost's interpolation), split among the allocations behind the Service by the hours they
  overlapped it, or charged to ``__unmounted__`` when none did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import queries as q
from .assets import GIB
from .containers import Pod, Pods
from .model import UNMOUNTED, Allocation, PVAllocation, pv_key
from .queries import Step


@dataclass
class _Volume:
    name: str
    start: float = 0.0
    end: float = 0.0
    bytes: float = 0.0
    cost_per_gib_hour: float = 0.0
    provider_id: str = ""

    @property
    def hours(self) -> float:
        return max(0.0, self.end - self.start) / 3600.0


@dataclass
class _Claim:
    namespace: str
    name: str
    volume: _Volume
    start: float
    end: float
    bytes: float = 0.0
    mounted: bool = False
    pods: list[tuple[str, str]] = field(default_factory=list)


def apply_volumes(step: Step, pods: Pods) -> None:
    volumes = _volumes(step)
    claims = _claims(step, volumes)
    for r in step.vector(q.POD_PVC_ALLOCATION):
        claim = claims.get((r.labels.get("namespace", ""), r.labels.get("persistentvolumeclaim", "")))
        pod = pods.get((r.labels.get("namespace", ""), r.labels.get("pod", "")))
        if claim is None or r.labels.get("persistentvolume") not in volumes or pod is None or not pod.allocations:
            continue
        claim.mounted = True
        claim.pods.append((pod.namespace, pod.name))
    for claim in claims.values():
        if claim.pods:
            _charge_mounted(step, pods, claim)
        else:
            _charge(_unmounted_pod(step, pods, claim.namespace, f"{claim.namespace}-unmounted-pvcs"),
                    claim.volume, claim.volume.bytes, claim.volume.hours, claim.volume.bytes * claim.volume.hours)
    claimed = {id(claim.volume) for claim in claims.values()}
    for volume in volumes.values():
        if id(volume) not in claimed:
            _charge(_unmounted_pod(step, pods, UNMOUNTED, UNMOUNTED), volume, volume.bytes, volume.hours,
                    volume.bytes * volume.hours)


def _volumes(step: Step) -> dict[str, _Volume]:
    volumes: dict[str, _Volume] = {}
    for span in step.intervals(q.PV_ACTIVE):
        name = span.labels.get("persistentvolume", "")
        volumes[name] = _Volume(name, span.start, span.end)
    for r in step.vector(q.PV_COST_PER_GIB_HOUR):
        name = r.labels.get("volumename", "")
        volumes.setdefault(name, _Volume(name)).cost_per_gib_hour = r.value
    for r in step.vector(q.PV_BYTES):
        if r.labels.get("persistentvolume", "") in volumes:
            volumes[r.labels["persistentvolume"]].bytes = r.value
    for r in step.vector(q.PV_META):
        if r.labels.get("persistentvolume", "") in volumes:
            volumes[r.labels["persistentvolume"]].provider_id = r.labels.get("provider_id", "")
    return volumes


def _claims(step: Step, volumes: dict[str, _Volume]) -> dict[tuple[str, str], _Claim]:
    claims: dict[tuple[str, str], _Claim] = {}
    for span in step.intervals(q.PVC_INFO):
        volume = volumes.get(span.labels.get("volumename", ""))
        if volume is None:
            continue  # a claim whose volume OpenCost knows nothing of costs nothing
        key = (span.labels.get("namespace", ""), span.labels.get("persistentvolumeclaim", ""))
        claims[key] = _Claim(key[0], key[1], volume, span.start, span.end)
    for r in step.vector(q.PVC_BYTES):
        key = (r.labels.get("namespace", ""), r.labels.get("persistentvolumeclaim", ""))
        if key in claims:
            claims[key].bytes = r.value
    return claims


def _charge_mounted(step: Step, pods: Pods, claim: _Claim) -> None:
    """Split a claim among the pods mounting it, by time shared (OpenCost's PVC cost coefficients)."""
    windows = {}
    for key in claim.pods:
        pod = pods[key]
        windows[key] = (max(pod.start, claim.start), min(pod.end, claim.end))
    for key, coefficient in _coefficients(windows, claim).items():
        pod = pods.get(key) if key is not None else None
        if pod is None or not pod.allocations:
            pod = _unmounted_pod(step, pods, claim.namespace, f"{claim.namespace}-unmounted-pvcs")
        count = len(pod.allocations)
        _charge(pod, claim.volume, claim.bytes, pod.hours, claim.bytes * pod.hours, share=coefficient / count)


def _coefficients(windows: dict, claim: _Claim) -> dict:
    """Each pod's share of the claim's window: every stretch of time split evenly among the pods then mounting
    it; the stretches no pod covered under ``None`` (the unmounted share)."""
    duration = claim.end - claim.start
    if duration <= 0:
        return {}
    points = sorted([(s, 0, key) for key, (s, _) in windows.items()] + [(e, 1, key) for key, (_, e) in windows.items()],
                    key=lambda p: (p[0], p[1]))
    shares: dict = {}
    active: set = set()
    current = claim.start
    for time, kind, key in points:
        if time != current:
            span = (time - current) / duration
            for pod in active:
                shares[pod] = shares.get(pod, 0.0) + span / len(active)
            if not active:
                shares[None] = shares.get(None, 0.0) + span
        if kind == 0:
            active.add(key)
        else:
            active.discard(key)
        current = time
    if current < claim.end:
        shares[None] = shares.get(None, 0.0) + (claim.end - current) / duration
    return shares


def _charge(pod: Pod, volume: _Volume, size: float, hours: float, byte_hours: float, *, share: float = 1.0) -> None:
    cost = volume.cost_per_gib_hour * size / GIB * hours * share
    key = pv_key(q.CLUSTER, volume.name)
    for alloc in pod.allocations.values():
        pv = alloc.pvs.setdefault(key, PVAllocation(provider_id=volume.provider_id))
        pv.byte_hours += byte_hours * share
        pv.cost += cost


def _unmounted_pod(step: Step, pods: Pods, namespace: str, name: str) -> Pod:
    """The stand-in pod that collects unmounted costs (its one container is ``__unmounted__``, on no node)."""
    key = (namespace, name)
    pod = pods.get(key)
    if pod is None:
        pod = pods[key] = Pod(namespace, name, step.start, step.end, (step.start, step.end))
    pod.container(UNMOUNTED)
    return pod


def apply_load_balancers(step: Step, pods: Pods, by_service: dict[tuple[str, str], list[Allocation]]) -> None:
    active = {(s.labels.get("namespace", ""), s.labels.get("service_name", "")): s for s in step.intervals(q.LB_ACTIVE)}
    for r in step.vector(q.LB_COST_PER_HOUR):
        key = (r.labels.get("namespace", ""), r.labels.get("service_name", ""))
        span = active.get(key)
        if span is None or not r.labels.get("ingress_ip"):
            continue  # only a provisioned load balancer (one with an address) is charged
        hours = (span.end - span.start) / 3600.0
        if hours <= 0:
            continue
        # OpenCost interpolates one resolution of missing data: cost x (hours + resolution) / hours ...
        total = r.value * (hours + step.resolution / 3600.0)
        end = span.end + step.resolution  # ... and stretches the end to match
        overlaps = {}
        for alloc in by_service.get(key, ()):
            overlap = (min(end, alloc.end) - max(span.start, alloc.start)) / 3600.0
            if overlap > 0:
                overlaps[id(alloc)] = (alloc, overlap)
        if not overlaps:
            stand_in = _unmounted_pod(step, pods, UNMOUNTED, UNMOUNTED).allocations[UNMOUNTED]
            stand_in.load_balancer_cost += total
            stand_in.properties.services = sorted({*stand_in.properties.services, key[1]})
            continue
        covered = sum(hours for _, hours in overlaps.values())
        for alloc, overlap in overlaps.values():
            alloc.load_balancer_cost += total * overlap / covered
