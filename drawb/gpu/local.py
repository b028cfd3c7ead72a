"""This machine's GPUs as the NVIDIA DRA driver would publish them, from saved NVML readings.

Pure: the input is the plain dict ``drawb.gpu.nvml.read_nvml`` returns (or the same dict loaded
from JSON), the output is driver-shaped devices, the ResourceSlice, MIG profile rows and live
figures. The driver's own interpretation of NVML's numbers is followed: go-nvlib's brand and
architecture names, its MIG profile names (``1g.18gb``, ``1g.18gb+me``) and memory rounding, and
the driver's choice of what a GPU offers (the full GPU, or its MIG devices when MIG is on).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from drawb.gpu import driver

# go-nvlib GetBrandAsString / GetArchitectureAsString, keyed by NVML's enum values.
BRANDS = {
    0: "Unknown", 1: "Quadro", 2: "Tesla", 3: "NVS", 4: "Grid", 5: "GeForce", 6: "Titan",
    7: "NvidiaVApps", 8: "NvidiaVPC", 9: "NvidiaVCS", 10: "NvidiaVWS", 11: "NvidiaCloudGaming",
    12: "QuadroRTX", 13: "NvidiaRTX", 14: "Nvidia", 15: "GeForceRTX", 16: "TitanRTX",
}  # fmt: skip
ARCHITECTURES = {
    2: "Kepler", 3: "Maxwell", 4: "Pascal", 5: "Volta", 6: "Turing", 7: "Ampere",
    8: "Ada Lovelace", 9: "Hopper", 10: "Blackwell", 13: "Rubin", 0xFFFFFFFF: "Unknown",
}  # fmt: skip
ADDRESSING_MODES = {0: "None", 1: "HMM", 2: "ATS"}
_MIG_MODES = {0: "Disabled", 1: "Enabled"}  # nvidia-smi's words

# NVML GPU-instance profile index -> (GPU slices, name suffix), as go-nvlib's NewMigProfile reads it.
_GI_PROFILES = {
    0: (1, ""), 1: (2, ""), 2: (3, ""), 3: (4, ""), 4: (7, ""), 5: (8, ""), 6: (6, ""),
    7: (1, "+me"), 8: (2, "+me"), 9: (1, ""), 10: (1, "+gfx"), 11: (2, "+gfx"), 12: (4, "+gfx"),
    13: (1, "-me"), 14: (2, "-me"), 15: (1, "+me.all"), 16: (2, "+me.all"),
}  # fmt: skip
# NVML compute-instance profile index -> compute slices.
_CI_SLICES = {0: 1, 1: 2, 2: 3, 3: 4, 4: 7, 5: 8, 6: 6, 7: 1, 8: 7}


SCENARIO = "local"  # the simulated scenario these devices load into; it seeds the slice name and Node uid


class ReadingsError(ValueError):
    """Saved readings that are not NVML readings drawb wrote."""


@dataclass(frozen=True)
class ProfileRow:
    """One MIG GPU-instance profile of a GPU, as ``nvidia-smi mig -lgip`` lists it, with driver names."""

    gpu: str
    profile: driver.MigProfile
    instances_total: int
    instances_free: int | None
    placements: tuple[tuple[int, int], ...] | None  # (start, size); None when NVML did not answer
    nvml_name: str | None  # "MIG 1g.18gb" from NVML itself, when it says

    @property
    def device_names(self) -> list[str]:
        """The names the driver gives a MIG device of this profile at each possible placement."""
        minor = int(self.gpu.removeprefix("gpu-"))
        return [driver.mig_device_name(minor, self.profile.name, self.profile.gi_profile_id, s) for s, _ in self.placements or ()]


@dataclass
class LocalGpus:
    """This machine's GPUs as published devices, plus MIG profiles and live figures."""

    node: str
    devices: list[dict]
    slice: dict
    profiles: list[ProfileRow]
    live: list[dict]
    readings: dict
    problems: list[str] = field(default_factory=list)


