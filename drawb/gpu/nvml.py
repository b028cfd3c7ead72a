"""Read this machine's GPUs through NVML (the ``pynvml`` module of ``nvidia-ml-py``).

This is the only module that talks to NVML. It returns plain readings (a JSON-ready dict of the
numbers and strings NVML answered, nothing interpreted), so a reading saved on a GPU machine can
be converted anywhere by ``drawb.gpu.local``. A call NVML refuses (``Not Supported`` on this GPU,
a function this driver lacks) is recorded under the GPU's ``errors`` and the reading goes on.
"""

from __future__ import annotations

import ctypes
import datetime
import os
import socket
from collections.abc import Callable
from typing import Any

from drawb.errors import DrawbError

READINGS_FORMAT = "drawb.nvml/1"
NVML_LIBRARY = "libnvidia-ml.so.1"


class NvmlUnavailable(DrawbError):
    """NVML cannot be used on this machine: no package, no driver library, or no driver."""


def read_nvml() -> dict:
    """Every GPU NVML sees, as plain readings; raises NvmlUnavailable when NVML cannot start."""
    pynvml = _import_pynvml()
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise _init_error(exc) from None
    try:
        return _read_all(pynvml)
    finally:
        pynvml.nvmlShutdown()


def _import_pynvml():
    try:
        import pynvml
    except ImportError as exc:
        raise NvmlUnavailable(
            f"the Python package nvidia-ml-py (module pynvml) is not installed: {exc}",
            hint="pip install nvidia-ml-py (drawb depends on it; reinstall drawb)",
        ) from None
    return pynvml


def _init_error(exc: Exception) -> NvmlUnavailable:
    try:
        ctypes.CDLL(NVML_LIBRARY)
    except OSError as load_error:
        return NvmlUnavailable(
            f"no NVIDIA driver here: the NVML library {NVML_LIBRARY} could not be loaded ({load_error})",
            hint="run on a machine with an NVIDIA GPU and its driver installed",
        )
    return NvmlUnavailable(
        f"NVML ({NVML_LIBRARY}) loaded but did not start: {exc}",
        hint="check that the NVIDIA kernel driver is loaded (`nvidia-smi` should list the GPUs)",
    )


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class _Reader:
    """Calls NVML and keeps what failed, per GPU, instead of stopping."""

    def __init__(self, pynvml):
        self.nvml = pynvml
        self.errors: dict[str, str] = {}

    def call(self, key: str, fn: Callable | None, *args) -> Any:
        if fn is None:
            self.errors[key] = "this nvidia-ml-py has no such function"
            return None
        try:
            return fn(*args)
        except self.nvml.NVMLError as exc:
            self.errors[key] = str(exc)
        except (AttributeError, ctypes.ArgumentError) as exc:  # a function this nvidia-ml-py lacks
            self.errors[key] = f"{type(exc).__name__}: {exc}"
        return None


def _read_all(nvml) -> dict:
    system = _Reader(nvml)
    readings = {
        "format": READINGS_FORMAT,
        "captured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hostname": socket.gethostname(),
        "pynvml_version": _pynvml_version(),
        "nvml_version": _maybe_text(system.call("nvml_version", nvml.nvmlSystemGetNVMLVersion)),
        "driver_version": _maybe_text(system.call("driver_version", nvml.nvmlSystemGetDriverVersion)),
        "cuda_driver_version": system.call("cuda_driver_version", nvml.nvmlSystemGetCudaDriverVersion),
    }
    count = system.call("device_count", nvml.nvmlDeviceGetCount) or 0
    readings["gpus"] = [_read_gpu(nvml, index) for index in range(count)]
    readings["errors"] = system.errors
    return readings


def _pynvml_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nvidia-ml-py")
    except PackageNotFoundError:
        return None


