"""Build ResourceSlices the way the NVIDIA DRA driver publishes them.

The rules (names, attributes, capacities, normalisation) are those of driver v0.4.x with its
default feature gates, described with sources in ../shared/research/nvidia-dra-driver.md:
one pool per node named after the node, one ``gpu.nvidia.com`` slice per node holding every
full GPU and static MIG device, and one ``compute-domain.nvidia.com`` slice per node.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from drawb.cluster.sim.catalog import GpuModel, model

GPU_DRIVER = "gpu.nvidia.com"
COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # what generateName draws suffixes from


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


def stable_hex(*parts: object, length: int = 32) -> str:
    """A deterministic hex string derived from ``parts``."""
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()[:length]


def stable_uuid(prefix: str, *parts: object) -> str:
    """A deterministic NVML-style UUID such as ``GPU-5c1e8bc8-d661-19a0-6324-880d939e975d``."""
    h = stable_hex(*parts)
    return f"{prefix}-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def name_suffix(*parts: object) -> str:
    """A deterministic 5-character suffix drawn from generateName's alphabet."""
    digest = hashlib.sha1("/".join(map(str, parts)).encode()).digest()
    return "".join(_NAME_ALPHABET[b % len(_NAME_ALPHABET)] for b in digest[:5])


def normalize_version(text: str) -> str:
    """Driver-side semver normalisation: ``580.95.05`` -> ``580.95.5``, ``9.0`` -> ``9.0.0``."""
    parts = [str(int(p)) for p in text.split(".")]
    while len(parts) < 3:
        parts.append("0")
    return ".".join(parts[:3])


def binary_si(mib: int) -> str:
    """``mib`` MiB written as Kubernetes writes a BinarySI quantity (``40960`` -> ``40Gi``)."""
    value, suffixes = mib, ["Mi", "Gi", "Ti", "Pi", "Ei"]
    suffix = suffixes.pop(0)
    while value % 1024 == 0 and suffixes and value:
        value, suffix = value // 1024, suffixes.pop(0)
    return f"{value}{suffix}"


def _common_attributes(node: GpuNode, gpu: Gpu) -> dict[str, dict]:
    m = node.gpu_model
    attrs = {
        "architecture": {"string": m.architecture},
        "brand": {"string": m.brand},
        "cudaComputeCapability": {"version": normalize_version(m.compute_capability)},
        "cudaDriverVersion": {"version": normalize_version(node.cuda_driver_version)},
        "driverVersion": {"version": normalize_version(node.driver_version)},
        "productName": {"string": m.product_name},
        "resource.kubernetes.io/pciBusID": {"string": gpu.pci_bus_id},
    }
    if gpu.pcie_root:
        attrs["resource.kubernetes.io/pcieRoot"] = {"string": gpu.pcie_root}
    if node.addressing_mode:
        attrs["addressingMode"] = {"string": node.addressing_mode}
    return attrs


def gpu_uuid(scenario: str, node: str, minor: int) -> str:
    """The UUID the scenario gives GPU ``minor`` of ``node``."""
    return stable_uuid("GPU", scenario, node, minor)


def full_gpu_device(scenario: str, node: GpuNode, gpu: Gpu) -> dict:
    """The ``type: gpu`` device entry for a GPU without MIG."""
    attrs = _common_attributes(node, gpu)
    attrs["type"] = {"string": "gpu"}
    attrs["uuid"] = {"string": gpu_uuid(scenario, node.name, gpu.minor)}
    return {
        "name": f"gpu-{gpu.minor}",
        "attributes": dict(sorted(attrs.items())),
        "capacity": {"memory": {"value": binary_si(node.gpu_model.memory_mib)}},
    }


def mig_device(scenario: str, node: GpuNode, gpu: Gpu, instance: MigInstance) -> dict:
    """The ``type: mig`` device entry for one static MIG instance."""
    profile = node.gpu_model.mig_profile(instance.profile)
    attrs = _common_attributes(node, gpu)
    attrs["type"] = {"string": "mig"}
    attrs["profile"] = {"string": profile.name}
    attrs["parentUUID"] = {"string": gpu_uuid(scenario, node.name, gpu.minor)}
    attrs["uuid"] = {"string": stable_uuid("MIG", scenario, node.name, gpu.minor, profile.name, instance.start)}
    capacity = {
        "copyEngines": {"value": str(profile.copy_engines)},
        "decoders": {"value": str(profile.decoders)},
        "encoders": {"value": str(profile.encoders)},
        "jpegEngines": {"value": str(profile.jpeg_engines)},
        "memory": {"value": binary_si(profile.memory_mib)},
        "multiprocessors": {"value": str(profile.multiprocessors)},
        "ofaEngines": {"value": str(profile.ofa_engines)},
    }
    for memory_slice in range(instance.start, instance.start + profile.memory_slices):
        capacity[f"memorySlice{memory_slice}"] = {"value": "1"}
    short = profile.name.replace(".", "")
    return {
        "name": f"gpu-{gpu.minor}-mig-{short}-{profile.gi_profile_id}-{instance.start}",
        "attributes": dict(sorted(attrs.items())),
        "capacity": dict(sorted(capacity.items())),
    }


def gpu_devices(scenario: str, node: GpuNode) -> list[dict]:
    """Every device the GPU driver publishes for ``node``: full GPUs and MIG devices."""
    devices: list[dict] = []
    for gpu in node.gpus:
        if gpu.mig:
            devices.extend(mig_device(scenario, node, gpu, inst) for inst in gpu.mig)
        else:
            devices.append(full_gpu_device(scenario, node, gpu))
    return devices


def _slice(scenario: str, driver: str, node_name: str, generation: int, devices: list[dict]) -> dict:
    generate_name = f"00000-{driver}-{node_name}-"
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "name": generate_name + name_suffix(scenario, driver, node_name),
            "generateName": generate_name,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": node_name,
                    "uid": stable_uuid("node", scenario, node_name)[5:],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "driver": driver,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
            "nodeName": node_name,
            "devices": devices,
        },
    }


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
