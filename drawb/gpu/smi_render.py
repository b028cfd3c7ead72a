"""What ``nvidia-smi --query-gpu`` and plain ``nvidia-smi`` print for the GPUs a container sees.

The formats are those of a real node (../shared/captures/h200: driver 580.159.04 on an H200):
the CSV with its ``name [unit]`` header, and the fixed-width summary table. A container sees
only its allocated devices, numbered from 0 in PCI bus order; a MIG device shows its parent
GPU (in MIG mode) and a row in the "MIG devices" table. ``-L`` is ``drawb.gpu.smi``'s.

The GPUs are described by ``VisibleGpu`` records, built from ResourceSlice devices by
``visible_gpus``. Readings a slice does not carry (temperature, power draw, utilisation) are
those of an idle GPU: 34C, P0, no memory used, 0%.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from drawb.api.quantity import Quantity

# Board power limits (W) of the GPUs the simulated cluster knows, as nvidia-smi reports them.
POWER_LIMITS_W = {"NVIDIA H200": 700, "NVIDIA H100 80GB HBM3": 700, "NVIDIA A100-SXM4-40GB": 400, "NVIDIA L4": 72}
IDLE_POWER_W = {"NVIDIA H200": 118, "NVIDIA H100 80GB HBM3": 72, "NVIDIA A100-SXM4-40GB": 55, "NVIDIA L4": 16}


@dataclass(frozen=True)
class VisibleMig:
    """A MIG device as the container sees it."""

    profile: str
    uuid: str
    gi: int
    ci: int
    memory_mib: int
    multiprocessors: int = 0
    copy_engines: int = 0
    encoders: int = 0
    decoders: int = 0
    ofa_engines: int = 0
    jpeg_engines: int = 0


@dataclass(frozen=True)
class VisibleGpu:
    """A GPU as the container sees it (``index`` counts from 0 in PCI bus order)."""

    index: int
    name: str
    uuid: str
    pci_bus_id: str  # as nvidia-smi writes it: 00000000:1B:00.0
    memory_mib: int | None
    driver_version: str
    cuda_version: str
    compute_cap: str
    migs: tuple[VisibleMig, ...] = field(default=())

    @property
    def mig_mode(self) -> str:
        """``Enabled`` when the container sees MIG devices of this GPU."""
        return "Enabled" if self.migs else "Disabled"


def _attr(device: dict, name: str):
    value = (device.get("attributes") or {}).get(name)
    return None if value is None else next(iter(value.values()))


def _mib(device: dict, name: str = "memory") -> int:
    value = ((device.get("capacity") or {}).get(name) or {}).get("value")
    return int(Quantity.parse(value).value // (1024 * 1024)) if value else 0


def _count(device: dict, name: str) -> int:
    value = ((device.get("capacity") or {}).get(name) or {}).get("value")
    return int(value) if value else 0


def smi_bus_id(pci: str) -> str:
    """``0000:1b:00.0`` (a DRA attribute) as nvidia-smi writes it: ``00000000:1B:00.0``."""
    domain, _, rest = pci.partition(":")
    return f"{int(domain, 16):08X}:{rest.upper()}" if rest else pci


def driver_version(normalized: str | None) -> str:
    """The driver's own spelling of a normalised version: ``580.95.5`` -> ``580.95.05``."""
    parts = (normalized or "").split(".")
    if len(parts) == 3 and all(p.isdigit() for p in parts):
        return f"{parts[0]}.{parts[1]}.{int(parts[2]):02d}"
    return normalized or "N/A"


def _short_version(normalized: str | None) -> str:
    parts = (normalized or "").split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else (normalized or "N/A")