def _read_gpu(nvml, index: int) -> dict:
    r = _Reader(nvml)
    handle = r.call("handle", nvml.nvmlDeviceGetHandleByIndex, index)
    gpu: dict[str, Any] = {"index": index}
    if handle is None:
        gpu["errors"] = r.errors
        return gpu
    gpu["minor"] = r.call("minor", nvml.nvmlDeviceGetMinorNumber, handle)
    gpu["uuid"] = _maybe_text(r.call("uuid", nvml.nvmlDeviceGetUUID, handle))
    gpu["name"] = _maybe_text(r.call("name", nvml.nvmlDeviceGetName, handle))
    gpu["brand"] = r.call("brand", nvml.nvmlDeviceGetBrand, handle)
    gpu["architecture"] = r.call("architecture", nvml.nvmlDeviceGetArchitecture, handle)
    cc = r.call("cuda_compute_capability", nvml.nvmlDeviceGetCudaComputeCapability, handle)
    gpu["cuda_compute_capability"] = list(cc) if cc is not None else None
    pci = r.call("pci", nvml.nvmlDeviceGetPciInfo, handle)
    bus_id = _text(pci.busId) if pci is not None else None
    gpu["pci_bus_id"] = bus_id
    gpu["sysfs_link"] = _sysfs_link(bus_id)
    memory = r.call("memory", nvml.nvmlDeviceGetMemoryInfo, handle)
    gpu["memory"] = None if memory is None else {"total": memory.total, "used": memory.used, "free": memory.free}
    version = getattr(nvml, "nvmlMemory_v2", None)  # v2 splits off driver-reserved memory, as nvidia-smi shows it
    v2 = r.call("memory_v2", nvml.nvmlDeviceGetMemoryInfo if version else None, handle, version)
    gpu["memory_v2"] = None if v2 is None else {"total": v2.total, "reserved": v2.reserved, "used": v2.used, "free": v2.free}
    gpu["addressing_mode"] = r.call("addressing_mode", getattr(nvml, "nvmlDeviceGetAddressingMode", None), handle)
    mig_mode = r.call("mig_mode", nvml.nvmlDeviceGetMigMode, handle)
    gpu["mig_mode"] = None if mig_mode is None else {"current": mig_mode[0], "pending": mig_mode[1]}
    gpu["gpu_instance_profiles"] = _read_profiles(nvml, r, handle) if mig_mode is not None else []
    gpu["mig_devices"] = _read_mig_devices(nvml, r, handle) if mig_mode and mig_mode[0] == 1 else []
    utilization = r.call("utilization", nvml.nvmlDeviceGetUtilizationRates, handle)
    gpu["utilization"] = None if utilization is None else {"gpu": utilization.gpu, "memory": utilization.memory}
    gpu["temperature_c"] = r.call("temperature_c", nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)
    gpu["power_mw"] = r.call("power_mw", nvml.nvmlDeviceGetPowerUsage, handle)
    gpu["power_limit_mw"] = r.call("power_limit_mw", nvml.nvmlDeviceGetEnforcedPowerLimit, handle)
    gpu["errors"] = r.errors
    return gpu


def _maybe_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _sysfs_link(bus_id: str | None) -> str | None:
    if not bus_id:
        return None
    text = bus_id.lower()
    if text.startswith("0000") and len(text.split(":")[0]) == 8:
        text = text[4:]
    try:
        return os.readlink(f"/sys/bus/pci/devices/{text}")
    except OSError:
        return None


def _read_profiles(nvml, r: _Reader, handle) -> list[dict]:
    """Every GPU-instance profile NVML knows for this GPU, with its possible placements."""
    profiles = []
    for index in range(nvml.NVML_GPU_INSTANCE_PROFILE_COUNT):
        key = f"gpu_instance_profile[{index}]"
        info = _profile_info(nvml, r, key, handle, index)
        if info is None:
            continue
        profile = {
            "index": index,
            "id": info.id,
            "name": _text(getattr(info, "name", "")) or None,
            "slice_count": info.sliceCount,
            "instance_count": info.instanceCount,
            "multiprocessor_count": info.multiprocessorCount,
            "copy_engine_count": info.copyEngineCount,
            "decoder_count": info.decoderCount,
            "encoder_count": info.encoderCount,
            "jpeg_count": info.jpegCount,
            "ofa_count": info.ofaCount,
            "memory_size_mb": info.memorySizeMB,
            "is_p2p_supported": info.isP2pSupported,
            "placements": _placements(nvml, r, f"{key}.placements", handle, info.id),
            "remaining_capacity": r.call(
                f"{key}.remaining_capacity", nvml.nvmlDeviceGetGpuInstanceRemainingCapacity, handle, info.id
            ),
        }
        profiles.append(profile)
    return profiles


