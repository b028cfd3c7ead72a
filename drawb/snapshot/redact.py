"""Rename what identifies a cluster's machines, consistently across every object of a snapshot.

Node names (and host names in ``kubernetes.io/hostname`` labels) become ``node-001``... in the
order of the original names, so that anything sorted by node sorts the same way; UUIDs (object
uids, GPU and MIG UUIDs, wherever they appear, CEL selectors included) become fresh ones; PCI bus
ids (``0000:18:00.0``) and PCIe roots (``pci0000:15``) become sequential ones in PCI domain
``1000`` (``1000:01:00.0``, ``pci1000:02``), so that no new id can be mistaken for an original. Every string value
of every object is rewritten with the same table, so slices, claims' allocations, pods'
``nodeName`` and selectors still agree with each other: frames, selector results and allocation
previews are identical up to the renaming. Namespace, pod and claim names are kept, and so are the
names of devices, requests and containers (a device ``gpu-1`` stays ``gpu-1`` on a node ``gpu-1``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from drawb.cluster.snapshot.document import Snapshot

HOSTNAME_LABEL = "kubernetes.io/hostname"
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PCI_BUS = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7](?![0-9A-Za-z])")
_PCIE_ROOT = re.compile(r"(?<![0-9A-Za-z])pci[0-9a-fA-F]{4}:[0-9a-fA-F]{2}(?![0-9A-Za-z])")


@dataclasses.dataclass
class Renaming:
    """The table a redaction used: original -> new, per kind of name (never written to the snapshot)."""

    names: dict[str, str]
    uuids: dict[str, str] = dataclasses.field(default_factory=dict)
    pci: dict[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        words = sorted(self.names, key=len, reverse=True)
        self._names = (re.compile("(?<![0-9A-Za-z])(" + "|".join(map(re.escape, words)) + ")(?![0-9A-Za-z])")
                       if words else None)

    def string(self, text: str) -> str:
        """``text`` with every name, UUID and PCI id in it renamed."""
        if self._names is not None:
            text = self._names.sub(lambda m: self.names[m.group(0)], text)
        text = _UUID.sub(self._sequential(self.uuids, lambda n: f"{n:08x}-0000-4000-8000-{n:012x}", str.lower), text)
        text = _PCI_BUS.sub(self._sequential(self.pci, lambda n: f"{0x1000 + (n >> 8):04x}:{n & 0xFF:02x}:00.0", str.lower), text)
        return _PCIE_ROOT.sub(self._sequential(self.pci, lambda n: f"pci{0x1000 + (n >> 8):04x}:{n & 0xFF:02x}", str.lower), text)

    @staticmethod
    def _sequential(table: dict[str, str], new: Callable[[int], str], key: Callable[[str], str]):
        def replace(match: re.Match) -> str:
            original = key(match.group(0))
            if original not in table:
                table[original] = new(len(table) + 1)
            return table[original]
        return replace

    def value(self, value: object, within: str = "") -> object:
        """A copy of a JSON value with every string in it renamed (map keys are kept), except the names
        of devices, requests, containers and other entries (``within``: the key holding ``value``)."""
        if isinstance(value, str):
            return self.string(value)
        if isinstance(value, dict):
            return {k: v if _kept(k, within) else self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, within) for v in value]
        return value


def _kept(key: str, within: str) -> bool:
    """Whether the field ``key`` of a map held under ``within`` keeps its value: a device name (``gpu-1``)
    may spell a node's name and is no machine's identity; object, pool and owner names are renamed."""
    return key in _ENTRY_NAMES or (key == "name" and within not in _RENAMED_NAMES)


_ENTRY_NAMES = frozenset({"device", "request"})
_RENAMED_NAMES = frozenset({"metadata", "pool", "ownerReferences"})


def renaming_for(snapshot: Snapshot) -> Renaming:
    """The name table of ``snapshot``: its nodes, and host names that differ from them, in sorted order."""
    nodes = sorted({(n.get("metadata") or {}).get("name") for n in snapshot.objects.get("Node", [])} - {None})
    for rs in snapshot.objects.get("ResourceSlice", []):  # a slice may name a node that is gone
        name = (rs.get("spec") or {}).get("nodeName")
        if name and name not in nodes:
            nodes.append(name)
    names = {name: f"node-{i:03d}" for i, name in enumerate(sorted(nodes), 1)}
    hosts = sorted({((n.get("metadata") or {}).get("labels") or {}).get(HOSTNAME_LABEL)
                    for n in snapshot.objects.get("Node", [])} - {None} - set(names))
    names.update({host: f"host-{i:03d}" for i, host in enumerate(hosts, 1)})
    return Renaming(names)


def redact(snapshot: Snapshot) -> tuple[Snapshot, Renaming]:
    """A renamed copy of ``snapshot`` and the table used (keep it, or not: the file never holds it)."""
    renaming = renaming_for(snapshot)
    objects = {kind: [renaming.value(o) for o in items] for kind, items in snapshot.objects.items()}
    notes = [renaming.string(n) for n in snapshot.notes]
    source = "a cluster (redacted: nodes, UUIDs and PCI ids renamed)"
    return dataclasses.replace(snapshot, objects=objects, notes=notes, source=source, redacted=True), renaming