def visible_gpus(devices: list[dict], parent_memory_mib: dict[str, int] | None = None) -> list[VisibleGpu]:
    """The GPUs a container with these ResourceSlice devices sees, in nvidia-smi's order.

    ``parent_memory_mib`` gives the full memory of a MIG device's parent by product name (the
    driver does not publish MIG-mode GPUs as devices of their own).
    """
    parents: dict[str, dict] = {}
    migs: dict[str, list[dict]] = {}
    for device in devices:
        kind = _attr(device, "type")
        if kind == "gpu":
            parents[_attr(device, "uuid")] = device
        elif kind == "mig":
            parent = _attr(device, "parentUUID")
            parents.setdefault(parent, device)
            migs.setdefault(parent, []).append(device)
    ordered = sorted(parents.items(), key=lambda item: (_attr(item[1], "resource.kubernetes.io/pciBusID") or "", item[0]))
    gpus = []
    for index, (uuid, device) in enumerate(ordered):
        name = _attr(device, "productName") or "N/A"
        children = sorted(migs.get(uuid, []), key=lambda d: d["name"])
        memory = (parent_memory_mib or {}).get(name) if children else _mib(device)
        gpus.append(VisibleGpu(
            index=index, name=name, uuid=uuid,
            pci_bus_id=smi_bus_id(_attr(device, "resource.kubernetes.io/pciBusID") or ""),
            memory_mib=memory, driver_version=driver_version(_attr(device, "driverVersion")),
            cuda_version=_short_version(_attr(device, "cudaDriverVersion")),
            compute_cap=_short_version(_attr(device, "cudaComputeCapability")),
            migs=tuple(
                VisibleMig(profile=_attr(m, "profile"), uuid=_attr(m, "uuid"), gi=_gi_id(m), ci=0,
                           memory_mib=_mib(m), multiprocessors=_count(m, "multiprocessors"),
                           copy_engines=_count(m, "copyEngines"), encoders=_count(m, "encoders"),
                           decoders=_count(m, "decoders"), ofa_engines=_count(m, "ofaEngines"),
                           jpeg_engines=_count(m, "jpegEngines"))
                for m in children
            ),
        ))
    return gpus


def _gi_id(device: dict) -> int:
    """The GPU instance id: the MIG device's placement start, as the driver names it."""
    tail = device["name"].rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def serial(uuid: str) -> str:
    """A 13-digit board serial number, derived from the UUID (real boards print theirs)."""
    digits = "".join(str(int(c, 16) % 10) for c in uuid.replace("-", "")[4:16])
    return "1" + digits.ljust(12, "0")


# --query-gpu ---------------------------------------------------------------------------------

def _mem(value: int | None) -> tuple[str, str]:
    return ("[N/A]", "") if value is None else (str(value), " MiB")


QUERY_FIELDS: dict[str, tuple[str, object]] = {
    # field -> (unit shown in the header, how to read it from a VisibleGpu)
    "count": ("", lambda g, gpus: str(len(gpus))),
    "index": ("", lambda g, gpus: str(g.index)),
    "name": ("", lambda g, gpus: g.name),
    "gpu_name": ("", lambda g, gpus: g.name),
    "uuid": ("", lambda g, gpus: g.uuid),
    "gpu_uuid": ("", lambda g, gpus: g.uuid),
    "pci.bus_id": ("", lambda g, gpus: g.pci_bus_id),
    "gpu_bus_id": ("", lambda g, gpus: g.pci_bus_id),
    "serial": ("", lambda g, gpus: serial(g.uuid)),
    "driver_version": ("", lambda g, gpus: g.driver_version),
    "compute_cap": ("", lambda g, gpus: g.compute_cap),
    "mig.mode.current": ("", lambda g, gpus: g.mig_mode),
    "memory.total": ("MiB", lambda g, gpus: _mem(g.memory_mib)),
    "memory.used": ("MiB", lambda g, gpus: _mem(0 if g.memory_mib is not None else None)),
    "memory.free": ("MiB", lambda g, gpus: _mem(g.memory_mib)),
    "temperature.gpu": ("", lambda g, gpus: "34"),
    "utilization.gpu": ("%", lambda g, gpus: ("0", " %")),
    "pstate": ("", lambda g, gpus: "P0"),
}


class QueryError(ValueError):
    """A --query-gpu field nvidia-smi does not know; the message is nvidia-smi's."""


