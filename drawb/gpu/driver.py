"""What the NVIDIA DRA driver publishes for a GPU: device names, attributes, capacities, slices.

The rules are those of one ``gpu.nvidia.com`` driver release (``drawb.gpu.releases``; v0.4.x unless
another is named) with its default feature gates (../shared/research/nvidia-dra-driver.md has the
sources): a full GPU is ``gpu-<minor>``, a static MIG device is named in the release's form,
versions are semver-normalised and capacities are BinarySI quantities. Both the simulated
cluster's scenarios and ``%dra local`` (this machine's GPUs read through NVML) build their
devices here, from plain facts.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

from drawb.gpu.releases import DEFAULT_RELEASE, DOMAIN, OLD_MIG_NAME, RELEASES, DriverRelease

GPU_DRIVER = "gpu.nvidia.com"
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # what generateName draws suffixes from
_BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$")


@dataclass(frozen=True)
class GpuFacts:
    """What the driver reads from NVML (and sysfs) for one physical GPU."""

    minor: int
    uuid: str
    product_name: str
    brand: str
    architecture: str
    compute_capability: str  # "9.0"
    driver_version: str  # "580.159.04"
    cuda_driver_version: str  # "13.0"
    pci_bus_id: str  # "0000:00:06.0"
    memory_bytes: int | None  # None when NVML says NOT_SUPPORTED: no memory capacity then
    pcie_root: str | None = None
    addressing_mode: str | None = None
    numa_node: int | None = None  # None where sysfs does not say


@dataclass(frozen=True)
class MigProfile:
    """One MIG GPU-instance profile: its go-nvlib name, NVML profile ID and what it holds."""

    name: str
    gi_profile_id: int
    multiprocessors: int
    copy_engines: int
    decoders: int
    encoders: int
    jpeg_engines: int
    ofa_engines: int
    memory_mib: int
    memory_slices: int


def stable_hex(*parts: object, length: int = 32) -> str:
    """A deterministic hex string derived from ``parts``."""
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()[:length]


def stable_uuid(prefix: str, *parts: object) -> str:
    """A deterministic NVML-style UUID such as ``GPU-5c1e8bc8-d661-19a0-6324-880d939e975d``."""
    h = hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()  # stable_hex, inlined: a scenario makes 100,000s
    return f"{prefix}-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


# byte -> a character of generateName's alphabet (the byte modulo its length)
_SUFFIX_TABLE = bytes(ord(_NAME_ALPHABET[b % len(_NAME_ALPHABET)]) for b in range(256))


def name_suffix(*parts: object) -> str:
    """A deterministic 5-character suffix drawn from generateName's alphabet."""
    return hashlib.sha1("/".join(map(str, parts)).encode()).digest()[:5].translate(_SUFFIX_TABLE).decode()


@lru_cache(maxsize=4096)
def normalize_version(text: str) -> str:
    """Driver-side semver normalisation: ``580.95.05`` -> ``580.95.5``, ``9.0`` -> ``9.0.0``."""
    parts = [str(int(p)) for p in text.split(".")]
    while len(parts) < 3:
        parts.append("0")
    return ".".join(parts[:3])


def cuda_driver_version(value: int) -> str:
    """NVML's CUDA driver version integer as the driver writes it: ``13000`` -> ``13.0``."""
    return f"{value // 1000}.{value % 1000 // 10}"


@lru_cache(maxsize=4096)
def bytes_quantity(value: int) -> str:
    """``value`` bytes as Kubernetes canonicalises a BinarySI quantity (``150754820096`` -> ``143771Mi``)."""
    suffixes = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
    suffix = suffixes.pop(0)
    if abs(value) < 1024:
        return str(value)
    while value % 1024 == 0 and suffixes and value:
        value, suffix = value // 1024, suffixes.pop(0)
    return f"{value}{suffix}"


def binary_si(mib: int) -> str:
    """``mib`` MiB written as Kubernetes writes a BinarySI quantity (``40960`` -> ``40Gi``)."""
    return bytes_quantity(mib * 1024 * 1024)


def pci_bus_id(nvml_bus_id: str) -> str:
    """NVML's bus ID as go-nvlib and the DRA library give it: lower case, 4-digit domain."""
    text = nvml_bus_id.strip().lower()
    if re.match(r"^0{4}[0-9a-f]{4}:", text):
        text = text[4:]
    if not _BDF.match(text):
        raise ValueError(f"PCI bus ID {nvml_bus_id!r} is not in the DDDD:BB:DD.F form the driver requires")
    return text


def pcie_root(sysfs_link: str | None, bus_id: str) -> str | None:
    """The PCIe root (``pci0000:00``) from the target of ``/sys/bus/pci/devices/<bus_id>``, if it resolves."""
    if not sysfs_link:
        return None
    parts = [p for p in sysfs_link.split("/") if p not in ("", ".", "..")]
    if "devices" not in parts or parts[-1] != bus_id:
        return None
    after = parts[parts.index("devices") + 1 :]
    return after[0] if after and after[0].startswith("pci") else None


def _key(attribute: str) -> str:
    """How a slice writes an attribute: bare in the driver's own domain, else qualified."""
    return attribute.removeprefix(f"{DOMAIN}/")


