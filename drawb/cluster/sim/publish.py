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
from drawb.gpu.driver import GPU_DRIVER, MAX_DEVICES_PER_SLICE, binary_si, name_suffix, normalize_version, stable_hex, stable_uuid
from drawb.gpu.releases import DEFAULT_RELEASE, DriverRelease, release
from drawb.cluster.sim.tree import StoredDict, freeze

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
    "gpu_slices",
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
    numa_node: int | None = None  # published by driver releases that have resource.kubernetes.io/numaNode


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
    driver_release: str = DEFAULT_RELEASE  # the NVIDIA DRA driver release publishing its devices
    extended_resources: dict[str, int] = field(default_factory=dict)  # what a device plugin advertises there

    @property
    def gpu_model(self) -> GpuModel:
        """The catalog entry of this node's GPUs."""
        return model(self.model)

    @property
    def release(self) -> DriverRelease:
        """The driver release publishing this node's devices."""
        return release(self.driver_release)


def gpu_uuid(scenario: str, node: str, minor: int) -> str:
    """The UUID the scenario gives GPU ``minor`` of ``node``."""
    return stable_uuid("GPU", scenario, node, minor)


def _facts(node: GpuNode, gpu: Gpu, uuid: str) -> driver.GpuFacts:
    m = node.gpu_model
    return driver.GpuFacts(
        minor=gpu.minor,
        uuid=uuid,
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
        numa_node=gpu.numa_node,
    )


def _template_key(node: GpuNode, gpu: Gpu) -> tuple:
    """What a GPU's device entry depends on besides its UUIDs: nodes of one model repeat it."""
    return (node.model, node.driver_version, node.cuda_driver_version, node.addressing_mode, node.driver_release,
            gpu.minor, gpu.pci_bus_id, gpu.pcie_root, gpu.numa_node)


# Device entries without their UUIDs, by what they depend on; read-only (``tree.freeze``), so the devices
# stamped from them, read-only too, share their values and the store need not freeze them again.
_TEMPLATES: dict[tuple, dict] = {}
_MAX_TEMPLATES = 4096


def _template(key: tuple, build) -> dict:
    template = _TEMPLATES.get(key)
    if template is None:
        if len(_TEMPLATES) >= _MAX_TEMPLATES:
            _TEMPLATES.clear()
        template = _TEMPLATES[key] = freeze(build())
    return template


def _stamped(template: StoredDict, **strings: str) -> StoredDict:
    """A read-only device entry like ``template`` with some string attributes set (``uuid``, ``parentUUID``;
    each present in the template, so the attributes' sorted order stays): many GPUs of one model differ
    only there. The entry and its attributes are new; everything else is shared with the template."""
    attributes = dict(template["attributes"])
    for name, value in strings.items():
        if name not in attributes:
            raise ValueError(f"stamped: the template has no attribute {name!r}")
        attributes[name] = StoredDict(string=value)
    device = dict(template)
    device["attributes"] = StoredDict(attributes)
    return StoredDict(device)  # its values are frozen: made here without walking them again (``freeze``)


def full_gpu_device(scenario: str, node: GpuNode, gpu: Gpu) -> dict:
    """The ``type: gpu`` device entry for a GPU without MIG."""
    template = _template(("gpu", *_template_key(node, gpu)), lambda: driver.full_gpu_device(_facts(node, gpu, ""), node.release))
    return _stamped(template, uuid=gpu_uuid(scenario, node.name, gpu.minor))


def mig_device(scenario: str, node: GpuNode, gpu: Gpu, instance: MigInstance, parent_uuid: str | None = None) -> dict:
    """The ``type: mig`` device entry for one static MIG instance (``parent_uuid``: the GPU's, if known)."""
    index = gpu.mig.index(instance) if instance in gpu.mig else 0
    template = _template(("mig", *_template_key(node, gpu), instance, index), lambda: driver.mig_device(
        _facts(node, gpu, ""), node.gpu_model.mig_profile(instance.profile), instance.start, "-", node.release, index))
    profile = template["attributes"]["profile"]["string"]
    uuid = stable_uuid("MIG", scenario, node.name, gpu.minor, profile, instance.start)
    return _stamped(template, uuid=uuid, parentUUID=parent_uuid or gpu_uuid(scenario, node.name, gpu.minor))


def gpu_devices(scenario: str, node: GpuNode) -> list[dict]:
    """Every device the GPU driver publishes for ``node``: full GPUs and MIG devices."""
    devices: list[dict] = []
    for gpu in node.gpus:
        if gpu.mig:
            parent = gpu_uuid(scenario, node.name, gpu.minor)
            devices.extend(mig_device(scenario, node, gpu, inst, parent) for inst in gpu.mig)
        else:
            devices.append(full_gpu_device(scenario, node, gpu))
    return devices


def _slices(scenario: str, driver_name: str, node: GpuNode, generation: int, devices: list[dict]) -> list[dict]:
    """The node's pool as slices of at most ``MAX_DEVICES_PER_SLICE`` devices (the v1 limit), in device order."""
    chunks = [devices[i:i + MAX_DEVICES_PER_SLICE] for i in range(0, len(devices), MAX_DEVICES_PER_SLICE)] or [[]]
    node_name = node.name
    node_uid = stable_uuid("node", scenario, node_name)[5:]
    return [
        driver.resource_slice(
            driver_name, node_name, chunk, generation=generation, node_uid=node_uid, slice_count=len(chunks),
            release=node.release,
            # the first slice keeps the name a one-slice pool has
            name_suffix=name_suffix(scenario, driver_name, node_name, *([j] if j else [])),
        )
        for j, chunk in enumerate(chunks)
    ]


def gpu_slices(scenario: str, node: GpuNode) -> list[dict]:
    """The node's ``gpu.nvidia.com`` ResourceSlices: one, or several of one pool for more than 128 devices."""
    return _slices(scenario, GPU_DRIVER, node, node.pool_generation, gpu_devices(scenario, node))


def gpu_slice(scenario: str, node: GpuNode) -> dict:
    """The node's one ``gpu.nvidia.com`` ResourceSlice (a node with at most 128 devices)."""
    slices = gpu_slices(scenario, node)
    if len(slices) != 1:
        raise ValueError(f"node {node.name} publishes {len(slices)} slices; use gpu_slices")
    return slices[0]


def compute_domain_slice(scenario: str, node: GpuNode) -> dict:
    """The node's ``compute-domain.nvidia.com`` ResourceSlice (``channel-0`` and ``daemon-0``)."""
    devices = [
        {"name": "channel-0", "attributes": {"id": {"int": 0}, "type": {"string": "channel"}}},
        {"name": "daemon-0", "attributes": {"id": {"int": 0}, "type": {"string": "daemon"}}},
    ]
    return _slices(scenario, COMPUTE_DOMAIN_DRIVER, node, 1, devices)[0]
