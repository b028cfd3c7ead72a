"""Parse what ``nvidia-smi`` prints: ``-L``, ``--query-gpu`` CSV, ``-q -x`` XML and ``mig -lgip``.

Each parser takes the text as printed and returns plain records; a line or document it does not
understand raises ``SmiParseError`` naming the line, so a changed format is noticed, not
half-read. Values nvidia-smi writes as ``N/A`` or ``[N/A]`` become ``None``.
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field


class SmiParseError(ValueError):
    """nvidia-smi output that does not have the expected format."""


_NA = {"N/A", "[N/A]", "[Not Supported]", "Not Supported", "[Unknown Error]", ""}


def _value(text: str | None) -> str | None:
    text = None if text is None else text.strip()
    return None if text is None or text in _NA else text


def number(text: str | None) -> float | None:
    """The number at the start of ``143771 MiB``, ``82.67 W``, ``41 C`` or ``0 %``; None for N/A."""
    text = _value(text)
    if text is None:
        return None
    match = re.match(r"^-?\d+(\.\d+)?", text)
    if not match:
        raise SmiParseError(f"expected a number with an optional unit, got {text!r}")
    return float(match.group()) if match.group(1) else int(match.group())


# ---- nvidia-smi -L -----------------------------------------------------------------------------

_GPU_LINE = re.compile(r"^GPU (\d+): (.+) \(UUID: (GPU-[0-9A-Fa-f-]+)\)$")
_MIG_LINE = re.compile(r"^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[^)\s]+)\)$")


@dataclass(frozen=True)
class ListedMig:
    """A MIG device line of ``nvidia-smi -L``."""

    index: int
    profile: str
    uuid: str


@dataclass(frozen=True)
class ListedGpu:
    """A GPU line of ``nvidia-smi -L`` and the MIG device lines under it."""

    index: int
    name: str
    uuid: str
    migs: tuple[ListedMig, ...] = ()


def parse_list(text: str) -> list[ListedGpu]:
    """The GPUs (and their MIG devices) ``nvidia-smi -L`` lists."""
    gpus: list[ListedGpu] = []
    for number_, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if m := _GPU_LINE.match(line):
            gpus.append(ListedGpu(int(m[1]), m[2], m[3]))
        elif (m := _MIG_LINE.match(line)) and gpus:
            last = gpus[-1]
            gpus[-1] = ListedGpu(last.index, last.name, last.uuid, last.migs + (ListedMig(int(m[2]), m[1], m[3]),))
        else:
            raise SmiParseError(f"nvidia-smi -L line {number_} is neither a GPU nor a MIG device line: {line!r}")
    return gpus


# ---- nvidia-smi --query-gpu=... --format=csv ---------------------------------------------------


def parse_query_csv(text: str, fields: list[str] | None = None) -> list[dict[str, str | None]]:
    """Rows of ``--query-gpu`` CSV keyed by field name (``memory.total``; the ``[MiB]`` unit dropped).

    With ``--format=csv,noheader`` pass the queried ``fields`` in order.
    """
    rows = [[cell.strip() for cell in row] for row in csv.reader(io.StringIO(text)) if row]
    if fields is None:
        if not rows:
            raise SmiParseError("empty --query-gpu output: expected a header line")
        fields = [re.sub(r"\s*\[.*\]$", "", name) for name in rows.pop(0)]
    out = []
    for number_, row in enumerate(rows, 1):
        if len(row) != len(fields):
            raise SmiParseError(f"--query-gpu row {number_} has {len(row)} values for {len(fields)} fields: {row}")
        out.append({name: _value(cell) for name, cell in zip(fields, row)})
    return out


# ---- nvidia-smi -q -x --------------------------------------------------------------------------


@dataclass(frozen=True)
class XmlMig:
    """A ``<mig_device>`` of ``nvidia-smi -q -x``."""

    index: int
    gpu_instance_id: int
    compute_instance_id: int
    multiprocessors: int | None
    copy_engines: int | None
    encoders: int | None
    decoders: int | None
    ofa_engines: int | None
    jpeg_engines: int | None
    memory_total_mib: int | None


@dataclass(frozen=True)
class XmlGpu:
    """The fields of one ``<gpu>`` of ``nvidia-smi -q -x`` that drawb compares and shows."""

    pci_bus_id: str
    product_name: str | None
    product_brand: str | None
    product_architecture: str | None
    uuid: str | None
    minor_number: int | None
    addressing_mode: str | None
    mig_mode_current: str | None
    mig_mode_pending: str | None
    memory_total_mib: int | None
    memory_reserved_mib: int | None
    memory_used_mib: int | None
    gpu_util_percent: int | None
    memory_util_percent: int | None
    temperature_c: int | None
    power_draw_w: float | None
    power_limit_w: float | None
    mig_devices: tuple[XmlMig, ...] = ()


@dataclass(frozen=True)
class SmiLog:
    """A whole ``nvidia-smi -q -x`` document."""

    driver_version: str | None
    cuda_version: str | None
    gpus: list[XmlGpu] = field(default_factory=list)


def _text(node: ET.Element, path: str) -> str | None:
    found = node.find(path)
    return None if found is None else _value(found.text)


def _int(node: ET.Element, path: str) -> int | None:
    value = number(_text(node, path))
    return None if value is None else int(value)


def _power(gpu: ET.Element, name: str) -> float | None:
    for path in (f"gpu_power_readings/{name}", f"power_readings/{name}"):  # renamed in driver R530
        value = number(_text(gpu, path))
        if value is not None:
            return float(value)
    return None


def _mig(node: ET.Element) -> XmlMig:
    shared = "device_attributes/shared/"
    return XmlMig(
        index=_int(node, "index"),
        gpu_instance_id=_int(node, "gpu_instance_id"),
        compute_instance_id=_int(node, "compute_instance_id"),
        multiprocessors=_int(node, shared + "multiprocessor_count"),
        copy_engines=_int(node, shared + "copy_engine_count"),
        encoders=_int(node, shared + "encoder_count"),
        decoders=_int(node, shared + "decoder_count"),
        ofa_engines=_int(node, shared + "ofa_count"),
        jpeg_engines=_int(node, shared + "jpg_count"),
        memory_total_mib=_int(node, "fb_memory_usage/total"),
    )


def _gpu(node: ET.Element) -> XmlGpu:
    power_draw = _power(node, "power_draw")
    if power_draw is None:
        power_draw = _power(node, "average_power_draw")
    return XmlGpu(
        pci_bus_id=node.get("id") or _text(node, "pci/pci_bus_id") or "",
        product_name=_text(node, "product_name"),
        product_brand=_text(node, "product_brand"),
        product_architecture=_text(node, "product_architecture"),
        uuid=_text(node, "uuid"),
        minor_number=_int(node, "minor_number"),
        addressing_mode=_text(node, "addressing_mode"),
        mig_mode_current=_text(node, "mig_mode/current_mig"),
        mig_mode_pending=_text(node, "mig_mode/pending_mig"),
        memory_total_mib=_int(node, "fb_memory_usage/total"),
        memory_reserved_mib=_int(node, "fb_memory_usage/reserved"),
        memory_used_mib=_int(node, "fb_memory_usage/used"),
        gpu_util_percent=_int(node, "utilization/gpu_util"),
        memory_util_percent=_int(node, "utilization/memory_util"),
        temperature_c=_int(node, "temperature/gpu_temp"),
        power_draw_w=power_draw,
        power_limit_w=_power(node, "current_power_limit") or _power(node, "power_limit"),
        mig_devices=tuple(_mig(m) for m in node.findall("mig_devices/mig_device")),
    )


def parse_xml(text: str) -> SmiLog:
    """The driver, CUDA version and GPUs of an ``nvidia-smi -q -x`` document."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise SmiParseError(f"nvidia-smi -q -x output is not XML: {exc}") from None
    if root.tag != "nvidia_smi_log":
        raise SmiParseError(f"expected an <nvidia_smi_log> document, got <{root.tag}>")
    return SmiLog(
        driver_version=_text(root, "driver_version"),
        cuda_version=_text(root, "cuda_version"),
        gpus=[_gpu(g) for g in root.findall("gpu")],
    )


