"""The NVIDIA DRA driver's releases as data: which attributes each publishes, how it names devices and
slices, and which of its own features it has.

Facts from the driver's code at each tag (``kubernetes-sigs/dra-driver-nvidia-gpu``, earlier
``NVIDIA/k8s-dra-driver-gpu``: ``cmd/gpu-kubelet-plugin/deviceinfo.go``, ``mig.go``, ``driver.go``,
``pkg/featuregates/featuregates.go``); ../shared/research/nvidia-dra-driver.md cites them. ``v0.5`` is
the project's main branch at 95932046 (VERSION v0.5.0-dev), the newest code read. Attribute names are
written as the scheduler's CEL reads them: ``<domain>/<name>``, the bare names of a slice in the
driver's own domain ``gpu.nvidia.com``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from drawb.errors import DrawbError

DOMAIN = "gpu.nvidia.com"
STANDARD = "resource.kubernetes.io"


def _own(*names: str) -> frozenset[str]:
    return frozenset(name if "/" in name else f"{DOMAIN}/{name}" for name in names)


OLD_MIG_NAME = "gpu-<minor>-mig-<GI profile ID>-<start>-<size>"  # v25.3 and v25.8
NEW_MIG_NAME = "gpu-<minor>-mig-<profile without dots>-<GI profile ID>-<start>"  # v25.12 on

_DESCRIBED = ("type", "productName", "brand", "architecture", "cudaComputeCapability", "driverVersion",
              "cudaDriverVersion")


@dataclass(frozen=True)
class DriverRelease:
    """One release line of the NVIDIA DRA driver for GPUs."""

    name: str  # "v25.12": the line, as drawb names it
    tags: tuple[str, ...]  # the tags of the line that were read
    date: str  # the first tag's date
    gpu_attributes: frozenset[str]  # what a full GPU (type gpu) publishes, optional ones included
    mig_attributes: frozenset[str]  # what a static MIG device (type mig) publishes
    pci_attribute: str  # where the PCI bus ID is published
    mig_name: str  # the device name form of a MIG device
    slice_index_prefix: bool  # slice names start with a 5-digit index (the Kubernetes 1.36 DRA library)
    features: tuple[str, ...]  # the driver's own feature gates that change what it publishes
    notes: str = ""

    @property
    def attributes(self) -> frozenset[str]:
        """Every attribute a GPU or MIG device of this release can publish."""
        return self.gpu_attributes | self.mig_attributes


_V25_3 = DriverRelease(
    "v25.3", ("v25.3.0", "v25.3.1", "v25.3.2"), "2025-08-15",
    _own(*_DESCRIBED, "uuid", "index", "minor", "pcieBusID", f"{STANDARD}/pcieRoot"),
    _own(*_DESCRIBED, "uuid", "parentUUID", "profile", "index", "parentIndex", "pcieBusID", f"{STANDARD}/pcieRoot"),
    f"{DOMAIN}/pcieBusID", OLD_MIG_NAME, False, (),
    "index and minor (MIG: index and parentIndex) exist in this line only")
_V25_8 = DriverRelease(
    "v25.8", ("v25.8.0", "v25.8.1"), "2025-10-20",
    _own(*_DESCRIBED, "uuid", "pcieBusID", f"{STANDARD}/pcieRoot"),
    _own(*_DESCRIBED, "uuid", "parentUUID", "profile", "pcieBusID", f"{STANDARD}/pcieRoot"),
    f"{DOMAIN}/pcieBusID", OLD_MIG_NAME, False,
    ("TimeSlicingSettings", "MPSSupport"),
    "a MIG-enabled GPU is also published as a full GPU (fixed in v25.12)")
_V25_12_ATTRIBUTES = (
    _own(*_DESCRIBED, "uuid", f"{STANDARD}/pciBusID", f"{STANDARD}/pcieRoot", "addressingMode"),
    _own(*_DESCRIBED, "uuid", "parentUUID", "profile", f"{STANDARD}/pciBusID", f"{STANDARD}/pcieRoot", "addressingMode"),
)
_V25_12 = DriverRelease(
    "v25.12", ("v25.12.0",), "2026-02-12", *_V25_12_ATTRIBUTES, f"{STANDARD}/pciBusID", NEW_MIG_NAME, False,
    ("TimeSlicingSettings", "MPSSupport", "DynamicMIG", "PassthroughSupport", "NVMLDeviceHealthCheck"),
    "dynamic MIG (alpha) publishes counter sets: in slices of their own on Kubernetes 1.35 and later")
_V0_4 = DriverRelease(
    "v0.4", ("v0.4.0", "v0.4.1"), "2026-05-15", *_V25_12_ATTRIBUTES, f"{STANDARD}/pciBusID", NEW_MIG_NAME, True,
    _V25_12.features + ("DeviceMetadata",),
    "moved to kubernetes-sigs and to SemVer; built with the Kubernetes 1.36 DRA library")
_V0_5 = DriverRelease(
    "v0.5", ("main@95932046 (v0.5.0-dev)",), "2026-08-19",
    _V25_12_ATTRIBUTES[0] | {f"{STANDARD}/numaNode"}, _V25_12_ATTRIBUTES[1] | {f"{STANDARD}/numaNode"},
    f"{STANDARD}/pciBusID", NEW_MIG_NAME, True,
    _V0_4.features + ("DRAListTypeAttributes", "FabricManagerPartitioning", "ConsumableShares"),
    "numaNode is an int, or a one-element list of ints with the driver's DRAListTypeAttributes gate on; "
    "ConsumableShares publishes allowMultipleAllocations and a memory requestPolicy")

RELEASES: dict[str, DriverRelease] = {r.name: r for r in (_V25_3, _V25_8, _V25_12, _V0_4, _V0_5)}  # oldest first
_INDEXED_NAME = re.compile(rf"^\d{{5}}-{re.escape(DOMAIN)}-")  # 00000-gpu.nvidia.com-<node>-<suffix>
DEFAULT_RELEASE = "v0.4"  # what the simulated cluster's scenarios publish unless they name another

# The DeviceClasses the driver's chart installs for GPU devices (vfio.gpu.nvidia.com from v25.12).
GPU_CLASSES = ("gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com")

# Attributes a release publishes as a list when its own DRAListTypeAttributes gate is on: the release.
LIST_ATTRIBUTES: dict[str, str] = {f"{STANDARD}/numaNode": "v0.5"}

# What to read instead of an attribute a later release no longer publishes.
REPLACEMENTS: dict[str, str] = {
    f"{DOMAIN}/index": f"{DOMAIN}/uuid or {STANDARD}/pciBusID",
    f"{DOMAIN}/minor": f"{DOMAIN}/uuid or {STANDARD}/pciBusID",
    f"{DOMAIN}/parentIndex": f"{DOMAIN}/parentUUID",
    f"{DOMAIN}/pcieBusID": f"{STANDARD}/pciBusID",
}


class UnknownDriverRelease(DrawbError, ValueError):
    """A name that is none of the NVIDIA DRA driver's release lines drawb knows."""

    hint = f"name one of {', '.join(RELEASES)} (a tag such as v25.12.0 is fine)"