def check_readings(readings: object) -> dict:
    """``readings`` if it is a drawb NVML reading, else a ReadingsError saying what is wrong."""
    if not isinstance(readings, dict) or not str(readings.get("format", "")).startswith("drawb.nvml/"):
        raise ReadingsError("not drawb NVML readings: expected a JSON object with \"format\": \"drawb.nvml/1\"")
    if not isinstance(readings.get("gpus"), list):
        raise ReadingsError("NVML readings without a \"gpus\" list")
    return readings


def node_name(hostname: str) -> str:
    """The Kubernetes node name a host would register with: lower case, DNS-1123 characters."""
    name = re.sub(r"[^a-z0-9.-]", "-", (hostname or "localhost").lower()).strip("-.")
    return name[:253] or "localhost"


def mig_memory_gb(total_bytes: int, memory_mib: int) -> int:
    """go-nvlib's ``getMigMemorySizeGB``: the ``18`` of ``1g.18gb`` (eighths of the GPU, in GB)."""
    fraction = math.ceil(memory_mib * 1024 * 1024 / total_bytes * 8) / 8
    total_gb = (total_bytes + 2**30 - 1) // 2**30
    return int(math.floor(fraction * total_gb + 0.5))


def profile_name(profile_index: int, memory_mib: int, total_bytes: int, ci_slices: int | None = None) -> str:
    """go-nvlib's MIG profile string: ``1g.18gb``, ``1g.18gb+me``, ``1c.2g.35gb``."""
    g, suffix = _GI_PROFILES[profile_index]
    gb = mig_memory_gb(total_bytes, memory_mib)
    c = g if ci_slices is None else ci_slices
    return f"{g}g.{gb}gb{suffix}" if c == g else f"{c}c.{g}g.{gb}gb{suffix}"


def gpu_facts(gpu: dict, readings: dict) -> driver.GpuFacts:
    """The facts the driver reads for one GPU; KeyError/ValueError names a reading it cannot use."""
    cc = gpu["cuda_compute_capability"]
    bus_id = driver.pci_bus_id(gpu["pci_bus_id"])
    brand, arch = gpu["brand"], gpu["architecture"]
    if brand not in BRANDS:
        raise ValueError(f"brand {brand} is not one go-nvlib names; the driver would fail to start")
    if arch not in ARCHITECTURES:
        raise ValueError(f"architecture {arch} is not one go-nvlib names; the driver would fail to start")
    memory = gpu.get("memory")
    return driver.GpuFacts(
        minor=gpu["minor"],
        uuid=gpu["uuid"],
        product_name=gpu["name"],
        brand=BRANDS[brand],
        architecture=ARCHITECTURES[arch],
        compute_capability=f"{cc[0]}.{cc[1]}",
        driver_version=readings["driver_version"],
        cuda_driver_version=driver.cuda_driver_version(readings["cuda_driver_version"]),
        pci_bus_id=bus_id,
        memory_bytes=memory["total"] if memory else None,
        pcie_root=driver.pcie_root(gpu.get("sysfs_link"), bus_id),
        addressing_mode=ADDRESSING_MODES.get(gpu.get("addressing_mode")),
    )


def _profile(raw: dict, total_bytes: int, memory_slices: int, ci_slices: int | None = None) -> driver.MigProfile:
    return driver.MigProfile(
        name=profile_name(raw["index"], raw["memory_size_mb"], total_bytes, ci_slices),
        gi_profile_id=raw["id"],
        multiprocessors=raw["multiprocessor_count"],
        copy_engines=raw["copy_engine_count"],
        decoders=raw["decoder_count"],
        encoders=raw["encoder_count"],
        jpeg_engines=raw["jpeg_count"],
        ofa_engines=raw["ofa_count"],
        memory_mib=raw["memory_size_mb"],
        memory_slices=memory_slices,
    )


def profile_rows(gpu: dict) -> list[ProfileRow]:
    """The GPU's MIG profiles in ``nvidia-smi mig -lgip`` order (by memory, then name)."""
    total = (gpu.get("memory") or {}).get("total")
    rows = []
    for raw in gpu.get("gpu_instance_profiles") or []:
        if raw["index"] not in _GI_PROFILES or not total:
            continue
        placements = raw.get("placements")
        size = placements[0]["size"] if placements else raw["slice_count"]
        rows.append(
            ProfileRow(
                gpu=f"gpu-{gpu['minor']}",
                profile=_profile(raw, total, size),
                instances_total=raw["instance_count"],
                instances_free=raw.get("remaining_capacity"),
                placements=None if placements is None else tuple((p["start"], p["size"]) for p in placements),
                nvml_name=raw.get("name"),
            )
        )
    return sorted(rows, key=lambda r: (r.profile.memory_mib, r.profile.name, r.profile.gi_profile_id))


