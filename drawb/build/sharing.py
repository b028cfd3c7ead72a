"""GPU sharing as the NVIDIA driver's opaque config: TimeSlicing (an interval) or MPS (thread share, pinned memory)."""

from __future__ import annotations

from dataclasses import dataclass, field

from drawb.build.conditions import DRIVER, BuildError, check_quantity

STRATEGIES = ("TimeSlicing", "MPS")
INTERVALS = ("Default", "Short", "Medium", "Long")
API_VERSION = "resource.nvidia.com/v1beta1"
MIG_CLASS = "mig.nvidia.com"


@dataclass
class Sharing:
    """How the devices of ``requests`` (every request when empty) are shared between the pod's containers."""

    strategy: str = "TimeSlicing"
    interval: str = "Default"  # TimeSlicing on full GPUs
    thread_percentage: int | None = None  # MPS defaultActiveThreadPercentage, 0-100
    pinned_memory_limit: str | None = None  # MPS defaultPinnedDeviceMemoryLimit, a quantity
    requests: list[str] = field(default_factory=list)

    def check(self) -> None:
        """BuildError when a setting is out of the driver's range."""
        if self.strategy not in STRATEGIES:
            raise BuildError(f"sharing strategy {self.strategy!r} is not one of {', '.join(STRATEGIES)}",
                             hint="TimeSlicing takes turns on the GPU; MPS runs the containers side by side")
        if self.interval not in INTERVALS:
            raise BuildError(f"time-slicing interval {self.interval!r} is not one of {', '.join(INTERVALS)}")
        if self.thread_percentage is not None and not 0 <= int(self.thread_percentage) <= 100:
            raise BuildError(f"MPS thread percentage {self.thread_percentage} is outside 0-100")
        if self.pinned_memory_limit:
            self.pinned_memory_limit = check_quantity(self.pinned_memory_limit)

    def config(self, request_names: list[str], mig: bool) -> dict:
        """The claim's ``config[]`` entry: GpuConfig, or MigDeviceConfig when the devices are MIG devices."""
        self.check()
        sharing: dict = {"strategy": self.strategy}
        if self.strategy == "TimeSlicing" and not mig:  # MigDeviceConfig has no timeSlicingConfig
            sharing["timeSlicingConfig"] = {"interval": self.interval}
        if self.strategy == "MPS":
            mps: dict = {}
            if self.thread_percentage is not None:
                mps["defaultActiveThreadPercentage"] = int(self.thread_percentage)
            if self.pinned_memory_limit:
                mps["defaultPinnedDeviceMemoryLimit"] = self.pinned_memory_limit
            if mps:
                sharing["mpsConfig"] = mps
        parameters = {"apiVersion": API_VERSION, "kind": "MigDeviceConfig" if mig else "GpuConfig", "sharing": sharing}
        return {"requests": list(request_names), "opaque": {"driver": DRIVER, "parameters": parameters}}


def sharing_from_config(entry: dict) -> Sharing | None:
    """The Sharing a ``config[]`` entry holds, or None when it is another kind of config."""
    opaque = entry.get("opaque") or {}
    parameters = opaque.get("parameters") or {}
    if opaque.get("driver") != DRIVER or parameters.get("kind") not in ("GpuConfig", "MigDeviceConfig"):
        return None
    sharing = parameters.get("sharing") or {}
    if set(parameters) - {"apiVersion", "kind", "sharing"} or sharing.get("strategy") not in STRATEGIES:
        return None
    mps = sharing.get("mpsConfig") or {}
    if set(mps) - {"defaultActiveThreadPercentage", "defaultPinnedDeviceMemoryLimit"}:
        return None
    return Sharing(strategy=sharing["strategy"], interval=(sharing.get("timeSlicingConfig") or {}).get("interval", "Default"),
                   thread_percentage=mps.get("defaultActiveThreadPercentage"),
                   pinned_memory_limit=mps.get("defaultPinnedDeviceMemoryLimit"),
                   requests=list(entry.get("requests") or []))