def nvidia_smi_query(gpus: list[VisibleGpu], fields: list[str], *, header: bool = True, units: bool = True) -> str:
    """``nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]`` output."""
    for name in fields:
        if name not in QUERY_FIELDS:
            raise QueryError(f'Field "{name}" is not a valid field to query.')
    lines = []
    if header:
        lines.append(", ".join(f"{n} [{QUERY_FIELDS[n][0]}]" if QUERY_FIELDS[n][0] and units else n for n in fields))
    for gpu in gpus:
        values = []
        for name in fields:
            value = QUERY_FIELDS[name][1](gpu, gpus)
            if isinstance(value, tuple):
                value = value[0] + (value[1] if units else "")
            values.append(value)
        lines.append(", ".join(values))
    return "\n".join(lines) + "\n"


# plain nvidia-smi ----------------------------------------------------------------------------

_RULE = "+" + "-" * 89 + "+"
_GPU_RULE = "+" + "-" * 41 + "+" + "-" * 24 + "+" + "-" * 22 + "+"


def _gpu_rows(gpu: VisibleGpu) -> list[str]:
    limit = POWER_LIMITS_W.get(gpu.name, 0)
    power = f"{IDLE_POWER_W.get(gpu.name, 0)}W / {limit:>4}W" if limit else "N/A /  N/A"
    memory = f"0MiB / {gpu.memory_mib}MiB" if gpu.memory_mib is not None else "N/A"
    ecc = "N/A" if gpu.migs else "0"
    util = "N/A" if gpu.migs else "0%"
    name = gpu.name if len(gpu.name) <= 31 else gpu.name[:28] + "..."
    return [
        f"|{gpu.index:>4}  {name:<31}On  |{gpu.pci_bus_id:>19} Off |{ecc:>21} |",
        f"| N/A   34C    P0{power:>24} |{memory:>23} |{util:>8}      Default |",
        f"|{'':41}|{'':24}|{gpu.mig_mode:>21} |",
    ]


def _mig_rows(gpu: VisibleGpu) -> list[str]:
    rows = []
    for index, mig in enumerate(gpu.migs):
        engines = (f"{mig.copy_engines:>3} {mig.encoders:>3}  {mig.decoders:>3}  "
                   f"{mig.ofa_engines:>3}  {mig.jpeg_engines:>3}")
        rows += [
            f"|{gpu.index:>3}  {mig.gi:>3} {mig.ci:>3} {index:>3}  |{f'0MiB / {mig.memory_mib}MiB':>30}    |"
            f"{mig.multiprocessors:>3}      0 |{engines:<22} |",
            f"|{'':18}|{'0MiB / 65535MiB':>32}  |{'':11}|{'':23}|",
            "+------------------+----------------------------------+-----------+-----------------------+",
        ]
    return rows


def nvidia_smi_table(gpus: list[VisibleGpu], when: str) -> str:
    """Plain ``nvidia-smi``: the summary table of the container's GPUs, then its processes.

    ``when`` is the first line (nvidia-smi prints the local time, ``Sun Nov 29 14:26:17 2026``).
    """
    version = gpus[0].driver_version if gpus else "N/A"
    cuda = gpus[0].cuda_version if gpus else "N/A"
    lines = [
        f"{when:<31}",
        _RULE,
        f"| NVIDIA-SMI {version:<23}Driver Version: {version:<15}CUDA Version: {cuda:<9}|",
        _GPU_RULE,
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|=========================================+========================+======================|",
    ]
    for gpu in gpus:
        lines += _gpu_rows(gpu) + [_GPU_RULE]
    if any(g.migs for g in gpus):
        lines += [
            "",
            _RULE,
            "| MIG devices:                                                                            |",
            "+------------------+----------------------------------+-----------+-----------------------+",
            "| GPU  GI  CI  MIG |                     Memory-Usage |        Vol|        Shared         |",
            "|      ID  ID  Dev |                       BAR1-Usage | SM     Unc| CE ENC  DEC  OFA  JPG |",
            "|                  |                                  |        ECC|                       |",
            "|==================+==================================+===========+=======================|",
        ]
        for gpu in gpus:
            lines += _mig_rows(gpu)
    lines += [
        "",
        _RULE,
        "| Processes:                                                                              |",
        "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
        "|        ID   ID                                                               Usage      |",
        "|=========================================================================================|",
        "|  No running processes found                                                             |",
        _RULE,
    ]
    return "\n".join(lines) + "\n"
