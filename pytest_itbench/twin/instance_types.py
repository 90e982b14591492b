"""The instance types nodes of the twin's node groups can have: AWS-like names, their capacity, and what a
kubelet on them leaves allocatable.

Capacity only: what an instance costs is the pricing model's business (it prices node capacity per core-hour
and GB-hour). The figures are those of the EC2 instance types of the same name: vCPUs and memory as sold, and
the pods a node may run as the AWS VPC CNI limits them (the number of ENIs times their IPs), which is what an
EKS node reports as ``pods`` capacity.

Allocatable follows the EKS-optimised AMI's kubelet defaults, so a node's allocatable is a little less than
its capacity as on a real cluster: kube-reserved memory of 255Mi plus 11Mi per pod the node may run, a CPU
reservation of 6% of the first core, 1% of the second, 0.5% of the third and fourth and 0.25% of the rest, an
eviction threshold of 100Mi of memory; for ephemeral storage 1Gi reserved and the 10% ``nodefs.available``
eviction threshold, on the 20 GiB root volume of a managed node group.
"""

from __future__ import annotations

from dataclasses import dataclass

KI = 1024
MI = 1024 * KI
GI = 1024 * MI
ROOT_VOLUME = 20 * GI
EVICTION_MEMORY = 100 * MI
RESERVED_EPHEMERAL = 1 * GI
EVICTION_NODEFS_FRACTION = 0.10


@dataclass(frozen=True)
class InstanceType:
    name: str
    cpu: int  # vCPUs
    memory_gib: int
    max_pods: int  # the VPC CNI's per-instance-type limit

    def capacity(self) -> dict[str, str]:
        """``status.capacity`` of a node of this type."""
        return {
            "cpu": str(self.cpu),
            "ephemeral-storage": f"{ROOT_VOLUME // KI}Ki",
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": f"{self.memory_gib * GI // KI}Ki",
            "pods": str(self.max_pods),
        }

    def allocatable(self) -> dict[str, str]:
        """``status.allocatable``: capacity less the kubelet's reservations and eviction thresholds."""
        memory = self.memory_gib * GI - (255 * MI + 11 * MI * self.max_pods) - EVICTION_MEMORY
        ephemeral = int(ROOT_VOLUME * (1 - EVICTION_NODEFS_FRACTION)) - RESERVED_EPHEMERAL
        return {
            "cpu": f"{self.cpu * 1000 - reserved_millicores(self.cpu)}m",
            "ephemeral-storage": str(ephemeral),
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": f"{memory // KI}Ki",
            "pods": str(self.max_pods),
        }


def reserved_millicores(cores: int) -> int:
    """The EKS AMI's CPU reservation, in millicores (fractions of a millicore rounded down, as it does)."""
    reserved = 0.0
    for core in range(cores):
        reserved += 60 if core == 0 else 10 if core == 1 else 5 if core < 4 else 2.5
    return int(reserved)


CATALOG: dict[str, InstanceType] = {t.name: t for t in (
    InstanceType("m5.large", 2, 8, 29),
    InstanceType("m5.xlarge", 4, 16, 58),
    InstanceType("m5.2xlarge", 8, 32, 58),
    InstanceType("m5.4xlarge", 16, 64, 234),
    InstanceType("c5.large", 2, 4, 29),
    InstanceType("c5.xlarge", 4, 8, 58),
    InstanceType("r5.large", 2, 16, 29),
    InstanceType("r5.xlarge", 4, 32, 58),
)}


def lookup(name: str) -> InstanceType | None:
    return CATALOG.get(name)


__all__ = ["CATALOG", "InstanceType", "lookup", "reserved_millicores"]
