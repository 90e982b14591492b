"""What OpenCost's custom provider makes of the cluster's assets: nodes, PersistentVolumes, load balancers.

A node is priced from its ``status.capacity``, as OpenCost's ``GetNodeCost`` does: whole vCPUs (a quantity
rounded up, as ``Quantity.Value()``), memory bytes, and ``nvidia.com/gpu``. Its hourly cost is
``cores x CPU + GiB x RAM + GPUs x GPU``, with the spot prices when the pricing's ``spotLabel`` is set and the
node carries that label with ``spotLabelValue``. The instance type, region and architecture come from the
well-known node labels (stable name first, then the beta one), the provider ID from ``spec.providerID``.

A PersistentVolume costs the ``storage`` price per GiB-hour whatever its phase but ``Failed``: an unclaimed,
Released volume kept by ``persistentVolumeReclaimPolicy: Retain`` is still a disk someone pays for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ... import quantity
from .pricing import CustomPricing

GIB = 1024 ** 3
GPU_RESOURCE = "nvidia.com/gpu"

_INSTANCE_TYPE = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_REGION = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
_ARCH = ("kubernetes.io/arch", "beta.kubernetes.io/arch")


@dataclass(frozen=True)
class NodePrice:
    name: str
    uid: str
    instance_type: str
    region: str
    provider_id: str
    arch: str
    cpu_cores: float
    ram_bytes: float
    gpus: float
    spot: bool
    cpu_hourly: float  # per vCPU-hour
    ram_hourly: float  # per GiB-hour
    gpu_hourly: float  # per GPU-hour (0 on a node without GPUs)

    @property
    def total_hourly(self) -> float:
        return self.cpu_cores * self.cpu_hourly + self.ram_bytes / GIB * self.ram_hourly + self.gpus * self.gpu_hourly


def node_price(node: dict, pricing: CustomPricing) -> NodePrice:
    meta, capacity = node["metadata"], (node.get("status") or {}).get("capacity") or {}
    labels = meta.get("labels") or {}
    spot = bool(pricing.spot_label) and labels.get(pricing.spot_label, "") != "" \
        and labels.get(pricing.spot_label) == pricing.spot_label_value
    gpus = _amount(capacity.get(GPU_RESOURCE))
    return NodePrice(
        name=meta["name"], uid=meta.get("uid", ""), instance_type=_first(labels, _INSTANCE_TYPE),
        region=_first(labels, _REGION), provider_id=(node.get("spec") or {}).get("providerID", ""),
        arch=_first(labels, _ARCH), cpu_cores=float(math.ceil(_amount(capacity.get("cpu")))),
        ram_bytes=float(math.ceil(_amount(capacity.get("memory")))), gpus=gpus, spot=spot,
        cpu_hourly=pricing.spot_cpu if spot else pricing.cpu,
        ram_hourly=pricing.spot_ram if spot else pricing.ram,
        gpu_hourly=pricing.gpu if gpus > 0 else 0.0)


def pv_hourly_per_gib(volume: dict, pricing: CustomPricing) -> float | None:
    """A volume's price per GiB-hour, or None for a Failed volume (OpenCost leaves those out)."""
    if ((volume.get("status") or {}).get("phase")) == "Failed":
        return None
    return pricing.storage


def pv_capacity_bytes(volume: dict) -> float:
    return _amount((((volume.get("spec") or {}).get("capacity")) or {}).get("storage"))


def _first(labels: dict, names: tuple[str, ...]) -> str:
    for name in names:
        if name in labels:
            return labels[name]
    return ""


def _amount(text) -> float:
    if text is None:
        return 0.0
    try:
        return float(quantity.value(text))
    except (ValueError, ArithmeticError):
        return 0.0