# ---- nvidia-smi mig -lgip ----------------------------------------------------------------------

_LGIP_FIRST = re.compile(
    r"^\|\s+(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+([\d.]+)\s+(Yes|No|N/A)\s+(\d+)\s+(\d+)\s+(\d+)\s+\|$"
)
_LGIP_SECOND = re.compile(r"^\|\s+(\d+)\s+(\d+)\s+(\d+)\s+\|$")
_LGIP_FRAME = re.compile(r"^(\+-+\+|\|=+\||\|\s+GPU instance profiles:\s+\||\|\s+GPU\s+Name.*\||\|\s+Free/Total.*\|)$")


@dataclass(frozen=True)
class LgipProfile:
    """One GPU-instance profile row pair of ``nvidia-smi mig -lgip``."""

    gpu: int
    name: str  # "1g.18gb" (nvidia-smi prints "MIG 1g.18gb")
    id: int
    instances_free: int
    instances_total: int
    memory_gib: float
    p2p: str
    multiprocessors: int
    decoders: int
    encoders: int
    copy_engines: int
    jpeg_engines: int
    ofa_engines: int


def parse_mig_profiles(text: str) -> list[LgipProfile]:
    """The profile table of ``nvidia-smi mig -lgip`` (empty when no GPU supports MIG)."""
    profiles: list[LgipProfile] = []
    pending: re.Match | None = None
    for number_, line in enumerate(text.splitlines(), 1):
        line = line.rstrip()
        if not line or _LGIP_FRAME.match(line) or line.startswith("No MIG"):
            continue
        if pending is None and (m := _LGIP_FIRST.match(line)):
            pending = m
        elif pending is not None and (m := _LGIP_SECOND.match(line)):
            p = pending
            profiles.append(
                LgipProfile(
                    gpu=int(p[1]), name=p[2], id=int(p[3]), instances_free=int(p[4]), instances_total=int(p[5]),
                    memory_gib=float(p[6]), p2p=p[7], multiprocessors=int(p[8]), decoders=int(p[9]),
                    encoders=int(p[10]), copy_engines=int(m[1]), jpeg_engines=int(m[2]), ofa_engines=int(m[3]),
                )  # fmt: skip
            )
            pending = None
        else:
            raise SmiParseError(f"nvidia-smi mig -lgip line {number_} is not part of the profile table: {line!r}")
    if pending is not None:
        raise SmiParseError("nvidia-smi mig -lgip output ends in the middle of a profile (its second line is missing)")
    return profiles