def _common_attributes(gpu: GpuFacts, release: DriverRelease) -> dict[str, dict]:
    attrs = {
        "architecture": {"string": gpu.architecture},
        "brand": {"string": gpu.brand},
        "cudaComputeCapability": {"version": normalize_version(gpu.compute_capability)},
        "cudaDriverVersion": {"version": normalize_version(gpu.cuda_driver_version)},
        "driverVersion": {"version": normalize_version(gpu.driver_version)},
        "productName": {"string": gpu.product_name},
        _key(release.pci_attribute): {"string": gpu.pci_bus_id},
    }
    if gpu.pcie_root:
        attrs["resource.kubernetes.io/pcieRoot"] = {"string": gpu.pcie_root}
    if gpu.addressing_mode and f"{DOMAIN}/addressingMode" in release.gpu_attributes:
        attrs["addressingMode"] = {"string": gpu.addressing_mode}
    if gpu.numa_node is not None and "resource.kubernetes.io/numaNode" in release.gpu_attributes:
        attrs["resource.kubernetes.io/numaNode"] = {"int": gpu.numa_node}
    return attrs


def full_gpu_device(gpu: GpuFacts, release: DriverRelease = RELEASES[DEFAULT_RELEASE]) -> dict:
    """The ``type: gpu`` device entry of a GPU without MIG, as ``release`` publishes it."""
    attrs = _common_attributes(gpu, release)
    attrs["type"] = {"string": "gpu"}
    attrs["uuid"] = {"string": gpu.uuid}
    if f"{DOMAIN}/index" in release.gpu_attributes:  # v25.3: the NVML index (drawb takes the minor) and the minor
        attrs["index"] = {"int": gpu.minor}
        attrs["minor"] = {"int": gpu.minor}
    device = {"name": f"gpu-{gpu.minor}", "attributes": dict(sorted(attrs.items()))}
    if gpu.memory_bytes is not None:
        device["capacity"] = {"memory": {"value": bytes_quantity(gpu.memory_bytes)}}
    return device


def mig_device_name(minor: int, profile: str, gi_profile_id: int, start: int) -> str:
    """``gpu-0-mig-1g18gb-19-3``: parent minor, profile without dots, GI profile ID, placement start.

    The profile is made RFC 1123 compliant as the driver does: ``1g.18gb+me`` -> ``1g18gb-me``.
    """
    short = re.sub(r"[^a-z0-9-.]", "-", profile.replace(".", "").lower()).strip("-").removesuffix(".")[:253]
    return f"gpu-{minor}-mig-{short}-{gi_profile_id}-{start}"


def _mig_name(release: DriverRelease, minor: int, profile: MigProfile, start: int) -> str:
    if release.mig_name == OLD_MIG_NAME:
        return f"gpu-{minor}-mig-{profile.gi_profile_id}-{start}-{profile.memory_slices}"
    return mig_device_name(minor, profile.name, profile.gi_profile_id, start)


def mig_device(gpu: GpuFacts, profile: MigProfile, start: int, uuid: str | None,
               release: DriverRelease = RELEASES[DEFAULT_RELEASE], index: int = 0) -> dict:
    """The ``type: mig`` device entry of one static MIG device placed at ``start`` on ``gpu`` (``index``: its
    MIG index on the GPU, which only v25.3 publishes)."""
    attrs = _common_attributes(gpu, release)
    attrs["type"] = {"string": "mig"}
    attrs["profile"] = {"string": profile.name}
    attrs["parentUUID"] = {"string": gpu.uuid}
    if uuid:
        attrs["uuid"] = {"string": uuid}
    if f"{DOMAIN}/parentIndex" in release.mig_attributes:
        attrs["index"] = {"int": index}
        attrs["parentIndex"] = {"int": gpu.minor}
    capacity = {
        "copyEngines": {"value": str(profile.copy_engines)},
        "decoders": {"value": str(profile.decoders)},
        "encoders": {"value": str(profile.encoders)},
        "jpegEngines": {"value": str(profile.jpeg_engines)},
        "memory": {"value": binary_si(profile.memory_mib)},
        "multiprocessors": {"value": str(profile.multiprocessors)},
        "ofaEngines": {"value": str(profile.ofa_engines)},
    }
    for memory_slice in range(start, start + profile.memory_slices):
        capacity[f"memorySlice{memory_slice}"] = {"value": "1"}
    return {
        "name": _mig_name(release, gpu.minor, profile, start),
        "attributes": dict(sorted(attrs.items())),
        "capacity": dict(sorted(capacity.items())),
    }


MAX_DEVICES_PER_SLICE = 128  # resource.k8s.io/v1's ResourceSliceMaxDevices


def resource_slice(
    driver: str, node_name: str, devices: list[dict], *, generation: int, name_suffix: str, node_uid: str,
    slice_count: int = 1, release: DriverRelease = RELEASES[DEFAULT_RELEASE],
) -> dict:
    """One of the ``slice_count`` ResourceSlices of ``node_name``'s pool, named as the DRA library of
    ``release`` does with ``generateName``."""
    generate_name = f"00000-{driver}-{node_name}-" if release.slice_index_prefix else f"{node_name}-{driver}-"
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "name": generate_name + name_suffix,
            "generateName": generate_name,
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": node_uid, "controller": True}
            ],
        },
        "spec": {
            "driver": driver,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": slice_count},
            "nodeName": node_name,
            "devices": devices,
        },
    }
