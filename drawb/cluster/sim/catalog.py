"""GPU models the simulated cluster can publish, with what NVML reports for each.

Values follow ../shared/research/nvidia-dra-driver.md and the real H200 captures: product names
as NVML returns them, BinarySI memory totals in MiB, and MIG GPU-instance profiles as listed by
``nvidia-smi mig -lgip`` (GI profile ID, SMs, engines, memory in MiB, memory slices).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from drawb.gpu.driver import MigProfile


@dataclass(frozen=True)
class GpuModel:
    """What the NVIDIA driver reads from NVML for one GPU model."""

    product_name: str
    architecture: str
    compute_capability: str
    memory_mib: int
    brand: str = "Nvidia"
    mig_profiles: tuple[MigProfile, ...] = field(default=())

    def mig_profile(self, name: str) -> MigProfile:
        """The MIG profile called ``name`` (e.g. ``1g.10gb``)."""
        for profile in self.mig_profiles:
            if profile.name == name:
                return profile
        known = ", ".join(p.name for p in self.mig_profiles) or "none"
        raise KeyError(f"{self.product_name} has no MIG profile {name!r} (known: {known})")


_H100_80GB_MIG = (
    MigProfile("1g.10gb", 19, 16, 1, 1, 0, 1, 0, 9984, 1),
    MigProfile("1g.20gb", 15, 26, 1, 1, 0, 1, 0, 20096, 2),
    MigProfile("2g.20gb", 14, 32, 2, 2, 0, 2, 0, 20096, 2),
    MigProfile("3g.40gb", 9, 60, 3, 3, 0, 3, 0, 40448, 4),
    MigProfile("4g.40gb", 5, 64, 4, 4, 0, 4, 0, 40448, 4),
    MigProfile("7g.80gb", 0, 132, 8, 7, 0, 7, 1, 81152, 8),
)

# From the real H200 in ../shared/captures/h200/nvidia-smi-mig-lgip.txt (memory GiB x 1024).
_H200_MIG = (
    MigProfile("1g.18gb", 19, 16, 1, 1, 0, 1, 0, 16384, 1),
    MigProfile("1g.35gb", 15, 26, 1, 1, 0, 1, 0, 33280, 2),
    MigProfile("2g.35gb", 14, 32, 2, 2, 0, 2, 0, 33280, 2),
    MigProfile("3g.71gb", 9, 60, 3, 3, 0, 3, 0, 71424, 4),
    MigProfile("4g.71gb", 5, 64, 4, 4, 0, 4, 0, 71424, 4),
    MigProfile("7g.141gb", 0, 132, 8, 7, 0, 7, 1, 143360, 8),
)

_A100_40GB_MIG = (
    MigProfile("1g.5gb", 19, 14, 1, 0, 0, 0, 0, 4864, 1),
    MigProfile("2g.10gb", 14, 28, 2, 1, 0, 0, 0, 9984, 2),
    MigProfile("3g.20gb", 9, 42, 3, 2, 0, 0, 0, 20096, 4),
    MigProfile("4g.20gb", 5, 56, 4, 2, 0, 0, 0, 20096, 4),
    MigProfile("7g.40gb", 0, 98, 7, 5, 0, 1, 1, 40192, 8),
)

MODELS: dict[str, GpuModel] = {
    "A100-SXM4-40GB": GpuModel("NVIDIA A100-SXM4-40GB", "Ampere", "8.0", 40960, mig_profiles=_A100_40GB_MIG),
    "H100-80GB-HBM3": GpuModel("NVIDIA H100 80GB HBM3", "Hopper", "9.0", 81559, mig_profiles=_H100_80GB_MIG),
    "H200": GpuModel("NVIDIA H200", "Hopper", "9.0", 143771, mig_profiles=_H200_MIG),
    "L4": GpuModel("NVIDIA L4", "Ada Lovelace", "8.9", 23034),
}


def model(key: str) -> GpuModel:
    """The catalog entry ``key`` (e.g. ``H100-80GB-HBM3``), with a helpful error."""
    try:
        return MODELS[key]
    except KeyError:
        raise KeyError(f"unknown GPU model {key!r}; known: {', '.join(sorted(MODELS))}") from None