def _profile_info(nvml, r: _Reader, key: str, handle, index: int):
    """GI profile info (v2, which names the profile; v1 where the driver lacks v2)."""
    quiet = _Reader(nvml)
    info = quiet.call(key, nvml.nvmlDeviceGetGpuInstanceProfileInfo, handle, index)
    if info is None:
        info = quiet.call(key + ".v1", nvml.nvmlDeviceGetGpuInstanceProfileInfo, handle, index, 1)
    if info is None and not any("Not Supported" in e or "Invalid Argument" in e for e in quiet.errors.values()):
        r.errors.update(quiet.errors)  # profiles the GPU lacks answer Not Supported / Invalid Argument: not errors
    return info


def _placements(nvml, r: _Reader, key: str, handle, profile_id: int) -> list[dict] | None:
    placements = (nvml.c_nvmlGpuInstancePlacement_t * 32)()
    count = ctypes.c_uint(len(placements))
    done = r.call(
        key, nvml.nvmlDeviceGetGpuInstancePossiblePlacements, handle, profile_id, placements, ctypes.byref(count)
    )
    if done is None:
        return None
    return [{"start": p.start, "size": p.size} for p in placements[: count.value]]


def _read_mig_devices(nvml, r: _Reader, handle) -> list[dict]:
    """The MIG devices that exist on a MIG-enabled GPU, with their GPU and compute instances."""
    found = []
    slots = r.call("max_mig_device_count", nvml.nvmlDeviceGetMaxMigDeviceCount, handle) or 0
    for slot in range(slots):
        quiet = _Reader(nvml)
        mig = quiet.call("handle", nvml.nvmlDeviceGetMigDeviceHandleByIndex, handle, slot)
        if mig is None:
            continue  # an empty slot answers Not Found
        m = _Reader(nvml)
        key = f"mig_device[{slot}]"
        device: dict[str, Any] = {"slot": slot, "uuid": _maybe_text(m.call("uuid", nvml.nvmlDeviceGetUUID, mig))}
        memory = m.call("memory", nvml.nvmlDeviceGetMemoryInfo, mig)
        device["memory"] = None if memory is None else {"total": memory.total, "used": memory.used, "free": memory.free}
        gi_id = m.call("gpu_instance_id", nvml.nvmlDeviceGetGpuInstanceId, mig)
        ci_id = m.call("compute_instance_id", nvml.nvmlDeviceGetComputeInstanceId, mig)
        device.update(gpu_instance_id=gi_id, compute_instance_id=ci_id)
        gi = m.call("gpu_instance", nvml.nvmlDeviceGetGpuInstanceById, handle, gi_id) if gi_id is not None else None
        if gi is not None:
            info = m.call("gpu_instance_info", nvml.nvmlGpuInstanceGetInfo, gi)
            if info is not None:
                device["gpu_instance"] = {
                    "profile_id": info.profileId,
                    "placement": {"start": info.placement.start, "size": info.placement.size},
                }
            ci = m.call("compute_instance", nvml.nvmlGpuInstanceGetComputeInstanceById, gi, ci_id)
            ci_info = m.call("compute_instance_info", nvml.nvmlComputeInstanceGetInfo, ci) if ci is not None else None
            if ci_info is not None:
                device["compute_instance"] = {"profile_id": ci_info.profileId, **_ci_profile(nvml, gi, ci_info.profileId)}
        if m.errors:
            r.errors.update({f"{key}.{k}": v for k, v in m.errors.items()})
        found.append(device)
    return found


def _ci_profile(nvml, gi, profile_id: int) -> dict:
    """The compute-instance profile index and slice count whose NVML ID is ``profile_id``."""
    quiet = _Reader(nvml)
    for index in range(nvml.NVML_COMPUTE_INSTANCE_PROFILE_COUNT):
        info = quiet.call(
            "ci", nvml.nvmlGpuInstanceGetComputeInstanceProfileInfo, gi, index, nvml.NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED
        )
        if info is not None and info.id == profile_id:
            return {"profile_index": index, "slice_count": info.sliceCount}
    return {}
