"""The slices of a cluster indexed by node and by pool, so each node's allocation reads only its own.

A slice can target a node only when it is local to that node (``nodeName``), has no node name
(``allNodes``, ``nodeSelector``, per-device node selection), or carries shared counters where the
allocator gathers counter slices from every node (1.35 incubating and experimental, 1.36, stable
1.37). ``for_node`` returns exactly those, in the slices' own order; ``pool`` returns every slice
of one pool, for the pool gathering's check that a pool seen from the node is complete.

``slice_index(slices)`` remembers the indexes of the slices it saw (``drawb.memo``), a few
cluster-wide ones and many of one node's apart (as the scheduler keeps its slice informer's cache
from pod to pod): the same slice objects with the same ``spec`` and ``spec.devices`` objects get
the same index, and what the pre-check learned on it
for one allocated state (``free``: free devices, and whether one passes a class's selectors) is
kept with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drawb.alloc.slices import Candidate, SliceInfo, info
from drawb.memo import Table

Obj = Mapping[str, Any]


class SliceIndex:
    """Slices by node name and by pool, with each slice's SliceInfo."""

    def __init__(self, slices: Sequence[Obj]) -> None:
        self.slices = list(slices)
        self.infos: list[SliceInfo] = [info(s) for s in self.slices]
        self._local: dict[str, list[int]] = {}
        self._unnamed: list[int] = []
        self._counters: list[int] = []  # slices with a node name and shared counters
        self._pools: dict[tuple[str, str], list[Obj]] | None = None
        self._free: dict[int, FreeDevices] = {}
        local = self._local
        for i, extracted in enumerate(self.infos):
            name = extracted.node_name
            if not name:
                self._unnamed.append(i)
                continue
            positions = local.get(name)
            if positions is None:
                local[name] = [i]
            else:
                positions.append(i)
            if extracted.shared_counters:
                self._counters.append(i)
        self.unnamed = [self.slices[i] for i in self._unnamed]

    def local(self, node: Obj | None) -> Sequence[int]:
        """The positions of the slices whose ``nodeName`` is the node's (in order)."""
        return self._local.get(_name(node), ())

    @property
    def unnamed_positions(self) -> Sequence[int]:
        """The positions of the slices without a node name (in order)."""
        return self._unnamed

    def for_node(self, node: Obj | None, counters_anywhere: bool) -> list[Obj]:
        """Every slice that can target ``node``, in the slices' order (with ``counters_anywhere``,
        the counter slices of every node too)."""
        name = _name(node)
        local = self._local.get(name, ())
        others = self._unnamed
        if counters_anywhere and self._counters:
            others = [*others, *(i for i in self._counters if self.infos[i].node_name != name)]
        if not others:
            return [self.slices[i] for i in local]
        return [self.slices[i] for i in sorted((*local, *others))]

    def pool(self, driver: str, pool: str) -> list[Obj]:
        """Every slice of one pool, on any node (in order)."""
        if self._pools is None:
            self._pools = {}
            for slice_, extracted in zip(self.slices, self.infos):
                self._pools.setdefault((extracted.driver, extracted.pool), []).append(slice_)
        return self._pools.get((driver, pool), [])

    def free(self, allocated: set) -> FreeDevices:
        """What the pre-check learned about the slices for one allocated set (compared by identity),
        kept for the last few sets."""
        entry = self._free.get(id(allocated))
        if entry is None or entry.allocated is not allocated:
            if len(self._free) >= 4:
                self._free.clear()
            entry = self._free[id(allocated)] = FreeDevices(allocated, len(self.slices))
        return entry


class FreeDevices:
    """Per slice position: its devices not in ``allocated``, and whether one of them passes a set of
    class selectors (per selector signature); filled in by the pre-check as it goes."""

    def __init__(self, allocated: set, count: int) -> None:
        self.allocated = allocated
        self.devices: list[list[Candidate] | None] = [None] * count
        self.usable: dict[tuple, list[bool | None]] = {}

    def usable_for(self, signature: tuple) -> list[bool | None]:
        """Per slice position, whether a free device passes the selectors of ``signature`` (None: unknown)."""
        found = self.usable.get(signature)
        if found is None:
            found = self.usable[signature] = [None] * len(self.devices)
        return found


_SMALL = 64  # slices: a node's own (a preview's per-node allocations) or fewer
# one node's indexes are cheap, a cluster's hold all its slices: kept apart, so many of the first never push
# out the second
_indexes: dict[bool, Table[SliceIndex]] = {True: Table("slice indexes of one node", 256), False: Table("slice indexes", 4)}


def slice_index(slices: Sequence[Obj]) -> SliceIndex:
    """The (remembered) index of these slices; callers must not modify it."""
    kept = _indexes[len(slices) <= _SMALL]
    specs = [s.get("spec") for s in slices]
    stamp = (*specs, *[(spec or {}).get("devices") for spec in specs])  # read again when either is replaced
    return kept.get_all(slices, None, stamp) or kept.put_all(slices, SliceIndex(slices), None, stamp)


def _name(node: Obj | None) -> str:
    if node is None:
        return ""  # no slice is local without a node ("" is no slice's nodeName in the index)
    return (node.get("metadata") or {}).get("name", "")