def _mig_devices(facts: driver.GpuFacts, gpu: dict, problems: list[str]) -> list[dict]:
    by_id = {p["id"]: p for p in gpu.get("gpu_instance_profiles") or []}
    total = gpu["memory"]["total"]
    devices = []
    for mig in gpu.get("mig_devices") or []:
        gi, ci = mig.get("gpu_instance") or {}, mig.get("compute_instance") or {}
        raw = by_id.get(gi.get("profile_id"))
        where = f"gpu-{facts.minor} MIG device {mig.get('uuid')}"
        if raw is None or "placement" not in gi:
            problems.append(f"{where}: NVML did not give its GPU-instance profile; the driver would fail to start")
            continue
        gi_slices = _GI_PROFILES[raw["index"]][0]
        ci_slices = _CI_SLICES.get(ci.get("profile_index"))
        if ci_slices != gi_slices:
            problems.append(
                f"{where}: its compute instance does not span its GPU instance ({ci_slices} of {gi_slices} slices); "
                "driver v0.4 knows no such profile and would fail to start"
            )
            continue
        profile = _profile(raw, total, gi["placement"]["size"])
        devices.append(driver.mig_device(facts, profile, gi["placement"]["start"], mig.get("uuid")))
    return devices


def convert(readings: dict) -> LocalGpus:
    """The devices and ResourceSlice the driver would publish for these readings."""
    check_readings(readings)
    node = node_name(readings.get("hostname", ""))
    devices: list[dict] = []
    problems: list[str] = []
    profiles: list[ProfileRow] = []
    live = []
    for gpu in readings["gpus"]:
        where = f"GPU {gpu.get('index')}"
        try:
            facts = gpu_facts(gpu, readings)
        except (KeyError, TypeError) as missing:
            problems.append(f"{where}: NVML gave no {missing} ({gpu.get('errors') or 'no error recorded'}); skipped")
            continue
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        mig_on = (gpu.get("mig_mode") or {}).get("current") == 1
        if mig_on:
            found = _mig_devices(facts, gpu, problems)
            if not found:
                problems.append(f"gpu-{facts.minor} has MIG mode on but no MIG devices: the driver publishes nothing for it")
            devices.extend(found)
        else:
            devices.append(driver.full_gpu_device(facts))
        profiles.extend(profile_rows(gpu))
        live.append(_live(facts, gpu))
    slice_ = driver.resource_slice(
        driver.GPU_DRIVER,
        node,
        devices,
        generation=1,
        name_suffix=driver.name_suffix(SCENARIO, driver.GPU_DRIVER, node),
        node_uid=driver.stable_uuid("node", SCENARIO, node)[5:],
    )
    return LocalGpus(node, devices, slice_, profiles, live, readings, problems)


def _live(facts: driver.GpuFacts, gpu: dict) -> dict:
    """NVML's live figures; memory in use as nvidia-smi counts it (v2: without driver-reserved memory)."""
    memory = gpu.get("memory_v2") or gpu.get("memory") or {}
    util = gpu.get("utilization") or {}
    mib = 1024 * 1024
    mig = gpu.get("mig_mode")
    return {
        "device": f"gpu-{facts.minor}",
        "mig_mode": None if mig is None else _MIG_MODES.get(mig["current"], str(mig["current"])),
        "gpu_util_percent": util.get("gpu"),
        "memory_util_percent": util.get("memory"),
        "memory_used_mib": memory["used"] // mib if "used" in memory else None,
        "memory_total_mib": memory["total"] // mib if "total" in memory else None,
        "temperature_c": gpu.get("temperature_c"),
        "power_w": None if gpu.get("power_mw") is None else round(gpu["power_mw"] / 1000, 1),
        "power_limit_w": None if gpu.get("power_limit_mw") is None else round(gpu["power_limit_mw"] / 1000, 1),
    }
