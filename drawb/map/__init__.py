"""The cluster map: nodes as groups of devices, MIG devices inside their GPU, coloured by state for a selector.

`build_map(devices, ...)` returns a `ClusterMap`: at most ``DETAIL_MAX_NODES`` nodes are drawn device by
device; a larger cluster is summarised per node pool and product (counts and stacked bars). Its
``svg`` is a standalone document (``_repr_svg_`` in a notebook, ``save()`` to .svg or .png); its
``str`` is the text the command line prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from drawb.errors import DrawbError
from drawb.inventory.browse import browse_frame
from drawb.map.model import (
    STATES,
    Node,
    PoolSummary,
    device_keys,
    device_states,
    layout_nodes,
    node_pools,
    summarise,
)
from drawb.map.svg import detail_svg, summary_svg

DETAIL_MAX_NODES = 32  # drawn device by device up to here; summarised above (unless asked otherwise)
DETAIL_LIMIT_NODES = 500  # the most nodes ``detail=True`` draws one by one


class MapError(DrawbError):
    """A map that cannot be drawn or written as asked (too many nodes to draw one by one, an unknown format)."""


@dataclass
class ClusterMap:
    """A drawn cluster: per-device states, the nodes (detail) or the pool summary, and the SVG."""

    frame: pd.DataFrame = field(repr=False)  # the browse frame of the devices (drawb.inventory.browse)
    states: np.ndarray  # per device: free | allocated | tainted | erroring | not selected
    nodes: list[Node] | None  # detail: every node; None when summarised
    summary: list[PoolSummary]
    heading: str
    svg: str = field(repr=False)
    selector: str = ""  # what it was drawn for (the notebook's view redraws with these)
    device_class: str = ""
    detail: bool | None = None

    @cached_property
    def keys(self) -> np.ndarray:
        """``driver/pool/device`` per device, in the order of ``states``."""
        return device_keys(self.frame)

    @property
    def counts(self) -> dict[str, int]:
        """Devices per state."""
        values, counts = np.unique(self.states.astype(str), return_counts=True)
        found = dict(zip(values, counts.tolist()))
        return {s: int(found.get(s, 0)) for s in STATES}

    def state_of(self, key: str) -> str:
        """The state of device ``driver/pool/device``."""
        hits = np.flatnonzero(self.keys == key)
        if not len(hits):
            raise KeyError(f"no device {key!r} on the map")
        return str(self.states[hits[0]])

    def device(self, key: str):
        """The drawn device ``driver/pool/device`` (detail maps only)."""
        for node in self.nodes or ():
            for device in node.devices():
                if device.key == key:
                    return device
        raise KeyError(f"no device {key!r} drawn on the map")

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path: str | Path) -> Path:
        """Write the map to ``path``: SVG (``.svg``) or PNG (``.png``, through cairosvg)."""
        from drawb.render.rendered import OutputPathError

        out = Path(path).expanduser()
        suffix = out.suffix.lower()
        if out.is_dir():
            raise OutputPathError(f"--out {path} is a folder", hint=f"name a file in it, e.g. {out / 'map.svg'}")
        if suffix not in (".svg", ".png"):
            raise MapError(f"--out {path}: a map is written as .svg or .png, not {suffix or 'a file without a suffix'}",
                           hint="name a file ending in .svg or .png, e.g. map.svg")
        if not out.parent.is_dir():
            raise OutputPathError(f"--out {path}: the folder {out.parent} does not exist",
                                  hint=f"create it first (mkdir -p {out.parent}), or name a file in an existing folder")
        try:
            if suffix == ".svg":
                out.write_text(self.svg, encoding="utf-8")
            else:
                import cairosvg

                cairosvg.svg2png(bytestring=self.svg.encode("utf-8"), write_to=str(out), scale=1.5)
        except OSError as exc:
            raise OutputPathError(f"--out {path}: cannot write it: {exc.strerror or exc}",
                                  hint="check the folder's permissions, or name another file") from None
        return out

    def __str__(self) -> str:
        counts = ", ".join(f"{n} {s}" for s, n in self.counts.items() if n)
        lines = [self.heading, f"devices: {counts or 'none'}"]
        if self.nodes is not None:
            for node in self.nodes:
                per = {}
                for device in node.devices():
                    per[device.state] = per.get(device.state, 0) + 1
                text = ", ".join(f"{per[s]} {s}" for s in STATES if per.get(s))
                lines.append(f"  {node.name} ({node.pool}): {text}")
        else:
            for item in self.summary:
                text = ", ".join(f"{item.counts[s]} {s}" for s in STATES if item.counts.get(s))
                lines.append(f"  {item.pool} / {item.product}: {item.nodes} nodes, {text}")
        return "\n".join(lines)


def build_map(
    devices: pd.DataFrame,
    *,
    nodes: list[dict] = (),
    matched: np.ndarray | None = None,
    failed: np.ndarray | None = None,
    errors: np.ndarray | None = None,
    selection: str = "",
    detail: bool | None = None,
    source: str = "",
) -> ClusterMap:
    """The map of ``devices`` (a device frame with allocations): states for the selector outcome given by
    ``matched``/``failed`` (aligned with ``devices``; None: no selector), node pools from ``nodes``
    (Node objects). ``detail``: None decides by size, True draws every device, False summarises."""
    frame = browse_frame(devices)
    states = device_states(frame, matched, failed)
    pools = node_pools(list(nodes))
    node_count = int(frame["node"].nunique())
    if detail is None:
        detail = node_count <= DETAIL_MAX_NODES
    if detail and node_count > DETAIL_LIMIT_NODES:
        raise MapError(f"{node_count} nodes are too many to draw one by one (at most {DETAIL_LIMIT_NODES})",
                       hint="leave out --detail: a large cluster is summarised per node pool and product")
    summary = summarise(frame, states, pools)
    title = f"Cluster map: {node_count} nodes, {len(frame)} devices"
    subtitle = "; ".join(part for part in (source, selection) if part)
    heading = f"{title} ({subtitle})" if subtitle else title
    counts = dict(zip(*np.unique(states.astype(str), return_counts=True)))
    if detail:
        drawn = layout_nodes(devices, frame, states, pools, errors)
        svg = detail_svg(drawn, counts, title, subtitle)
    else:
        drawn = None
        svg = summary_svg(summary, counts, title + ", summarised per node pool and product", subtitle)
    return ClusterMap(frame, states, drawn, summary, heading, svg)


__all__ = ["DETAIL_MAX_NODES", "ClusterMap", "MapError", "build_map"]