def release(name: str) -> DriverRelease:
    """The release line ``name`` (``v25.12``, ``25.12``, or a tag such as ``v25.12.0`` or ``v0.4.1``)."""
    text = str(name).strip()
    text = text if text.startswith("v") else f"v{text}"
    line = ".".join(text.split("-")[0].split(".")[:2])
    if line in RELEASES:
        return RELEASES[line]
    close = difflib.get_close_matches(line, list(RELEASES), n=1)
    raise UnknownDriverRelease(f"unknown NVIDIA DRA driver release {name!r}"
                               + (f"; did you mean {close[0]}?" if close else ""))


def publishing(attribute: str) -> list[str]:
    """The releases whose devices publish ``attribute`` (``gpu.nvidia.com/index``), oldest first."""
    return [r.name for r in RELEASES.values() if attribute in r.attributes]


def published_attributes(slices: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every attribute the ``gpu.nvidia.com`` devices of ``slices`` publish, as CEL reads them."""
    names: set[str] = set()
    for s in slices:
        spec = s.get("spec") or {}
        if spec.get("driver") != DOMAIN:
            continue
        for device in spec.get("devices") or ():
            names.update(device.get("attributes") or ())
    return {name if "/" in name else f"{DOMAIN}/{name}" for name in names}


def detect(slices: Iterable[Mapping[str, Any]]) -> DriverRelease | None:
    """The release whose devices and slice names fit what ``gpu.nvidia.com`` publishes in ``slices``, or None
    when it publishes nothing or no known release fits. Releases that differ only in optional attributes
    (v0.5's numaNode, absent where the NUMA node is unknown) cannot be told apart without them."""
    gpu_slices = [s for s in slices if (s.get("spec") or {}).get("driver") == DOMAIN]
    published = published_attributes(gpu_slices)
    if not published:
        return None
    prefixed = any(_INDEXED_NAME.match(str((s.get("metadata") or {}).get("name", ""))) for s in gpu_slices)
    fitting = [r for r in RELEASES.values() if published <= r.attributes and r.pci_attribute in published
               and r.slice_index_prefix == prefixed]
    # the closest fit: the release publishing the fewest attributes these devices lack (ties: the newest)
    return min(reversed(fitting), key=lambda r: len(r.attributes - published), default=None)
