"""``map``: a picture of the cluster (``%dra map``, ``drawb map --out map.svg``).

Nodes are boxes of devices, MIG devices inside their GPU, coloured free / allocated / tainted /
erroring for the selector given (``--selector CEL`` and/or ``--class NAME``, evaluated as the
scheduler does; devices the selector leaves out are grey). A large cluster is summarised per node
pool and product. The notebook shows it as a widget (hover and click show a device's attributes,
claim and pod); the command line prints a summary, or writes the picture with ``--out``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from drawb.commands.registry import arg, command
from drawb.errors import PROG
from drawb.session import Session

if TYPE_CHECKING:
    from drawb.map import ClusterMap


class MapWritten(str):
    """What the command line prints after writing a map file."""

    def __repr__(self) -> str:
        return str(self)


@command(
    "map",
    "A picture of the cluster: nodes, GPUs with their MIG devices inside, coloured free / allocated / tainted / "
    "erroring for a selector; summarised per node pool above 32 nodes.",
    arg("--selector", default="", help="a CEL selector: devices it leaves out are grey, devices where it errors red"),
    arg("--class", dest="device_class", help="run this DeviceClass's selectors first, as the scheduler does"),
    arg("--out", help="write the map to this .svg or .png file"),
    arg("--detail", dest="detail", action="store_const", const=True, default=None,
        help="draw every device, however many nodes (up to 500)"),
    arg("--summary", dest="detail", action="store_const", const=False, help="summarise per node pool and product"),
)
def map_command(session: Session, args, cell) -> ClusterMap | MapWritten:
    """Build the map of the connected cluster; write it with ``--out``."""
    cluster_map = cluster_map_of(session, args.selector, args.device_class, args.detail)
    if args.out:
        path = cluster_map.save(args.out)
        return MapWritten(f"wrote {path}: {cluster_map.heading}")
    return cluster_map


def cluster_map_of(session: Session, selector: str = "", device_class: str | None = None,
                   detail: bool | None = None) -> ClusterMap:
    """The map of the session's cluster for ``selector`` and ``device_class`` (both optional)."""
    from drawb.commands.select import select_devices
    from drawb.map import build_map

    devices = session.devices()
    matched = failed = errors = None
    words = []
    if selector.strip() or device_class:
        result = select_devices(session, devices, selector.strip() or [], class_name=device_class or None)
        if result.compile_error is not None:
            error = result.compile_error
            error.hint = error.hint or f"check the expression with `{PROG} select`"
            raise error
        matched, failed, errors = result.matched, result.failed, result.error
        words = [f"class {device_class}"] * bool(device_class) + [f"selector {selector.strip()}"] * bool(selector.strip())
    simulated = session.simulated_source()
    source = f"from the {simulated}, not a real cluster" if simulated else session.cluster.description
    cluster_map = build_map(devices, nodes=session.cluster.list("Node"), matched=matched, failed=failed, errors=errors,
                            selection=", ".join(words), detail=detail, source=source)
    cluster_map.selector, cluster_map.device_class, cluster_map.detail = selector, device_class or "", detail
    return cluster_map
