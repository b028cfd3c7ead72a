"""Produce ``nvidia-smi -L`` text for the devices a container sees.

The format is that of a real node (see ../shared/captures/h200/nvidia-smi-L.txt): one line per
visible GPU, numbered from 0 in PCI bus order, and MIG devices indented under their parent GPU,
numbered from 0 per parent.
"""

from __future__ import annotations


def _attr(device: dict, name: str) -> str | None:
    value = device.get("attributes", {}).get(name)
    return None if value is None else next(iter(value.values()))


def _pci(device: dict) -> str:
    return _attr(device, "resource.kubernetes.io/pciBusID") or _attr(device, "pcieBusID") or ""


def nvidia_smi_list(devices: list[dict]) -> str:
    """The ``nvidia-smi -L`` output of a container given these ResourceSlice devices."""
    parents: dict[str, dict] = {}
    migs: dict[str, list[dict]] = {}
    for device in devices:
        kind = _attr(device, "type")
        if kind == "gpu":
            parents[_attr(device, "uuid")] = {"name": _attr(device, "productName"), "pci": _pci(device)}
        elif kind == "mig":
            parent = _attr(device, "parentUUID")
            parents.setdefault(parent, {"name": _attr(device, "productName"), "pci": _pci(device)})
            migs.setdefault(parent, []).append(device)
    lines = []
    ordered = sorted(parents.items(), key=lambda item: (item[1]["pci"], item[0]))
    for index, (uuid, gpu) in enumerate(ordered):
        lines.append(f"GPU {index}: {gpu['name']} (UUID: {uuid})")
        children = sorted(migs.get(uuid, []), key=lambda d: d["name"])
        for mig_index, mig in enumerate(children):
            lines.append(f"  MIG {_attr(mig, 'profile'):<11} Device {mig_index:>2}: (UUID: {_attr(mig, 'uuid')})")
    return "\n".join(lines) + ("\n" if lines else "")
