"""Build ResourceSlices the way the NVIDIA DRA driver publishes them, for simulated scenarios.

A scenario names GPU models from the catalog; this module turns each GPU into the facts the
driver reads from NVML (UUIDs derived deterministically from the scenario) and lets
``drawb.gpu.driver`` apply the driver's rules: one pool per node named after the node, one
``gpu.nvidia.com`` slice per node holding every full GPU and static MIG device, and one
``compute-domain.nvidia.com`` slice per node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from drawb.cluster.sim.catalog import GpuModel, model
from drawb.gpu import driver
from drawb.gpu.driver import GPU_DRIVER, binary_si, name_suffix, normalize_version, stable_hex, stable_uuid

__all__ = [
    "COMPUTE_DOMAIN_DRIVER",
    "GPU_DRIVER",
    "Gpu",
    "GpuNode",
    "MigInstance",
    "binary_si",
    "compute_domain_slice",
    "full_gpu_device",
    "gpu_devices",
    "gpu_slice",
    "gpu_uuid",
    "mig_device",
    "name_suffix",
    "normalize_version",
    "stable_hex",
    "stable_uuid",
]

COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"


@dataclass(frozen=True)
class MigInstance:
    """A MIG device made on a GPU: its profile and where it is placed."""

    profile: str
    start: int


@dataclass(frozen=True)
class Gpu:
    """One physical GPU of a node; MIG-enabled when ``mig`` lists instances."""

    minor: int
    pci_bus_id: str
    pcie_root: str | None = None
    mig: tuple[MigInstance, ...] = ()


@dataclass(frozen=True)
class GpuNode:
    """A node with NVIDIA GPUs as a scenario describes it."""

    name: str
    model: str
    driver_version: str
    cuda_driver_version: str
    gpus: tuple[Gpu, ...]
    addressing_mode: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    pool_generation: int = 1

    @property
    def gpu_model(self) -> GpuModel:
        """The catalog entry of this node's GPUs."""
        return model(self.model)


def gpu_uuid(scenario: str, node: str, minor: int) -> str:
    """The UUID the scenario gives GPU ``minor`` of ``node``."""
    return stable_uuid("GPU", scenario, node, minor)


def _facts(scenario: str, node: GpuNode, gpu: Gpu) -> driver.GpuFacts:
    m = node.gpu_model
    return driver.GpuFacts(
        minor=gpu.minor,
        uuid=gpu_uuid(scenario, node.name, gpu.minor),
        product_name=m.product_name,
        brand=m.brand,
        architecture=m.architecture,
        compute_capability=m.compute_capability,
        driver_version=node.driver_version,
        cuda_driver_version=node.cuda_driver_version,
        pci_bus_id=gpu.pci_bus_id,
        memory_bytes=m.memory_mib * 1024 * 1024,
        pcie_root=gpu.pcie_root,
        addressing_mode=node.addressing_mode,
    )


def full_gpu_device(scenario: str, node: GpuNode, gpu: Gpu) -> dict:
    """The ``type: gpu`` device entry for a GPU without MIG."""
    return driver.full_gpu_device(_facts(scenario, node, gpu))


def mig_device(scenario: str, node: GpuNode, gpu: Gpu, instance: MigInstance) -> dict:
    """The ``type: mig`` device entry for one static MIG instance."""
    profile = node.gpu_model.mig_profile(instance.profile)
    uuid = stable_uuid("MIG", scenario, node.name, gpu.minor, profile.name, instance.start)
    return driver.mig_device(_facts(scenario, node, gpu), profile, instance.start, uuid)


def gpu_devices(scenario: str, node: GpuNode) -> list[dict]:
    """Every device the GPU driver publishes for ``node``: full GPUs and MIG devices."""
    devices: list[dict] = []
    for gpu in node.gpus:
        if gpu.mig:
            devices.extend(mig_device(scenario, node, gpu, inst) for inst in gpu.mig)
        else:
            devices.append(full_gpu_device(scenario, node, gpu))
    return devices


def _slice(scenario: str, driver_name: str, node_name: str, generation: int, devices: list[dict]) -> dict:
    return driver.resource_slice(
        driver_name,
        node_name,
        devices,
        generation=generation,
        name_suffix=name_suffix(scenario, driver_name, node_name),
        node_uid=stable_uuid("node", scenario, node_name)[5:],
    )


def gpu_slice(scenario: str, node: GpuNode) -> dict:
    """The node's ``gpu.nvidia.com`` ResourceSlice."""
    return _slice(scenario, GPU_DRIVER, node.name, node.pool_generation, gpu_devices(scenario, node))


def compute_domain_slice(scenario: str, node: GpuNode) -> dict:
    """The node's ``compute-domain.nvidia.com`` ResourceSlice (``channel-0`` and ``daemon-0``)."""
    devices = [
        {"name": "channel-0", "attributes": {"id": {"int": 0}, "type": {"string": "channel"}}},
        {"name": "daemon-0", "attributes": {"id": {"int": 0}, "type": {"string": "daemon"}}},
    ]
    return _slice(scenario, COMPUTE_DOMAIN_DRIVER, node.name, 1, devices)
