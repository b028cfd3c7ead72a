"""The slices of a cluster indexed once per pod, so each node's allocation reads only its own.

A slice can target a node only when it is local to that node (``nodeName``), has no node name
(``allNodes``, ``nodeSelector``, per-device node selection), or carries shared counters where the
allocator gathers counter slices from every node (1.35 incubating and experimental, 1.36, stable
1.37). ``for_node`` returns exactly those, in the slices' own order; ``pool`` returns every slice
of one pool, for the pool gathering's check that a pool seen from the node is complete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drawb.alloc.slices import info

Obj = Mapping[str, Any]


class SliceIndex:
    """Slices by node name and by pool."""

    def __init__(self, slices: Sequence[Obj]) -> None:
        self.slices = list(slices)
        self.infos = [info(s) for s in self.slices]
        self._local: dict[str, list[int]] = {}
        self._unnamed: list[int] = []
        self._counters: list[int] = []  # slices with a node name and shared counters
        self._pools: dict[tuple[str, str], list[Obj]] = {}
        for i, (slice_, extracted) in enumerate(zip(self.slices, self.infos)):
            self._pools.setdefault((extracted.driver, extracted.pool), []).append(slice_)
            if not extracted.node_name:
                self._unnamed.append(i)
                continue
            self._local.setdefault(extracted.node_name, []).append(i)
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
        return self._pools.get((driver, pool), [])


def _name(node: Obj | None) -> str:
    if node is None:
        return ""  # no slice is local without a node ("" is no slice's nodeName in the index)
    return (node.get("metadata") or {}).get("name", "")
